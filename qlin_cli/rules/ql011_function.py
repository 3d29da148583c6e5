from collections import Counter

from .base import ModelRule, Violation


class FunctionSignature(ModelRule):
    """
    ## What it checks
    The declaration of each model-local function: a name, a domain (IR 8 and
    later), and its inputs, outputs and attribute names each given once.

    ## Why is this bad?
    onnx.proto (FunctionProto): "The name of the function, similar to op_type in
    NodeProto. This is part of the unique-id (domain, name, overload)", and its
    inputs and outputs are the names its body reads and produces: a name twice
    makes a call's arguments ambiguous. onnx.checker rejects such a function
    ("should not have duplicate outputs specified", "has been used multiple
    times").

    ## Example
    ```
    function local.F(x, x) -> (y)
    ```

    ## Fix
    Give each input, output and attribute of the function its own name.
    """

    code = "QL011"
    name = "function-signature"
    summary = "A model-local function without a name or domain, or with a name declared twice."

    def check_model(self, view):
        ir = view.model.ir_version
        for fn in view.model.functions:
            label = f"function {fn.domain}.{fn.name}"
            at = view.site(label, fn.name or "function", label)
            if not fn.name:
                yield Violation("the function has no name", at=at)
            if ir >= 8 and not fn.domain:
                yield Violation("the function has no domain (required from IR 8)", at=at)
            for kind, names in (("input", fn.input), ("output", fn.output), ("attribute", fn.attribute)):
                for name, n in sorted(Counter(names).items()):
                    if n > 1:
                        yield Violation(f"{kind} {name!r} is declared {n} times", at=at)
