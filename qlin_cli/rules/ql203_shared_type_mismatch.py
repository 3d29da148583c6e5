from ..schema import semantics
from .base import Rule, raise_hint


class SharedTypeMismatch(Rule):
    """
    ## What it checks
    That inputs bound to one type variable have one type: x and the scale
    before ai.onnx QuantizeLinear 23 (and in com.microsoft QuantizeLinear), and
    x and the zero point of every DequantizeLinear.

    ## Why is this bad?
    The schema cannot bind the type variable, so the model fails type checking
    and runtimes refuse it. From opset 23 x and the scale may differ, which
    tools sometimes assume of older opsets too.

    ## Example
    ```
    opset 21: QuantizeLinear(x: float16, s: float, zp: int8)
    ```

    ## Fix
    Cast one of the inputs (usually the scale) to the other's type, or raise the
    opset to 23 where x and scale may differ.
    """

    code = "QL203"
    name = "shared-type-mismatch"
    summary = "Inputs that share a type variable have different types."

    def check(self, n):
        spec = n.spec
        for p in n.problems():
            if p.kind != semantics.SHARED_TYPE:
                continue
            i = p.index
            j = next(k for k, q in enumerate(spec.inputs) if q.types == spec.inputs[i].types)
            hint = raise_hint(
                n, lambda s, i=i, j=j: s.since > spec.since and s.inputs[i].types != s.inputs[j].types, "")
            if hint:
                hint = " or " + hint.replace(" or later", ", where they may differ")
            yield f"{p.text}: cast one of them{hint}"
