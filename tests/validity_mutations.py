"""One defect at a time, planted in a valid model: what the differential test against
onnx.checker (tests/test_validity_differential.py, and its fuzz target) is made of.

Each mutation takes a copy of a model and the graph to plant the defect in (the main graph,
a subgraph, or a function's body given as its FunctionProto) and changes one thing, or
returns False when the model has nothing it can change. Nothing here decides whether the
result is invalid: onnx.checker.check_model(full_check=True) does, and the test holds qlin
to it.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import AttributeProto, TensorProto, helper, numpy_helper

FRESH = "qlin_planted"


def _opset(model: onnx.ModelProto) -> int:
    return next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 1)


def _float_value(g) -> str | None:
    """A float value the graph defines (an input or a node output)."""
    if isinstance(g, onnx.FunctionProto):
        return g.input[0] if g.input else None
    for vi in g.input:
        if vi.type.tensor_type.elem_type == TensorProto.FLOAT:
            return vi.name
    for n in g.node:
        if n.op_type in ("DequantizeLinear", "Relu", "Conv", "MatMul", "Add") and n.output:
            return n.output[0]
    return None


PICK = [0]  # which node a mutation that picks one takes (the fuzz target varies it)


def undefined_input(model, g) -> bool:
    nodes = [n for n in g.node if n.input and n.input[0]]
    if not nodes:
        return False
    nodes[(len(nodes) // 2 + PICK[0]) % len(nodes)].input[0] = f"{FRESH}_missing"
    return True


def produced_twice(model, g) -> bool:
    nodes = [n for n in g.node if n.output and n.output[0]]
    if len(nodes) < 2:
        return False
    first = PICK[0] % (len(nodes) - 1)
    nodes[-1].output[0] = nodes[first].output[0]
    return True


def output_unproduced(model, g) -> bool:
    if isinstance(g, onnx.FunctionProto):
        return False
    g.output.append(helper.make_tensor_value_info(f"{FRESH}_nowhere", TensorProto.FLOAT, [1]))
    return True


def input_without_type(model, g) -> bool:
    if g is not model.graph or not g.input:
        return False
    g.input[0].ClearField("type")
    return True


def output_without_shape(model, g) -> bool:
    if g is not model.graph or not g.output:
        return False
    g.output[0].type.tensor_type.ClearField("shape")
    return True


def output_wrong_type(model, g) -> bool:
    if g is not model.graph or not g.output:
        return False
    tt = g.output[0].type.tensor_type
    tt.elem_type = TensorProto.INT64 if tt.elem_type != TensorProto.INT64 else TensorProto.FLOAT
    return True


def _add(g, node) -> bool:
    g.node.append(node)
    return True


def extra_input(model, g) -> bool:
    x = _float_value(g)
    return x is not None and _add(g, helper.make_node("Relu", [x, x], [f"{FRESH}_relu"],
                                                      name=f"{FRESH}_relu"))


def unknown_attribute(model, g) -> bool:
    x = _float_value(g)
    return x is not None and _add(g, helper.make_node("Relu", [x], [f"{FRESH}_r"], name=f"{FRESH}_r",
                                                      qlin_bogus=1))


def missing_required_attribute(model, g) -> bool:
    x = _float_value(g)
    return x is not None and _add(g, helper.make_node("Concat", [x, x], [f"{FRESH}_cat"],
                                                      name=f"{FRESH}_cat"))


def op_not_at_opset(model, g) -> bool:
    x = _float_value(g)
    later = {op: v for op, v in (("Gelu", 20), ("Mish", 18), ("Celu", 12), ("Shrink", 9))}
    opset = _opset(model)
    op = next((o for o, v in later.items() if v > opset), None)
    return x is not None and op is not None and _add(g, helper.make_node(op, [x], [f"{FRESH}_late"],
                                                                         name=f"{FRESH}_late"))


def unknown_op(model, g) -> bool:
    x = _float_value(g)
    return x is not None and _add(g, helper.make_node("QlinNoSuchOp", [x], [f"{FRESH}_u"], name=f"{FRESH}_u"))


def add_float_int64(model, g) -> bool:
    x = _float_value(g)
    if x is None or isinstance(g, onnx.FunctionProto):
        return False
    g.initializer.append(numpy_helper.from_array(np.array([1], np.int64), f"{FRESH}_i64"))
    return _add(g, helper.make_node("Add", [x, f"{FRESH}_i64"], [f"{FRESH}_sum"], name=f"{FRESH}_sum"))


def matmul_dims(model, g) -> bool:
    if isinstance(g, onnx.FunctionProto):
        return False
    g.initializer.extend([numpy_helper.from_array(np.ones((2, 3), np.float32), f"{FRESH}_a"),
                          numpy_helper.from_array(np.ones((4, 5), np.float32), f"{FRESH}_b")])
    return _add(g, helper.make_node("MatMul", [f"{FRESH}_a", f"{FRESH}_b"], [f"{FRESH}_mm"],
                                    name=f"{FRESH}_mm"))


def undefined_dtype(model, g) -> bool:
    if isinstance(g, onnx.FunctionProto) or not g.initializer:
        return False
    g.initializer[-1].data_type = TensorProto.UNDEFINED
    return True


def two_value_fields(model, g) -> bool:
    if isinstance(g, onnx.FunctionProto):
        return False
    t = numpy_helper.from_array(np.ones(2, np.float32), f"{FRESH}_two")
    t.float_data.extend([1.0, 1.0])
    g.initializer.append(t)
    return True


def duplicate_initializer(model, g) -> bool:
    if isinstance(g, onnx.FunctionProto) or not g.initializer:
        return False
    copy = TensorProto()
    copy.CopyFrom(g.initializer[0])
    g.initializer.append(copy)
    return True


def empty_graph_name(model, g) -> bool:
    if isinstance(g, onnx.FunctionProto):
        return False
    g.name = ""
    return True


def duplicate_graph_input(model, g) -> bool:
    if isinstance(g, onnx.FunctionProto) or not g.input:
        return False
    copy = onnx.ValueInfoProto()
    copy.CopyFrom(g.input[0])
    g.input.append(copy)
    return True


def node_without_io(model, g) -> bool:
    return _add(g, helper.make_node("Relu", [], [], name=f"{FRESH}_empty"))


def duplicate_attribute(model, g) -> bool:
    x = _float_value(g)
    if x is None:
        return False
    n = helper.make_node("Softmax", [x], [f"{FRESH}_sm"], name=f"{FRESH}_sm", axis=-1)
    n.attribute.append(helper.make_attribute("axis", -1))
    return _add(g, n)


def attribute_type_mismatch(model, g) -> bool:
    x = _float_value(g)
    if x is None:
        return False
    n = helper.make_node("Softmax", [x], [f"{FRESH}_sm2"], name=f"{FRESH}_sm2", axis=-1)
    n.attribute[0].type = AttributeProto.FLOAT
    return _add(g, n)


# ---- the model as a whole (the graph argument is ignored) ----
def ir_version_missing(model, g) -> bool:
    if g is not model.graph:
        return False
    model.ir_version = 0
    return True


def no_opset_import(model, g) -> bool:
    if g is not model.graph:
        return False
    del model.opset_import[:]
    return True


def duplicate_metadata_key(model, g) -> bool:
    if g is not model.graph:
        return False
    model.metadata_props.add(key="k", value="1")
    model.metadata_props.add(key="k", value="2")
    return True


def function_duplicate_output(model, g) -> bool:
    if not isinstance(g, onnx.FunctionProto) or not g.output:
        return False
    g.output.append(g.output[0])
    return True


MUTATIONS = {f.__name__: f for f in (
    undefined_input, produced_twice, output_unproduced, input_without_type, output_without_shape,
    output_wrong_type, extra_input, unknown_attribute, missing_required_attribute, op_not_at_opset,
    unknown_op, add_float_int64, matmul_dims, undefined_dtype, two_value_fields, duplicate_initializer,
    empty_graph_name, duplicate_graph_input, node_without_io, duplicate_attribute, attribute_type_mismatch,
    ir_version_missing, no_opset_import, duplicate_metadata_key, function_duplicate_output,
)}


def places(model: onnx.ModelProto) -> list[tuple[str, object]]:
    """(label, graph or function) of every place a defect can be planted: the main graph,
    each If/Loop/Scan subgraph of the main graph, each model-local function."""
    found: list[tuple[str, object]] = [("main", model.graph)]
    for n in model.graph.node:
        for a in n.attribute:
            if a.type == AttributeProto.GRAPH:
                found.append((f"{n.op_type}.{a.name}", a.g))
    found += [(f"function {fn.name}", fn) for fn in model.functions]
    return found


def mutate(model: onnx.ModelProto, kind: str, place: int, pick: int = 0) -> onnx.ModelProto | None:
    """A copy of ``model`` with one defect of ``kind`` planted at its ``place``-th place (at
    the ``pick``-th candidate node where the defect picks one), or None when the defect does
    not apply there."""
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    spots = places(copy)
    if place >= len(spots):
        return None
    PICK[0] = pick
    return copy if MUTATIONS[kind](copy, spots[place][1]) else None
