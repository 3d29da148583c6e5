from ..schema import semantics
from .base import FamilyRule


class OpArity(FamilyRule):
    """
    ## What it checks
    For the quantization ops beyond QuantizeLinear / DequantizeLinear
    (QLinearConv, QLinearMatMul, MatMulInteger, ConvInteger, DynamicQuantizeLinear,
    com.microsoft QLinearAdd/QLinearMul/QLinearSoftmax/QLinearGlobalAveragePool/
    QLinearConcat/QGemm/DynamicQuantizeLSTM/MatMulNBits/GatherBlockQuantized, and
    com.amd.quark BFPQuantizeDequantize): that every required input and output is
    connected and that there are no more than the op defines (e.g.
    DynamicQuantizeLinear has three outputs, QLinearConv's zero points are
    required, QLinearAdd's are optional).

    ## Why is this bad?
    A node with a missing input or an extra one matches no kernel: onnx.checker
    fails and onnxruntime refuses the model when it loads it.

    ## Example
    ```
    QLinearMatMul(a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale)  # no y_zero_point
    ```

    ## Fix
    Connect the missing input or output (the message names it), or remove the
    extra ones.
    """

    code = "QL106"
    name = "op-arity"
    summary = "A quantization op of another family has missing or extra inputs or outputs."

    def check(self, n):
        for p in semantics.signature(n, n.spec):
            if p.kind == semantics.INPUT_COUNT:
                yield f"{p.text}: {'connect it' if p.index is not None else 'remove the extra inputs'}"
            elif p.kind == semantics.OUTPUT_COUNT:
                yield f"{p.text}: {'connect it' if p.index is not None else 'remove the extra outputs'}"
