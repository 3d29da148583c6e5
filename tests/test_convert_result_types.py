"""convert/result_types.py: a format conversion's result typed from the source's analysis and
one inference of each kind of written node gives exactly what inference of the whole result
gives, and the conversion reports the same with it as without it."""

from __future__ import annotations

import glob
import importlib.util
import os

import corpus
import onnx
import pytest
from onnx import TensorProto, helper
from paths import MODELS, ROOT

from qlin_cli import convert_pipeline, schema
from qlin_cli.convert import result_types as rt
from qlin_cli.convert.run import Options, convert_model
from qlin_cli.model.analysis import analyze
from qlin_cli.model.graphs import MAIN
from qlin_cli.model.load import load_model_bytes

pytest.importorskip("onnxruntime")

FIXTURES = sorted(glob.glob(os.path.join(MODELS, "**", "*.onnx"), recursive=True))
FORMATS = (("qdq", 5), ("qoperator", 5))


def _bench():
    path = os.path.join(ROOT, "bench", "bench_formats.py")
    spec = importlib.util.spec_from_file_location("bench_formats", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def bench_models(tmp_path_factory):
    """The four benchmark models (bench_formats.py's builders), 40 nodes each."""
    folder, b = tmp_path_factory.mktemp("bench"), _bench()
    out = {}
    for name, (make, _) in b.MODELS.items():
        out[name] = str(folder / f"{name}.onnx")
        make(out[name], 40)
    return out


def _both(path: str, fmt: str, tolerance: int):
    """(the derived types or None, the whole inference's types) of ``path`` converted to ``fmt``
    at its own opset; None where the conversion changed nothing or was refused."""
    proto, data = load_model_bytes(path)
    base = os.path.dirname(path)
    a = analyze(proto, base, serialized=data)
    opset = schema.opset_of({o.domain: o.version for o in proto.opset_import}, schema.AI_ONNX)
    try:
        r = convert_model(proto, base, Options(opset, to_format=fmt, tolerance=tolerance), types=a.inferred,
                          analysis=a)
    except Exception:  # what the conversion itself refuses is not looked at here
        return None
    if r.model is None or not r.changed:
        return None
    return rt.result_types(a, r.model, r.made), analyze(r.model, base).inferred


def test_bench_results_typed_as_inference_types_them(bench_models):
    """The four results are covered and typed as the whole inference types them: QOperator ->
    QDQ, QDQ -> QOperator, MatMulNBits -> DQ, and DQ -> MatMulNBits, whose com.microsoft nodes
    inference leaves untyped (the list holds the graph's output alone, as declared)."""
    for name, fmt in (("qop", "qdq"), ("qdq", "qoperator"), ("nbits", "qdq"), ("blocked", "qoperator")):
        mine, whole = _both(bench_models[name], fmt, 5)
        assert mine is not None, name
        assert mine == whole, name
    mine, whole = _both(bench_models["blocked"], "qoperator", 5)
    assert list(mine) == [MAIN] and [name for name, _ in mine[MAIN]] == ["y"]


def test_a_vendor_node_is_left_untyped_only_where_written(bench_models):
    """The DQ -> MatMulNBits result: a MatMulNBits node the passes did not write (its index
    taken out of ``made``), a vendor Q/DQ op (which the analysis infers as its ai.onnx twin) or
    an op onnx.defs defines in that domain as a written node, or a graph output it makes
    declared without a shape: left to the whole inference."""
    proto, data = load_model_bytes(bench_models["blocked"])
    base = os.path.dirname(bench_models["blocked"])
    a = analyze(proto, base, serialized=data)
    r = convert_model(proto, base, Options(21, to_format="qoperator", tolerance=5), types=a.inferred,
                      analysis=a)
    assert rt.result_types(a, r.model, r.made) is not None
    first = min(r.made)
    assert rt.result_types(a, r.model, {i: t for i, t in r.made.items() if i != first}) is None
    for op in ("DequantizeLinear", "QuantizeLinear"):
        twin = onnx.ModelProto()
        twin.CopyFrom(r.model)
        twin.graph.node[first].op_type = op
        assert rt.result_types(a, twin, {i: None for i in r.made}) is None, op
    shapeless = onnx.ModelProto()
    shapeless.CopyFrom(r.model)
    shapeless.graph.output[0].type.tensor_type.ClearField("shape")
    assert rt.result_types(a, shapeless, {i: None for i in r.made}) is None


def _compared(paths) -> int:
    """How many of ``paths``' conversions (every format) result_types covered, each held to the
    whole inference's types."""
    asked = 0
    for path in paths:
        for fmt, tolerance in FORMATS:
            got = _both(path, fmt, tolerance)
            if got is not None and got[0] is not None:
                asked += 1
                assert got[0] == got[1], (path, fmt)
    return asked


def test_fixtures_typed_as_inference_types_them():
    assert _compared(FIXTURES) >= 5


def test_corpus_typed_as_inference_types_them(tmp_path_factory):
    models = corpus.build(tmp_path_factory.mktemp("corpus"))
    assert _compared([path for _, path in sorted(models.items())]) >= 3


def _qlinear_chain(path: str, *, declared: list | None = None) -> str:
    """Two QLinearMatMul nodes between a QuantizeLinear and a DequantizeLinear (opset 13);
    ``declared``: the dims the first one's output is declared with (value_info)."""
    _bench().build(path, 2)
    if declared is not None:
        m = onnx.load(path)
        m.graph.value_info.append(helper.make_tensor_value_info("q1", TensorProto.UINT8, declared))
        onnx.save(m, path)
    return path


def test_gives_up_where_the_reasoning_does_not_cover(tmp_path):
    """A written node's output declared with a dimension unknown (inference merges what it
    finds into it), a source whose inference met an error, an unknown set of written nodes, an
    op whose inference may read values."""
    for name, declared in (("plain", None), ("declared", [1, 16])):
        mine, whole = _both(_qlinear_chain(str(tmp_path / f"{name}.onnx"), declared=declared), "qdq", 5)
        assert mine is not None and mine == whole, name
    mine, _ = _both(_qlinear_chain(str(tmp_path / "open.onnx"), declared=[1, "n"]), "qdq", 5)
    assert mine is None
    path = str(tmp_path / "plain.onnx")
    proto, data = load_model_bytes(path)
    a = analyze(proto, str(tmp_path), serialized=data)
    r = convert_model(proto, str(tmp_path), Options(13, to_format="qdq", tolerance=5), types=a.inferred,
                      analysis=a)
    assert rt.result_types(a, r.model, r.made) is not None
    assert rt.result_types(a, r.model, None) is None
    a.inference_errors = ("(op_type:QLinearMatMul): an error",)
    assert rt.result_types(a, r.model, r.made) is None
    a.inference_errors = ()
    reshaped = onnx.ModelProto()
    reshaped.CopyFrom(r.model)
    first = min(r.made)
    reshaped.graph.node[first].op_type = "Reshape"  # its inference reads the shape input's values
    assert rt.result_types(a, reshaped, {i: None for i in r.made}) is None


def test_written_node_changing_a_read_type_gives_up(tmp_path):
    """An untouched node reading a value a written node makes must read the type it read in the
    source: a written node whose output type differs makes the whole inference run."""
    path = _qlinear_chain(str(tmp_path / "chain.onnx"))
    proto, data = load_model_bytes(path)
    a = analyze(proto, str(tmp_path), serialized=data)
    r = convert_model(proto, str(tmp_path), Options(13, to_format="qdq", tolerance=5), types=a.inferred,
                      analysis=a)
    last_q = max(i for i in r.made if r.model.graph.node[i].op_type == "QuantizeLinear")
    assert r.model.graph.node[last_q + 1].op_type == "DequantizeLinear"  # the source's, untouched
    assert last_q + 1 not in r.made
    changed = onnx.ModelProto()
    changed.CopyFrom(r.model)
    zp = changed.graph.node[last_q].input[2]
    changed.graph.initializer.append(helper.make_tensor(zp + "_i8", TensorProto.INT8, [], [0]))
    changed.graph.node[last_q].input[2] = zp + "_i8"  # the Q now writes int8, which the DQ reads
    made = {i: None for i in r.made}
    assert rt.result_types(a, changed, made) is None
    assert rt.result_types(a, r.model, made) == analyze(r.model, str(tmp_path)).inferred


@pytest.mark.parametrize("name, flags", [("qop", ("qdq", 5)), ("qdq", ("qoperator", 5)),
                                         ("nbits", ("qdq", 0)), ("blocked", ("qoperator", 5))])
def test_conversion_reports_the_same_with_and_without(bench_models, monkeypatch, name, flags):
    """The pipeline's report (warnings, entries) of a conversion the result types cover is the
    same when the result is inferred whole."""
    def report():
        r = convert_pipeline.run(convert_pipeline.Request(bench_models[name], to_format=flags[0],
                                                          tolerance=flags[1]))
        return ([(w.code, w.node, w.message, w.target) for w in r.warnings],
                [(e.where, e.action, tuple(e.changes)) for e in r.entries])

    used = []
    real = rt.result_types

    def counted(*args):
        got = real(*args)
        used.append(got is not None)
        return got

    monkeypatch.setattr(rt, "result_types", counted)
    shortcut = report()
    assert used == [True]
    monkeypatch.setattr(rt, "result_types", lambda *args: None)
    assert report() == shortcut


def test_a_result_at_another_opset_gives_up(tmp_path):
    """The source's types stand for the nodes the passes left only at the source's ai.onnx
    version: a format conversion that also moves the opset is inferred whole."""
    path = _qlinear_chain(str(tmp_path / "moved.onnx"))
    proto, data = load_model_bytes(path)
    a = analyze(proto, str(tmp_path), serialized=data)
    for opset, covered in ((13, True), (21, False)):
        opts = Options(opset, to_format="qdq", tolerance=5)
        r = convert_model(proto, str(tmp_path), opts, types=a.inferred, analysis=a)
        assert r.model is not None and r.made, opset
        assert (rt.result_types(a, r.model, r.made) is not None) is covered, opset


def test_written_nodes_differing_in_an_attribute_are_inferred_apart():
    """A written node's types are kept per op, attributes and input types: two Conv nodes
    that differ in their strides alone get the output shapes each one's own inference gives
    (one inference for both would give the second the first's)."""
    m = helper.make_model(helper.make_graph([], "g", [], []), opset_imports=[helper.make_opsetid("", 13)])
    inferred = rt._Inferred(m)
    known = {"x": (TensorProto.FLOAT, (1, 1, 8, 8)), "w": (TensorProto.FLOAT, (1, 1, 3, 3))}
    one = helper.make_node("Conv", ["x", "w"], ["y"], strides=[1, 1])
    two = helper.make_node("Conv", ["x", "w"], ["z"], strides=[2, 2])
    assert inferred.outputs(one, known) == [(TensorProto.FLOAT, (1, 1, 6, 6))]
    assert inferred.outputs(two, known) == [(TensorProto.FLOAT, (1, 1, 3, 3))]
    assert inferred.outputs(helper.make_node("Conv", ["x", "w"], ["v"], strides=[1, 1]), known) == \
        inferred.outputs(one, known)


def _made_and_whole(proto: onnx.ModelProto, base: str, opts: Options) -> tuple:
    """(the conversion's result, its derived types, the whole inference's types)."""
    a = analyze(proto, base)
    r = convert_model(proto, base, opts, types=a.inferred, analysis=a)
    assert r.model is not None and r.made is not None, [x.detail for x in r.refused]
    return r, rt.result_types(a, r.model, r.made), analyze(r.model, base).inferred


def test_an_nbits_result_without_its_packed_weights_typed_as_inference_types_them(bench_models, tmp_path):
    """MatMulNBits -> blocked DequantizeLinear drops the packed weights nothing reads any more
    (convert/passes/format.py): the result's initializers are fewer than the source's, which
    changes no node's type, so ``made`` is still given and the derived types are the whole
    inference's. Every packed weight gone (the bench model), and some gone while one another
    node reads stays (the source's initializers kept before the rewrites' own)."""
    from test_convert_formats_dropped import _still_read

    proto = onnx.load(bench_models["nbits"])
    base = os.path.dirname(bench_models["nbits"])
    r, mine, whole = _made_and_whole(proto, base, Options(21, to_format="qdq"))
    assert {t.name for t in proto.graph.initializer}.isdisjoint(t.name for t in r.model.graph.initializer)
    assert mine is not None and mine == whole
    proto, stays = _still_read("node")
    r, mine, whole = _made_and_whole(proto, str(tmp_path), Options(21, to_format="qdq"))
    names = [t.name for t in r.model.graph.initializer]
    assert names[0] == stays and not {"B", "zp"} & set(names)
    assert mine is not None and mine == whole


@pytest.mark.parametrize("mode", ["unfold", "unfold-bias", "strip"])
def test_weights_results_without_the_constants_they_computed_typed_as_inference_types_them(
        mode, tmp_path_factory):
    """`--weights` drops the constants its rewrites leave unread as the format rewrites do:
    ``made`` is given there too, and the derived types are the whole inference's (or, for a
    result they do not cover, None)."""
    names = ["cnn_qdq_u8s8_tensor_op13", "transformer_nbits4_qdq_sym_b32_op21", "mixed_qdq_u8s8_tensor_op13"]
    models = corpus.build(tmp_path_factory.mktemp("weights"), names)
    dropped = covered = 0
    for name in names:
        proto = onnx.load(models[name])
        opset = schema.opset_of({o.domain: o.version for o in proto.opset_import}, schema.AI_ONNX)
        r, mine, whole = _made_and_whole(proto, os.path.dirname(models[name]), Options(opset, weights=mode))
        if not {t.name for t in proto.graph.initializer} - {t.name for t in r.model.graph.initializer}:
            continue  # (no int32 bias to unfold: nothing dropped)
        dropped += 1
        if mine is not None:
            covered += 1
            assert mine == whole, name
    assert dropped >= 2 and covered >= (1 if mode == "strip" else 2)
