from .. import schema
from .base import AddOpsetImport, Fix, ModelRule, Violation


class DomainNotImported(ModelRule):
    """
    ## What it checks
    That the domain of every node, whatever its op (QuantizeLinear, MatMulNBits,
    a custom op, a call of a model-local function ...), is listed in the opset
    imports of the model, or of the model-local function that holds the node.
    ai.onnx may be spelled "" or "ai.onnx".

    ## Why is this bad?
    Without the import there is no schema for the node: onnx.checker fails and
    onnxruntime refuses to load the model. Tools that write vendor ops often
    forget the import (com.microsoft MatMulNBits written into a model that
    imports only ai.onnx is a common case).

    ## Example
    ```
    opset_import: [{domain: "", version: 19}]
    node: com.microsoft.QuantizeLinear(x, s, zp)
    ```

    ## Fix
    Add the domain to `opset_import`, e.g. `{domain: "com.microsoft", version: 1}`.
    For a domain qlin knows, or the domain of a model-local function, the finding
    carries that edit.
    """

    code = "QL103"
    name = "domain-not-imported"
    summary = "A node's domain is not in the model's (or function's) opset imports."

    fixable = True

    def check_model(self, view):
        local = {fn.domain for fn in view.model.functions}
        for body in view.bodies:
            opsets = body.scope.opsets
            owner = "function" if body.is_function else "model"
            missing = {d for d in {d for d, _ in body.kinds} if schema.opset_of(opsets, d) is None}
            if not missing:
                continue
            for i, node in enumerate(body.nodes):
                if node.domain not in missing:
                    continue
                domain = schema.normalize_domain(node.domain)
                name = schema.domain_name(domain)
                version = _version(domain, node.op_type, local)
                if version is None:
                    yield Violation(
                        f"its domain {name} is one the {owner} does not import: add an opset_import "
                        f"for {name} at the version the op was written for",
                        at=view.node_site(body, i))
                    continue
                yield Violation(
                    f"its domain {name} is one the {owner} does not import: add opset_import "
                    f"{{domain: '{name}', version: {version}}}",
                    Fix(f"import {name} version {version}", (AddOpsetImport(domain, version),)),
                    at=view.node_site(body, i))


def _version(domain: str, op: str, local: set[str]) -> int | None:
    """The version to import: the newest qlin knows of the op's domain (for a vendor op
    qlin has a schema for), 1 for a model-local function's domain, else unknown."""
    if domain and schema.knows(domain, op):
        return schema.versions(domain, op)[-1].since
    if domain and domain in local:
        return 1
    return None
