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
