"""model/load.py's ``_graph_runs``: the header of each graph field read inline where its tag
and length are short; held here to the plain field-by-field reading (``_fields``) on graphs of
every field length class (one-, two-, three- and four-byte lengths), other wire types, and
windows and pieces of every size. And what the loader says of a marker in the file (a node's
qlin:ignore), read whole or in pieces."""

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


def _chain(n: int, mark: bool) -> onnx.ModelProto:
    """n Q -> DQ pairs of constant weights (QL604 on each Q), the first Q marked to ignore it."""
    nodes, inits = [], []
    for i in range(n):
        inits += [numpy_helper.from_array(np.full(4, 0.5, np.float32), f"w{i}"),
                  numpy_helper.from_array(np.float32(0.1), f"s{i}"),
                  numpy_helper.from_array(np.int8(0), f"z{i}")]
        nodes += [helper.make_node("QuantizeLinear", [f"w{i}", f"s{i}", f"z{i}"], [f"q{i}"], name=f"q{i}"),
                  helper.make_node("DequantizeLinear", [f"q{i}", f"s{i}", f"z{i}"], [f"y{i}"], name=f"d{i}")]
    if mark:
        nodes[0].metadata_props.add(key="qlin:ignore", value="QL604")
    outs = [helper.make_tensor_value_info(f"y{i}", onnx.TensorProto.FLOAT, [4]) for i in range(n)]
    m = helper.make_model(helper.make_graph(nodes, "g", [], outs, inits),
                          opset_imports=[helper.make_opsetid("", 21)])
    m.ir_version = 10
    return m


@pytest.mark.parametrize("pieces", [False, True])
def test_a_mark_is_found_in_the_file_parsed_whole_or_in_pieces(tmp_path, monkeypatch, pieces):
    """The loader says whether the file holds the ignore key, read whole or piece by piece,
    and the check honours a node's mark (or, without one, looks at no node for it)."""
    from qlin_cli.check.engine import check_file
    from qlin_cli.model import analysis

    if pieces:
        monkeypatch.setattr(load, "PIECES_ABOVE", 0)
        monkeypatch.setattr(load, "PIECE", 300)
    looked: list = []
    note = analysis._note_ignores
    monkeypatch.setattr(analysis, "_note_ignores", lambda a, body: (looked.append(body.path), note(a, body)))
    for mark in (True, False):
        path = tmp_path / f"m{mark}.onnx"
        path.write_bytes(_chain(600, mark).SerializeToString())
        found: list = []
        _, data = load.load_model_bytes(str(path), look_for=b"qlin:ignore", found=found)
        assert found == [mark] and (data is None) == pieces
        looked.clear()
        q604 = [d.node for d in check_file(str(path)).diagnostics if d.code == "QL604"]
        assert q604 == [f"q{i}" for i in range(1 if mark else 0, 600)]
        assert looked == (["main"] if mark else [])
