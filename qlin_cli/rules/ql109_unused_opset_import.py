from .. import schema
from ..model.graphs import function_path
from .base import INFO, Fix, ModelRule, RemoveOpsetImport, Violation


class UnusedOpsetImport(ModelRule):
    """
    ## What it checks
    That every domain the model (or a model-local function) imports is used by at
    least one node: of the graph, its subgraphs, training graphs or functions for
    the model's imports, of the function's own body for a function's imports.
    ai.onnx is never reported: it states the opset of the model as a whole and
    tools write it whatever the nodes are.

    ## Why is this bad?
    Nothing breaks, but an import nobody uses is a claim about the model that is
    not true: runtimes that do not know the domain refuse the model for it (an
    unused com.microsoft import keeps a model off runtimes without onnxruntime's
    contrib ops), and it usually marks a node that a tool removed or forgot to
    write.

    ## Example
    ```
    opset_import: [{domain: "", version: 13}, {domain: "com.microsoft", version: 1}]
    nodes: QuantizeLinear, DequantizeLinear, Conv     # nothing in com.microsoft
    ```

    ## Fix
    Remove the import (the finding carries that edit).
    """

    code = "QL109"
    name = "unused-opset-import"
    severity = INFO
    summary = "An opset import no node uses."

    fixable = True

    def check_model(self, view):
        model_used: set[str] = set()
        fn_used: dict[int, set[str]] = {}  # id(FunctionProto) -> domains its body uses
        for body in view.bodies:
            used = {schema.normalize_domain(d) for d in {d for d, _ in body.kinds}}
            model_used |= used
            top = body
            while top.parent is not None:  # a subgraph inside a function counts for it
                top = top.parent
            if top.is_function:
                fn_used.setdefault(id(top.owner), set()).update(used)
        yield from _unused(view, view.model.opset_import, model_used, "main", "model")
        for fn in view.model.functions:
            path = function_path(fn)
            yield from _unused(view, fn.opset_import, fn_used.get(id(fn), set()), path, "function")


def _unused(view, imports, used, graph, owner):
    for imp in imports:
        d = schema.normalize_domain(imp.domain)
        if d == schema.AI_ONNX or d in used:
            continue
        name = schema.domain_name(d)
        at = view.site(graph, f"opset_import {name}", f"opset import {name} {imp.version}", d,
                       imp.version)
        yield Violation(f"no node of the {owner} is in {name}: remove the import",
                        Fix(f"remove the import of {name}", (RemoveOpsetImport(d),)), at=at)
