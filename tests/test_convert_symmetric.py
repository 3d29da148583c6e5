"""`--to-symmetric` (convert/passes/symmetric.py): asymmetric 8-bit Q/DQ tensors become int8
with zero point 0, measured (never proven), written only within --tolerance; and `convert
--target tensorrt-10` of onnxruntime's QOperator and uint8 QDQ outputs through it."""

from __future__ import annotations

import json

import corpus
import numpy as np
import onnx
import pytest
from click.testing import CliRunner
from onnx import TensorProto, helper, numpy_helper

from qlin_cli.check.engine import check_file
from qlin_cli.cli import main
from qlin_cli.convert.passes import symmetric_measure as sm

ort = pytest.importorskip("onnxruntime")


@pytest.mark.parametrize("dtype,zp", [(np.uint8, 0), (np.uint8, 128), (np.uint8, 255), (np.uint8, 37),
                                      (np.int8, -128), (np.int8, -20), (np.int8, 127)])
def test_the_new_scale_keeps_the_whole_range_and_the_bound_is_two_steps(dtype, zp):
    lo, hi = (0, 255) if dtype == np.uint8 else (-128, 127)
    s = np.asarray(np.float32(0.0173))
    z = np.asarray(dtype(zp))
    n = sm.scale_for(s, z, lo, hi)
    assert -128 * float(n) <= float(s) * (lo - zp) and 127 * float(n) >= float(s) * (hi - zp)
    m = sm.activation_bound(s, z, n, 13)
    # (s + s') / 2 at most within the range, s' at most about 2s: at most 1.5 steps, so 2 rounded up
    assert m.steps <= 2 and m.outputs > 1000
    if dtype == np.uint8 and zp == 128:  # the same grid as int8 with zero point 0: nothing differs
        assert (m.steps, m.differ) == (0, 0)


def test_without_its_guard_a_relu_folded_into_the_zero_point_would_be_lost():
    # uint8 with zero point 0 clips every negative value to 0 (a quantizer's folded Relu); the new
    # int8 grid reaches below 0, so a Relu before the new QuantizeLinear keeps that
    s, z = np.asarray(np.float32(0.02)), np.asarray(np.uint8(0))
    n = sm.scale_for(s, z, 0, 255)
    bounds = sm.clip_bounds(s, z, n, 0, 255)
    assert bounds[0] is not None and float(bounds[0]) == 0.0 and bounds[1] is None
    assert [x.op_type for x in sm.guard("x", "y", bounds, ("lo", "hi"))] == ["Relu"]
    x = np.array([-1.0, -0.3, 0.0, 0.5], np.float32)
    guarded = sm._evaluated(x, n, np.zeros((), np.int8), 13, False, bounds)
    bare = sm._evaluated(x, n, np.zeros((), np.int8), 13, False)
    assert np.all(guarded[:2] == 0) and np.all(bare[:2] < 0)


def test_weights_that_fit_int8_move_exactly():
    w = np.array([[100, 10, 200], [247, 128, 3]], np.uint8)  # w - z from -127 to 127
    s = np.array([0.1, 0.2, 0.3], np.float32)
    z = np.array([120, 128, 130], np.uint8)
    new_scale, codes, m = sm.weights_moved(w, s, z, 1)
    assert (m.steps, m.differ) == (0, 0) and np.array_equal(new_scale, s)
    assert np.array_equal(codes.astype(np.int32), w.astype(np.int32) - z.astype(np.int32))


def test_weights_that_do_not_fit_are_requantized_and_measured():
    w = np.array([[0, 255, 3]], np.uint8)
    new_scale, codes, m = sm.weights_moved(w, np.asarray(np.float32(0.1)), np.asarray(np.uint8(0)), 1)
    assert codes.dtype == np.int8 and float(new_scale) > 0.1 and 1 <= m.steps <= 1 and m.differ >= 1


def _uint8_model(path: str, zp: int) -> str:
    """x -> Q(uint8, zp) -> DQ -> Conv (int8 symmetric weights) -> Q(uint8, zp) -> DQ -> y."""
    rng = np.random.default_rng(3)
    w = rng.integers(-100, 100, (4, 3, 3, 3)).astype(np.int8)
    inits = [numpy_helper.from_array(np.float32(0.02), "xs"), numpy_helper.from_array(np.uint8(zp), "xz"),
             numpy_helper.from_array(w, "w"), numpy_helper.from_array(np.float32(0.01), "ws"),
             numpy_helper.from_array(np.int8(0), "wz"), numpy_helper.from_array(np.float32(0.05), "ys"),
             numpy_helper.from_array(np.uint8(zp), "yz")]
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"], name="qx"),
             helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"], name="dqx"),
             helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wd"], name="dqw"),
             helper.make_node("Conv", ["xd", "wd"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("QuantizeLinear", ["c", "ys", "yz"], ["cq"], name="qy"),
             helper.make_node("MaxPool", ["cq"], ["pq"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("DequantizeLinear", ["pq", "ys", "yz"], ["y"], name="dqy")]
    graph = helper.make_graph(nodes, "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 4, 4])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    onnx.save(model, path)
    return path


def _run(path: str, x: np.ndarray) -> np.ndarray:
    return ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]


def test_to_symmetric_is_refused_at_tolerance_0_naming_the_bound(tmp_path):
    src = _uint8_model(str(tmp_path / "m.onnx"), 0)
    r = CliRunner().invoke(main, ["convert", src, "--to-symmetric", "--dry-run"])
    assert r.exit_code == 1, r.output
    assert "QC403" in r.output and "--tolerance 2 allows it" in r.output


@pytest.mark.parametrize("zp", [0, 77])
def test_to_symmetric_writes_int8_zero_point_0_within_its_measured_bound(tmp_path, zp):
    src = _uint8_model(str(tmp_path / "m.onnx"), zp)
    out = str(tmp_path / "s.onnx")
    r = CliRunner().invoke(main, ["convert", src, "--to-symmetric", "--tolerance", "2", "-o", out,
                                  "--format", "json"])
    assert r.exit_code == 0, r.output
    measured = [e["measured"] for e in json.loads(r.output)["nodes"] if e.get("measured")]
    assert measured and max(m["steps"] for m in measured) <= 2
    onnx.checker.check_model(out, full_check=True)
    model = onnx.load(out)
    zps = [t for t in model.graph.initializer if t.data_type in (TensorProto.UINT8, TensorProto.INT8)
           and t.name != "w" and not t.dims]
    assert zps and all(t.data_type == TensorProto.INT8 and not numpy_helper.to_array(t).any() for t in zps)
    assert not [d for d in check_file(out, targets=["tensorrt-10"]).diagnostics if d.severity == "error"]
    x = np.random.default_rng(0).normal(0, 1.5, (1, 3, 8, 8)).astype(np.float32)  # negatives too
    want, got = _run(src, x), _run(out, x)
    # each tensor moves within 2 of its own steps (x: 0.02, y: 0.05); x's difference passes
    # through the Conv (sum |w| * 0.01 * 2 steps of x) before y rounds
    through = float(np.abs(numpy_helper.to_array(onnx.load(src).graph.initializer[2])).astype(np.float64)
                    .sum(axis=(1, 2, 3)).max()) * 0.01 * 2 * 0.02
    assert float(np.max(np.abs(want - got))) <= 2 * 0.05 + through + 1e-6


QOPERATOR = sorted(c.name for c in corpus.CONFIGS
                   if "_qop_" in c.name and c.name not in corpus.KNOWN_FAILURES)
QDQ_TO_TRT = QOPERATOR + ["cnn_qdq_u8s8_tensor_op13", "cnn_qdq_u8u8_tensor_wasym_op11"]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    return corpus.build(tmp_path_factory.mktemp("symmetric"), QDQ_TO_TRT)


@pytest.mark.parametrize("name", QDQ_TO_TRT)
def test_onnxruntime_uint8_outputs_convert_for_tensorrt(name, models, tmp_path):
    out = str(tmp_path / "trt.onnx")
    r = CliRunner().invoke(main, ["convert", models[name], "--target", "tensorrt-10", "--tolerance", "2",
                                  "-o", out])
    assert r.exit_code == 0, r.output
    assert "zero point 0" in r.output
    onnx.checker.check_model(out, full_check=True)
    assert not [d.code for d in check_file(out, targets=["tensorrt-10"]).diagnostics if d.severity == "error"]
    cfg = corpus.BY_NAME[name]
    want = corpus.run(models[name], cfg.model, optimize=False)
    got = corpus.run(out, cfg.model, optimize=False)
    assert [w.shape for w in want] == [g.shape for g in got]
    # each tensor's bound is in the report; through the layers they add up. On the whole model,
    # in steps of the source's last DequantizeLinear (measured: at most 1.8 on these models): a
    # tensor whose saturation were lost (a folded Relu) moves outputs by far more
    step = _output_step(models[name])
    for w, g in zip(want, got, strict=True):
        assert float(np.max(np.abs(w.astype(np.float64) - g))) <= 3 * step


def _output_step(path: str) -> float:
    """The scale of the DequantizeLinear that writes the model's (first) output."""
    g = onnx.load(path).graph
    dq = next(n for n in g.node if n.output[0] == g.output[0].name)
    assert dq.op_type == "DequantizeLinear"
    return float(next(numpy_helper.to_array(t) for t in g.initializer if t.name == dq.input[1]))


@pytest.mark.parametrize("pad_value,moves", [(128, True), (7, False)])
def test_a_pad_moves_with_its_tensor_only_when_it_pads_with_the_zero_point(tmp_path, pad_value, moves):
    # Pad's constant value is a code: the zero point's code is the value 0 and moves with it; any
    # other code would mean another value once the zero point is 0, so the tensor stays
    inits = [numpy_helper.from_array(np.float32(0.05), "s"), numpy_helper.from_array(np.uint8(128), "z"),
             numpy_helper.from_array(np.array([0, 1, 0, 1], np.int64), "pads"),
             numpy_helper.from_array(np.uint8(pad_value), "pv")]
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], name="q"),
             helper.make_node("Pad", ["q", "pads", "pv"], ["p"], name="pad"),
             helper.make_node("DequantizeLinear", ["p", "s", "z"], ["y"], name="dq")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 5])], inits)
    src, out = str(tmp_path / "m.onnx"), str(tmp_path / "s.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=7), src)
    r = CliRunner().invoke(main, ["convert", src, "--to-symmetric", "--tolerance", "2", "-o", out])
    assert r.exit_code == 0, r.output
    pad = next(n for n in onnx.load(out).graph.node if n.op_type == "Pad")
    inits = {t.name: t for t in onnx.load(out).graph.initializer}
    assert (inits[pad.input[2]].data_type == TensorProto.INT8) == moves
    if moves:
        onnx.checker.check_model(out, full_check=True)
        x = np.linspace(-6, 6, 6, dtype=np.float32).reshape(2, 3)
        want = ort.InferenceSession(src, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
        got = ort.InferenceSession(out, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
        assert np.array_equal(want[:, [0, 4]], got[:, [0, 4]])  # the padding: 0 either way


def test_a_zero_scale_is_reported_without_numpy_warnings(tmp_path):
    """A scale of 0 (QL501, an error no conversion resolves): the tensor is not moved (there is
    no range to keep), so the refusal names QL501 and nothing else reaches the user's terminal
    (the move's arithmetic on it once printed numpy's "invalid value encountered" warnings)."""
    import warnings

    from qlin_cli.convert_pipeline import Request, Stop, run

    path = _uint8_model(str(tmp_path / "m.onnx"), 77)
    model = onnx.load(path)
    model.graph.initializer[0].CopyFrom(numpy_helper.from_array(np.float32(0.0), "xs"))
    onnx.save(model, path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(Stop) as stop:
            run(Request(path, to_symmetric=True, tolerance=2))
    assert {f.code for f in stop.value.findings} == {"QL501"}
    assert [str(w.message) for w in caught] == []


def _weight_pair(scale, opset: int) -> onnx.ModelProto:
    """DequantizeLinear(uint8 weights at zero point 100, ``scale``) -> MatMul, at ``opset``."""
    scale = np.asarray(scale)
    floats = TensorProto.FLOAT16 if scale.dtype == np.float16 else TensorProto.FLOAT
    inits = [numpy_helper.from_array(np.array([[1, 200], [3, 4]], np.uint8), "W"),
             numpy_helper.from_array(scale, "s"), numpy_helper.from_array(np.uint8(100), "zp")]
    nodes = [helper.make_node("DequantizeLinear", ["W", "s", "zp"], ["w"]),
             helper.make_node("MatMul", ["x", "w"], ["y"])]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", floats, [1, 2])],
                          [helper.make_tensor_value_info("y", floats, [1, 2])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=9)


def test_weights_with_a_float16_scale_move_at_opset_19():
    """A float16 scale is DequantizeLinear's from opset 19 on: the move's measurement runs the
    node there (it ran it at opset 10, which refused the scale: an internal error)."""
    from qlin_cli.convert.run import Options, convert_model

    r = convert_model(_weight_pair(np.float16(0.5), 19), "", Options(19, to_symmetric=True, tolerance=2))
    changes = [c for e in r.entries for c in e.changes]
    assert r.model is not None and any("int8 codes with zero point 0" in c for c in changes)
    onnx.checker.check_model(r.model, full_check=True)


def test_a_scale_too_large_to_widen_is_left():
    """A scale of 3e38 cannot widen in float32 (the new scale would be inf): the tensor stays,
    with nothing to refuse (it ended in a ValueError of NaN)."""
    from qlin_cli.convert.run import Options, convert_model

    r = convert_model(_weight_pair(np.float32(3e38), 19), "", Options(19, to_symmetric=True, tolerance=2))
    assert r.model is not None and r.rewritten == 0 and r.refused == []
