"""QT306 zero-point-not-zero. The targets that report it decide when, each in its own module
(targets/<runtime>.py); docs/targets.md lists which."""

from __future__ import annotations

from ...code import Code


class ZeroPointNotZero(Code):
    """
    ## What it checks
    That a known zero point is all zeros, where the target only does symmetric
    quantization.

    ## Why is this bad?
    TensorRT supports symmetric quantization only: its parser stops with "Non-zero
    zero point is not supported" (outside DLA) for integer types. NNAPI needs zero
    points 0 for int8 weights (onnxruntime's NNAPI provider).

    ## Example
    ```
    y_zero_point: int8 = 3
    ```

    ## Fix
    Requantize symmetrically (zero point 0); no conversion can remove a non-zero
    zero point without changing results.
    """

    code = "QT306"
    name = "zero-point-not-zero"
    summary = "A non-zero zero point where the target only quantizes symmetrically."
