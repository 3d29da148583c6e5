from .base import Rule, first_version, op_title


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
        seen: dict[str, tuple[int, str]] = {}
        for i, param in enumerate(spec.inputs):
            t = n.in_type(i)
            if t is None:
                continue
            if param.types in seen:
                j, other = seen[param.types]
                if other != t:
                    a, b = spec.inputs[j].name, param.name
                    since = first_version(
                        spec.domain, spec.op_type,
                        lambda s, i=i, j=j: s.since > spec.since and s.inputs[i].types != s.inputs[j].types,
                    )
                    hint = (
                        f" or raise the opset to {since}, where they may differ"
                        if since and since > spec.since else ""
                    )
                    yield (
                        f"node {n.where} ({op_title(n)}): '{a}' is {other} but '{b}' is {t}; "
                        f"this version needs them to have one type: cast one of them{hint}"
                    )
            else:
                seen[param.types] = (i, t)
