"""QT401 division-in-float32. The targets that report it decide when, each in its own module
(targets/<runtime>.py); docs/targets.md lists which."""

from __future__ import annotations

from ...code import Code
from ...severity import WARNING


class DivisionInFloat32(Code):
    """
    ## What it checks
    Quantize nodes whose division the spec does in float16 or bfloat16 (the scale's
    type) and the target does in float32.

    ## Why is this bad?
    The results differ wherever the two quotients round to different integers:
    x = 78.0625, scale = 0.669921875 (both float16) gives 116.5 in float16 (-> 116)
    and 116.52 in float32 (-> 117). onnxruntime divides float16 in float32 at every
    version (and casts float16 to float for com.microsoft nodes); openvino divides
    float16 and bfloat16 in float32. Measured.

    ## Example
    ```
    QuantizeLinear-21(x: float16, y_scale: float16, y_zero_point: int8)
    ```

    ## Fix
    Quantize from float32 (x and scale in float) when bit-exact results matter, or
    accept the difference (at most one step, on values near a rounding boundary).
    """

    code = "QT401"
    name = "division-in-float32"
    severity = WARNING
    summary = "The target divides in float32 where the spec divides in float16/bfloat16."
