"""The targets' sites of a body whose facts the check did not read (a converted model's) read
them all at once (ModelView.read_all, which targets/predict.py asks): the same facts, field by
field, as ModelView.facts reads one at a time, and as read_facts reads a node alone."""

from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from qlin_cli.model.analysis import analyze
from qlin_cli.model.facts import read_facts


def _model():
    """Per-tensor and per-axis (an axis attribute) Q/DQ nodes, then a MatMul and a Relu (ops
    of no family qlin knows: no facts), at opset 13."""
    inits = [numpy_helper.from_array(np.float32(0.05), "s"), numpy_helper.from_array(np.uint8(128), "z"),
             numpy_helper.from_array(np.ones((4, 4), np.int8), "w"),
             numpy_helper.from_array(np.full(4, 0.01, np.float32), "ws"),
             numpy_helper.from_array(np.zeros(4, np.int8), "wz")]
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], name="q"),
             helper.make_node("DequantizeLinear", ["q", "s", "z"], ["a"], name="dqa"),
             helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["b"], name="dqw", axis=1),
             helper.make_node("MatMul", ["a", "b"], ["m"], name="mm"),
             helper.make_node("Relu", ["m"], ["y"], name="relu")]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


def _fields(f) -> tuple:
    return (f.op, f.domain, f.opset, f.imported, f.spec, f.in_typed, f.out_typed, f.attr_items, f.values,
            f.inputs, f.outputs, f.location)


def test_the_facts_read_at_once_are_those_read_one_by_one():
    model = _model()
    one_by_one = analyze(model, "")
    body = one_by_one.bodies[0]
    want = {i: one_by_one.facts(body, i) for i in range(len(body.nodes))}
    # (and as read_facts gives them from the node alone: its names and attributes read from it)
    alone = {i: read_facts(n, i, body.scope, "") for i, n in enumerate(body.nodes) if want[i] is not None}
    assert all(_fields(f) == _fields(want[i]) for i, f in alone.items())
    at_once = analyze(model, "")
    body = at_once.bodies[0]
    first = at_once.facts(body, 1)  # a node read before: kept as it is
    at_once.read_all(body)
    assert body.facts[1] is first
    assert sorted(body.facts) == [i for i, f in want.items() if f is not None] == [0, 1, 2]
    for i, f in body.facts.items():
        assert _fields(f) == _fields(want[i]), i
    assert body.facts[2].attr_items and not body.facts[1].attr_items
