"""model/infer_kinds.py: onnx asked once per kind of node gives exactly the types onnx's
inference of the whole model gives, or gives up; and where it gives up, the check is what it
was (the whole model's inference, its errors named)."""

from __future__ import annotations

import glob
import os

import corpus
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from paths import MODELS

from qlin_cli.check.engine import check_file
from qlin_cli.model import analysis, infer, infer_kinds
from qlin_cli.model.graphs import MAIN, reading
from qlin_cli.model.load import load_model_bytes
from qlin_cli.model.walk import type_of_bytes

FIXTURES = sorted(glob.glob(os.path.join(MODELS, "**", "*.onnx"), recursive=True))


@pytest.fixture
def any_size(monkeypatch):
    """by_kind on models of any size and any number of kinds."""
    monkeypatch.setattr(infer_kinds, "KINDS_FROM", 0)
    monkeypatch.setattr(infer_kinds, "FEW_KINDS", 10**6)
    monkeypatch.setattr(infer_kinds, "MOST_KINDS", 10**6)


def _both(path: str):
    """(by_kind's types as inference's reader gives them, or None; the whole model's
    inference: types and strict errors)."""
    model, data = load_model_bytes(path, weights=False)
    with reading(model):
        found = infer_kinds.by_kind(model)
        whole = infer.run_inference(model, data)
    mine = None if found is None else {MAIN: [(n, type_of_bytes(t)) for n, t in found.types]}
    if found is not None:  # (each node's names as they are)
        assert found.io == [(tuple(n.input), tuple(n.output)) for n in model.graph.node]
    return mine, whole


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: os.path.relpath(p, MODELS))
def test_a_fixture_infers_alike_by_kind(path, any_size):
    mine, (types, errors) = _both(path)
    if mine is not None:
        assert not errors and mine == types


def test_most_fixtures_are_inferred_by_kind(any_size):
    """(the comparison above means something: 80 of 126 at the time of writing)"""
    asked = 0
    for path in FIXTURES:
        model, _ = load_model_bytes(path, weights=False)
        with reading(model):
            asked += infer_kinds.by_kind(model) is not None
    assert asked >= 60


def test_every_quantizer_output_infers_alike_by_kind(tmp_path, any_size):
    for name, path in corpus.build(tmp_path).items():
        mine, (types, errors) = _both(path)
        if mine is not None:
            assert not errors and mine == types, name


def _chain(n: int, *, opset: int = 21, declared: bool = False, bad: bool = False) -> onnx.ModelProto:
    """n blocks of DequantizeLinear(weight) -> MatMul -> QuantizeLinear -> DequantizeLinear, as the
    benchmarks' models; ``declared``: every MatMul output declared in value_info (one of them a
    wrong shape when ``bad``)."""
    nodes, inits, infos = [], [], []
    prev = "x"
    for i in range(n):
        inits += [numpy_helper.from_array(np.ones((8, 8), np.int8), f"w{i}"),
                  numpy_helper.from_array(np.full(8, 0.5, np.float32), f"w{i}_s"),
                  numpy_helper.from_array(np.float32(0.25), f"a{i}_s"),
                  numpy_helper.from_array(np.uint8(128), f"a{i}_z")]
        nodes += [helper.make_node("DequantizeLinear", [f"w{i}", f"w{i}_s"], [f"w{i}_f"], axis=1),
                  helper.make_node("MatMul", [prev, f"w{i}_f"], [f"m{i}"]),
                  helper.make_node("QuantizeLinear", [f"m{i}", f"a{i}_s", f"a{i}_z"], [f"q{i}"]),
                  helper.make_node("DequantizeLinear", [f"q{i}", f"a{i}_s", f"a{i}_z"], [f"d{i}"])]
        if declared:
            dims = [4, 9] if bad and i == n // 2 else [4, 8]
            infos.append(helper.make_tensor_value_info(f"m{i}", TensorProto.FLOAT, dims))
        prev = f"d{i}"
    graph = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])],
                              [helper.make_tensor_value_info(prev, TensorProto.FLOAT, None)], inits,
                              value_info=infos)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _reshaped(n: int, how: str) -> onnx.ModelProto:
    """n Reshape nodes in a row, their shape given as ``how``: an initializer, a Constant's
    tensor, or a Constant's value_ints (onnx's inference reads each shape's values)."""
    nodes, inits = [], []
    prev = "x"
    for i in range(n):
        shape = [2, 32] if i % 2 else [8, 8]
        if how == "initializer":
            inits.append(numpy_helper.from_array(np.array(shape, np.int64), f"s{i}"))
        elif how == "tensor":
            nodes.append(helper.make_node("Constant", [], [f"s{i}"],
                                          value=numpy_helper.from_array(np.array(shape, np.int64))))
        else:
            nodes.append(helper.make_node("Constant", [], [f"s{i}"], value_ints=shape))
        nodes.append(helper.make_node("Reshape", [prev, f"s{i}"], [f"r{i}"]))
        prev = f"r{i}"
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 16])
    y = helper.make_tensor_value_info(prev, TensorProto.FLOAT, None)
    graph = helper.make_graph(nodes, "reshapes", [x], [y], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


@pytest.mark.parametrize("how", ["initializer", "tensor", "ints"])
def test_an_op_that_reads_values_is_asked_with_them(tmp_path, how):
    model = _reshaped(1100, how)
    with reading(model):
        found = infer_kinds.by_kind(model)
    assert found is not None
    fast, whole = _analysed(model, tmp_path, True), _analysed(model, tmp_path, False)
    assert fast.inferred == whole.inferred and not whole.inference_errors
    # (the shapes were read: the last output is [2, 32], not unknown)
    assert dict(fast.inferred[MAIN])["r1099"] == (TensorProto.FLOAT, (2, 32))


def _analysed(model: onnx.ModelProto, tmp_path, kinds: bool):
    path = str(tmp_path / "m.onnx")
    onnx.save(model, path)
    m, data = load_model_bytes(path, weights=False)
    original = analysis.by_kind
    try:
        if not kinds:
            analysis.by_kind = lambda _model, **_: None
        return analysis.analyze(m, str(tmp_path), serialized=data)
    finally:
        analysis.by_kind = original


@pytest.mark.parametrize("declared", [False, True])
def test_a_large_chain_is_inferred_by_kind_and_alike(tmp_path, monkeypatch, declared):
    calls = []
    real = infer_kinds._infer_one
    monkeypatch.setattr(infer_kinds, "_infer_one", lambda data: calls.append(1) or real(data))
    model = _chain(300, declared=declared)  # 1,200 nodes
    with reading(model):
        assert infer_kinds.by_kind(model) is not None
    assert 0 < len(calls) <= 8  # (a few kinds, each asked once)
    fast, whole = _analysed(model, tmp_path, True), _analysed(model, tmp_path, False)
    assert fast.inferred == whole.inferred and fast.inference_errors == whole.inference_errors == ()


def test_an_error_gives_up_and_the_whole_model_names_it(tmp_path):
    model = _chain(300, declared=True, bad=True)
    with reading(model):
        assert infer_kinds.by_kind(model) is None
    fast, whole = _analysed(model, tmp_path, True), _analysed(model, tmp_path, False)
    assert fast.inference_errors == whole.inference_errors and fast.inference_errors
    assert fast.inferred == whole.inferred


def _edited(edit) -> onnx.ModelProto:
    model = _chain(300)
    edit(model)
    return model


@pytest.mark.parametrize("edit", [
    lambda m: setattr(m, "ir_version", 3),  # initializers are typed only as inputs
    lambda m: m.graph.node.add().CopyFrom(helper.make_node("Relu", ["d0"], ["r"], domain="com.microsoft")),
    lambda m: (m.graph.initializer.append(numpy_helper.from_array(np.ones((1024, 1, 8), np.float32), "big")),
               m.graph.node.add().CopyFrom(helper.make_node("Sub", ["d0", "big"], ["r"]))),  # its data
    lambda m: m.graph.node[1].CopyFrom(helper.make_node("MatMul", ["x", "nowhere"], ["m0"])),  # no type
    lambda m: m.graph.node[5].output.__setitem__(0, "m0"),  # a name written twice
    lambda m: m.graph.node[1].output.__setitem__(0, "x"),  # a graph input written
    lambda m: m.graph.input.append(helper.make_tensor_value_info("w0", TensorProto.INT8, [8, 8])),  # twice
    lambda m: (m.graph.node.add().CopyFrom(helper.make_node("Constant", [], [""], value_ints=[2, 32])),
               m.graph.node.add().CopyFrom(helper.make_node("Reshape", ["d0", ""], ["r"]))),
    lambda m: m.functions.append(helper.make_function("local", "F", ["a"], ["b"], [
        helper.make_node("Identity", ["a"], ["b"])], [helper.make_opsetid("", 21)])),
], ids=["ir3", "other-domain", "large-data", "untyped", "twice", "input-written", "declared-twice",
        "empty-constant", "function"])
def test_gives_up_where_it_might_differ(tmp_path, edit):
    model = _edited(edit)
    with reading(model):
        assert infer_kinds.by_kind(model) is None


def test_too_many_kinds_or_too_few_nodes_go_whole(monkeypatch):
    model = _chain(300)
    monkeypatch.setattr(infer_kinds, "FEW_KINDS", 0)
    monkeypatch.setattr(infer_kinds, "NODES_PER_KIND", 10**6)
    with reading(model):
        assert infer_kinds.by_kind(model) is None
    monkeypatch.setattr(infer_kinds, "FEW_KINDS", 10**6)
    monkeypatch.setattr(infer_kinds, "MOST_KINDS", 1)
    with reading(model):
        assert infer_kinds.by_kind(model) is None
    monkeypatch.undo()
    with reading(small := _chain(10)):
        assert infer_kinds.by_kind(small) is None


def test_the_check_of_a_large_chain_is_the_same_either_way(tmp_path, monkeypatch):
    path = str(tmp_path / "m.onnx")
    onnx.save(_chain(300, declared=True), path)
    fast = check_file(path, ["QL"])
    monkeypatch.setattr(analysis, "by_kind", lambda _model, **_: None)
    whole = check_file(path, ["QL"])
    assert fast.diagnostics == whole.diagnostics and fast.diagnostics  # (QL findings of the declared types)


def test_a_failure_inside_the_walk_leaves_the_model_to_the_whole_inference(tmp_path, monkeypatch):
    """(inference is a help: whatever goes wrong by kind, the check runs as it did)"""
    def broken(self):
        raise ValueError("unexpected")

    model = _chain(300)
    monkeypatch.setattr(infer_kinds._Walk, "run", broken)
    with reading(model):
        assert infer_kinds.by_kind(model) is None
    fast, whole = _analysed(model, tmp_path, True), _analysed(model, tmp_path, False)
    assert fast.inferred == whole.inferred and fast.inferred


@pytest.mark.parametrize("node_domain, imported", [("ai.onnx", ""), ("", "ai.onnx"), ("ai.onnx", "ai.onnx")])
def test_ai_onnx_however_spelled_gives_up_or_infers_alike(tmp_path, any_size, node_domain, imported):
    """A node spelled "ai.onnx" is asked of onnx (schema.normalize_domain): where onnx
    leaves it untyped the kind gives up, else its types are the whole inference's."""
    nodes = [helper.make_node("Relu", ["x"], ["a"], domain=node_domain),
             helper.make_node("Add", ["a", "a"], ["b"]),
             helper.make_node("Sigmoid", ["b"], ["y"], domain=node_domain)]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid(imported, 17)], ir_version=8)
    path = str(tmp_path / "m.onnx")
    onnx.save(model, path)
    mine, (types, errors) = _both(path)
    if mine is not None:
        assert not errors and mine == types
