from .. import schema
from .base import ModelRule, Violation
from .base_validity import check_node, is_known, scope_opsets


class NodeSchema(ModelRule):
    """
    ## What it checks
    Every node of an op qlin has no schema of its own (Relu, Conv, If, a vendor op
    onnx knows ...), as onnx.checker checks a node: an op type, at least one input
    or output, attributes well formed (a name, a type matching the one value field
    set, each name once), an op that exists at the opset its domain is imported at
    (for ai.onnx, ai.onnx.ml and ai.onnx.training, whose ops onnx defines), not
    deprecated there, and the op's schema: the number of inputs and outputs, no
    attribute it does not define, every required attribute present and of its
    type. Quantization ops are judged by the QL1xx-QL4xx rules; a domain the scope
    does not import is QL103's.

    ## Why is this bad?
    Versioning.md: "The union of the operator sets specified by a given model MUST
    have a compatible operator declaration for each node in the model's graph."
    IR.md: an attribute's name "Must be unique among attributes, inputs, and
    outputs for any given operator and node"; onnx.proto: "An AttributeProto MUST
    contain the name field, and *only one* of the following content fields". A node
    that breaks its op's declaration has no defined meaning: onnx.checker rejects
    the model ("No Op registered for ...", "has input size 2 not in range",
    "Required attribute 'axis' is missing") and onnxruntime fails to load it.

    ## Example
    ```
    Concat(a, b) -> c             # Concat's axis is required
    Relu(x, y) -> z               # Relu takes one input
    ```

    ## Fix
    Write the node as its op's version at the imported opset declares it, or import
    the opset whose version of the op the node was written for.
    """

    code = "QL009"
    name = "node-schema"
    summary = "A node that its op's schema at the imported opset does not allow."

    def check_model(self, view):
        ir = view.model.ir_version or 1
        for body in view.bodies:
            opsets = scope_opsets(body)
            attributed = set(body.attributed)
            verdicts: dict = {}  # a node without attributes: its verdict by op and arity
            skip = {kind: is_known(kind[0], kind[1]) or schema.opset_of(opsets, kind[0]) is None
                    for kind in set(body.kinds)}  # the Q/DQ rules judge those; QL103 unimported ones
            kinds, nodes = body.kinds, body.nodes
            for i in [i for i, kind in enumerate(kinds) if not skip[kind]]:
                node = nodes[i]
                domain, op = kinds[i]
                if i in attributed:
                    why = check_node(node, ir, opsets)
                else:
                    ins, outs = body.io[i]
                    key = (domain, op, tuple(map(bool, ins)), len(outs), bool(node.name))
                    why = verdicts[key] if key in verdicts else verdicts.setdefault(
                        key, check_node(node, ir, opsets))
                if why:
                    yield Violation(why, at=view.node_site(body, i))
