"""QT411 rounds-toward-zero: the logic is here, each target's fact is its
``rounding(node)`` (the release's rounding probes); docs/targets.md lists
which targets report it."""

from __future__ import annotations

from ...code import Code
from ...severity import WARNING
from . import QUANTIZE_ARITHMETIC


class RoundsTowardZero(Code):
    """
    ## What it checks
    Integer quantize nodes on a target release that rounds x / y_scale toward zero.

    ## Why is this bad?
    QuantizeLinear's page: "For (x / y_scale), it’s rounding to the nearest even." A
    runtime that truncates gives 1 for 1.5 (the page 2) and 52 for 52.9375 (the page 53):
    about half of all values land one step toward zero, not only ties. Measured per release
    by rounding probes of each x and scale type the version takes (tools/probe_quantize.py:
    ties of x / scale with an odd zero point, "rounds toward zero" where the output is
    trunc(x / scale) + zero point): onnxruntime 1.18 to 1.29 quantize float16 x that way
    (ai.onnx QuantizeLinear-19 and -21, and -23 to -25 from 1.24; per tensor and per axis),
    and round float32 x, blocked float16 and com.microsoft float16 as the page.

    ## Example
    ```
    QuantizeLinear(x: float16, y_scale: float16, y_zero_point: int8)
    ```

    ## Fix
    Use a release that rounds as the page (onnxruntime 1.30 or newer), or quantize float32
    x with a float32 scale.
    """

    code = "QT411"
    name = "rounds-toward-zero"
    severity = WARNING
    judges = QUANTIZE_ARITHMETIC  # every target that probes a QuantizeLinear's arithmetic runs it
    summary = "The target rounds x / y_scale toward zero, not to the nearest even."

    @staticmethod
    def check(target, site):
        from .. import nodes, probe_keys

        if target.rounding(site) != probe_keys.TOWARD_ZERO:
            return
        yield target.finding(
            "QT411",
            f"x / y_scale is rounded toward zero ({nodes.x_type(site.facts)} x), not to the nearest even: "
            "1.5 gives 1 where the page gives 2, and 52.9375 gives 52 where it gives 53",
            fix="use a release that rounds as the page, or quantize float32 x with a float32 scale",
        )
