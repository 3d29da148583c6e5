from .. import schema
from .base import Rule


class OpNotInOpset(Rule):
    """
    ## What it checks
    That the imported opset of the node's domain is at least the version in
    which the op first appears (ai.onnx QuantizeLinear and DequantizeLinear are
    defined from opset 10).

    ## Why is this bad?
    At a lower opset the op does not exist; every runtime refuses the model.

    ## Example
    ```
    opset_import: [{domain: "", version: 9}]
    node: QuantizeLinear(x, s, zp)
    ```

    ## Fix
    Raise the model's opset to at least the op's first version.
    """

    code = "QL104"
    name = "op-not-in-opset"
    summary = "The imported opset is older than the op's first version."
    needs_spec = False

    def check(self, n):
        if not n.imported or n.spec is not None:
            return
        first = schema.versions(n.domain, n.op)[0].since
        yield (
            f"not defined at {n.domain_name} opset {n.opset}; it first appears in opset {first}: "
            f"raise the opset to {first} or later"
            + (f" (`qlin convert --to-opset {first}`)" if n.domain == schema.AI_ONNX else "")
        )
