"""QL205 on node metadata_props, a field of IR 10: named on the first node holding it, in any
body, and not at IR 10."""

from __future__ import annotations

import onnx
import pytest
from onnx import TensorProto, helper

from qlin_cli.check.engine import check_file


def _model(ir: int, marked: int | None) -> onnx.ModelProto:
    nodes = [helper.make_node("Relu", [f"v{i}"], [f"v{i + 1}"], name=f"r{i}") for i in range(6)]
    if marked is not None:
        entry = nodes[marked].metadata_props.add()
        entry.key, entry.value = "origin", "exporter"
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("v0", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("v6", TensorProto.FLOAT, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = ir
    return model


@pytest.mark.parametrize("ir, marked, named", [(9, 4, "r4"), (9, None, None), (10, 4, None), (8, 0, "r0")])
def test_node_metadata_needs_ir_10(tmp_path, ir, marked, named):
    path = str(tmp_path / "m.onnx")
    onnx.save(_model(ir, marked), path)
    found = [d for d in check_file(path, ["QL205"]).diagnostics if "metadata_props" in d.message]
    assert [d.node for d in found] == ([named] if named else [])
