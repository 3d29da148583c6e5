from ..schema import semantics
from .base import FamilyRule


class OpAttribute(FamilyRule):
    """
    ## What it checks
    For the quantization ops beyond QuantizeLinear / DequantizeLinear: that every
    attribute is one the op defines, has the type the op defines (INT, FLOAT,
    STRING, INTS ...), and that required attributes are given (MatMulNBits `K`,
    `N` and `block_size`; QLinearSoftmax `opset`; QLinearConcat `axis`;
    QLinearAveragePool `kernel_shape`).

    ## Why is this bad?
    onnx.checker and onnxruntime reject unknown, mistyped or missing attributes
    when they load the model; a runtime that does not check reads garbage (a
    MatMulNBits without `K` has no weight shape at all).

    ## Example
    ```
    com.microsoft.MatMulNBits(A, B, scales, N=64, bits=4, block_size=32)   # K missing
    ```

    ## Fix
    Add the missing attribute, remove the unknown one, or write it with the
    type the op defines.
    """

    code = "QL107"
    name = "op-attribute"
    summary = "A quantization op of another family has an unknown, mistyped or missing attribute."

    def check(self, n):
        for p in semantics.signature(n, n.spec):
            if p.kind == semantics.ATTRIBUTE:
                yield f"{p.text}: remove it"
            elif p.kind == semantics.ATTRIBUTE_TYPE:
                yield f"{p.text}: write it as {p.value}"
            elif p.kind == semantics.ATTRIBUTE_MISSING:
                yield f"{p.text}: add it"
