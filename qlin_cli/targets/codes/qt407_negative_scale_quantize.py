"""QT407 negative-scale-quantize: the logic is here, each target's fact is its
``arithmetic("negative scale", node)`` (the release's negative-scale probes);
docs/targets.md lists which targets report it."""

from __future__ import annotations

from ...code import Code
from ...severity import WARNING
from . import QUANTIZE_ARITHMETIC


class NegativeScaleQuantize(Code):
    """
    ## What it checks
    Quantize nodes with a negative scale on a target release that miscomputes them.

    ## Why is this bad?
    Negative scales are legal: QuantizeLinear's page computes "y = saturate ((x / y_scale)
    + y_zero_point)" with no condition on the scale's sign. openvino turns a quantize into a
    FakeQuantize whose input range is then reversed: values beyond the quantized range
    saturate to the wrong end (127 becomes -128), and other values are wrong too. Measured
    per release by negative-scale probes (tools/probe_quantize.py; scale -0.1 over
    -60..60): every openvino release from 2024.0 to 2026.4, no onnxruntime release. The
    model is not refused, so nothing else tells you.

    ## Example
    ```
    QuantizeLinear(x, y_scale = -0.1, y_zero_point: int8 = 0)
    ```

    ## Fix
    Use a positive scale and negate the quantized values downstream (for a Q -> DQ
    pair, negate both scales: the result is unchanged).
    """

    code = "QT407"
    name = "negative-scale-quantize"
    severity = WARNING
    judges = QUANTIZE_ARITHMETIC  # every target that probes a QuantizeLinear's arithmetic runs it
    summary = "The target miscomputes quantize with a negative scale."

    @staticmethod
    def check(target, site):
        from .. import nodes

        f = site.facts
        found = target.arithmetic("negative scale", site)
        if found is None or found.differs is None:
            return
        if nodes.negative_scale(f):
            yield target.finding(
                "QT407",
                "with a negative scale the quantized values are wrong (values beyond the range saturate "
                "to the wrong end)",
                fix="use positive scales (negate the quantized values instead)",
            )
