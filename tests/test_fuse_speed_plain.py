"""The way back (`--to-format qoperator`) reads each node of a graph once, as a to_qdq.Plain
(to_qoperator.Graph.plain): its groups, their measuring cases and the maps of who writes and
reads each value are those the nodes themselves give."""

from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from qlin_cli.convert.formats import to_qoperator
from qlin_cli.convert.formats.to_qdq import plain
from qlin_cli.convert.run import Options, convert_model


def _qdq_model():
    rng = np.random.default_rng(2)
    inits = [numpy_helper.from_array(np.float32(0.05), "s"), numpy_helper.from_array(np.uint8(128), "z"),
             numpy_helper.from_array(rng.integers(-9, 9, (4, 4)).astype(np.int8), "w"),
             numpy_helper.from_array(rng.uniform(0.01, 0.02, 4).astype(np.float32), "ws"),
             numpy_helper.from_array(np.zeros(4, np.int8), "wz")]
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
             helper.make_node("DequantizeLinear", ["q", "s", "z"], ["a"], name="dqa"),
             helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["b"], name="dqw", axis=1),
             helper.make_node("MatMul", ["a", "b"], ["m"], name="mm"),
             helper.make_node("QuantizeLinear", ["m", "s", "z"], ["y_q"], name="qy"),
             helper.make_node("DequantizeLinear", ["y_q", "s", "z"], ["y"]),
             helper.make_node("Relu", ["a"], ["r"])]  # a second reader of a: its DequantizeLinear stays
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4]),
                           helper.make_tensor_value_info("r", TensorProto.FLOAT, [2, 4])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


def test_the_graph_maps_are_the_nodes_own():
    nodes = list(_qdq_model().graph.node)
    g = to_qoperator.Graph(nodes, {"y", "r"}, {})
    assert g.plain == [plain(n) for n in nodes]
    writer, readers = {}, {}
    for i, n in enumerate(nodes):
        writer.update({o: i for o in n.output if o})
        for x in n.input:
            if x:
                readers.setdefault(x, []).append(i)
    assert (g.writer, g.readers) == (writer, readers)


def test_a_group_and_its_case_read_as_the_nodes_say(monkeypatch):
    """The fused node and its case's nodes before (as protos and as their Plain twins)."""
    from qlin_cli.convert.formats import fuse

    model = _qdq_model()
    cases = []
    real = fuse._case
    monkeypatch.setattr(fuse, "_case", lambda *a: cases.append(real(*a)) or cases[-1])
    r = convert_model(model, "", Options(13, to_format="qoperator", tolerance=255))
    assert [n.op_type for n in r.model.graph.node] == ["QuantizeLinear", "DequantizeLinear", "QLinearMatMul",
                                                        "DequantizeLinear", "Relu"]
    (case,) = cases
    assert [n.name for n in case.before] == ["dqa", "dqw", "mm", "qy"]
    assert case.plain["before"] == [plain(n) for n in case.before]
    assert set(case.consts) == {"s", "z", "w", "ws", "wz"} and set(case.inputs) == {"q"}
