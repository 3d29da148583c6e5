"""QT201 op-unsupported. The targets that report it decide when, each in its own module
(targets/<runtime>.py); docs/targets.md lists which."""

from __future__ import annotations

from ...code import Code


class OpUnsupported(Code):
    """
    ## What it checks
    That the target implements the op at the schema version the model's opset puts
    in force (onnxruntime: a CPU kernel registered for that version, or a function
    body it can inline; TensorRT: the op is in its ONNX operator support matrix).

    ## Why is this bad?
    onnxruntime matches kernels against the schema version in force, and an
    open-ended kernel covers only the version it starts at: GlobalLpPool at opset 22
    fails with "Could not find an implementation" although a kernel from version 2
    exists. The op may also be one the runtime writes itself: onnxruntime's default
    session options fuse an activation's DequantizeLinear -> MatMul -> QuantizeLinear
    into QLinearMatMul when they load the model, and releases 1.18 and 1.19 have no
    QLinearMatMul-21 kernel ("Failed to find kernel for QLinearMatMul(21)", measured on
    1.18.1, 1.19.2 and 1.20.1, which runs it); the finding is on that DequantizeLinear.
    TensorRT does not implement QLinearConv, QLinearMatMul, MatMulInteger, ConvInteger
    or DynamicQuantizeLinear.

    ## Example
    ```
    opset 22: GlobalLpPool(x)      # onnxruntime 1.31: kernels for version 2 only
    opset 21: x -> Q -> DQ -> MatMul(DQ(w)) -> Q -> DQ   # onnxruntime 1.18 and 1.19
    ```

    ## Fix
    Import an opset whose version of the op the target implements (`qlin convert
    --target NAME` for the Q/DQ ops), or express the op with ones the target has
    (QDQ format instead of QOperator ops for TensorRT).
    """

    code = "QT201"
    name = "op-unsupported"
    summary = "The target has no implementation of the op at this version."
