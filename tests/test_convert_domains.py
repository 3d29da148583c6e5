"""Crossing domains: axis written where defaults differ, imports added and removed, refusals."""

from __future__ import annotations

import numpy as np
import onnx
from builders import qdq_model
from convert_builders import per_axis, q_model

from qlin_cli.convert.run import Options, convert_model


def _conv(model, opset, domain, **kw):
    return convert_model(model, ".", Options(opset, domain, **kw))


def _attrs(node):
    return {a.name: a.i for a in node.attribute}


def test_per_axis_to_microsoft_and_quark_writes_axis_explicitly():
    m = per_axis("QuantizeLinear", 21, axis=None)  # ai.onnx default axis 1
    for dom in ("com.microsoft", "com.amd.quark"):
        r = _conv(m, 21, dom)
        node = r.model.graph.node[0]
        assert _attrs(node) == {"axis": 1} and r.entries[0].verified
        assert {o.domain for o in r.model.opset_import} == {"", dom}
        onnx.checker.check_model(r.model, full_check=True)


def test_per_tensor_to_microsoft_drops_axis_and_back_removes_import():
    r = _conv(q_model(21, attrs={"axis": 0}), 13, "com.microsoft")
    assert r.model.graph.node[0].domain == "com.microsoft" and not r.model.graph.node[0].attribute
    back = _conv(r.model, 21, "ai.onnx")
    assert {o.domain for o in back.model.opset_import} == {""}
    assert back.model.graph.node[0].domain == ""


def test_quark_axis_kept_explicit_into_ai_onnx():
    m = per_axis("ExtendedDequantizeLinear", 21, domain="com.amd.quark", axis=1, q_type="int16")
    r = _conv(m, 21, "ai.onnx")
    assert _attrs(r.model.graph.node[0]) == {"axis": 1} and r.entries[0].verified


def test_quark_int32_quantize_refused_everywhere_but_quark():
    m = qdq_model(op="ExtendedQuantizeLinear", domain="com.amd.quark", opset=21,
                  scale=np.float32(0.5), zero_point=np.int32(0), zp_type="int32")
    for dom in ("ai.onnx", "com.microsoft"):
        r = _conv(m, 25, dom)
        assert r.model is None and "int32" in r.refused[0].detail
    assert _conv(m, 25, None).model is not None  # staying in Quark is fine


def test_blocked_and_float8_refused_in_microsoft():
    m = q_model(21, zero_point=np.float32(0), zp_type="float8e4m3fn")
    r = _conv(m, 21, "com.microsoft")
    assert r.model is None and "float8e4m3fn" in r.refused[0].detail


def test_microsoft_without_zero_point_keeps_uint8_default():
    m = qdq_model(domain="com.microsoft", opset=13, scale=np.float32(0.25))
    r = _conv(m, 13, "ai.onnx")
    assert r.model is not None and r.entries[0].verified
    assert list(r.model.graph.node[0].input) == ["x", "scale"]


def test_quark_per_axis_without_axis_needs_the_user_to_choose_a_reading():
    """Quark's page says axis defaults to 1, its kernel uses 0: convert does not guess."""
    model = per_axis("ExtendedQuantizeLinear", 13, domain="com.amd.quark", axis=None, q_type="int16",
                     channels=4)
    r = convert_model(model, ".", Options(21, "ai.onnx"))
    assert r.model is None and len(r.refused) == 1
    reason = r.refused[0].detail
    assert "page says the default is 1" in reason and "kernel uses 0" in reason
    assert r.refused[0].ways_out == ("--quark-axis 1", "--quark-axis 0") and r.refused[0].code == "QC101"
    # x is [3, 4] and the scale has 4 entries: only axis 1 fits, and the proof says so
    ok = convert_model(model, ".", Options(21, "ai.onnx", vendor_axis=1))
    assert not ok.refused and ok.verified == 1
    node = ok.model.graph.node[0]
    assert [(a.name, a.i) for a in node.attribute] == [("axis", 1)]
    wrong = convert_model(model, ".", Options(21, "ai.onnx", vendor_axis=0))
    assert wrong.model is None and "proof failed" in wrong.refused[0].detail
    assert [f.code for f in wrong.refused] == ["QC401"]
