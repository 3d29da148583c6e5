"""Models nobody here wrote check clean: onnx's backend node cases and
onnxruntime's quantizer output."""

from __future__ import annotations

import warnings

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from qlin_cli.check.engine import check_file, check_model


def _backend_cases():
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = collect_testcases()
    return [c for c in cases if c.name.split("_")[1] in ("quantizelinear", "dequantizelinear")]


CASES = _backend_cases()


def test_backend_cases_found():
    assert len(CASES) >= 25
    assert {c.name.split("_")[1] for c in CASES} == {"quantizelinear", "dequantizelinear"}


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_onnx_backend_case_checks_clean(case):
    found = [d for d in check_model(case.model, ".") if d.severity != "info"]
    assert found == [], [d.message for d in found]


def _float_model(path):
    rng = np.random.default_rng(1)
    w1 = rng.standard_normal((16, 8, 3, 3)).astype(np.float32)
    w2 = rng.standard_normal((16 * 6 * 6, 10)).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["c"], name="conv"),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("Flatten", ["r"], ["f"], name="flat"),
        helper.make_node("MatMul", ["f", "w2"], ["y"], name="fc"),
    ]
    graph = helper.make_graph(
        nodes, "small",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])],
        initializer=[onnx.numpy_helper.from_array(w1, "w1"), onnx.numpy_helper.from_array(w2, "w2")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    onnx.save(model, path)


class _Reader:
    def __init__(self):
        rng = np.random.default_rng(2)
        self.data = iter([{"x": rng.standard_normal((1, 8, 8, 8)).astype(np.float32)}
                          for _ in range(4)])

    def get_next(self):
        return next(self.data, None)


@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("extra", [{}, {"UseQDQContribOps": True}], ids=["ai.onnx", "com.microsoft"])
def test_onnxruntime_quantizer_output_checks_clean(tmp_path, per_channel, extra):
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    src, dst = str(tmp_path / "f.onnx"), str(tmp_path / "q.onnx")
    _float_model(src)
    reader = type("R", (_Reader, CalibrationDataReader), {})()
    quantize_static(src, dst, reader, quant_format=QuantFormat.QDQ, per_channel=per_channel,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                    extra_options=dict(extra))
    result = check_file(dst)
    assert result.error is None
    model = onnx.load(dst)
    qdq = [n for n in model.graph.node if n.op_type in ("QuantizeLinear", "DequantizeLinear")]
    assert len(qdq) >= 6
    if extra:
        assert {n.domain for n in qdq} == {"com.microsoft"}
    if per_channel:
        assert any(n.attribute for n in qdq)  # per-channel weights carry an axis
    bad = [d for d in result.diagnostics if d.severity != "info"]
    assert bad == [], [d.message for d in bad]
