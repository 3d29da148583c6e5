"""Every op other than Q/DQ: onnx.version_converter, one node at a time.

onnx.version_converter drops model-local functions and metadata and stops at
the first op it cannot adapt, so qlin never runs it on the whole model. A node
whose ai.onnx schema is the same at both opsets is left exactly as it is. A node
whose schema changes goes alone, with its constant inputs, through the
converter; its replacement nodes come back with fresh value names. When the
converter cannot adapt it, the error names the op, the node and the step.
"""

from __future__ import annotations

import onnx
from onnx import defs, helper, version_converter

from ..model.tensors import is_external
from .sites import Namer, Site


class OpNotConvertible(Exception):
    def __init__(self, where: str, op: str, step: str, why: str):
        super().__init__(f"{op} node {where} cannot go {step}: {why}")
        self.where, self.op, self.step, self.why = where, op, step, why


def since(op_type: str, opset: int) -> int | None:
    try:
        return defs.get_schema(op_type, opset, "").since_version
    except Exception:  # onnx raises SchemaError when the op does not exist yet
        return None


def needs_conversion(op_type: str, from_opset: int, to_opset: int) -> bool:
    return since(op_type, from_opset) != since(op_type, to_opset)


def _step_name(a: int, b: int) -> str:
    return f"from opset {a} to {b}"


def convert_node(site: Site, where: str, from_opset: int, to_opset: int, namer: Namer,
                 ir_version: int) -> list[onnx.NodeProto]:
    """Replacement nodes for one ai.onnx node across an opset change."""
    node = site.node
    step = _step_name(from_opset, to_opset)
    if since(node.op_type, to_opset) is None:
        first = since(node.op_type, defs.onnx_opset_version())
        raise OpNotConvertible(where, node.op_type, step,
                               f"{node.op_type} does not exist before opset {first}"
                               if first else "onnx.defs does not know this op")
    inputs, inits = [], []
    for name in dict.fromkeys(n for n in node.input if n):
        value = site.scope.find_value(name)
        t = site.scope.find_type(name)
        if value is not None and not is_external(value):
            init = onnx.TensorProto()
            init.CopyFrom(value)
            init.name = name
            inits.append(init)
        elem = t[0] if t is not None else 0
        shape = list(t[1]) if t is not None and t[1] is not None else None
        inputs.append(helper.make_tensor_value_info(name, elem, shape))
    outputs = []
    for name in (n for n in node.output if n):
        t = site.scope.find_type(name)
        outputs.append(helper.make_tensor_value_info(name, t[0] if t else 0, None))
    graph = helper.make_graph([node], "one_node", inputs, outputs, inits)
    tiny = helper.make_model(graph, opset_imports=[helper.make_opsetid("", from_opset)])
    tiny.ir_version = ir_version
    try:
        done = version_converter.convert_version(tiny, to_opset)
    except Exception as e:  # the converter raises RuntimeError / ValueError with C++ text
        text = str(e).strip().splitlines()[-1] if str(e).strip() else type(e).__name__
        raise OpNotConvertible(where, node.op_type, step,
                               f"onnx.version_converter: {text.split('failed: ')[-1][:200]}") from None
    keep = set(node.input) | set(node.output)
    renamed: dict[str, str] = {}
    for n in done.graph.node:
        for o in n.output:
            if o and o not in keep and o not in renamed:
                renamed[o] = namer(f"{node.name or node.op_type}_{o.strip('_')}")
    result = []
    had = {t.name for t in inits}
    for t in done.graph.initializer:  # constants the converter made: Constant nodes
        if t.name not in had:
            renamed[t.name] = namer(f"{node.name or node.op_type}_{t.name.strip('_')}")
            value = onnx.TensorProto()
            value.CopyFrom(t)
            value.name = ""
            result.append(helper.make_node("Constant", [], [renamed[t.name]], value=value))
    for n in done.graph.node:
        new = onnx.NodeProto()
        new.CopyFrom(n)
        new.input[:] = [renamed.get(i, i) for i in n.input]
        new.output[:] = [renamed.get(o, o) for o in n.output]
        if new.name and new.name != node.name:
            new.name = namer(new.name)
        result.append(new)
    # the original node's name, doc string and metadata stay on the node that replaces it
    main = next((n for n in result if n.op_type == node.op_type), None)
    if main is not None:
        main.name = node.name
        main.doc_string = node.doc_string
        del main.metadata_props[:]
        main.metadata_props.extend(node.metadata_props)
    if any(i not in keep and i not in renamed.values() and i for n in result for i in n.input):
        extra = [i for n in result for i in n.input if i and i not in keep and i not in renamed.values()]
        raise OpNotConvertible(where, node.op_type, step,
                               f"the converter introduced inputs qlin cannot place: {extra}")
    return result
