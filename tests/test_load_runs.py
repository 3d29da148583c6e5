"""model/load.py's ``_graph_runs``: the header of each graph field read inline where its tag
and length are short; held here to the plain field-by-field reading (``_fields``) on graphs of
every field length class (one-, two-, three- and four-byte lengths), other wire types, and
windows and pieces of every size."""

import io

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

from qlin_cli.model import load


def _graph_bytes() -> bytes:
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.integers(0, 255, n).astype(np.uint8), f"t{n}")
             for n in (1, 100, 130, 16_000, 16_400, 2_100_000)]
    nodes = [helper.make_node("Relu", [f"x{i}"], [f"x{i + 1}"], name="n" * (i * 37 % 300)) for i in range(60)]
    g = helper.make_graph(nodes, "g", [], [], inits, doc_string="d" * 20_000)
    g.sparse_initializer.add().values.CopyFrom(numpy_helper.from_array(np.ones(3, np.float32), "sv"))
    return g.SerializeToString()


def _reference(win, start: int, end: int, piece: int, large: int) -> list:
    """The runs as the field-by-field loop splits them."""
    out, a = [], start
    b = start
    for tag, pos, nxt in load._fields(win, start, end):
        if tag == load._INITIALIZER_TAG and nxt - pos > large:
            if b > a:
                out.append(("run", a, b))
            out.append(("large", pos, nxt))
            a = b = nxt
            continue
        if nxt - a > piece and b > a:
            out.append(("run", a, b))
            a = b
        b = nxt
    return out + [("run", a, b)]


@pytest.mark.parametrize("piece", [1, 7, 5_000, 8 * 2**20])
@pytest.mark.parametrize("window", [32, 100, 2**20])
@pytest.mark.parametrize("large", [200, 2**24])
def test_runs_are_the_fields_runs(monkeypatch, piece, window, large):
    data = _graph_bytes()
    monkeypatch.setattr(load, "PIECE", piece)
    monkeypatch.setattr(load, "STRICT_MAX_BYTES", large)
    monkeypatch.setattr(load._Window, "SIZE", window)
    for start, end in ((0, len(data)), (3, len(data)), (0, len(data) - 1)):
        def runs(fn, start=start, end=end):
            try:
                return fn(load._Window(io.BytesIO(data), len(data)), start, end)
            except (load._Unexpected, IndexError) as e:
                return type(e)
        want = runs(lambda w, s, e: _reference(w, s, e, piece, large))
        got = runs(lambda w, s, e: list(load._graph_runs(w, s, e)))
        assert got == want, (start, end)
    assert any(kind == "large" for kind, *_ in _reference(
        load._Window(io.BytesIO(data), len(data)), 0, len(data), piece, large)) == (large == 200)


def test_runs_merge_to_the_graph(monkeypatch):
    monkeypatch.setattr(load, "PIECE", 1000)
    data = _graph_bytes()
    m = onnx.ModelProto()
    for _, a, b in load._graph_runs(load._Window(io.BytesIO(data), len(data)), 0, len(data)):
        m.MergeFromString(load._graph_piece(b - a) + data[a:b])
    assert m.graph.SerializeToString() == data
