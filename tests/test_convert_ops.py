"""Other ops across opsets: every step of every ai.onnx op is accounted for, and the
adapters give models that onnxruntime runs with the same bits before and after."""

from __future__ import annotations

import os

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from qlin_cli.convert import opsteps
from qlin_cli.convert.ops import generic, node
from qlin_cli.convert.ops.step import OpStep
from qlin_cli.convert.registry import adapter
from qlin_cli.convert.run import Options, convert_model

ort = pytest.importorskip("onnxruntime")
DOC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs", "opsteps.md")


def how(op: str, a: int, b: int) -> str:
    """How qlin crosses one step: type-only, a named adapter, the generic rules, or
    onnx.version_converter with a proof (whose coverage docs/opsteps.md records)."""
    if adapter("", op, a, b) is not None:
        return f"adapter {adapter('', op, a, b).__name__}"
    d = opsteps.diff(op, min(a, b), max(a, b))
    if d.type_only:
        return "type-only"
    step = OpStep(helper.make_node(op, [], []), op, a, b, d, lambda n: None, lambda n: None, str)
    if generic.handles(step):
        return "generic"
    return "onnx.version_converter, proven"


def test_every_step_of_every_op_is_accounted_for():
    doc = open(DOC, encoding="utf-8").read()
    counts: dict[str, int] = {}
    for op, a, b, _ in opsteps.all_steps():
        for frm, to in ((a, b), (b, a)):
            h = how(op, frm, to)
            counts[h.split()[0]] = counts.get(h.split()[0], 0) + 1
            if h.startswith("onnx.version_converter"):
                # the fallback's coverage is measured and written down per step
                assert f"| {op} |" in doc, (op, frm, to)
    assert counts["type-only"] > 400 and counts["adapter"] > 40 and counts["generic"] > 20, counts


def _model(op_node, opset, inputs, consts=(), outputs=("y",), out_type=TensorProto.FLOAT):
    graph = helper.make_graph(
        [op_node], "g",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
        [helper.make_tensor_value_info(o, out_type, None) for o in outputs],
        [numpy_helper.from_array(np.asarray(v), n) for n, v in consts])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def _run(model, feeds):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"]).run(
        None, feeds)


X = ("x", [2, 3, 4, 5])
I64 = np.int64


CASES = [
    # (id, node, opset, inputs, constants, target opset)
    ("squeeze-up", helper.make_node("Squeeze", ["x"], ["y"], axes=[1]), 11, [("x", [2, 1, 4])], (), 13),
    ("squeeze-down", helper.make_node("Squeeze", ["x", "ax"], ["y"]), 13, [("x", [2, 1, 4])],
     [("ax", np.array([-2], I64))], 10),
    ("unsqueeze-down", helper.make_node("Unsqueeze", ["x", "ax"], ["y"]), 13, [("x", [2, 4])],
     [("ax", np.array([-1], I64))], 10),
    ("reducemean-down", helper.make_node("ReduceMean", ["x", "ax"], ["y"], keepdims=0), 18, [X],
     [("ax", np.array([-1, 1], I64))], 10),
    ("reducemean-up", helper.make_node("ReduceMean", ["x"], ["y"], axes=[2]), 10, [X], (), 18),
    ("reducesum-down", helper.make_node("ReduceSum", ["x", "ax"], ["y"]), 13, [X],
     [("ax", np.array([3], I64))], 11),
    ("split-down", helper.make_node("Split", ["x", "s"], ["y", "z"], axis=-1), 13, [X],
     [("s", np.array([2, 3], I64))], 10),
    ("split-up", helper.make_node("Split", ["x"], ["y", "z"], axis=1, split=[1, 2]), 11, [X], (), 18),
    ("pad-up", helper.make_node("Pad", ["x"], ["y"], pads=[0, 1, 0, 0, 0, 1, 0, 0], value=1.5), 10,
     [X], (), 19),
    ("pad-down", helper.make_node("Pad", ["x", "p", "v"], ["y"]), 13, [X],
     [("p", np.array([0, 0, 1, 1, 0, 0, 1, 1], I64)), ("v", np.float32(-2))], 10),
    ("clip-up", helper.make_node("Clip", ["x"], ["y"], min=-0.5, max=0.75), 10, [X], (), 13),
    ("clip-down", helper.make_node("Clip", ["x", "lo", "hi"], ["y"]), 13, [X],
     [("lo", np.float32(-1)), ("hi", np.float32(0.5))], 10),
    ("dropout-down", helper.make_node("Dropout", ["x", "r"], ["y"]), 13, [X], [("r", np.float32(0.3))], 10),
    ("dropout-up", helper.make_node("Dropout", ["x"], ["y"], ratio=0.25), 10, [X], (), 13),
    ("softmax-last-down", helper.make_node("Softmax", ["x"], ["y"]), 13, [X], (), 11),
    ("softmax-last-up", helper.make_node("Softmax", ["x"], ["y"], axis=3), 11, [X], (), 13),
    ("logsoftmax-up", helper.make_node("LogSoftmax", ["x"], ["y"], axis=-1), 10, [X], (), 13),
    ("concat-neg-down", helper.make_node("Concat", ["x", "x"], ["y"], axis=-2), 13, [X], (), 10),
    ("flatten-down", helper.make_node("Flatten", ["x"], ["y"], axis=-1), 21, [X], (), 10),
    ("slice-down", helper.make_node("Slice", ["x", "st", "en", "ax"], ["y"]), 13, [X],
     [("st", np.array([1], I64)), ("en", np.array([4], I64)), ("ax", np.array([-1], I64))], 10),
    ("reshape-down", helper.make_node("Reshape", ["x", "sh"], ["y"]), 21, [X],
     [("sh", np.array([6, -1], I64))], 10),
    ("resize-nearest-up", helper.make_node("Resize", ["x", "sc"], ["y"], mode="nearest"), 10, [X],
     [("sc", np.array([1, 1, 2, 1.5], np.float32))], 13),
    ("resize-linear-up", helper.make_node("Resize", ["x", "sc"], ["y"], mode="linear"), 10, [X],
     [("sc", np.array([1, 1, 2, 2], np.float32))], 19),
    ("resize-13-down", helper.make_node("Resize", ["x", "", "sc"], ["y"], mode="nearest"), 13, [X],
     [("sc", np.array([1, 1, 2, 2], np.float32))], 11),
    ("topk-down", helper.make_node("TopK", ["x", "k"], ["y", "i"], axis=-1), 11, [X],
     [("k", np.array([2], I64))], 10),
    ("argmax-down", helper.make_node("ArgMax", ["x"], ["y"], axis=-1), 13, [X], (), 10),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_converted_node_runs_identically_in_onnxruntime(case, tmp_path):
    _, op_node, opset, inputs, consts, to = case
    outputs = list(op_node.output)
    model = _model(op_node, opset, inputs, consts, outputs)
    if op_node.op_type in ("TopK", "ArgMax"):
        model.graph.output[-1].type.tensor_type.elem_type = TensorProto.INT64
        if op_node.op_type == "ArgMax":
            model.graph.output[0].type.tensor_type.elem_type = TensorProto.INT64
    result = convert_model(model, str(tmp_path), Options(to))
    assert not result.refused, [r.detail for r in result.refused]
    new = result.model
    assert new.opset_import[0].version == to
    rng = np.random.default_rng(3)
    feeds = {n: rng.standard_normal(s).astype(np.float32) for n, s in inputs}
    for a, b in zip(_run(model, feeds), _run(new, feeds), strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    entries = [e for e in result.entries if e.action == "other-op"]
    assert entries and all(e.verified or any("not proven" in c for c in e.changes) for e in entries)


@pytest.mark.parametrize("op_node, opset, inputs, to, words", [
    (helper.make_node("Squeeze", ["x", "ax"], ["y"]), 13, [("x", [2, 1, 4]), ("ax", [1])], 11,
     "axes is computed at run time"),
    (helper.make_node("LayerNormalization", ["x", "g"], ["y"]), 17, [X, ("g", [5])], 16,
     "LayerNormalization does not exist at opset 16 (it first appears in opset 17)"),
    (helper.make_node("Pad", ["x", "p"], ["y"], mode="wrap"), 19, [X], 18, "mode 'wrap' exists only"),
    (helper.make_node("Reshape", ["x", "sh"], ["y"], allowzero=1), 14, [X], 13,
     "attribute allowzero=1 exists only from opset 14"),
])
def test_what_cannot_be_expressed_is_refused_by_name(op_node, opset, inputs, to, words, tmp_path):
    consts = []
    if "p" in op_node.input:
        consts = [("p", np.zeros(8, I64))]
        inputs = [i for i in inputs if i[0] != "p"]
    if "sh" in op_node.input:
        consts = [("sh", np.array([6, -1], I64))]
    if "ax" in op_node.input:
        inputs = [("x", [2, 1, 4])]
        model = _model(op_node, opset, inputs)
        model.graph.input.append(helper.make_tensor_value_info("ax", TensorProto.INT64, [1]))
    else:
        model = _model(op_node, opset, inputs, consts)
    result = convert_model(model, str(tmp_path), Options(to))
    assert result.model is None
    assert any(words in r.detail for r in result.refused), [r.detail for r in result.refused]


def test_a_million_repeated_nodes_cost_one_decision():
    node._type_check.cache_clear()
    for _ in range(1000):
        node.convert(helper.make_node("Relu", ["x"], ["y"]), 14, 10, types={"x": "float", "y": "float"},
                     elem_types={}, const=lambda n: None, rank=lambda n: None, namer=str, ir_version=8)
    assert node._type_check.cache_info().misses == 1
