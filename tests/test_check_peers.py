"""Models nobody here wrote check clean: onnx's backend node cases and
onnxruntime's quantizer output."""

from __future__ import annotations

import backend_cases
import onnx
import pytest
from quantizer import quantize

from qlin_cli.check.engine import check_file, check_model

CASES = list(backend_cases.cases())


def test_backend_cases_found():
    assert len(CASES) >= 25
    assert {c.name.split("_")[1] for c in CASES} == {"quantizelinear", "dequantizelinear"}


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_onnx_backend_case_checks_clean(case):
    found = [d for d in check_model(case.model, ".") if d.severity != "info"]
    assert found == [], [d.message for d in found]


@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("extra", [{}, {"UseQDQContribOps": True}], ids=["ai.onnx", "com.microsoft"])
def test_onnxruntime_quantizer_output_checks_clean(tmp_path, per_channel, extra):
    dst = quantize(str(tmp_path), "q", per_channel, extra=extra)
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


@pytest.mark.parametrize("act, weight, extra", [
    ("QUInt16", "QInt16", {"UseQDQContribOps": True}),
    ("QInt16", "QInt16", {}),
    ("QUInt8", "QInt4", {}),
], ids=["16bit-com.microsoft", "16bit-ai.onnx", "int4-weights"])
def test_wider_quantizer_outputs_check_clean(tmp_path, act, weight, extra):
    dst = quantize(str(tmp_path), "q", True, act, weight, extra)
    result = check_file(dst)
    assert result.error is None
    types = {i.data_type for i in onnx.load(dst).graph.initializer}
    assert types & {onnx.TensorProto.INT16, onnx.TensorProto.UINT16, onnx.TensorProto.INT4}
    bad = [d for d in result.diagnostics if d.severity != "info"]
    assert bad == [], [d.message for d in bad]
