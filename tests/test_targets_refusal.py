"""`qlin convert --target` refuses with the target's own findings (issue: a uint4 blocked
model for TensorRT 11 was refused because 'block_size is not defined at opset 20', while
`qlin check --target` named the real reasons)."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from qlin_cli.targets import predict


def uint4_blocked() -> onnx.ModelProto:
    w = helper.make_tensor("w", TensorProto.UINT4, [4, 8], np.arange(32) % 16)
    s = numpy_helper.from_array(np.full((4, 2), 0.1, np.float32), "s")
    z = helper.make_tensor("z", TensorProto.UINT4, [4, 2], [8] * 8)
    nodes = [helper.make_node("DequantizeLinear", ["w", "s", "z"], ["wf"], name="dq", axis=1, block_size=4),
             helper.make_node("MatMul", ["x", "wf"], ["y"], name="mm")]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 8])], [w, s, z])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
    m.ir_version = 10
    onnx.checker.check_model(m, full_check=True)
    return m


def test_refusal_names_the_targets_own_findings():
    m = uint4_blocked()
    found = [f for f in predict.findings(m, ".", ["tensorrt-11"]) if f.severity == "error"]
    plan = predict.plan(m, ".", "tensorrt-11")
    assert plan.needed and plan.choice is None
    assert [(p.code, p.detail) for p in plan.blocking] == [(f.code, f.detail) for f in found]
    assert {p.code for p in plan.blocking} == {"QT202", "QT301", "QT306"}
    assert not any("cannot be written" in p.detail for p in plan.blocking)
    assert not any(p.convertible for p in plan.blocking)
