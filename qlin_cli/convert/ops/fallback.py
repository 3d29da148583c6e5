"""onnx.version_converter on one node across one step, for steps qlin has no adapter for.

The converter drops model-local functions and metadata and stops at the first op it
cannot adapt, so qlin never runs it on a whole model: the node goes alone, with its
constant inputs, and its replacement comes back with fresh value names. Its rewrite
is not exact by construction: the caller proves it with onnx.reference.
"""

from __future__ import annotations

import onnx
from onnx import helper, version_converter

from ..refusal import Refusal
from .step import OpStep


def convert(step: OpStep, elem_types: dict[str, int], ir_version: int) -> Refusal | None:
    """Replace ``step.node`` by the converter's rewrite (``elem_types``: name -> element type)."""
    node = step.node
    inputs, inits = [], []
    for name in dict.fromkeys(n for n in node.input if n):
        value = step.const(name)
        if value is not None:
            inits.append(onnx.numpy_helper.from_array(value, name))
        inputs.append(helper.make_tensor_value_info(name, elem_types.get(name, 0), None))
    outputs = [helper.make_tensor_value_info(o, elem_types.get(o, 0), None) for o in node.output if o]
    graph = helper.make_graph([node], "one_node", inputs, outputs, inits)
    tiny = helper.make_model(graph, opset_imports=[helper.make_opsetid("", step.frm)])
    tiny.ir_version = ir_version
    try:
        done = version_converter.convert_version(tiny, step.to)
    except Exception as e:  # the converter raises RuntimeError / ValueError with C++ text
        text = str(e).strip().splitlines()[-1] if str(e).strip() else type(e).__name__
        return Refusal(f"no adapter, and onnx.version_converter fails: {text.split('failed: ')[-1][:160]}")
    keep = set(node.input) | set(node.output)
    renamed: dict[str, str] = {}
    for n in done.graph.node:
        for o in n.output:
            if o and o not in keep and o not in renamed:
                renamed[o] = step.namer(f"{node.name or node.op_type}_{o.strip('_')}")
    had = {t.name for t in inits}
    for t in done.graph.initializer:  # constants the converter made become Constant nodes
        if t.name not in had:
            renamed[t.name] = step.add_const(t.name.strip("_"), onnx.numpy_helper.to_array(t))
    made = []
    for n in done.graph.node:
        new = onnx.NodeProto()
        new.CopyFrom(n)
        new.input[:] = [renamed.get(i, i) for i in n.input]
        new.output[:] = [renamed.get(o, o) for o in n.output]
        made.append(new)
    main = next((n for n in made if n.op_type == node.op_type), None)
    if main is None:
        return Refusal("onnx.version_converter replaced the op with others")
    stray = [i for n in made for i in n.input if i and i not in keep and i not in renamed.values()]
    if stray:
        return Refusal(f"onnx.version_converter introduced inputs qlin cannot place: {stray}")
    main.name, main.doc_string = node.name, node.doc_string
    del main.metadata_props[:]
    main.metadata_props.extend(node.metadata_props)
    at = made.index(main)
    step.before.extend(made[:at])
    step.after.extend(made[at + 1:])
    node.CopyFrom(main)
    step.exact = False
    step.changes.append(f"onnx.version_converter {step.frm} -> {step.to}")
    return None
