"""Models from onnxruntime's quantizer, converted across opsets and domains, run in onnxruntime."""

from __future__ import annotations

import os

import numpy as np
import onnx
import pytest
from convert_builders import quark_chain
from quantizer import quantize

from qlin_cli.check.engine import check_file
from qlin_cli.convert.run import Options, convert_model
from qlin_cli.convert.write import write_model

ort = pytest.importorskip("onnxruntime")


def _feeds(n=3):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((1, 8, 8, 8)).astype(np.float32) * 3
    return [{"x": x * k} for k in (1.0, 0.01, 40.0)][:n]


def _quantize(tmp, name, per_channel, act, weight, extra=None):
    return quantize(str(tmp), name, per_channel, act, weight, extra)


def _run(path, feeds):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    return [sess.run(None, f) for f in feeds]


def _same(a, b):
    for ra, rb in zip(a, b, strict=True):
        for x, y in zip(ra, rb, strict=True):
            assert x.dtype == y.dtype and x.tobytes() == y.tobytes()


def convert(src, dst, opset, **kw):
    model = onnx.load(src, load_external_data=False)
    result = convert_model(model, os.path.dirname(src), Options(opset, **kw))
    if result.model is not None:
        write_model(result.model, os.path.dirname(src), dst)
        onnx.checker.check_model(dst, full_check=True)
        r = check_file(dst)
        assert r.error is None and not [d for d in r.diagnostics if d.severity == "error"]
    return result


@pytest.fixture(scope="module")
def quantized(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ortq")
    return {
        "u8_tensor": _quantize(tmp, "u8_tensor", False, "QUInt8", "QInt8"),
        "s8_channel": _quantize(tmp, "s8_channel", True, "QInt8", "QInt8"),
        "u8_channel": _quantize(tmp, "u8_channel", True, "QUInt8", "QUInt8"),
        "ms16": _quantize(tmp, "ms16", True, "QInt16", "QInt8", {"UseQDQContribOps": True}),
        "int4": _quantize(tmp, "int4", True, "QUInt8", "QInt4"),
    }


@pytest.mark.parametrize("name", ["u8_tensor", "s8_channel", "u8_channel"])
@pytest.mark.parametrize("target", [(13, None), (19, None), (26, None), (21, "com.microsoft")],
                         ids=["13", "19", "26", "ms"])
def test_ort_outputs_identical_across_opsets_and_domains(quantized, tmp_path, name, target):
    src = quantized[name]
    dst = str(tmp_path / "out.onnx")
    r = convert(src, dst, target[0], to_domain=target[1])
    assert not r.refused, r.refused
    assert r.verified == r.count("converted") + r.count("lowered")
    _same(_run(src, _feeds()), _run(dst, _feeds()))
    back = str(tmp_path / "back.onnx")
    assert not convert(dst, back, 21, to_domain="ai.onnx" if target[1] else None).refused
    _same(_run(src, _feeds()), _run(back, _feeds()))


def test_per_tensor_down_to_opset_10(quantized, tmp_path):
    """Conv, Relu, Flatten and MatMul have only type changes from 10 to 21 (onnx.version_converter
    has no Flatten or MatMul down-adapter; qlin needs none): the whole model goes to opset 10 and
    onnxruntime gives the same bits."""
    src, dst = quantized["u8_tensor"], str(tmp_path / "o10.onnx")
    r = convert(src, dst, 10)
    assert not r.refused, [x.detail for x in r.refused]
    assert r.model.opset_import[0].version == 10
    _same(_run(src, _feeds()), _run(dst, _feeds()))


def test_16bit_contrib_ops_to_ai_onnx_and_lowered(quantized, tmp_path):
    src = quantized["ms16"]
    dst = str(tmp_path / "ms16_21.onnx")
    r = convert(src, dst, 21, to_domain="ai.onnx")
    assert not r.refused
    assert {n.domain for n in onnx.load(dst).graph.node} == {""}
    _same(_run(src, _feeds()), _run(dst, _feeds()))
    # ai.onnx 19 has no int16: refused with the ways out, nothing written
    r = convert(src, str(tmp_path / "no.onnx"), 19, to_domain="ai.onnx")
    assert r.model is None and r.refused
    assert any("--lower" in x.ways_out for x in r.refused)
    assert not os.path.exists(tmp_path / "no.onnx")
    low = str(tmp_path / "ms16_19_lowered.onnx")
    r = convert(src, low, 19, to_domain="ai.onnx", lower=True)
    assert not r.refused and r.count("lowered") > 0
    assert r.verified == r.count("converted") + r.count("lowered")
    _same(_run(src, _feeds()), _run(low, _feeds()))


def test_int4_weights_opset_21(quantized, tmp_path):
    src = quantized["int4"]
    for opset, dom in ((23, None), (21, "com.microsoft"), (26, None)):
        dst = str(tmp_path / f"int4_{opset}_{dom}.onnx")
        r = convert(src, dst, opset, to_domain=dom)
        assert not r.refused, r.refused
        _same(_run(src, _feeds()), _run(dst, _feeds()))
    r = convert(src, str(tmp_path / "x.onnx"), 19)
    assert r.model is None and any("int4" in x.detail for x in r.refused)


def test_quark_int16_to_ai_onnx_matches_ai_onnx_model(tmp_path):
    quark, plain = str(tmp_path / "quark.onnx"), str(tmp_path / "plain.onnx")
    onnx.save(quark_chain(True), quark)
    onnx.save(quark_chain(False), plain)
    dst = str(tmp_path / "converted.onnx")
    r = convert(quark, dst, 21, to_domain="ai.onnx")
    assert not r.refused and r.verified == 2
    out = onnx.load(dst)
    assert {o.domain for o in out.opset_import} == {""}
    rng = np.random.default_rng(3)
    feeds = [{"x": (rng.standard_normal((2, 16)) * k).astype(np.float32)} for k in (1, 100, 1000)]
    feeds.append({"x": np.array([[np.inf, -np.inf, 0.0, -0.0] * 4] * 2, np.float32)})
    _same(_run(plain, feeds), _run(dst, feeds))
    # and to com.microsoft, which has int16 too
    ms = str(tmp_path / "ms.onnx")
    assert not convert(quark, ms, 21, to_domain="com.microsoft").refused
    _same(_run(plain, feeds), _run(ms, feeds))
