"""QT302 block-not-dividing. The targets that report it decide when, each in its own module
(targets/<runtime>.py); docs/targets.md lists which."""

from __future__ import annotations

from ...code import Code


class BlockNotDividing(Code):
    """
    ## What it checks
    That `block_size` divides the quantized dimension.

    ## Why is this bad?
    The spec allows a last, shorter block (the scale has ceil(D / B) entries along
    the axis). openvino's ONNX frontend refuses it ("must be divisible by the block
    size"), and TensorRT's parser requires an integral block ("Inferred block size
    is not an integer").

    ## Example
    ```
    x: [4, 8], axis=1, block_size=3, y_scale: [4, 3]
    ```

    ## Fix
    Choose a block size that divides the dimension, or pad the tensor to a multiple
    of the block size.
    """

    code = "QT302"
    name = "block-not-dividing"
    summary = "The block size does not divide the quantized dimension."
