"""QT401 division-in-float32: the logic is here, each target's fact is its ``divides_in``
(targets/<runtime>.py); docs/targets.md lists which targets report it."""

from __future__ import annotations

from ...code import Code
from ...severity import WARNING


class DivisionInFloat32(Code):
    """
    ## What it checks
    Quantize nodes whose division the spec does in float16 or bfloat16 (the scale's
    type) and the target does in float32.

    ## Why is this bad?
    QuantizeLinear's page: "The type of y_scale determines the precision of the
    division operation between x and y_scale, unless the precision attribute is
    specified." The results differ wherever the two quotients round to different integers:
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

    @staticmethod
    def check(target, f):
        from .. import nodes

        if target.divides_in != "float32" or nodes.kind(f) != nodes.QUANTIZE:
            return
        if nodes.precision_type(f) is not None:
            return  # the division is done in precision's type: QT402 when the target ignores it
        st = nodes.scale_type(f)
        if st in ("float16", "bfloat16"):
            yield target.finding(
                "QT401",
                f"the division x / y_scale ({nodes.x_type(f)} / {st}) is done in float32, not in {st}: "
                f"results differ on values near a rounding boundary",
                fix="quantize from float32 if bit-exact results matter",
            )
