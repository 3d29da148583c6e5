from itertools import compress

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
            verdicts: dict = {}  # a node without attributes: whether it passes, by op and arity
            # (not the ops the Q/DQ rules judge, nor those of a domain not imported: QL103's)
            judged = {kind: not (is_known(kind[0], kind[1]) or schema.opset_of(opsets, kind[0]) is None)
                      for kind in set(body.kinds)}
            kinds, nodes, io = body.kinds, body.nodes, body.io
            # the nodes to judge, found at C speed (most of a quantized model's are Q/DQ)
            for i in compress(range(len(kinds)), map(judged.__getitem__, kinds)):
                node = nodes[i]
                if i in attributed:
                    why = check_node(node, ir, opsets)
                else:
                    ins, outs = io[i]
                    # (the inputs that are there: all, on most nodes)
                    key = (kinds[i], len(ins) if "" not in ins else tuple(map(bool, ins)), len(outs),
                           bool(node.name))
                    why = verdicts.get(key, False)
                    if why is False:
                        why = verdicts[key] = check_node(node, ir, opsets)
                    elif why is not None:  # (onnx's message names the node: each failing one its own)
                        why = check_node(node, ir, opsets)
                if why:
                    yield Violation(why, at=view.node_site(body, i))
