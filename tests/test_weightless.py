"""model/weightless.py: shape inference reads the model without the weights no op's inference
reads. The types and the strict errors it gives must be those of the whole model, on every
fixture and quantizer output; a weight another op reads keeps its data."""

from __future__ import annotations

import glob
import os

import corpus
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from paths import MODELS

from qlin_cli.model import infer, weightless
from qlin_cli.model.graphs import reading
from qlin_cli.model.load import load_model_bytes

FIXTURES = sorted(glob.glob(os.path.join(MODELS, "**", "*.onnx"), recursive=True))


def _both(path: str, monkeypatch) -> tuple[tuple, tuple, bytes, bytes]:
    """(inference of the file's bytes, inference of them without weights, both bytes), every
    weight left out however few (WORTH_BYTES 0)."""
    monkeypatch.setattr(weightless, "WORTH_BYTES", 0)
    monkeypatch.setattr(weightless, "MOVE_AT_LEAST", 0)
    model, data = load_model_bytes(path, weights=False)
    with reading(model):
        light = weightless.without_weights(model, data)
        if light is None:
            return (), (), data, data
        return infer.run_inference(model, data), infer.run_inference(model, light), data, light


@pytest.fixture(scope="module")
def quantized(tmp_path_factory):
    return corpus.build(tmp_path_factory.mktemp("corpus_weightless"))


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: os.path.relpath(p, MODELS))
def test_a_fixture_infers_alike_without_its_weights(path, monkeypatch):
    whole, light, _, _ = _both(path, monkeypatch)
    assert light == whole


def test_every_quantizer_output_infers_alike_without_its_weights(quantized, monkeypatch):
    lighter = 0
    for name, path in quantized.items():
        whole, light, data, stripped = _both(path, monkeypatch)
        assert light == whole, name
        lighter += len(stripped) < len(data)
    assert lighter >= 60  # (weights were left out of most: the comparison means something)


def _model(tmp_path, consumer: str) -> str:
    """A 64x64 int8 weight read by a DequantizeLinear and, if ``consumer``, by that op too."""
    w = numpy_helper.from_array(np.ones((64, 64), np.int8), "w")
    nodes = [helper.make_node("DequantizeLinear", ["w", "s"], ["wf"])]
    if consumer:
        nodes.append(helper.make_node(consumer, ["w"], ["y"]))
    graph = helper.make_graph(nodes, "g", [], [helper.make_tensor_value_info("wf", TensorProto.FLOAT, None)],
                              [w, numpy_helper.from_array(np.float32(0.5), "s")])
    path = str(tmp_path / "m.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]), path)
    return path


@pytest.mark.parametrize("consumer, kept", [("", False), ("Relu", True), ("Shape", True)])
def test_a_weight_another_op_reads_keeps_its_data(tmp_path, monkeypatch, consumer, kept):
    _, _, _, light = _both(_model(tmp_path, consumer), monkeypatch)
    graph = onnx.load_from_string(light).graph
    w = [t for t in graph.initializer if t.name == "w"]
    assert bool(w and w[0].raw_data) == kept
    # a weight no other op reads, and the scale, go as typed inputs (``_movable``)
    inputs = {i.name: i.type.tensor_type for i in graph.input}
    assert ("w" in inputs) == (not kept) and "s" in inputs
    if not kept:
        w_type = inputs["w"]
        assert w_type.elem_type == TensorProto.INT8 and [d.dim_value for d in w_type.shape.dim] == [64, 64]
    assert inputs["s"].HasField("shape") and not inputs["s"].shape.dim  # a scalar: a shape of no dims


def test_a_small_model_goes_as_it_is(tmp_path):
    model, data = load_model_bytes(_model(tmp_path, ""), weights=False)
    with reading(model):
        assert weightless.without_weights(model, data) is None  # 4 KB: below WORTH_BYTES
        assert infer.inference_bytes(model, data) == (data, False)


def test_a_large_model_goes_without_its_weights(tmp_path):
    """What the check sends to inference by default (WORTH_BYTES): 1,100 weights of 1 KiB
    each (kept whole by the skeleton's rule, KEEP_DATA_BYTES) left out."""
    n = 1100
    w = [numpy_helper.from_array(np.ones((32, 32), np.int8), f"w{i}") for i in range(n)]
    nodes = [helper.make_node("DequantizeLinear", [f"w{i}", "s"], [f"f{i}"]) for i in range(n)]
    graph = helper.make_graph(nodes, "g", [], [helper.make_tensor_value_info(f"f{i}", TensorProto.FLOAT, None)
                                               for i in range(n)],
                              w + [numpy_helper.from_array(np.float32(0.5), "s")])
    path = str(tmp_path / "big.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]), path)
    model, data = load_model_bytes(path, weights=False)
    with reading(model):
        light, skeleton = infer.inference_bytes(model, data)
        assert not skeleton and len(light) < len(data) // 10
        left = onnx.load_from_string(light).graph
        assert not any(t.raw_data for t in left.initializer if t.name.startswith("w"))
        assert infer.run_inference(model, light) == infer.run_inference(model, data)


def _scalars(tmp_path, op: str, n: int = 1100) -> str:
    """n float scalars, each read by one node of ``op`` (IR 10: initializers need not be inputs)."""
    inits = [numpy_helper.from_array(np.float32(i), f"c{i}") for i in range(n)]
    arity = 2 if op == "Mul" else 1
    nodes = [helper.make_node(op, [f"c{i}"] * arity, [f"y{i}"]) for i in range(n)]
    outs = [helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, None) for i in range(n)]
    graph = helper.make_graph(nodes, "g", [], outs, inits)
    path = str(tmp_path / f"{op}.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10), path)
    return path


def test_many_small_tensors_go_as_inputs_only_where_they_may(tmp_path):
    """MOVE_AT_LEAST counts the tensors that may go as inputs: 1,100 scalars only Mul (of
    SHAPE_ONLY) reads go so, with the same types and errors; 1,100 that Relu reads stay, and
    with no weight bytes to leave out the model goes as it is."""
    model, data = load_model_bytes(_scalars(tmp_path, "Mul"), weights=False)
    with reading(model):
        light = weightless.without_weights(model, data)
        assert light is not None and len(onnx.load_from_string(light).graph.input) == 1100
        assert not onnx.load_from_string(light).graph.initializer
        assert infer.run_inference(model, light) == infer.run_inference(model, data)
    model, data = load_model_bytes(_scalars(tmp_path, "Relu"), weights=False)
    with reading(model):
        assert weightless.without_weights(model, data) is None
