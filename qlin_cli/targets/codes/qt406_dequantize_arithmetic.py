"""QT406 dequantize-arithmetic: the logic is here, each target's fact is its
``dequantize_product``; docs/targets.md lists which targets report it."""

from __future__ import annotations

from ...code import Code
from ...severity import WARNING


class DequantizeArithmetic(Code):
    """
    ## What it checks
    Dequantize nodes whose product the target computes in another type than the spec.

    ## Why is this bad?
    The spec multiplies in the scale's type and converts to the output type.
    openvino (measured) rounds bfloat16 results differently (-21.875 becomes -21.75
    with a bfloat16 scale), and rounds a float32 product to a float16 or bfloat16
    `output_dtype` differently (-13.125 becomes -13.1328125). It also fuses a
    Q -> DQ pair into one FakeQuantize whose float arithmetic differs from the spec
    in the last bit.

    ## Example
    ```
    DequantizeLinear-23(x: int8, x_scale: float, output_dtype=FLOAT16)
    ```

    ## Fix
    Use a float scale and output, or accept last-bit differences.
    """

    code = "QT406"
    name = "dequantize-arithmetic"
    severity = WARNING
    summary = "The target computes the dequantize product in another type."

    @staticmethod
    def check(target, site):
        from .. import nodes

        fact, f = target.dequantize_product, site.facts
        if fact is None or nodes.kind(f) != nodes.DEQUANTIZE:
            return
        out, st = nodes.out_type(f), nodes.scale_type(f)
        if out in fact.narrow and not (out in fact.own_scale_exact and st == out):
            yield target.finding(
                "QT406",
                f"the product with the {st} scale is rounded to {out} differently from the spec",
                fix="use a float output if last bits matter",
            )
        elif fact.fused_pairs and site.producer is not None:
            yield target.finding(
                "QT406",
                "the Q -> DQ pair is fused into one FakeQuantize: dequantized "
                "values may differ from the spec in the last bit",
                fix="accept last-bit differences",
            )
