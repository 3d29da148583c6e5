"""--to-int8 and --weights strip in a model-local function called with two signatures: its body (and the
If branches in it) is read once per signature, and both readings must rewrite each node the
same way. Each node's new zero point is named once for both readings (Context.name_once); it
had a new name per reading, and the conversion was refused (QC301)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from qlin_cli.convert.run import Options, convert_model


def _branch(tag: str) -> onnx.GraphProto:
    inits = [numpy_helper.from_array(np.array(0.5, np.float32), f"s_{tag}"),
             numpy_helper.from_array(np.array(100, np.uint8), f"zp_{tag}")]
    nodes = [helper.make_node("QuantizeLinear", ["x", f"s_{tag}", f"zp_{tag}"], [f"q_{tag}"]),
             helper.make_node("DequantizeLinear", [f"q_{tag}", f"s_{tag}", f"zp_{tag}"], [f"o_{tag}"])]
    out = helper.make_tensor_value_info(f"o_{tag}", TensorProto.FLOAT, None)
    return helper.make_graph(nodes, tag, [], [out], inits)


def _model() -> onnx.ModelProto:
    fn = helper.make_function("local", "F", ["c", "x"], ["y"],
                              [helper.make_node("If", ["c"], ["y"], then_branch=_branch("t"),
                                                else_branch=_branch("e"))],
                              [helper.make_opsetid("", 13)])
    nodes = [helper.make_node("F", ["c", "x"], ["y"], domain="local"),
             helper.make_node("F", ["c", "x2"], ["y2"], domain="local")]
    ins = [helper.make_tensor_value_info("c", TensorProto.BOOL, []),
           helper.make_tensor_value_info("x", TensorProto.FLOAT, [4]),
           helper.make_tensor_value_info("x2", TensorProto.FLOAT, [2, 2])]
    outs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4]),
            helper.make_tensor_value_info("y2", TensorProto.FLOAT, [2, 2])]
    g = helper.make_graph(nodes, "g", ins, outs)
    imports = [helper.make_opsetid("", 13), helper.make_opsetid("local", 1)]
    return helper.make_model(g, opset_imports=imports, functions=[fn], ir_version=8)


def test_a_function_read_twice_moves_to_int8_once():
    model = _model()
    onnx.checker.check_model(model, full_check=True)
    r = convert_model(model, "", Options(13, to_int8=True))
    assert r.model is not None and r.refused == [], [f.message for f in r.refused]
    branches = [a.g for a in r.model.functions[0].node[0].attribute]
    assert all(TensorProto.UINT8 not in {t.data_type for t in b.initializer} for b in branches)
    onnx.checker.check_model(r.model, full_check=True)
    ort = pytest.importorskip("onnxruntime")
    x = np.array([0.3, -1.2, 5.0, 40.0], np.float32)
    for c in (True, False):
        feeds = {"c": np.array(c), "x": x, "x2": x.reshape(2, 2)}
        sessions = [ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
                    for m in (model, r.model)]
        got = [s.run(None, feeds) for s in sessions]
        assert all(a.tobytes() == b.tobytes() for a, b in zip(*got, strict=True))


def test_strip_in_a_function_read_twice_leaves_no_quantize_linear():
    """--weights strip counted each reading of the function's subgraph as a reader of the
    QuantizeLinear's output, and read the second no more once the first was stripped: the
    QuantizeLinear (and its scale and zero point) stayed, read by nothing."""
    r = convert_model(_model(), "", Options(13, weights="strip"))
    assert r.model is not None and r.refused == []
    branches = [a.g for a in r.model.functions[0].node[0].attribute]
    assert [[n.op_type for n in b.node] for b in branches] == [["Identity"], ["Identity"]]
    assert [list(b.initializer) for b in branches] == [[], []]
    onnx.checker.check_model(r.model, full_check=True)
