"""QT401 division-in-float32: the logic is here, each target's fact is its ``division``
(the release's division probes, or documentation); docs/targets.md lists which targets
report it."""

from __future__ import annotations

from ...code import Code
from ...severity import WARNING
from . import QUANTIZE_ARITHMETIC


class DivisionInFloat32(Code):
    """
    ## What it checks
    Quantize nodes without a `precision` attribute whose division the spec does in float16
    or bfloat16 (the scale's type) and the target does in another type (float32), and
    quantize nodes with an int32 scale and a float output (float8) whose division the
    target does in float, not in int32.

    ## Why is this bad?
    QuantizeLinear's page: "The type of y_scale determines the precision of the
    division operation between x and y_scale, unless the precision attribute is
    specified." The results differ wherever the two quotients round to different integers:
    x = 78.0625, scale = 0.669921875 (both float16) gives 116.5 in float16 (-> 116)
    and 116.52 in float32 (-> 117). x of another type is converted to the scale's type
    first: float16 x 15.6484375 by a bfloat16 scale 0.3359375 gives 46 (15.625 / 0.3359375
    is 46.5 in bfloat16), 47 in float32. An int32 scale makes the quotient an int32, rounded
    to the nearest even ("For (x / y_scale), it rounds to the nearest even"), which a float8
    output keeps: 7 / 2 gives 4 where a division in float gives 3.5 (with an integer output
    both round to the same integer). Which releases divide in float32, and at which op
    versions and types, is measured per release by division probes
    (tools/probe_quantize.py; `qlin targets --versions RUNTIME` shows some): openvino
    2024.0 to 2026.4 always; onnxruntime 1.30 and 1.31 always, 1.32 at QuantizeLinear-19
    and -21, every release for com.microsoft QuantizeLinear.

    ## Example
    ```
    QuantizeLinear-21(x: float16, y_scale: float16, y_zero_point: int8)
    ```

    ## Fix
    Quantize from float32 (x and scale in float) when bit-exact results matter, or
    accept the difference (at most one step, on values near a rounding boundary; with an
    int32 scale and a float8 output, the fraction of every quotient that has one).
    """

    code = "QT401"
    name = "division-in-float32"
    severity = WARNING
    judges = QUANTIZE_ARITHMETIC  # every target that probes a QuantizeLinear's arithmetic runs it
    summary = "The target divides in float32 where the spec divides in float16/bfloat16."

    @staticmethod
    def check(target, site):
        from .. import nodes, probe_keys

        f = site.facts
        done = target.division(site)  # None: as the page, or not known
        if done is None or nodes.kind(f) != nodes.QUANTIZE or nodes.precision_type(f) is not None:
            return  # with precision, the division is done in its type: QT402 when the target ignores it
        st, q = nodes.scale_type(f), nodes.quant_type(f)
        if st in probe_keys.INTEGER_DIVIDED and q is not None and not nodes.is_integer(q):
            what = (f"the quotient keeps its fraction into {q} (7 / 2 gives 3.5 where the page's {st} "
                    f"quotient is 4)")
            fix = "use a float32 scale (the page then keeps the fraction too) if the results must agree"
        elif st in probe_keys.DIVIDED:
            what = "results differ on values near a rounding boundary"
            fix = "quantize from float32 if bit-exact results matter"
        else:
            return
        if done != st:
            shown = "float32" if done == "float" else done
            said = f"the division x / y_scale ({nodes.x_type(f)} / {st}) is done in {shown}, not in {st}"
            said += f": {what}"
            yield target.finding("QT401", said, fix=fix)
