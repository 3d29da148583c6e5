"""QT407 negative-scale-quantize. The targets that report it decide when, each in its own module
(targets/<runtime>.py); docs/targets.md lists which."""

from __future__ import annotations

from ...code import Code
from ...severity import WARNING


class NegativeScaleQuantize(Code):
    """
    ## What it checks
    Quantize nodes with a negative scale on a target that miscomputes them.

    ## Why is this bad?
    Negative scales are legal (the sign folds into the values). openvino turns a
    quantize into a FakeQuantize whose input range is then reversed: values beyond
    the quantized range saturate to the wrong end (127 becomes -128), and random
    inputs show other wrong values too (measured, 2026.4). It does not refuse the
    model, so nothing else tells you.

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
    summary = "The target miscomputes quantize with a negative scale."
