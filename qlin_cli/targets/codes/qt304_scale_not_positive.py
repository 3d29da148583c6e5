"""QT304 scale-not-positive. The targets that report it decide when, each in its own module
(targets/<runtime>.py); docs/targets.md lists which."""

from __future__ import annotations

from ...code import Code


class ScaleNotPositive(Code):
    """
    ## What it checks
    That every value of a constant scale is strictly positive.

    ## Why is this bad?
    The spec allows negative scales (the sign folds into the values) and
    onnxruntime's symmetric n-bit quantizer writes them on purpose, but TensorRT
    requires "strictly positive values" (IQuantizeLayer) and its parser stops with
    "Scale coefficients must all be positive".

    ## Example
    ```
    x_scale = [0.02, -0.01]
    ```

    ## Fix
    Negate the scale entry and the quantized values it scales (for a weight DQ: the
    stored integers of that channel), which leaves every result unchanged.
    """

    code = "QT304"
    name = "scale-not-positive"
    summary = "A scale holds a zero or negative value; the target refuses it."
