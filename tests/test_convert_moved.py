"""A plain conversion whose nodes are the source's at other versions of their ops (opset moved,
nothing rewritten) reads the runtimes' view of its result from the source's analysis
(convert_moved.py): the same findings as analysing the result, without that analysis."""

from __future__ import annotations

import glob
import os

import pytest

from qlin_cli import convert_moved as moved
from qlin_cli import convert_pipeline as cp
from qlin_cli.convert.run import convert_model
from qlin_cli.convert.state import Options
from qlin_cli.model import analysis
from qlin_cli.model.load import load_model_bytes

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = sorted(glob.glob(os.path.join(HERE, "..", "fixtures", "models", "**", "*.onnx"), recursive=True))


def _key(f) -> tuple:
    return (f.code, f.severity, f.message, f.node, f.op_type, f.domain, f.opset, f.graph, f.where, f.title,
            f.target, f.convertible)


def _moved(to: int):
    """(path, the source's analysis, the converted model) of each fixture an opset move to
    ``to`` changes without rewriting a node."""
    for path in MODELS:
        base = os.path.dirname(path)
        try:
            proto, _ = load_model_bytes(path)
            a = analysis.analyze(proto, base)
            r = convert_model(proto, base, Options(to), types=a.inferred, analysis=a)
        except Exception:
            continue  # a model the passes refuse to read: not these tests'
        if r.model is not None and not r.rewritten and r.changed:
            yield path, a, r.model


@pytest.mark.parametrize("to", [13, 21, 24])
def test_moved_differences_are_those_of_the_result_analysed(to):
    compared = 0
    for path, a, model in _moved(to):
        base = os.path.dirname(path)
        got = moved.differences(a, model, cp.MEASURED_RUNTIMES, cp.differing)
        if got is None:
            continue
        want = cp._differences(a, analysis.analyze(model, base))
        assert [_key(x) for x in got] == [_key(x) for x in want], path
        compared += 1
    assert compared > 20


def test_the_source_is_judged_at_the_places_of_the_results_warnings(monkeypatch):
    """Without an error on the result, the source's findings are worked out only at the places
    of the result's warnings (``_judged``): the same differences as from every node's."""
    compared, narrowed = 0, []
    judged = moved._judged

    def spy(placed, found):
        kept = judged(placed, found)
        narrowed.append(len(kept) < len(placed))
        return kept

    monkeypatch.setattr(moved, "_judged", spy)
    for to in (13, 21, 24):
        for path, a, model in _moved(to):
            got = moved.differences(a, model, cp.MEASURED_RUNTIMES, cp.differing)
            with monkeypatch.context() as m:
                m.setattr(moved, "_judged", lambda placed, found: placed)
                every = moved.differences(a, model, cp.MEASURED_RUNTIMES, cp.differing)
            assert (got is None) == (every is None), path
            if got is not None:
                assert [_key(x) for x in got] == [_key(x) for x in every], path
                compared += 1
    assert compared > 20 and sum(narrowed) > 5


def _chain(path: str) -> None:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], name="q"),
             helper.make_node("DequantizeLinear", ["q", "s", "z"], ["d"], name="dq"),
             helper.make_node("Relu", ["d"], ["y"], name="relu")]
    inits = [numpy_helper.from_array(np.float32(0.1), "s"), numpy_helper.from_array(np.int8(0), "z")]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])], inits)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=7), path)


def test_a_moved_conversion_analyses_the_model_once(monkeypatch, tmp_path):
    path = str(tmp_path / "chain.onnx")
    _chain(path)
    calls = []
    real = analysis.analyze

    def spy(*args, **kwargs):
        calls.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(analysis, "analyze", spy)
    result = cp.run(cp.Request(path, to_opset=21))
    assert result.model is not None and result.changed and not result.rewritten
    assert len(calls) == 1  # the source's; the result's view is read from it


class _Asker:
    """A stand-in for site_classes.asker: a class split by ``names``, its findings per value."""

    def __init__(self, names: tuple, by: dict | None):
        self.names, self.by = names, by

    def split(self, k):
        return self.names

    def by_summaries(self, site, names):
        return self.by


def _x(code: str, severity: str, convertible: bool = False):
    from types import SimpleNamespace

    return SimpleNamespace(code=code, severity=severity, convertible=convertible)


def test_a_class_split_by_summaries_is_passed_over_only_where_every_value_passes():
    """``_split_passes``: every value of the summaries gives the result findings the source has
    (a warning there too, or none), none offering a conversion, no error of the source's."""
    names = ("negative_scale",)
    values = [(True,), (False,), (None,)]
    same = {v: [_x("QT407", "warning")] if v == (True,) else [] for v in values}
    assert moved._split_passes(_Asker(names, same), _Asker((), same), None, 0) is True
    new = {v: [_x("QT407", "warning")] for v in values}  # a warning the source lacks for False, None
    assert moved._split_passes(_Asker(names, new), _Asker((), same), None, 0) is False
    erring = {v: [_x("QT201", "error")] if v == (None,) else [] for v in values}  # the source refuses
    assert moved._split_passes(_Asker(names, same), _Asker((), erring), None, 0) is False
    offered = {v: [_x("QT407", "warning", convertible=True)] if v == (True,) else [] for v in values}
    assert moved._split_passes(_Asker(names, offered), _Asker((), same), None, 0) is False
    assert moved._split_passes(_Asker(names, None), _Asker((), same), None, 0) is False


def test_classes_split_by_summaries_passed_whole_change_no_difference(monkeypatch):
    """The moved differences with split classes passed over whole (``_split_passes``) are those
    found node by node, and the shortcut is taken on some fixture."""
    taken = []
    real = moved._split_passes

    def spy(*args):
        got = real(*args)
        taken.append(got)
        return got

    monkeypatch.setattr(moved, "_split_passes", spy)
    compared = 0
    for to in (13, 21):
        for path, a, model in _moved(to):
            got = moved.differences(a, model, cp.MEASURED_RUNTIMES, cp.differing)
            with monkeypatch.context() as m:
                m.setattr(moved, "_split_passes", lambda *args: False)
                every = moved.differences(a, model, cp.MEASURED_RUNTIMES, cp.differing)
            assert (got is None) == (every is None), path
            if got is not None:
                assert [_key(x) for x in got] == [_key(x) for x in every], path
                compared += 1
    assert compared > 20 and any(taken)
