from ..schema import semantics
from .base import FamilyRule


class OpType(FamilyRule):
    """
    ## What it checks
    For the quantization ops beyond QuantizeLinear / DequantizeLinear: that every
    input has a type the op allows, that inputs and outputs bound to one type
    variable have one type (QLinearMatMul's a and a_zero_point, QLinearConv's y
    and y_zero_point, QLinearAdd's A, B and C, MatMulNBits' A and scales), and
    that declared output types are ones the op produces.

    ## Why is this bad?
    A zero point of another type than its tensor, or a float16 scale where the op
    takes float, matches no kernel: the model is refused at load time, or a
    runtime that does not check reads the bytes as the wrong type.

    ## Example
    ```
    QLinearMatMul(a: uint8, a_scale, a_zero_point: int8, ...)
    ```

    ## Fix
    Store the zero point (or scale) with the type of the tensor it belongs to, or
    declare the output with the type the op produces.
    """

    code = "QL204"
    name = "op-type"
    summary = "A quantization op of another family has an input or output of the wrong type."

    def check(self, n):
        for p in semantics.signature(n, n.spec):
            if p.kind == semantics.INPUT_TYPE:
                named = f"'{p.subject}' ('{n.input_name(p.index)}') is"
                yield f"{p.text.replace(f'{p.subject!r} is', named, 1)}: store it as one of those"
            elif p.kind == semantics.SHARED_TYPE:
                yield f"{p.text}: store them with one type"
            elif p.kind == semantics.OUTPUT_TYPE:
                yield f"{p.text}: fix the declaration or the inputs"
