import re

from .base import ModelRule, Violation
from .base_validity import check_node, is_known, redefined, scope_opsets, undefined

# onnx's strict inference names the node each error comes from, after the error's kind:
# "[ShapeInferenceError] (op_type:Add, node name: n): ..." (the kind may stand first or not)
_KIND = re.compile(r"^\[\w+\] ")
_HEAD = re.compile(r"^\(op_type:(?P<op>[^,)]*)(?:, node name: (?P<name>.*?))?\): (?P<why>.*)$", re.S)
_NAMED = re.compile(r"for node name (?P<name>.*?)\. (?P<why>.*)$", re.S)


class InferenceError(ModelRule):
    """
    ## What it checks
    What onnx's shape and type inference finds when it runs as onnx.checker's
    full_check runs it (types checked, every error kept): inputs of types the op
    does not accept together (Add of float and int64), shapes the op cannot take
    (a MatMul whose inner dimensions differ), a declared type that is not the one
    the node produces. Each error is placed on the node onnx names (an error
    inside a subgraph, on the node holding it).

    ## Why is this bad?
    Each op's page states the types its inputs must share ("Constrain input and
    output types to ...") and the shapes it accepts (MatMul: "Matrix product that
    behaves like numpy.matmul"); IR.md: a value's declared type is its type. A
    node that breaks them has no result: onnx.checker.check_model(full_check=True)
    rejects the model, onnxruntime fails to load it.

    ## Example
    ```
    Add(x: float[2], w: int64[1]) -> y
    ```

    ## Fix
    Cast one input to the other's type (or store the initializer in it); make the
    shapes agree; declare the type the node produces.
    """

    code = "QL010"
    name = "inference-error"
    summary = "A node whose input types or shapes its op does not accept (onnx inference, strict)."

    def check_model(self, view):
        errors = getattr(view, "inference_errors", ())
        if not errors:
            return
        main = view.body("main")
        for text in errors:
            op, name, why = parse(text)
            index = _node(main, op, name)
            if index is None:
                at = view.site("main", "graph", f"graph main ({op or 'a'} node {name!r})")
            elif _said(view, main, index):
                continue  # said already: by the QL1xx-QL4xx rules (a quantization node) or QL003/4/9
            else:
                at = view.node_site(main, index)
            yield Violation(why, at=at)


def _said(view, body, index: int) -> bool:
    """Another rule says what is wrong with the node: a quantization node the rules read
    (unless its inputs are not tensors at all, a sparse initializer fed as a scale, which
    only inference sees), or a node QL003, QL004 or QL009 reports."""
    node = body.nodes[index]
    if is_known(node.domain, node.op_type):
        sparse = {s.values.name for s in body.owner.sparse_initializer} if not body.is_function else set()
        return sparse.isdisjoint(node.input)
    return _broken(view, body, index)


def _broken(view, body, index: int) -> bool:
    """The node breaks its schema (QL009), reads a value nothing defines (QL003) or
    redefines one (QL004): inference's error there follows from what those rules say."""
    node = body.nodes[index]
    if check_node(node, view.model.ir_version or 1, scope_opsets(body)) is not None:
        return True
    if not undefined(view, body).isdisjoint(node.input):
        return True
    return bool(redefined(view, body, node.output))


def parse(text: str) -> tuple[str, str, str]:
    """(op type, node name, the error) of one of onnx's strict inference errors."""
    body = _KIND.sub("", text.strip(), count=1)
    m = _HEAD.match(body)
    if m:
        return m["op"], m["name"] or "", " ".join(m["why"].split())
    m = _NAMED.search(body)
    if m:
        return "", m["name"], " ".join(m["why"].split())
    return "", "", " ".join(text.split())


def _node(main, op: str, name: str) -> int | None:
    """The main-graph node an error names: by name (and op type, when given); an unnamed one
    by op type when it is the only unnamed node of that op."""
    if main is None:
        return None
    found = [i for i, n in enumerate(main.nodes) if n.name == name and (not op or n.op_type == op)]
    if len(found) == 1 or (found and name):
        return found[0]
    return None
