from .. import schema
from .base import Rule


class DomainNotImported(Rule):
    """
    ## What it checks
    That the domain of every QuantizeLinear / DequantizeLinear node (ai.onnx,
    com.microsoft, com.amd.quark) is listed in the opset imports of the model,
    or of the model-local function that holds the node.

    ## Why is this bad?
    Without the import there is no schema for the node: onnx.checker fails and
    onnxruntime refuses to load the model. Tools that write vendor ops often
    forget the import.

    ## Example
    ```
    opset_import: [{domain: "", version: 19}]
    node: com.microsoft.QuantizeLinear(x, s, zp)
    ```

    ## Fix
    Add the domain to `opset_import`, e.g. `{domain: "com.microsoft", version: 1}`.
    """

    code = "QL103"
    name = "domain-not-imported"
    summary = "Node's domain is not in the model's (or function's) opset imports."
    needs_spec = False

    def check(self, n):
        if n.imported:
            return
        latest = schema.versions(n.domain, n.node.op_type)[-1].since
        where = "function" if n.scope.is_function else "model"
        yield (
            f"node {n.where} ({n.node.op_type}) uses domain {n.domain_name}, which the {where} "
            f"does not import: add opset_import {{domain: '{n.domain or 'ai.onnx'}', "
            f"version: {latest}}}"
        )
