"""QT305 scale-not-constant. The targets that report it decide when, each in its own module
(targets/<runtime>.py); docs/targets.md lists which."""

from __future__ import annotations

from ...code import Code


class ScaleNotConstant(Code):
    """
    ## What it checks
    That the scale is a build-time constant, not a graph input.

    ## Why is this bad?
    TensorRT documents that the scale of Q/DQ layers "must be a build-time
    constant"; a scale fed at run time cannot be. onnxruntime's NNAPI provider takes
    scales and zero points only from constant initializers.

    ## Example
    ```
    graph inputs: x, s;  QuantizeLinear(x, s)
    ```

    ## Fix
    Store the scale as an initializer (or a Constant).
    """

    code = "QT305"
    name = "scale-not-constant"
    summary = "The scale is fed at run time; the target needs a constant."
