"""QT202 type-unsupported. The targets that report it decide when, each in its own module
(targets/<runtime>.py); docs/targets.md lists which."""

from __future__ import annotations

from ...code import Code


class TypeUnsupported(Code):
    """
    ## What it checks
    That the target implements the op for the node's element types (onnxruntime:
    one kernel registration accepts all of them together, or float16 arguments that
    it can cast to float; openvino and TensorRT: the documented or measured types).

    ## Why is this bad?
    The spec allows far more types than any runtime implements: onnxruntime's CPU
    provider has no QuantizeLinear for bfloat16 or int32 x and no DequantizeLinear
    for float4e2m1, int2 or float8e8m0 scales; openvino cannot quantize to
    float4e2m1; TensorRT quantizes only to INT8, FP8 (e4m3fn), INT4 and FP4; NNAPI
    takes uint8 (and int8 weights of Conv / MatMul). The model is refused at load
    ("Could not find an implementation"), or the node leaves NNAPI for the CPU.
    onnxruntime 1.31's default session options also fuse a float8 DequantizeLinear
    into the op it feeds (MatMul, or a Conv followed by a QuantizeLinear), making a
    QLinearConv / QLinearMatMul that takes no float8: "Type 'tensor(float8e4m3fn)' of
    input parameter ... of operator (QLinearConv) ... is invalid" (measured for the four
    float8 types; with optimizations off the model runs).

    ## Example
    ```
    QuantizeLinear-21(x: bfloat16, y_scale: bfloat16, y_zero_point: int8)   # onnxruntime
    ```

    ## Fix
    Store the node with types the target has (the message lists them); `qlin
    convert --target NAME` helps only where a domain or opset of the target
    implements the same types.
    """

    code = "QT202"
    name = "type-unsupported"
    summary = "The target has no implementation of the op for these element types."
