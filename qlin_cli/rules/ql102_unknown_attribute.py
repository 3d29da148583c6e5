from ..schema import semantics
from .base import Rule, raise_hint


class UnknownAttribute(Rule):
    """
    ## What it checks
    That every attribute on the node is one the op's version in that domain
    defines (for example `block_size` exists from ai.onnx QuantizeLinear 21,
    `precision` from 23, `saturate` from 19, and com.microsoft has only `axis`).

    ## Why is this bad?
    onnx.checker and onnxruntime reject unknown attributes, and a converter that
    lowers the opset without removing them leaves a model that does not load.
    Worse, the attribute's intent (a block size, a division precision) is
    silently lost on runtimes that ignore it.

    ## Example
    ```
    opset 19: QuantizeLinear(x, s, zp, block_size=32)
    ```

    ## Fix
    Remove the attribute, or raise the opset to a version that defines it
    (`qlin convert --to-opset N`).
    """

    code = "QL102"
    name = "unknown-attribute"
    summary = "Attribute that the op's version in its domain does not define."

    def check(self, n):
        for p in n.problems():
            if p.kind == semantics.ATTRIBUTE:
                hint = raise_hint(n, lambda s, a=p.subject: a in s.attributes, "remove it")
                if hint != "remove it":
                    hint = f"remove it, or {hint}"
                yield f"attribute '{p.subject}' is not defined by this version: {hint}"
