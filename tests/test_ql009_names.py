"""QL009 asks onnx once per kind of node without attributes, and onnx's message names the
node it was given: each failing node's message names that node, not the first one alike."""

from __future__ import annotations

import onnx
from onnx import TensorProto, helper

from qlin_cli.check.engine import check_file


def test_each_failing_node_is_named_in_its_own_message(tmp_path):
    names = ["first", "second", "third"]
    nodes = [helper.make_node("MatMul", [prev, "x", "x"], [out], name=name)
             for prev, out, name in zip(["x", "a", "b"], ["a", "b", "c"], names, strict=True)]
    nodes.append(helper.make_node("MatMul", ["c", "x"], ["y"], name="fine"))
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 2])])
    path = str(tmp_path / "m.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    found = check_file(path, ["QL009"]).diagnostics
    assert [d.node for d in found] == names
    assert all(f"Node({d.node})" in d.message and "input size 3" in d.message for d in found)
