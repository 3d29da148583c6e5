from collections import defaultdict

from .. import schema
from .base import AddOpsetImport, Fix, ModelRule, RemoveOpsetImport, Violation


class DuplicateOpsetImport(ModelRule):
    """
    ## What it checks
    That the model, and each model-local function, imports each domain once ("" and
    "ai.onnx" being one domain).

    ## Why is this bad?
    IR.md (operator sets): the domain of an imported set "Must be unique among all
    sets". With two imports of one domain, which version the nodes bind to depends
    on the reader: onnx.checker keeps the last one silently, other tools the first.
    When both imports name the same version nothing is ambiguous, and the fix drops
    the repeat; with two versions, the model has to say which it means.

    ## Example
    ```
    opset_import: [{domain: "", version: 21}, {domain: "ai.onnx", version: 21}]
    ```

    ## Fix
    Keep one import of the domain (`qlin check --fix` does when the versions agree).
    """

    code = "QL012"
    name = "duplicate-opset-import"
    summary = "A domain imported more than once by the model or a function."

    fixable = True

    def check_model(self, view):
        owners = [("main", "model", view.model)] + [
            (f"function {fn.domain}.{fn.name}", "function", fn) for fn in view.model.functions]
        for graph, what, owner in owners:
            versions = defaultdict(list)
            for o in owner.opset_import:
                versions[schema.normalize_domain(o.domain)].append(o.version)
            for domain, found in versions.items():
                if len(found) < 2:
                    continue
                name = schema.domain_name(domain)
                at = view.site(graph, f"opset_import {name}", f"opset import {name}", domain, found[0])
                if len(set(found)) == 1:
                    yield Violation(
                        f"the {what} imports {name} {len(found)} times (version {found[0]}): keep one",
                        Fix(f"keep one import of {name} {found[0]}",
                            (RemoveOpsetImport(domain), AddOpsetImport(domain, found[0]))), at=at)
                else:
                    yield Violation(
                        f"the {what} imports {name} at versions {', '.join(map(str, found))}: keep the "
                        f"one its nodes were written for", at=at)
