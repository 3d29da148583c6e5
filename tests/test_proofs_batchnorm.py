"""BatchNormalization across its versions: the proof used onnx.reference, whose version 9
computes training statistics whenever `momentum` is set (always: it fills the default in),
so every conversion of a model with a BatchNormalization from opset 9..13 to 14+ was refused
as 'differs on a probe' (the PaddlePaddle text-direction classifier family of the issue: its
BatchNormalization takes its scale from a DequantizeLinear). The proof now evaluates the
inference formula of the op's page; onnxruntime is the judge of the result."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from qlin_cli.convert.run import Options, convert_model


def classifier(opset: int, epsilon: float = 1e-5, momentum: float | None = 0.9) -> onnx.ModelProto:
    """x -> Conv -> BatchNormalization (scale from a DequantizeLinear) -> Relu."""
    rng = np.random.default_rng(opset)
    inits = [numpy_helper.from_array(rng.normal(size=(4, 3, 3, 3)).astype(np.float32), "w"),
             numpy_helper.from_array(rng.integers(-100, 100, 4).astype(np.int8), "gq"),
             numpy_helper.from_array(np.float32(0.02), "gs"), numpy_helper.from_array(np.int8(0), "gz"),
             numpy_helper.from_array(rng.normal(size=4).astype(np.float32), "b"),
             numpy_helper.from_array(rng.normal(size=4).astype(np.float32), "mean"),
             numpy_helper.from_array(rng.uniform(0.5, 2, 4).astype(np.float32), "var")]
    bn = {"epsilon": epsilon} | ({"momentum": momentum} if momentum is not None else {})
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("DequantizeLinear", ["gq", "gs", "gz"], ["gamma"], name="dq"),
             helper.make_node("BatchNormalization", ["c", "gamma", "b", "mean", "var"], ["n"], name="bn",
                              **bn),
             helper.make_node("Relu", ["n"], ["y"], name="relu")]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8, 8])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 7
    onnx.checker.check_model(m, full_check=True)
    return m


def _run(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(
        None, {"x": x})[0]


@pytest.mark.parametrize("source", [10, 13])
@pytest.mark.parametrize("target", [14, 15, 19, 21, 23])
def test_batchnorm_from_dequantize_converts_and_runs_bit_identically(source, target):
    model = classifier(source)
    result = convert_model(model, ".", Options(target))
    assert result.model is not None, [r.detail for r in result.refused]
    assert any(e.op.startswith("BatchNormalization") and e.verified for e in result.entries)
    x = np.random.default_rng(7).normal(size=(1, 3, 8, 8)).astype(np.float32)
    assert np.array_equal(_run(model, x), _run(result.model, x))


def test_the_proof_still_sees_a_changed_epsilon():
    """The kernel reads the node's own epsilon: a rewrite that changed it would be refused."""
    from qlin_cli.convert.ops import prove as p

    before = helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], epsilon=1e-5)
    after = helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], epsilon=1e-1)
    types = {n: "float" for n in "xsbmv"}
    shapes = {"x": (1, 2, 3, 3), "s": (2,), "b": (2,), "m": (2,), "v": (2,)}
    consts = {"v": np.ones(2, np.float32)}
    why = p.prove(before, 9, [after], 15, types=types, shapes=shapes, const=consts.get, ir_version=8)
    assert why is not None and "differs" in why


def test_nan_equals_nan_but_not_a_number():
    from qlin_cli.convert.ops.prove import _same

    a = np.array([np.nan, 1.0], np.float32)
    b = np.array([-np.nan, 1.0], np.float32)  # another NaN: the sign bit differs
    assert a.tobytes() != b.tobytes() and _same(a, b)
    assert not _same(a, np.array([0.0, 1.0], np.float32))
    assert not _same(np.array([1.0, 2.0], np.float32), np.array([1.0, 2.0000002], np.float32))


def _float_classifier(opset: int) -> onnx.ModelProto:
    """The classifier's float shape: Conv -> BatchNormalization -> Relu -> Conv, weights float."""
    rng = np.random.default_rng(11)
    inits = [numpy_helper.from_array(rng.normal(size=(4, 3, 3, 3)).astype(np.float32), "w"),
             numpy_helper.from_array(rng.uniform(0.5, 1.5, 4).astype(np.float32), "gamma"),
             numpy_helper.from_array(rng.normal(size=4).astype(np.float32), "b"),
             numpy_helper.from_array(rng.normal(size=4).astype(np.float32), "mean"),
             numpy_helper.from_array(rng.uniform(0.5, 2, 4).astype(np.float32), "var"),
             numpy_helper.from_array(rng.normal(size=(2, 4, 3, 3)).astype(np.float32), "w2")]
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("BatchNormalization", ["c", "gamma", "b", "mean", "var"], ["n"], name="bn",
                              momentum=0.9, epsilon=1e-5),
             helper.make_node("Relu", ["n"], ["r"], name="relu"),
             helper.make_node("Conv", ["r", "w2"], ["y"], name="conv2", pads=[1, 1, 1, 1])]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 8, 8])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 7
    return m


@pytest.mark.parametrize("fmt", ["QDQ", "QOperator", "dynamic"])
def test_quantized_classifier_converts_to_every_later_opset(fmt, tmp_path):
    """onnxruntime's quantizers over the classifier shape (QDQ, QOperator, dynamic), opset 13,
    BatchNormalization kept: every conversion to 14..25 is proven and runs bit-identically."""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, quantize_dynamic, quantize_static

    src, dst = str(tmp_path / "f.onnx"), str(tmp_path / "q.onnx")
    onnx.save(_float_classifier(13), src)
    rng = np.random.default_rng(3)
    if fmt == "dynamic":
        quantize_dynamic(src, dst, op_types_to_quantize=["Conv"])
    else:
        class Reader(CalibrationDataReader):
            def __init__(self):
                self.feeds = iter([{"x": rng.normal(size=(1, 3, 8, 8)).astype(np.float32)} for _ in range(4)])

            def get_next(self):
                return next(self.feeds, None)

        quantize_static(src, dst, Reader(), quant_format=getattr(QuantFormat, fmt),
                        op_types_to_quantize=["Conv", "BatchNormalization", "Relu"])
    model = onnx.load(dst)
    assert any(n.op_type == "BatchNormalization" for n in model.graph.node)
    x = rng.normal(size=(1, 3, 8, 8)).astype(np.float32)
    want = _run(model, x)
    for target in (14, 15, 17, 19, 21, 23, 25):
        result = convert_model(model, str(tmp_path), Options(target))
        assert result.model is not None, (target, [r.detail for r in result.refused])
        assert np.array_equal(want, _run(result.model, x)), target


@pytest.mark.parametrize("training_mode", [None, 0])
@pytest.mark.parametrize("target", [10, 13])
def test_batchnorm_17_converts_down_to_13_and_older(training_mode, target):
    """BatchNormalization-15 in inference is version 9's test mode: relabelled (training_mode=0
    dropped); before, "no adapter" refused it."""
    model = classifier(17)
    if training_mode is not None:
        model.graph.node[2].attribute.append(helper.make_attribute("training_mode", training_mode))
    result = convert_model(model, ".", Options(target))
    assert result.model is not None, [r.detail for r in result.refused]
    bn = next(n for n in result.model.graph.node if n.op_type == "BatchNormalization")
    assert not any(a.name == "training_mode" for a in bn.attribute)
    onnx.checker.check_model(result.model, full_check=True)
    x = np.random.default_rng(5).normal(size=(1, 3, 8, 8)).astype(np.float32)
    assert np.array_equal(_run(model, x), _run(result.model, x))


def test_batchnorm_in_training_mode_is_refused_going_down():
    model = classifier(17)
    model.graph.node[2].attribute.append(helper.make_attribute("training_mode", 1))
    result = convert_model(model, ".", Options(13))
    assert result.model is None
    assert any("training mode" in r.detail and r.code == "QC201" for r in result.refused)
