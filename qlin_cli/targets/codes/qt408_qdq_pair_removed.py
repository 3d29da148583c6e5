"""QT408 qdq-pair-removed: the logic is here (``pairs.pair_fate``, shared with QT308), each
target's fact is its ``pair_stripping``; docs/targets.md lists which targets report it."""

from __future__ import annotations

from ...code import Code
from ...severity import WARNING


class QdqPairRemoved(Code):
    """
    ## What it checks
    16-bit QuantizeLinear -> DequantizeLinear pairs on a target that removes them.

    ## Why is this bad?
    The QuantizeLinear page: "The quantization formula is y = saturate ((x / y_scale) +
    y_zero_point)", and DequantizeLinear's: "The dequantization formula is y = (x -
    x_zero_point) * x_scale": the value after the pair is x rounded to a multiple of the
    scale and clamped to the type's range. openvino's CPU plugin strips FakeQuantize nodes
    of 65536 levels (a 16-bit Q -> DQ pair) and computes the consumer on the unquantized input: no rounding,
    no clamping to the 16-bit range (the pass is
    src/common/low_precision_transformations/src/qdq_stripping.cpp; measured per release
    by the int16 and uint16 pair probes of tools/probe_quantize.py, Abs -> Q -> DQ -> Neg,
    per tensor and blocked, whose output is then -|x|). Results differ from the spec by up
    to half a quantization step, more where the input saturates. A pair the probe finds
    kept but computed otherwise (a blocked one, as a FakeQuantize rounding ties the other
    way) is QT406's.

    ## Example
    ```
    Relu -> QuantizeLinear(int16) -> DequantizeLinear -> Conv
    ```

    ## Fix
    Nothing in the model changes it; use 8-bit activations if the quantization
    itself must be reproduced on openvino.
    """

    code = "QT408"
    name = "qdq-pair-removed"
    severity = WARNING
    summary = "The target removes 16-bit Q -> DQ pairs and computes unquantized."

    @staticmethod
    def check(target, site):
        from .. import nodes, pairs

        if pairs.pair_fate(target, site) == "removed":
            q = nodes.quant_type(site.producer)
            yield target.finding(
                "QT408", f"the {q} Q -> DQ pair {target.pair_stripping.removed}",
                fix="use 8-bit activations if the quantization must be reproduced",
            )
