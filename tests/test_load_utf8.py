"""UTF-8 of string fields, verified by protobuf itself while parsing (model/utf8.py).

The loader parses the bytes a second time as a copy of onnx.proto whose strings are
verified. These tests hold that verdict to the one of walking the parsed model
(``load.invalid_string``): on every fixture both say clean, on a bad byte in each
kind of string field both say bad, in a whole parse and in a parse by pieces, and
without the copy the walk still refuses.
"""

from __future__ import annotations

import os

import onnx
import pytest
from onnx import TensorProto, helper
from paths import MODELS

from qlin_cli.errors import QlinError
from qlin_cli.model import load as loader
from qlin_cli.model import utf8

FIXTURES = sorted(os.path.join(r, f) for r, _, fs in os.walk(MODELS) for f in fs if f.endswith(".onnx"))


def _model() -> onnx.ModelProto:
    w = helper.make_tensor("w", TensorProto.INT8, [4], [1, 2, 3, 4])
    ext = TensorProto(name="big", data_type=TensorProto.FLOAT, dims=[4],
                      data_location=TensorProto.EXTERNAL)
    ext.external_data.add(key="location", value="data.bin")
    nodes = [helper.make_node("DequantizeLinear", ["w", "s"], ["y"], name="dq", doc_string="doc"),
             helper.make_node("Add", ["y", "big"], ["z"], name="add")]
    nodes[0].metadata_props.add(key="note", value="text")
    graph = helper.make_graph(
        nodes, "g", [], [helper.make_tensor_value_info("z", TensorProto.FLOAT, [4])],
        initializer=[w, helper.make_tensor("s", TensorProto.FLOAT, [], [0.5]), ext])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], producer_name="maker")
    m.ir_version = 10
    return m


# (a place for the marker "Q~q", where the field name the walk reports)
PLACES = {
    "node name": (lambda m: setattr(m.graph.node[0], "name", "Q~q"), "onnx.NodeProto.name"),
    "node input": (lambda m: m.graph.node[1].input.__setitem__(1, "Q~q"), "onnx.NodeProto.input"),
    "node doc": (lambda m: setattr(m.graph.node[0], "doc_string", "Q~q"), "onnx.NodeProto.doc_string"),
    "metadata": (lambda m: setattr(m.graph.node[0].metadata_props[0], "value", "Q~q"),
                 "onnx.StringStringEntryProto.value"),
    "tensor name": (lambda m: setattr(m.graph.initializer[0], "name", "Q~q"), "onnx.TensorProto.name"),
    "external location": (lambda m: setattr(m.graph.initializer[2].external_data[0], "value", "Q~q"),
                          "onnx.StringStringEntryProto.value"),
    "producer": (lambda m: setattr(m, "producer_name", "Q~q"), "onnx.ModelProto.producer_name"),
    "graph name": (lambda m: setattr(m.graph, "name", "Q~q"), "onnx.GraphProto.name"),
}


def _bad_bytes(place: str) -> bytes:
    m = _model()
    PLACES[place][0](m)
    data = m.SerializeToString()
    assert data.count(b"Q~q") == 1
    return data.replace(b"Q~q", b"Q\xffq")


def test_the_verifying_copy_is_built():
    """This protobuf supports editions: the fast path is the one `make test` runs."""
    assert utf8.Strings().cls is not None


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: os.path.relpath(p, MODELS))
def test_every_fixture_is_clean_for_both(path):
    with open(path, "rb") as f:
        data = f.read()
    strings = utf8.Strings()
    strings.see(data)
    m = onnx.ModelProto()
    m.ParseFromString(data)
    assert (strings.bad, strings.unknown) == (False, False)
    assert loader.invalid_string(m) is None


@pytest.mark.parametrize("place", sorted(PLACES))
def test_a_bad_byte_in_each_kind_of_field(place, tmp_path):
    data = _bad_bytes(place)
    strings = utf8.Strings()
    strings.see(data)
    assert strings.bad
    p = tmp_path / "m.onnx"
    p.write_bytes(data)
    with pytest.raises(QlinError) as e:
        loader.load_model(str(p))
    assert f"a string ({PLACES[place][1]}) is not valid UTF-8" in e.value.reason


@pytest.mark.parametrize("place", ["node name", "tensor name", "external location"])
def test_a_bad_byte_in_a_parse_by_pieces(place, tmp_path, monkeypatch):
    monkeypatch.setattr(loader, "PIECES_ABOVE", 0)
    monkeypatch.setattr(loader, "PIECE", 7)
    p = tmp_path / "m.onnx"
    p.write_bytes(_bad_bytes(place))
    for weights in (True, False):
        with pytest.raises(QlinError, match="is not valid UTF-8"):
            loader.load_model(str(p), weights=weights)
    p.write_bytes(_model().SerializeToString())
    assert loader.load_model(str(p)).graph.node[0].name == "dq"


def test_without_the_copy_the_walk_refuses(tmp_path, monkeypatch):
    monkeypatch.setattr(utf8, "_strict_model_class", lambda: None)
    assert utf8.Strings().unknown
    p = tmp_path / "m.onnx"
    p.write_bytes(_bad_bytes("node input"))
    with pytest.raises(QlinError, match=r"onnx\.NodeProto\.input\) is not valid UTF-8"):
        loader.load_model(str(p))
    p.write_bytes(_model().SerializeToString())
    assert loader.load_model(str(p)).graph.node[1].input[1] == "big"


def _big_weight_model(name: str) -> bytes:
    """A model whose one initializer carries 4 KiB of data, named ``name``."""
    m = _model()
    w = m.graph.initializer[0]
    w.name = name
    w.dims[:] = [4096]
    w.ClearField("int32_data")
    w.raw_data = bytes(4096)
    return m.SerializeToString()


@pytest.mark.parametrize("weights", [True, False])
def test_a_large_weight_is_verified_without_its_data(weights, tmp_path, monkeypatch):
    """The verifying parse never copies a weight above STRICT_MAX_BYTES (it would add its
    size to the peak): it sees the tensor without its data, strings and all."""
    monkeypatch.setattr(loader, "PIECES_ABOVE", 0)
    monkeypatch.setattr(loader, "STRICT_MAX_BYTES", 1024)
    monkeypatch.setattr(utf8, "STRICT_MAX_BYTES", 1024)
    seen = []
    real = utf8.Strings.see
    monkeypatch.setattr(utf8.Strings, "see", lambda self, data: seen.append(len(data)) or real(self, data))
    p = tmp_path / "m.onnx"
    p.write_bytes(_big_weight_model("Q~q").replace(b"Q~q", b"Q\xffq"))
    with pytest.raises(QlinError, match=r"onnx\.TensorProto\.name\) is not valid UTF-8"):
        loader.load_model(str(p), weights=weights)
    assert seen and max(seen) <= 1024
    seen.clear()
    p.write_bytes(_big_weight_model("fine"))
    assert len(loader.load_model(str(p), weights=weights).graph.initializer[0].raw_data) == 4096
    assert seen and max(seen) <= 1024


def test_bytes_above_the_limit_are_left_to_the_walk(tmp_path, monkeypatch):
    monkeypatch.setattr(utf8, "STRICT_MAX_BYTES", 64)
    strings = utf8.Strings()
    strings.see(_model().SerializeToString())
    assert strings.unknown and not strings.bad
    p = tmp_path / "m.onnx"
    p.write_bytes(_bad_bytes("graph name"))
    with pytest.raises(QlinError, match=r"onnx\.GraphProto\.name\) is not valid UTF-8"):
        loader.load_model(str(p))


def test_a_bad_value_the_parse_overwrote_is_still_refused(tmp_path):
    """A field sent twice keeps its last value; a bad first value leaves no trace in the
    parsed model, but the verifying parse saw it: refused, without a field name."""
    from google.protobuf.internal.encoder import _VarintBytes

    data = _model().SerializeToString() + _VarintBytes(2 << 3 | 2) + _VarintBytes(2) + b"\xff\xfe"
    m = onnx.ModelProto.FromString(data + _VarintBytes(2 << 3 | 2) + _VarintBytes(2) + b"ok")
    assert m.producer_name == "ok" and loader.invalid_string(m) is None
    p = tmp_path / "m.onnx"
    p.write_bytes(data + _VarintBytes(2 << 3 | 2) + _VarintBytes(2) + b"ok")
    with pytest.raises(QlinError) as e:
        loader.load_model(str(p))
    assert e.value.reason == "a string is not valid UTF-8: a corrupt or hostile file"
