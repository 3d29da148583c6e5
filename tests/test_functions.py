"""Model-local functions are read from their call sites: the types a call passes flow into
the body, for every rule of check and for convert's proof; a body called with two type
signatures is read for both."""

from __future__ import annotations

import numpy as np
import onnx
from builders import make, tensor
from onnx import TensorProto, helper

from qlin_cli.check.engine import check_model
from qlin_cli.convert.run import Options, convert_model

F, F16, I16 = TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.INT16


def _quantize_fn(opset: int, scale_inside: bool = False) -> onnx.FunctionProto:
    """Q(x, s, z) with x, s, z all formal inputs (the body declares no types), or with the
    scale a float Constant inside the body."""
    nodes = []
    inputs = ["x", "s", "z"]
    if scale_inside:
        nodes.append(helper.make_node("Constant", [], ["s"], value=helper.make_tensor("", F, [], [0.5])))
        inputs = ["x", "z"]
    nodes.append(helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], name="q_in_fn"))
    return helper.make_function("local", "Quant", inputs, ["y"], nodes,
                                [helper.make_opsetid("", opset)])


def _model(fn, calls, opset: int) -> onnx.ModelProto:
    """calls: [(x elem type, zero point array, zero point type)] one call each."""
    nodes, inputs, inits, outputs = [], [], [], []
    for i, (x_type, zp, zp_type) in enumerate(calls):
        inputs.append(helper.make_tensor_value_info(f"x{i}", x_type, [2, 3]))
        inits.append(tensor(f"z{i}", zp, zp_type))
        args = [f"x{i}", f"z{i}"] if len(fn.input) == 2 else [f"x{i}", f"s{i}", f"z{i}"]
        if len(fn.input) == 3:
            inits.append(tensor(f"s{i}", np.float32(0.25)))
        nodes.append(helper.make_node("Quant", args, [f"y{i}"], domain="local", name=f"call{i}"))
        outputs.append(helper.make_tensor_value_info(f"y{i}", TensorProto.UNDEFINED, None))
    graph = helper.make_graph(nodes, "g", inputs, outputs, inits)
    model = make(graph, {"": opset, "local": 1})
    model.functions.append(fn)
    return model


# These models leave the main graph's output shapes out (QL006); the tests are about functions.
VALIDITY = ["QL0"]


def test_types_flow_from_the_call_into_the_body():
    """int16 y is allowed from ai.onnx 21: in a function importing opset 19 it is an error,
    which only the call site's zero point type reveals."""
    model = _model(_quantize_fn(19), [(F, np.zeros((), np.int16), "int16")], 19)
    found = [(d.code, d.node, d.graph) for d in check_model(model, ".", ignore=VALIDITY)]
    assert ("QL201", "q_in_fn", "function local.Quant") in found, found
    ok = _model(_quantize_fn(19), [(F, np.zeros((), np.int8), "int8")], 19)
    assert [d.code for d in check_model(ok, ".", ignore=VALIDITY) if d.severity == "error"] == []


def test_a_body_called_with_two_signatures_is_checked_for_both():
    """x and y_scale share one type at opset 21: the float16 call breaks it, the float one not."""
    fn = _quantize_fn(21, scale_inside=True)
    model = _model(fn, [(F, np.zeros((), np.int8), "int8"), (F16, np.zeros((), np.int8), "int8")], 21)
    found = [(d.code, d.graph) for d in check_model(model, ".", ignore=VALIDITY) if d.severity == "error"]
    assert found == [("QL203", "function local.Quant [float16[2, 3], int8[]]")], found


def test_convert_proves_a_function_body_with_the_types_of_its_call():
    model = _model(_quantize_fn(21), [(F, np.zeros((), np.int8), "int8")], 21)
    r = convert_model(model, ".", Options(23, "com.microsoft"))
    assert not r.refused, [x.detail for x in r.refused]
    converted = [e for e in r.entries if e.action == "converted"]
    assert len(converted) == 1 and converted[0].verified
    assert r.model.functions[0].node[0].domain == "com.microsoft"


def test_signatures_that_need_different_rewrites_are_refused():
    """output_dtype has no place at opset 19: it becomes a zero point of the scale's shape,
    a scalar for one call and [3] for the other. One body cannot carry both."""
    q = helper.make_node("QuantizeLinear", ["x", "s"], ["y"], name="q_in_fn", output_dtype=TensorProto.INT8)
    fn = helper.make_function("local", "Quant", ["x", "s"], ["y"], [q], [helper.make_opsetid("", 21)])

    def model(scales):
        nodes, inputs, inits, outputs = [], [], [], []
        for i, sc in enumerate(scales):
            inputs.append(helper.make_tensor_value_info(f"x{i}", F, [2, 3]))
            inits.append(tensor(f"s{i}", sc))
            nodes.append(helper.make_node("Quant", [f"x{i}", f"s{i}"], [f"y{i}"], domain="local"))
            outputs.append(helper.make_tensor_value_info(f"y{i}", TensorProto.INT8, [2, 3]))
        m = make(helper.make_graph(nodes, "g", inputs, outputs, inits), {"": 21, "local": 1})
        m.functions.append(fn)
        return m

    same = convert_model(model([np.float32(0.5), np.float32(0.25)]), ".", Options(19))
    assert same.model is not None, [x.detail for x in same.refused]
    assert list(same.model.functions[0].node[-1].input)[2:]  # the zero point, once
    mixed = model([np.float32(0.5), np.full(3, 0.25, np.float32)])
    assert [d.code for d in check_model(mixed, ".") if d.severity == "error"] == []
    r = convert_model(mixed, ".", Options(19))
    assert r.model is None
    assert any("signatures that need different rewrites" in x.detail and x.code == "QC301"
               for x in r.refused), r.refused
