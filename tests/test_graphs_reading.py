"""``graphs.reading``: inside the block a model's bodies are found once (model/graphs.py)."""

from __future__ import annotations

import os

import onnx
from onnx import TensorProto, helper
from paths import MODELS

from qlin_cli.check.engine import check_file
from qlin_cli.model import graphs


def _model_with_subgraph() -> onnx.ModelProto:
    then = helper.make_graph([helper.make_node("Identity", ["x"], ["t"])], "then", [],
                             [helper.make_tensor_value_info("t", TensorProto.FLOAT, [1])])
    other = helper.make_graph([helper.make_node("Identity", ["x"], ["e"])], "else", [],
                              [helper.make_tensor_value_info("e", TensorProto.FLOAT, [1])])
    node = helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("c", TensorProto.BOOL, []),
                                        helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])


def _counting(monkeypatch) -> list:
    calls = []
    real = graphs.within
    monkeypatch.setattr(graphs, "within", lambda root: calls.append(root.path) or real(root))
    return calls


def test_bodies_are_found_once_inside_the_block(monkeypatch):
    m = _model_with_subgraph()
    calls = _counting(monkeypatch)
    plain = [b.path for b in graphs.bodies(m)]
    assert plain == ["main", "main/#0.else_branch", "main/#0.then_branch"]
    assert calls == ["main"]
    calls.clear()
    with graphs.reading(m):
        for _ in range(3):
            assert [b.path for b in graphs.bodies(m)] == plain
        with graphs.reading(m):  # nested: the same memo
            assert [b.path for b in graphs.bodies(m)] == plain
        other = _model_with_subgraph()
        assert [b.path for b in graphs.bodies(other)] == plain  # another model: not memoized
    assert calls == ["main", "main"]
    calls.clear()
    m.graph.node[0].attribute.pop()  # after the block the model may change, and is seen anew
    assert [b.path for b in graphs.bodies(m)] == ["main", "main/#0.else_branch"]


def test_check_file_scans_the_model_once(monkeypatch):
    calls = _counting(monkeypatch)
    result = check_file(os.path.join(MODELS, "rules", "QL405-bad.onnx"))
    assert [d.code for d in result.diagnostics] == ["QL405"]
    assert calls == ["main"]  # once: and not in the copy shape inference returned (no subgraphs)
