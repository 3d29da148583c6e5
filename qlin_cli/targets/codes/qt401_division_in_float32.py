"""QT401 division-in-float32: the logic is here, each target's fact is its ``division``
(the release's division probes, or documentation); docs/targets.md lists which targets
report it."""

from __future__ import annotations

from ...code import Code
from ...severity import WARNING


class DivisionInFloat32(Code):
    """
    ## What it checks
    Quantize nodes without a `precision` attribute whose division the spec does in float16
    or bfloat16 (the scale's type) and the target does in another type (float32).

    ## Why is this bad?
    QuantizeLinear's page: "The type of y_scale determines the precision of the
    division operation between x and y_scale, unless the precision attribute is
    specified." The results differ wherever the two quotients round to different integers:
    x = 78.0625, scale = 0.669921875 (both float16) gives 116.5 in float16 (-> 116)
    and 116.52 in float32 (-> 117). Which releases divide in float32, and at which op
    versions, is measured per release by division probes (tools/probe_quantize.py; `qlin
    targets --versions RUNTIME` shows them): openvino 2024.0 to 2026.4 always; onnxruntime
    1.30 and 1.31 always, 1.32 at QuantizeLinear-19 and -21, every release for com.microsoft
    QuantizeLinear.

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
    def check(target, site):
        from .. import nodes, probe_keys

        f = site.facts
        done = target.division(site)  # None: as the page, or not known
        if done is None or nodes.kind(f) != nodes.QUANTIZE or nodes.precision_type(f) is not None:
            return  # with precision, the division is done in its type: QT402 when the target ignores it
        st = nodes.scale_type(f)
        if st in probe_keys.DIVIDED and done != st:
            shown = "float32" if done == "float" else done
            yield target.finding(
                "QT401",
                f"the division x / y_scale ({nodes.x_type(f)} / {st}) is done in {shown}, not in {st}: "
                f"results differ on values near a rounding boundary",
                fix="quantize from float32 if bit-exact results matter",
            )
