"""QT406 dequantize-arithmetic: the logic is here, each target's fact is its
``arithmetic("dequantize" / "pair arithmetic", site)`` (the release's probes); docs/targets.md
lists which targets report it."""

from __future__ import annotations

from ...code import Code
from ...severity import WARNING


class DequantizeArithmetic(Code):
    """
    ## What it checks
    Dequantize nodes whose product the target release rounds otherwise than the spec:
    to a float16 or bfloat16 output, or, after a QuantizeLinear, as one fused op.

    ## Why is this bad?
    The DequantizeLinear page: "The dequantization formula is y = (x - x_zero_point) *
    x_scale", y of the output type (`output_dtype`, else the scale's), and "The output type
    also determines the precision of the multiplication operation": qlin reads this as the
    product of the given operands correctly rounded to the output type
    (evaluator/dequantize.py; onnxruntime agrees); openvino 2026.4.1 rounds a float32 scale
    to a float16 `output_dtype` before it multiplies (measured: its 50 differing codes of
    255 are exactly those), another reading of the same sentence, which the page does not
    state. Measured per release by dequantize probes
    (tools/probe_quantize.py: every scale type and float16 / bfloat16 output each version
    allows, and a Q -> DQ pair between two other ops, per tensor and blocked, of each 8-
    and 16-bit type): openvino 2026.4 rounds a bfloat16
    product of constant x (weights) otherwise (-39.25 becomes -39 with a bfloat16 scale; a
    computed x agrees), a float32 product written
    to a float16 or bfloat16 `output_dtype` otherwise (2024.0 to 2026.3 write float32
    there), and computes a Q -> DQ pair as one
    FakeQuantize that rounds values of x / scale near a tie the other way (x = 1.55 in
    float32, 1.5499999523, over 0.1 gives 16, the page 15), int8 and uint8 alike.

    ## Example
    ```
    DequantizeLinear-23(x: int8, x_scale: float, output_dtype=FLOAT16)
    ```

    ## Fix
    Use a float output, or accept differences of one step (a pair) or in the last bit.
    """

    code = "QT406"
    name = "dequantize-arithmetic"
    severity = WARNING
    summary = "The target computes the dequantize product in another type."

    @staticmethod
    def check(target, site):
        from .. import nodes, probe_keys

        f = site.facts
        if nodes.kind(f) != nodes.DEQUANTIZE:
            return
        found = target.arithmetic(probe_keys.DEQUANTIZE, site)
        if found is not None and found.differs is not None:
            out, said = nodes.out_type(f), found.differs
            if said == probe_keys.SCALE_FIRST.format(out=out):
                how = (f"the {nodes.scale_type(f)} scale is rounded to {out} before it multiplies (the "
                       "page's product is rounded once)")
            elif said.startswith("writes "):
                how = f"the output is written as {said.removeprefix('writes ')}, not {out}"
            else:
                how = (f"the product with the {nodes.scale_type(f)} scale is rounded to {out} differently "
                       "from the spec")
            yield target.finding(
                "QT406", f"{how} (measured by the release's dequantize probe)",
                fix="use a float output if last bits matter",
            )
            return
        found = target.arithmetic(probe_keys.PAIR, site)
        if found is not None and found.differs not in (None, probe_keys.REMOVED):  # removed: QT408
            yield target.finding(
                "QT406",
                "the Q -> DQ pair is computed as one fused op: values of x / scale near a tie are "
                "rounded the other way (measured by the release's pair probe)",
                fix="accept one-step differences",
            )
