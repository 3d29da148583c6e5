"""Each measured semantic divergence (QT4xx) of a target, shown on a probe where the runtime
computes something else than the spec (qlin's evaluator), and predicted by qlin; and a near
miss where the runtime agrees with the spec and qlin predicts nothing.

The probes are the edge values that separate the two computations (ties, quotients near a
rounding boundary, values beyond the float8 range); the generated matrix of
tests/test_targets_matrix.py covers random inputs.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from test_targets_matrix import _ov, codes, run_onnxruntime, run_openvino, runtime_codes

from qlin_cli.evaluator import evaluate
from qlin_cli.targets import predict

needs_openvino = pytest.mark.skipif(_ov is None, reason="openvino is not installed")


def _model(nodes, inputs, outputs, inits, opset=21, extra_imports=()):
    graph = helper.make_graph(nodes, "probe", inputs, outputs, initializer=inits)
    imports = [helper.make_opsetid("", opset), *[helper.make_opsetid(d, v) for d, v in extra_imports]]
    model = helper.make_model(graph, opset_imports=imports)
    model.ir_version = 10
    return model


def quantize(x: np.ndarray, scale, zp, *, opset=21, attrs=None, x_type=TensorProto.FLOAT, domain=""):
    """A model with one quantize of graph input x; scale and zero point are initializers."""
    inits = [numpy_helper.from_array(np.asarray(scale), "s")]
    names = ["x", "s"]
    if zp is not None:
        inits.append(numpy_helper.from_array(np.asarray(zp), "zp"))
        names.append("zp")
    node = helper.make_node("QuantizeLinear", names, ["y"], name="q", domain=domain, **(attrs or {}))
    imports = [(domain, 1)] if domain else []
    return _model(
        [node],
        [helper.make_tensor_value_info("x", x_type, list(x.shape))],
        [onnx.ValueInfoProto(name="y")],
        inits,
        opset,
        imports,
    )


def dequantize(q: np.ndarray, scale, zp=None, *, opset=21, attrs=None):
    inits = [numpy_helper.from_array(q, "x"), numpy_helper.from_array(np.asarray(scale), "s")]
    names = ["x", "s"]
    if zp is not None:
        inits.append(numpy_helper.from_array(np.asarray(zp), "zp"))
        names.append("zp")
    node = helper.make_node("DequantizeLinear", names, ["y"], name="dq", **(attrs or {}))
    return _model([node], [], [onnx.ValueInfoProto(name="y")], inits, opset)


def predicted(model, target: str) -> set[str]:
    return {p.code for p in predict.findings(model, "", [target])}


RUN = {"onnxruntime": run_onnxruntime, "openvino": run_openvino}


def outcome(model, feeds, target: str, out_type: str):
    """(spec codes, runtime codes) of the model's only output."""
    names = {np.dtype(np.float16): "float16", np.dtype(ml_dtypes.bfloat16): "bfloat16"}
    types = {k: names.get(v.dtype, "float") for k, v in feeds.items()}
    want = codes(evaluate(model, feeds)[0], out_type)
    o = RUN[target](model, feeds, types)
    assert o.stage == "ok", o.message
    return want, runtime_codes(o.output, out_type, want.size)


def assert_diverges(model, feeds, target, out_type, code):
    want, got = outcome(model, feeds, target, out_type)
    assert not np.array_equal(want, got), "the probe no longer separates the runtime from the spec"
    assert code in predicted(model, target)


def assert_agrees(model, feeds, target, out_type, code):
    want, got = outcome(model, feeds, target, out_type)
    assert np.array_equal(want, got)
    assert code not in predicted(model, target)


# ---- onnxruntime ------------------------------------------------------------------------------
# x / s for x = 78.0625, s = 0.669921875: 116.5 in float16 (-> 116), 116.52 in float32 (-> 117)
F16_X = np.full(4, 78.0625, np.float16)
F16_S = np.float16(0.669921875)


@pytest.mark.parametrize("opset", [19, 21, 23, 25])
def test_onnxruntime_divides_float16_in_float32(opset):
    m = quantize(F16_X, F16_S, np.int8(0), opset=opset, x_type=TensorProto.FLOAT16)
    assert_diverges(m, {"x": F16_X}, "onnxruntime", "int8", "QT401")
    m = quantize(F16_X.astype(np.float32), np.float32(F16_S), np.int8(0), opset=opset)
    assert_agrees(m, {"x": F16_X.astype(np.float32)}, "onnxruntime", "int8", "QT401")


@pytest.mark.parametrize("target", ["onnxruntime", pytest.param("openvino", marks=needs_openvino)])
def test_float16_with_precision_float_agrees(target):
    """precision=FLOAT asks for the float32 division the runtimes do: the page's "The type of
    y_scale determines the precision of the division ..., unless the precision attribute is
    specified" makes it agree (QT401 warned here before its logic read precision)."""
    m = quantize(F16_X, F16_S, np.int8(0), opset=23, x_type=TensorProto.FLOAT16,
                 attrs={"precision": TensorProto.FLOAT})
    assert_agrees(m, {"x": F16_X}, target, "int8", "QT401")
    assert "QT402" not in predicted(m, target)


def test_onnxruntime_divides_com_microsoft_float16_in_float32():
    m = quantize(F16_X, F16_S, np.int8(0), x_type=TensorProto.FLOAT16, domain="com.microsoft")
    assert_diverges(m, {"x": F16_X}, "onnxruntime", "int8", "QT401")


# float32 quotient -62.51 (-> -63), float16 quotient -62.5 (-> -62)
PREC_X = np.full(4, -95.4522933959961, np.float32)
PREC_S = np.float32(1.5269405841827393)


@pytest.mark.parametrize("target", ["onnxruntime", pytest.param("openvino", marks=needs_openvino)])
def test_precision_is_ignored(target):
    m = quantize(PREC_X, PREC_S, np.int8(0), opset=23, attrs={"precision": TensorProto.FLOAT16})
    assert_diverges(m, {"x": PREC_X}, target, "int8", "QT402")
    m = quantize(PREC_X, PREC_S, np.int8(0), opset=23, attrs={"precision": TensorProto.FLOAT})
    assert_agrees(m, {"x": PREC_X}, target, "int8", "QT402")


def test_onnxruntime_ignores_precision():
    test_precision_is_ignored("onnxruntime")


@needs_openvino
def test_openvino_ignores_precision():
    test_precision_is_ignored("openvino")


E4M3_EDGE = np.array([440, 448, 470, 480, 481, 1000, -480], np.float32)


def test_onnxruntime_float8_saturate_0():
    zp = np.zeros((), ml_dtypes.float8_e4m3fn)
    m = quantize(E4M3_EDGE, np.float32(1), zp, attrs={"saturate": 0})
    assert_diverges(m, {"x": E4M3_EDGE}, "onnxruntime", "float8e4m3fn", "QT403")
    m = quantize(E4M3_EDGE, np.float32(1), zp, attrs={"saturate": 1})
    assert_agrees(m, {"x": E4M3_EDGE}, "onnxruntime", "float8e4m3fn", "QT403")


@pytest.mark.parametrize("target", ["onnxruntime", pytest.param("openvino", marks=needs_openvino)])
def test_reads_missing_axis_as_1(target):
    """The com.microsoft node without axis is spec-invalid (QL404): the runtime runs it as
    the same node with axis=1 (both installed releases; every release's missing-axis probe
    says so too, tests/test_targets_arithmetic.py)."""
    x = np.array([[0, 1, 2], [3, 4, 5]], np.float32)
    s, zp = np.array([1, 2, 4], np.float32), np.zeros(3, np.int8)
    bare = quantize(x, s, zp, domain="com.microsoft")
    stated = quantize(x, s, zp, domain="com.microsoft", attrs={"axis": 1})
    got = RUN[target](bare, {"x": x}, {"x": "float"})
    want = RUN[target](stated, {"x": x}, {"x": "float"})
    assert got.stage == want.stage == "ok" and np.array_equal(got.output, want.output)
    assert "QT404" in predicted(bare, target)
    assert "QT404" not in predicted(stated, target)


# ---- openvino ---------------------------------------------------------------------------------
TIES = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.5, 126.5], np.float32)


@needs_openvino
def test_openvino_rounds_after_zero_point():
    m = quantize(TIES, np.float32(1), np.int8(3))
    assert_diverges(m, {"x": TIES}, "openvino", "int8", "QT405")
    m = quantize(TIES, np.float32(1), np.int8(2))  # an even zero point keeps every tie's parity
    assert_agrees(m, {"x": TIES}, "openvino", "int8", "QT405")


F8_PROBE = np.array([15.499925, 37.998543, -45.989754, np.nan, 465.0, 500.0, 1.0, -2.0], np.float32)


@needs_openvino
@pytest.mark.parametrize("saturate", [0, 1])
def test_openvino_float8_conversion(saturate):
    zp = np.zeros((), ml_dtypes.float8_e4m3fn)
    m = quantize(F8_PROBE, np.float32(1), zp, attrs={"saturate": saturate})
    assert_diverges(m, {"x": F8_PROBE}, "openvino", "float8e4m3fn", "QT403")


@needs_openvino
def test_openvino_negative_scale_quantize():
    x = np.linspace(-60, 60, 16, dtype=np.float32)  # beyond ±12.8 the result saturates
    m = quantize(x, np.float32(-0.1), np.int8(0))
    assert_diverges(m, {"x": x}, "openvino", "int8", "QT407")
    m = quantize(x, np.float32(0.1), np.int8(0))
    assert_agrees(m, {"x": x}, "openvino", "int8", "QT407")


@needs_openvino
def test_openvino_divides_float16_and_bfloat16_in_float32():
    m = quantize(F16_X, F16_S, np.int8(0), x_type=TensorProto.FLOAT16)
    assert_diverges(m, {"x": F16_X}, "openvino", "int8", "QT401")
    x = np.array([11.375, 4.9375, -7.96875, -11.0625, 4.25], ml_dtypes.bfloat16)  # quotients near .5
    s = np.asarray(0.33984375, ml_dtypes.bfloat16)
    m = quantize(x, s, np.int8(0), x_type=TensorProto.BFLOAT16)
    assert_diverges(m, {"x": x}, "openvino", "int8", "QT401")
    m = quantize(F16_X.astype(np.float32), np.float32(F16_S), np.int8(0))
    assert_agrees(m, {"x": F16_X.astype(np.float32)}, "openvino", "int8", "QT401")


@needs_openvino
def test_openvino_dequantize_arithmetic():
    q = np.arange(-128, 127, dtype=np.int8)
    m = dequantize(q, np.float32(0.3105), opset=23, attrs={"output_dtype": TensorProto.FLOAT16})
    assert_diverges(m, {}, "openvino", "float16", "QT406")
    m = dequantize(q, np.asarray(0.3105, ml_dtypes.bfloat16), opset=21)
    assert_diverges(m, {}, "openvino", "bfloat16", "QT406")
    for scale in (np.float32(0.3105), np.float16(0.3105), np.asarray(0.3105, ml_dtypes.bfloat16)):
        m = dequantize(q, scale, opset=23, attrs={"output_dtype": TensorProto.FLOAT})
        assert_agrees(m, {}, "openvino", "float", "QT406")
    # a bfloat16 scale with a float16 output agrees (QT406 claimed it before the dequantize
    # probes measured it), as does a float16 one
    bf16 = np.asarray(0.3105, ml_dtypes.bfloat16)
    m = dequantize(q, bf16, opset=23, attrs={"output_dtype": TensorProto.FLOAT16})
    assert_agrees(m, {}, "openvino", "float16", "QT406")
    assert_agrees(dequantize(q, np.float16(0.3105), opset=21), {}, "openvino", "float16", "QT406")


def _pair(qtype, *, inner: bool):
    """x -> [Relu] -> Q(qtype) -> DQ -> [Relu] -> y."""
    zp = np.zeros((), np.int16 if qtype == TensorProto.INT16 else np.int8)
    inits = [numpy_helper.from_array(np.float32(0.01), "s"), numpy_helper.from_array(zp, "zp")]
    nodes = [
        helper.make_node("QuantizeLinear", ["a" if inner else "x", "s", "zp"], ["q"], name="q"),
        helper.make_node("DequantizeLinear", ["q", "s", "zp"], ["d" if inner else "y"], name="dq"),
    ]
    if inner:
        nodes = [
            helper.make_node("Relu", ["x"], ["a"], name="pre"),
            *nodes,
            helper.make_node("Relu", ["d"], ["y"], name="post"),
        ]
    return _model(
        nodes,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [64])],
        inits,
    )


@needs_openvino
def test_openvino_removes_16_bit_pairs():
    x = np.linspace(-3, 3, 64, dtype=np.float32) + np.float32(0.0013)
    relu = np.maximum(x, 0)
    m = _pair(TensorProto.INT16, inner=True)
    got = run_openvino(m, {"x": x}, {"x": "float"})
    assert got.stage == "ok" and np.array_equal(got.output, relu)  # unquantized
    pair_only = _pair(TensorProto.INT16, inner=False)
    assert not np.array_equal(evaluate(pair_only, {"x": relu})[0], relu)  # the spec quantizes
    assert {p.code for p in predict.findings(m, "", ["openvino"]) if p.node == "dq"} >= {"QT408"}
    m8 = _pair(TensorProto.INT8, inner=True)
    got8 = run_openvino(m8, {"x": x}, {"x": "float"})
    assert got8.stage == "ok" and not np.array_equal(got8.output, relu)  # 8-bit pairs are kept
    assert "QT408" not in predicted(m8, "openvino")


@needs_openvino
def test_openvino_16_bit_pair_between_graph_input_and_output_does_not_compile():
    m = _pair(TensorProto.INT16, inner=False)
    o = run_openvino(m, {"x": np.zeros(64, np.float32)}, {"x": "float"})
    assert o.stage == "load" and "FQ stripping failed" in o.message
    assert "QT308" in predicted(m, "openvino")
    assert "QT308" not in predicted(_pair(TensorProto.INT16, inner=True), "openvino")


# ---- float16 kept in float32 between nodes without float16 kernels (QT409) -----------------
def f16_matmul_block(domain: str) -> onnx.ModelProto:
    """float16 x [32, 64] -> Q -> DQ -> MatMul (DQ of int8 weights) -> Q -> DQ, the Q/DQ in
    ``domain`` (fixtures/producer_shapes.py, large enough to show the difference)."""
    import producer_shapes

    return producer_shapes.f16_matmul(domain, rows=32, k=64, n=48, out_scale=0.3)


def test_onnxruntime_keeps_float32_between_com_microsoft_float16_nodes():
    """The com.microsoft Q/DQ have no float16 kernel and neither has MatMul: onnxruntime
    drops the Casts between them, and the block gives other codes than with ai.onnx Q/DQ-19
    (float16 kernels), whose every input is the same."""
    x = (np.random.default_rng(5).standard_normal([32, 64]) * 3).astype(np.float16)
    out = {}
    for domain in ("", "com.microsoft"):
        o = run_onnxruntime(f16_matmul_block(domain), {"x": x}, {"x": "float16"})
        assert o.stage == "ok", o.message
        out[domain] = o.output
    assert not np.array_equal(out[""], out["com.microsoft"]), "the probe no longer separates the two"
    assert "QT409" in predicted(f16_matmul_block("com.microsoft"), "onnxruntime")
    assert "QT409" not in predicted(f16_matmul_block(""), "onnxruntime")


def _f16_through(op: str) -> onnx.ModelProto:
    """int8 x -> DequantizeLinear (float16 scale) -> ``op`` -> QuantizeLinear, ai.onnx-21."""
    inits = [numpy_helper.from_array(np.asarray(np.float16(0.0517)), "s1"),
             numpy_helper.from_array(np.asarray(np.float16(0.125)), "s2"),
             numpy_helper.from_array(np.int8(0), "z")]
    nodes = [helper.make_node("DequantizeLinear", ["x", "s1"], ["y"], name="dq")]
    if op == "Mul":
        inits.append(numpy_helper.from_array(np.asarray(np.float16(1.3)), "c"))
        nodes.append(helper.make_node("Mul", ["y", "c"], ["m"], name="mid"))
    else:
        nodes.append(helper.make_node(op, ["y"], ["m"], name="mid"))
    nodes.append(helper.make_node("QuantizeLinear", ["m", "s2", "z"], ["q"], name="q"))
    return _model(nodes, [helper.make_tensor_value_info("x", TensorProto.INT8, [256])],
                  [onnx.ValueInfoProto(name="q")], inits)


@needs_openvino
@pytest.mark.parametrize("op", ["Relu", "Mul"])
def test_openvino_keeps_float32_between_float16_nodes(op):
    """openvino's CPU plugin computes float16 in float32: through a Relu or a Mul, the float16
    value a DequantizeLinear writes reaches the QuantizeLinear unrounded (2 of the 256 codes
    differ from the page's, which onnx.reference gives), and QT409 says so; onnxruntime, with
    float16 kernels for ai.onnx Q/DQ-21, gives the page's codes and gets no QT409."""
    model = _f16_through(op)
    x = np.arange(-128, 128, dtype=np.int8)
    y = x.astype(np.float32) * np.float32(np.float16(0.0517))
    c = np.float32(np.float16(1.3)) if op == "Mul" else None
    page = y.astype(np.float16).astype(np.float32)
    page = (page * c).astype(np.float16).astype(np.float32) if c is not None else np.maximum(page, 0)
    kept = y * c if c is not None else np.maximum(y, 0)
    spec, unrounded = (np.clip(np.rint(v / 0.125), -128, 127).astype(np.int8) for v in (page, kept))
    from onnx.reference import ReferenceEvaluator

    assert np.array_equal(ReferenceEvaluator(model).run(None, {"x": x})[0], spec)  # the page, by onnx
    assert not np.array_equal(spec, unrounded)
    ov = run_openvino(model, {"x": x}, {"x": "int8"})
    assert ov.stage == "ok" and np.array_equal(ov.output, unrounded), ov.message
    ort = run_onnxruntime(model, {"x": x}, {"x": "int8"})
    assert ort.stage == "ok" and np.array_equal(ort.output, spec), ort.message
    found = {p.node for p in predict.findings(model, "", ["openvino"]) if p.code == "QT409"}
    assert found == {"dq", "q"}
    assert "QT409" not in predicted(model, "onnxruntime")


def test_installed_onnxruntime_rounds_float16_quantize_as_the_page():
    """The near miss of QT411: the onnxruntime installed here (from 1.30 on) rounds float16
    x / scale to the nearest even (onnxruntime 1.18 to 1.29 truncate; their probes say so)
    and gets no QT411; qlin's evaluator and onnx.reference give the same codes."""
    from onnx.reference import ReferenceEvaluator

    x = np.array([0.5, 1.5, 2.5, -1.5, 52.9375, -52.9375, 3.5, 7.25], np.float16)
    model = quantize(x, np.float16(1), np.int8(3), x_type=TensorProto.FLOAT16)
    page = np.clip(np.rint(x.astype(np.float32)) + 3, -128, 127).astype(np.int8)
    assert np.array_equal(np.asarray(evaluate(model, {"x": x})[0]), page)
    assert np.array_equal(ReferenceEvaluator(model).run(None, {"x": x})[0], page)
    o = run_onnxruntime(model, {"x": x}, {"x": "float16"})
    assert o.stage == "ok" and np.array_equal(o.output, page), o.output
    assert "QT411" not in predicted(model, "onnxruntime")


def test_a_float32_model_gets_no_qt409():
    m = f16_matmul_block("com.microsoft")
    for t in m.graph.initializer:
        if t.data_type == TensorProto.FLOAT16:
            t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t).astype(np.float32), t.name))
    for vi in [*m.graph.input, *m.graph.output]:
        vi.type.tensor_type.elem_type = TensorProto.FLOAT
    assert "QT409" not in predicted(m, "onnxruntime")


def test_convert_to_com_microsoft_refuses_where_onnxruntime_rounds_otherwise(tmp_path):
    """com.microsoft is onnxruntime's domain: a move into it that onnxruntime would compute
    otherwise than the source (QT409 on three nodes) is refused, naming them, and nothing
    is written (it was written with the warnings)."""
    import qlin

    src = tmp_path / "m.onnx"
    onnx.save(f16_matmul_block(""), src)
    with pytest.raises(qlin.ConversionStopped) as stop:
        qlin.convert(src, to_domain="com.microsoft", output=tmp_path / "o.onnx")
    found = stop.value.findings
    assert {(w.code, w.target) for w in found} == {("QT409", "onnxruntime")}
    assert len(found) == 3  # the DequantizeLinear of x and of w, the QuantizeLinear of m
    assert not (tmp_path / "o.onnx").exists()
