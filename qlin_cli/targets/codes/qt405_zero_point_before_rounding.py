"""QT405 zero-point-before-rounding. The targets that report it decide when, each in its own module
(targets/<runtime>.py); docs/targets.md lists which."""

from __future__ import annotations

from ...code import Code
from ...severity import WARNING


class ZeroPointBeforeRounding(Code):
    """
    ## What it checks
    Integer quantize nodes with a zero point that is not known to be zero, on a target
    that adds the zero point before rounding.

    ## Why is this bad?
    The spec rounds x / scale half to even, then adds the zero point. openvino
    rounds x / scale + zero point: with an odd zero point every tie goes the other
    way (x / scale = 0.5, zero point 3: the spec gives 3, openvino 4). Measured with
    openvino 2026.4.

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
    summary = "The target adds the zero point before rounding."
