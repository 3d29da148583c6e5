"""QT303 blocked-quantize-without-zero-point. The targets that report it decide when, each in its own module
(targets/<runtime>.py); docs/targets.md lists which."""

from __future__ import annotations

from ...code import Code


class BlockedQuantizeWithoutZeroPoint(Code):
    """
    ## What it checks
    That a blocked QuantizeLinear has a zero point input.

    ## Why is this bad?
    openvino's ONNX frontend builds the zero point of a blocked quantize by
    reshaping a scalar zero to the blocked shape, which fails when the input is
    absent ("Requested output shape ... is incompatible with input shape"): the
    model does not load. Measured with openvino 2026.4.

    ## Example
    ```
    QuantizeLinear-21(x, y_scale[4, 2], block_size=4, output_dtype=INT4)
    ```

    ## Fix
    Give the node an all-zero zero point of the output type and the scale's shape
    (the result does not change).
    """

    code = "QT303"
    name = "blocked-quantize-without-zero-point"
    summary = "A blocked quantize has no zero point; the target fails to load it."
