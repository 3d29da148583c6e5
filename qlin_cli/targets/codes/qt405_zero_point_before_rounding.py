"""QT405 zero-point-before-rounding: the logic is here, each target's fact is its
``rounding(node)`` (the release's rounding probes); docs/targets.md lists
which targets report it."""

from __future__ import annotations

from ...code import Code
from ...severity import WARNING
from . import QUANTIZE_ARITHMETIC


class ZeroPointBeforeRounding(Code):
    """
    ## What it checks
    Integer quantize nodes with a zero point that is not known to be even, on a target
    release that adds the zero point before rounding.

    ## Why is this bad?
    QuantizeLinear's page: "The quantization formula is y = saturate ((x / y_scale) +
    y_zero_point)." and "For (x / y_scale), it’s rounding to the nearest even.": x / y_scale
    is rounded, then the zero point added. A runtime that rounds x / scale + zero point
    sends every tie the other way when the zero point is odd (x / scale = 0.5, zero point
    3: the page gives 3, the runtime 4). Measured per release by rounding probes
    (tools/probe_quantize.py): every openvino release from 2024.0 to 2026.4, no
    onnxruntime release.

    ## Example
    ```
    QuantizeLinear(x, y_scale, y_zero_point: int8 = 3)
    ```

    ## Fix
    Use an even (or zero) zero point where ties matter, or accept a one-step
    difference on exact ties.
    """

    code = "QT405"
    name = "zero-point-before-rounding"
    severity = WARNING
    judges = QUANTIZE_ARITHMETIC  # every target that probes a QuantizeLinear's arithmetic runs it
    summary = "The target adds the zero point before rounding."

    @staticmethod
    def check(target, site):
        from .. import nodes, probe_keys

        if target.rounding(site) != probe_keys.ADDED_FIRST:
            return
        if nodes.odd_zero_point(site.facts) is not False:  # odd, or not known
            yield target.finding(
                "QT405",
                "the zero point is added before rounding: ties of x / y_scale "
                "round the other way when the zero point is odd",
                fix="use an even zero point where ties matter",
            )
