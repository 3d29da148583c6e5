from .. import schema
from .base import AddOpsetImport, Fix, Rule, Violation


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

    fixable = True

    def check(self, n):
        if n.imported:
            return
        version = schema.versions(n.domain, n.op)[-1].since
        owner = "function" if n.location.in_function else "model"
        yield Violation(
            f"its domain {n.domain_name} is one the {owner} does not import: add opset_import "
            f"{{domain: '{n.domain_name}', version: {version}}}",
            Fix(f"import {n.domain_name} version {version}", (AddOpsetImport(n.domain, version),)),
        )
