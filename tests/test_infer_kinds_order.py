"""What inference by kind's walk tells the rules of names (model/infer_kinds.in_order, ByKind's
``early`` and ``unwritten``): where it says a graph is in order, QL003, QL004 and QL108 find
nothing without looking, and QL005 reads the graph outputs no node wrote from it. Each model
here is walked by kind (asserted), and its findings are those of the check without the walk."""

from __future__ import annotations

import onnx
import pytest
from onnx import TensorProto, helper
from test_infer_kinds import FIXTURES, _chain, any_size  # noqa: F401 (any_size: a fixture)

from qlin_cli.check.engine import check_file
from qlin_cli.model import analysis, infer_kinds
from qlin_cli.model.graphs import reading


def _info(name: str, dims=(4, 8)) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, list(dims))


def _late(m):  # the first MatMul reads a declared value a later node writes
    m.graph.node[1].input[0] = "m5"


def _ghost(m):  # ... a declared value no node writes
    m.graph.value_info.append(_info("ghost"))
    m.graph.node[1].input[0] = "ghost"


def _itself(m):  # the second MatMul reads its own (declared) output
    m.graph.node[5].input[0] = "m1"


def _output_early(m):  # ... the graph output, which the last node writes
    m.graph.node[1].input[0] = m.graph.output[0].name


def _unwritten(m):  # a typed graph output and an untyped one that no node writes
    m.graph.output.append(_info("never"))
    m.graph.output.append(onnx.ValueInfoProto(name="nor_this"))


CASES = {
    "in-order": (None, ()),
    "in-order-declared": (lambda m: None, ()),
    "late": (_late, ("QL108",)),
    "ghost": (_ghost, ("QL003",)),
    "itself": (_itself, ("QL108",)),
    "output-early": (_output_early, ("QL108",)),
    "unwritten": (_unwritten, ("QL005",)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_what_the_walk_tells_is_what_the_rules_find(tmp_path, monkeypatch, case):
    edit, codes = CASES[case]
    model = _chain(300, declared=case != "in-order")  # 1,200 nodes, every MatMul's output declared
    if edit is not None:
        edit(model)
    with reading(model):
        walked = infer_kinds.by_kind(model)
    assert walked is not None  # (the walk is what is tested)
    assert infer_kinds.in_order(walked) == (case in ("in-order", "in-order-declared", "unwritten"))
    path = str(tmp_path / "m.onnx")
    onnx.save(model, path)
    fast = check_file(path, ["QL0", "QL1"])
    monkeypatch.setattr(analysis, "by_kind", lambda _model, **_: None)
    whole = check_file(path, ["QL0", "QL1"])
    assert fast.diagnostics == whole.diagnostics
    found = {d.code for d in fast.diagnostics}
    for code in ("QL003", "QL004", "QL005", "QL108"):
        assert (code in found) == (code in codes), (code, found)


def test_unwritten_holds_the_declared_names_no_node_wrote():
    model = _chain(300, declared=True)
    _unwritten(model)
    with reading(model):
        walked = infer_kinds.by_kind(model)
    assert walked.unwritten == {"never", "nor_this"} and walked.early == []


def _walked_alike(path: str, monkeypatch):
    """The walk inference by kind gives ``path`` (None where it gives up), the file's findings
    held alike with the walk and without it."""
    fast = check_file(path, ["QL"])
    with monkeypatch.context() as m:
        m.setattr(analysis, "by_kind", lambda _model, **_: None)
        whole = check_file(path, ["QL"])
    assert fast.diagnostics == whole.diagnostics, path
    model = onnx.load(path, load_external_data=False)
    with reading(model):
        return infer_kinds.by_kind(model)


@pytest.mark.usefixtures("any_size")
def test_every_fixture_checks_alike_walked_by_kind_or_not(monkeypatch):
    """(the fixtures hold the defects of QL003, QL004, QL005 and QL108 in small models, which
    the walk leaves to the whole inference unless told otherwise)"""
    walked = sum(_walked_alike(path, monkeypatch) is not None for path in FIXTURES)
    assert walked >= 60


@pytest.mark.usefixtures("any_size")
def test_every_quantizer_output_checks_alike_walked_by_kind_or_not(tmp_path, monkeypatch):
    """(onnxruntime's quantizer's models, each walked by kind whatever its size here, checked
    with and without the walk: its findings the same)"""
    import corpus

    paths = corpus.build(tmp_path).values()
    walked = sum(infer_kinds.in_order(_walked_alike(path, monkeypatch)) for path in paths)
    assert walked >= 30  # (the rules' shortcut taken on most of them)


def _byte(name: str = "") -> onnx.TensorProto:
    return onnx.TensorProto(name=name, data_type=TensorProto.INT8, dims=[1], raw_data=b"\0")


def _initializer_twice(m):
    m.graph.initializer.append(_byte("w3"))


def _initializer_unnamed(m):
    m.graph.initializer.append(_byte())


def _input_twice(m):
    m.graph.input.append(_info("x"))


@pytest.mark.parametrize("edit", [_initializer_twice, _initializer_unnamed, _input_twice])
def test_a_graph_with_a_name_ql002_finds_is_never_walked(tmp_path, edit):
    """(QL002 leaves a walked graph's names alone: the walk gives up on each of its findings)"""
    model = _chain(300)
    edit(model)
    with reading(model):
        assert infer_kinds.by_kind(model) is None
    path = str(tmp_path / "m.onnx")
    onnx.save(model, path)
    assert [d.code for d in check_file(path, ["QL002"]).diagnostics] == ["QL002"]
