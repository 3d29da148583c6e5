"""QT307 odd-four-bit-tensor. The targets that report it decide when, each in its own module
(targets/<runtime>.py); docs/targets.md lists which."""

from __future__ import annotations

from ...code import Code


class OddFourBitTensor(Code):
    """
    ## What it checks
    That a tensor quantized to INT4 or FP4 has an even number of elements.

    ## Why is this bad?
    TensorRT packs two 4-bit values in a byte and its parser refuses tensors with
    an odd element count ("4-bit quantization requires an even number of elements").

    ## Example
    ```
    DequantizeLinear(x: int4 [3, 5])
    ```

    ## Fix
    Pad the tensor to an even size.
    """

    code = "QT307"
    name = "odd-four-bit-tensor"
    summary = "A 4-bit tensor has an odd number of elements."
