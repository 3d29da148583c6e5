"""What a conversion reads as a constant (convert/sites.py ``constants``): a subgraph's formal
input hides an outer initializer of the same name, as IR.md's scoping makes it (the body reads
the value the Loop gives it). A DequantizeLinear in a Loop body reading its input 's', with an
initializer 's' in the main graph: --weights unfold once computed the weights at the outer
0.5, where the body's 's' doubles at each iteration (onnxruntime then gave other outputs)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from qlin_cli.convert.run import Options, convert_model
from qlin_cli.convert.sites import constant_tensor, sites


def _loop() -> onnx.ModelProto:
    body = helper.make_graph(
        [helper.make_node("DequantizeLinear", ["W", "s", "zp"], ["w"], name="dq"),
         helper.make_node("Identity", ["cond"], ["cond_out"]),
         helper.make_node("Mul", ["s", "s"], ["s_out"]),
         helper.make_node("Identity", ["w"], ["scan_out"])],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
         helper.make_tensor_value_info("s", TensorProto.FLOAT, [])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("s_out", TensorProto.FLOAT, []),
         helper.make_tensor_value_info("scan_out", TensorProto.FLOAT, [4])])
    inits = [numpy_helper.from_array(np.array(0.5, np.float32), "s"),
             numpy_helper.from_array(np.array([1, 200, 3, 4], np.uint8), "W"),
             numpy_helper.from_array(np.array(100, np.uint8), "zp")]
    g = helper.make_graph([helper.make_node("Loop", ["n", "", "s0"], ["s_final", "ys"], body=body)], "g",
                          [helper.make_tensor_value_info("n", TensorProto.INT64, []),
                           helper.make_tensor_value_info("s0", TensorProto.FLOAT, [])],
                          [helper.make_tensor_value_info("ys", TensorProto.FLOAT, [None, 4])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


def test_a_subgraph_input_hides_the_outer_initializer():
    model = _loop()
    onnx.checker.check_model(model, full_check=True)
    dq = next(s for s in sites(model) if s.node.name == "dq")
    assert constant_tensor(dq.scope, "s") is None and constant_tensor(dq.scope, "W") is not None
    r = convert_model(model, "", Options(13, weights="unfold"))
    assert r.model is None or not r.rewritten, [e.changes for e in r.entries]
    if r.model is not None:
        ort = pytest.importorskip("onnxruntime")
        feeds = {"n": np.array(2, np.int64), "s0": np.array(2.0, np.float32)}

        def run(m):
            opts = ort.SessionOptions()
            opts.log_severity_level = 4
            session = ort.InferenceSession(m.SerializeToString(), opts, providers=["CPUExecutionProvider"])
            return session.run(None, feeds)[0].tobytes()

        assert run(r.model) == run(model)
