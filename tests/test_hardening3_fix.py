"""Hardening 3: --fix on big headers does its work once.

A model with thousands of unused opset imports (QL109) or of nodes out of order (QL108)
gives one finding each, each with a fix. Each removed import used to rebuild the whole
import list, and each QL108 fix sorted the same graph again after a new analysis: 10,000
imports took 90 s, 3,000 reversed nodes 129 s. The counts below are of the work, not of
time: the analyses a run makes and the imports it compares."""

from __future__ import annotations

import onnx
from onnx import TensorProto, helper

from qlin_cli import schema
from qlin_cli.check.engine import check_file
from qlin_cli.fix import fix_file


def _relu_chain(n: int, imports: int = 0, reverse: bool = False) -> onnx.ModelProto:
    nodes = [helper.make_node("Relu", [f"t{i}"], [f"t{i + 1}"], name=f"n{i}") for i in range(n)]
    if reverse:
        nodes.reverse()
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("t0", TensorProto.FLOAT, [4])],
                          [helper.make_tensor_value_info(f"t{n}", TensorProto.FLOAT, [4])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)]
                             + [helper.make_opsetid(f"unused.d{i}", 1) for i in range(imports)])


def _fix(tmp_path, model, code):
    path = str(tmp_path / "m.onnx")
    onnx.save(model, path)
    found = check_file(path).diagnostics
    assert {d.code for d in found} == {code} and all(d.fix is not None for d in found)
    return path, found, fix_file(path, found)


def test_thousands_of_unused_imports_are_removed_in_one_pass(tmp_path, monkeypatch):
    n = 3000
    calls = []
    real = schema.normalize_domain
    monkeypatch.setattr(schema, "normalize_domain", lambda d: calls.append(d) or real(d))
    path, found, out = _fix(tmp_path, _relu_chain(2, imports=n), "QL109")
    assert len(found) == n and len(out.fixed) == n and out.error is None and out.written
    assert [(o.domain, o.version) for o in onnx.load(path).opset_import] == [("", 21)]
    assert len(calls) < 20 * n, len(calls)  # a rebuild per removal compared n * n / 2


def test_a_reversed_graph_is_sorted_once(tmp_path, monkeypatch):
    import qlin_cli.fix as fix

    n = 1500
    analyses = []
    real = fix.analyze
    monkeypatch.setattr(fix, "analyze", lambda *a, **k: analyses.append(1) or real(*a, **k))
    path, found, out = _fix(tmp_path, _relu_chain(n, reverse=True), "QL108")
    assert len(found) == n - 1 and len(out.fixed) == n - 1 and out.written
    assert len(analyses) <= 3, len(analyses)  # the index, one sort (a sort per finding before)
    names = [node.name for node in onnx.load(path).graph.node]
    assert names == [f"n{i}" for i in range(n)]
    assert check_file(path).diagnostics == []
