from .base import Rule, fmt_types


class OutputType(Rule):
    """
    ## What it checks
    That the declared type of the output (graph output or value_info) is the
    type the schema implies: for QuantizeLinear the type of `output_dtype`, else
    of the zero point, else uint8; for DequantizeLinear the `output_dtype`, else
    the scale's type (float before opset 19).

    ## Why is this bad?
    The QuantizeLinear page: "the type of the attribute `y_zero_point` still
    determines the quantization type", and its type constraints bind y to the
    zero point's type; DequantizeLinear's bind y to the scale's (float alone
    before opset 19). IR.md: a value's declared type is its type. A declared type
    that disagrees with what the node computes makes shape inference fail and
    makes consumers of the tensor read the wrong bytes. onnx.checker's full check
    does not always see it (it accepts a DequantizeLinear-13 output declared
    int64), so this error goes beyond the checker, on the page's word.

    ## Example
    ```
    QuantizeLinear(x, s, zp: int8) -> y    with value_info y: uint8
    ```

    ## Fix
    Declare the output with the implied type, or change the zero point /
    `output_dtype` to the type you meant.
    """

    code = "QL202"
    name = "output-type"
    summary = "Declared output type differs from the type the node produces."

    def check(self, n):
        declared = n.out_type
        if declared is None:
            return
        allowed = n.spec.allowed(n.spec.outputs[0])
        out = n.outputs[0]
        if declared not in allowed:
            yield (
                f"output '{out}' is declared {declared}, which this version cannot produce "
                f"(allowed: {fmt_types(allowed)}): fix the declaration"
            )
            return
        expected = n.implied_out_type
        if expected is not None and expected in allowed and expected != declared:
            yield (
                f"output '{out}' is declared {declared} but the node produces {expected}: declare "
                f"it {expected}, or change the zero point / output_dtype"
            )
