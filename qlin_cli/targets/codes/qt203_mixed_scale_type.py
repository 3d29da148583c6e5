"""QT203 mixed-scale-type. The targets that report it decide when, each in its own module
(targets/<runtime>.py); docs/targets.md lists which."""

from __future__ import annotations

from ...code import Code


class MixedScaleType(Code):
    """
    ## What it checks
    That a QuantizeLinear-23 or later node whose target kernel reads the scale as x's
    type gets a scale of x's type.

    ## Why is this bad?
    QuantizeLinear-23 gives x and y_scale separate type constraints, and
    onnxruntime's kernel registration accepts float and float16 for both, so the
    model loads; the kernel then reads the scale as x's type and the first run fails
    with "Tensor type mismatch". Measured in docs/targets-onnxruntime-notes.md.

    ## Example
    ```
    QuantizeLinear-23(x: float, y_scale: float16, y_zero_point: int8)
    ```

    ## Fix
    Store the scale in x's type (a float16 scale widens to float exactly).
    """

    code = "QT203"
    name = "mixed-scale-type"
    summary = "x and the scale have different types; the target fails at the first run."
