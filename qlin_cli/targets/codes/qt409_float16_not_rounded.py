"""QT409 float16-not-rounded. The targets that report it decide when, each in its own module
(targets/<runtime>.py); docs/targets.md lists which."""

from __future__ import annotations

from ...code import Code
from ...severity import WARNING


class Float16NotRounded(Code):
    """
    ## What it checks
    float16 QuantizeLinear / DequantizeLinear nodes the target runs in float32 (no
    float16 kernel) next to a node it also runs in float32: the float16 value between
    them is never rounded to float16.

    ## Why is this bad?
    The model says the value is float16. The QuantizeLinear page: "x (heterogeneous) - T1:
    N-D full precision Input tensor to be quantized", T1 the type the model gives x (float16
    here), so the x the node reads is a float16 value; DequantizeLinear's y (y = (x -
    x_zero_point) * x_scale) has the scale's type, float16 here. onnxruntime's CPU provider
    has no float16 kernel for com.microsoft QuantizeLinear / DequantizeLinear nor for MatMul
    or Conv: it runs each between inserted Casts and removes a Cast float -> float16
    followed by a Cast float16 -> float, so a DequantizeLinear output reaches the MatMul, or
    a MatMul output the QuantizeLinear, with float32 precision. Measured on onnxruntime
    1.31.1: a float16 Q -> DQ -> MatMul -> Q -> DQ with com.microsoft Q/DQ gives other codes
    than the same graph with ai.onnx Q/DQ-19 (which have float16 kernels) on 7 of 1,536
    outputs.

    ## Example
    ```
    y = MatMul(x: float16, w: float16)
    com.microsoft QuantizeLinear(y, y_scale: float16)
    ```

    ## Fix
    Use ai.onnx QuantizeLinear / DequantizeLinear-19 or newer (`qlin convert
    --to-domain ai.onnx --to-opset 19`), or compute the model in float32.
    """

    code = "QT409"
    name = "float16-not-rounded"
    severity = WARNING
    summary = "The target keeps float32 precision where the model rounds to float16."
