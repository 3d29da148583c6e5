"""A conversion that rewrites no node changes its model's header alone: asked to share the
graph (``convert_model(share_graph=True)``, what `qlin convert` asks), its result is that
header and the source's graph (``Result.graph_from``), never copied; it is the copied result
byte for byte, the source is left as it was, and the API still gets a whole model."""

from __future__ import annotations

import glob
import os

import onnx
import pytest
from click.testing import CliRunner

from qlin_cli import api
from qlin_cli import convert_moved as moved
from qlin_cli import convert_pipeline as cp
from qlin_cli.cli import main
from qlin_cli.convert.run import convert_model
from qlin_cli.convert.state import Options
from qlin_cli.errors import QlinError
from qlin_cli.model import analysis
from qlin_cli.model.header import header_of, put_header, serialized, whole
from qlin_cli.model.load import load_model_bytes

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = sorted(glob.glob(os.path.join(HERE, "..", "fixtures", "models", "**", "*.onnx"), recursive=True))
CHAIN = os.path.join(HERE, "..", "fixtures", "models", "clean", "per_channel_chain.onnx")


def _loaded(path: str):
    try:
        return onnx.load(path, load_external_data=False)
    except Exception:
        return None


def test_a_header_worn_by_a_graph_serializes_as_the_whole_model():
    compared = 0
    for path in MODELS:
        m = _loaded(path)
        if m is None:
            continue
        before = m.SerializeToString()
        head = header_of(m)
        assert not head.HasField("graph")
        head.ir_version, head.producer_name = 10, "someone else"
        del head.opset_import[:]
        head.opset_import.add(domain="", version=21)
        want = onnx.ModelProto()
        want.CopyFrom(m)
        put_header(want, head)
        assert serialized(head, m) == want.SerializeToString(), path
        assert m.SerializeToString() == before, path  # the graph's owner got its own header back
        assert whole(header_of(m), m).SerializeToString() == before, path
        compared += 1
    assert compared > 100


def _both(path: str, to: int):
    """The result copied and the result sharing its graph, with the source of the second and
    its bytes before the conversion; None where the passes refuse the model."""
    base = os.path.dirname(path)
    try:
        copied = convert_model(load_model_bytes(path)[0], base, Options(to))
        proto = load_model_bytes(path)[0]
        before = proto.SerializeToString()
        a = analysis.analyze(proto, base)
        shared = convert_model(proto, base, Options(to), types=a.inferred, analysis=a, share_graph=True)
    except Exception:
        return None
    return copied, shared, proto, before, a


@pytest.mark.parametrize("to", [13, 21, 24])
def test_a_shared_result_is_the_copied_result(to):
    shared_seen = 0
    for path in MODELS:
        got = _both(path, to)
        if got is None:
            continue
        copied, shared, proto, before, a = got
        assert proto.SerializeToString() == before, path  # the source as it was
        if shared.graph_from is None:
            assert (shared.model is None) == (copied.model is None), path
            continue
        assert shared.graph_from is proto and shared.rewritten == 0 == copied.rewritten, path
        assert not shared.model.HasField("graph"), path  # nothing copied
        assert (shared.opsets_to, shared.ir_from, shared.ir_to, shared.changed, shared.made) == (
            copied.opsets_to, copied.ir_from, copied.ir_to, copied.changed, copied.made), path
        assert [e.where for e in shared.entries] == [e.where for e in copied.entries], path
        want = copied.model.SerializeToString()
        assert serialized(shared.model, proto) == want, path
        if copied.changed:  # the runtimes' view of the header alone: that of the copied result
            assert (moved.differences(a, shared.model, cp.MEASURED_RUNTIMES, cp.differing)
                    == moved.differences(a, copied.model, cp.MEASURED_RUNTIMES, cp.differing)), path
        assert shared.whole().SerializeToString() == want and shared.graph_from is None, path
        assert proto.SerializeToString() == before, path
        shared_seen += 1
    assert shared_seen > 20


def test_a_refused_finish_gives_the_source_its_header_back():
    proto = load_model_bytes(CHAIN)[0]
    before = proto.SerializeToString()
    with pytest.raises(QlinError, match="--ir-version"):
        convert_model(proto, os.path.dirname(CHAIN), Options(21, ir_version=3), share_graph=True)
    assert proto.SerializeToString() == before


def test_the_cli_writes_and_the_api_returns_the_copied_result(tmp_path):
    base = os.path.dirname(CHAIN)
    want = convert_model(load_model_bytes(CHAIN)[0], base, Options(21))
    assert want.changed and not want.rewritten
    out = tmp_path / "o.onnx"
    got = CliRunner().invoke(main, ["convert", CHAIN, "--to-opset", "21", "-o", str(out)])
    assert got.exit_code == 0, got.output
    assert out.read_bytes() == want.model.SerializeToString()
    got = api.convert(CHAIN, to_opset=21)
    assert got.graph_from is None and got.model.HasField("graph")
    assert got.model.SerializeToString() == want.model.SerializeToString()


def _with_unknown_field(path: str, out) -> str:
    """``path``'s model with a field no onnx knows (number 99, a varint) after its own."""
    out.write_bytes(open(path, "rb").read() + bytes([0x98, 0x06, 0x01]))
    return str(out)


def test_fields_protobuf_does_not_know_stay_in_a_shared_result(tmp_path):
    path = _with_unknown_field(CHAIN, tmp_path / "m.onnx")
    base = str(tmp_path)
    copied = convert_model(load_model_bytes(path)[0], base, Options(21))
    want = copied.model.SerializeToString()
    assert want.endswith(bytes([0x98, 0x06, 0x01]))
    proto = load_model_bytes(path)[0]
    shared = convert_model(proto, base, Options(21), share_graph=True)
    assert shared.graph_from is proto
    assert serialized(shared.model, proto) == want
    assert shared.whole().SerializeToString() == want
    got = api.convert(path, to_opset=21)
    assert got.model.SerializeToString() == want


def _external(tmp_path) -> str:
    m = onnx.load(CHAIN)
    path = str(tmp_path / "ext.onnx")
    onnx.save(m, path, save_as_external_data=True, all_tensors_to_one_file=True, location="ext.onnx.data",
              size_threshold=0)
    return path


def _places(model: onnx.ModelProto) -> list:
    return [{e.key: e.value for e in t.external_data} for t in model.graph.initializer]


def test_writing_a_shared_result_leaves_the_source_where_its_data_is(tmp_path):
    from qlin_cli.convert_pipeline import Request, run

    path = _external(tmp_path)
    before = _places(onnx.load(path, load_external_data=False))
    assert all(p.get("location") == "ext.onnx.data" for p in before)
    out = tmp_path / "o.onnx"
    r = run(Request(path, to_opset=21, output=str(out), whole=False))
    assert r.graph_from is not None
    assert _places(r.graph_from) == before  # the source in memory, as it was read
    written = onnx.load(str(out), load_external_data=False)
    assert all(p.get("location") == "o.onnx.data" for p in _places(written))
    onnx.checker.check_model(str(out), full_check=True)
    # the API's model is the one written, pointing at the written data, as a copy was
    got = api.convert(path, to_opset=21, output=tmp_path / "p.onnx")
    assert got.graph_from is None
    assert all(p.get("location") == "p.onnx.data" for p in _places(got.model))
