"""Bugs the shared structure fixed, each pinned by a test.

* A one-element 1-D scale is per-tensor in convert as in check (schema.semantics):
  bias DequantizeLinear nodes with shape-[1] scales and no axis convert across
  domains and down to opset 10.
* training_info graphs are walked: their Q/DQ nodes are checked and their external
  data is held to the same safety rules.
* The evaluator reads block_size > 0 as blocked whatever the scale's shape, as
  check does (QL407), instead of silently ignoring it for a one-element scale.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from builders import make, tensor
from onnx import TensorProto, helper

from qlin_cli.check.engine import check_model
from qlin_cli.convert.run import Options, convert_model
from qlin_cli.errors import QlinError
from qlin_cli.evaluator import EvaluationError, run_node
from qlin_cli.model.safety import validate_model_files


def _bias_dq(domain: str, opset: int) -> onnx.ModelProto:
    """int32 bias dequantized with a shape-[1] scale and no axis, as quantizers write it."""
    nodes = [helper.make_node("DequantizeLinear", ["b", "s"], ["y"], name="bias_dq", domain=domain)]
    graph = helper.make_graph(nodes, "g", [], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [8])],
                              initializer=[tensor("b", np.arange(8), "int32"),
                                           tensor("s", np.array([0.02], np.float32))])
    imports = {"": opset} if not domain else {"": opset, domain: 1}
    return make(graph, imports)


@pytest.mark.parametrize("domain, opset, to_domain, to_opset", [
    ("com.microsoft", 13, "ai.onnx", 13),
    ("", 13, None, 10),
    ("", 21, "com.microsoft", 21),
])
def test_one_element_scale_is_per_tensor_in_convert(domain, opset, to_domain, to_opset):
    model = _bias_dq(domain, opset)
    assert not [d for d in check_model(model, ".") if d.severity != "info"]
    result = convert_model(model, ".", Options(to_opset, to_domain))
    assert not result.refused, [r.detail for r in result.refused]
    assert result.verified == result.count("converted")
    node = result.model.graph.node[0]
    assert not any(a.name == "axis" for a in node.attribute)


def _training_model(q_attrs: dict) -> onnx.ModelProto:
    main = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "main",
                             [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                             [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    algo = helper.make_graph(
        [helper.make_node("QuantizeLinear", ["x", "s"], ["q"], name="train_q", **q_attrs)], "algo",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("q", TensorProto.UINT8, [2, 3])],
        initializer=[tensor("s", np.full(3, 0.5, np.float32))])
    model = make(main, {"": 21})
    info = model.training_info.add()
    info.algorithm.CopyFrom(algo)
    return model


def test_training_info_graphs_are_checked():
    found = check_model(_training_model({"axis": 7}), ".")
    assert [(d.code, d.node, d.graph) for d in found] == [("QL401", "train_q", "training_info[0].algorithm")]
    assert check_model(_training_model({"axis": 1}), ".") == []


def test_training_info_external_data_is_held_to_the_safety_rules(tmp_path):
    model = _training_model({"axis": 1})
    s = model.training_info[0].algorithm.initializer[0]
    s.ClearField("raw_data")
    s.data_location = TensorProto.EXTERNAL
    for k, v in (("location", "../../etc/passwd"), ("offset", "0"), ("length", "12")):
        e = s.external_data.add()
        e.key, e.value = k, v
    with pytest.raises(QlinError, match="passwd|outside|escape"):
        validate_model_files(model, str(tmp_path), "m.onnx")


def test_evaluator_reads_block_size_as_blocked_like_check():
    node = helper.make_node("QuantizeLinear", ["x", "s"], ["y"], block_size=2)
    x = np.zeros((2, 4), np.float32)
    with pytest.raises(EvaluationError, match="blocked scale"):
        run_node(node, 21, [x, np.array([0.5], np.float32)])
    codes = {d.code for d in check_model(_block_one(), ".")}
    assert "QL406" in codes or "QL407" in codes


def _block_one() -> onnx.ModelProto:
    graph = helper.make_graph(
        [helper.make_node("QuantizeLinear", ["x", "s"], ["y"], name="q", block_size=2)], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("y", TensorProto.UINT8, [2, 4])],
        initializer=[tensor("s", np.array([0.5], np.float32))])
    return make(graph, {"": 21})
