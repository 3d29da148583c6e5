"""`qlin convert --to-format qdq` of what onnxruntime's quantize_dynamic writes: MatMulInteger /
ConvInteger fed by DynamicQuantizeLinear (then Cast and a Mul by x_scale * w_scale) become
DequantizeLinear at the run-time scale and zero point -> the float MatMul / Conv, measured
(convert/formats/dynamic.py); DynamicQuantizeLSTM is refused, naming why.

The bound is held against real outputs: the first rewritten node of each model reads the same
DynamicQuantizeLinear outputs in the source and in the result, so its output, as onnxruntime
computes the result, must lie within the measured steps of x_scale * w_scale of the source's
by its pages (onnx.reference: onnxruntime's u8s8 integer kernels saturate pairs of products)."""

from __future__ import annotations

import os

import corpus
import numpy as np
import onnx
import pytest
from onnx import helper

from qlin_cli.convert.run import Options, convert_model

ort = pytest.importorskip("onnxruntime")

NAMES = ["cnn_dyn_u8_op11", "cnn_dyn_s8_op13", "transformer_dyn_s8_channel_op21", "lstm_dyn_s8_tensor_op13"]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    return corpus.build(tmp_path_factory.mktemp("dynamic"), NAMES)


def _convert(path: str, tolerance: int):
    source = onnx.load(path)
    opset = {o.domain: o.version for o in source.opset_import}[""]
    return source, convert_model(source, os.path.dirname(path), Options(opset, to_format="qdq",
                                                                         tolerance=tolerance))


def _with_outputs(model: onnx.ModelProto, names: list[str]) -> onnx.ModelProto:
    m = onnx.ModelProto()
    m.CopyFrom(model)
    m.graph.output.extend(helper.make_empty_tensor_value_info(n) for n in names)
    return m


def _first_rewritten(result: onnx.ModelProto) -> tuple[str, str, str] | None:
    """(the DynamicQuantizeLinear's scale, the weight scale, the output) of the first float
    MatMul / Conv the rewrite wrote whose DynamicQuantizeLinear reads a graph input (the
    same values in the source and the result, whatever the runtime computes before it)."""
    writers = {o: n for n in result.graph.node for o in n.output}
    inputs = {i.name for i in result.graph.input}
    for n in result.graph.node:
        dq = writers.get(n.input[0]) if n.op_type in ("MatMul", "Conv") else None
        if dq is None or dq.op_type != "DequantizeLinear":
            continue
        dql = writers.get(dq.input[0])
        if dql is not None and dql.op_type == "DynamicQuantizeLinear" and dql.input[0] in inputs:
            return dq.input[1], writers[n.input[1]].input[1], n.output[0]
    return None


@pytest.mark.parametrize("name", NAMES[:3])
def test_dynamic_integer_ops_become_their_qdq_form_onnxruntime_runs(name, models, tmp_path):
    source, r = _convert(models[name], tolerance=1)
    assert r.model is not None, [f"{x.code} {x.detail}" for x in r.refused]
    reformatted = [e for e in r.entries if e.action == "reformatted" and e.measured is not None]
    assert reformatted and all(not e.verified and e.measured.steps <= 1 for e in reformatted)
    ops = [n.op_type for n in r.model.graph.node]
    assert "ConvInteger" not in ops and ops.count("MatMulInteger") == ops.count("Cast")
    out = str(tmp_path / "qdq.onnx")
    onnx.save(r.model, out)
    onnx.checker.check_model(out, full_check=True)
    feeds = corpus.sample_feeds(corpus.BY_NAME[name].model, corpus.SAMPLE_SEED)
    got = ort.InferenceSession(out, providers=["CPUExecutionProvider"]).run(None, feeds)
    assert all(np.isfinite(g).all() for g in got)
    first = _first_rewritten(r.model)
    if first is None:  # the transformer's first DynamicQuantizeLinear reads the Gather-fed MatMul
        assert name.startswith("transformer")
        return
    x_scale, w_scale, value = first
    session = ort.InferenceSession(_with_outputs(r.model, [x_scale, value]).SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    scale, after = session.run([x_scale, value], feeds)
    from onnx.reference import ReferenceEvaluator

    (before,) = ReferenceEvaluator(_with_outputs(source, [value])).run([value], feeds)
    w = onnx.numpy_helper.to_array(next(t for t in source.graph.initializer if t.name == w_scale))
    step = float(scale) * float(np.min(np.abs(w)))
    bound = max(e.measured.steps for e in reformatted)
    assert np.abs(before.astype(np.float64) - after).max() <= bound * step


def test_the_rewrite_is_written_only_within_the_tolerance(models):
    _, r = _convert(models["cnn_dyn_u8_op11"], tolerance=0)
    assert r.model is None
    assert {x.code for x in r.refused} == {"QC402"}
    assert all("--tolerance 1" in x.detail for x in r.refused), [x.detail for x in r.refused]


def test_dynamic_quantize_lstm_is_refused_naming_the_node_and_the_value(models):
    source, r = _convert(models["lstm_dyn_s8_tensor_op13"], tolerance=1)
    lstm = next(n for n in source.graph.node if n.op_type == "DynamicQuantizeLSTM")
    (refusal,) = [x for x in r.refused if x.code == "QC202"]
    assert refusal.op_type == "DynamicQuantizeLSTM" and lstm.name and refusal.node == lstm.name
    assert f"'{lstm.output[0]}'" in refusal.detail and "quantized at run time" in refusal.detail


def test_a_chain_whose_cast_a_subgraph_reads_is_left_as_it_is(models):
    """The Cast the rewrite would drop is read inside an If's branch: that chain stays, the
    others are rewritten."""
    source = onnx.load(models["cnn_dyn_u8_op11"])
    cast = next(n for n in source.graph.node if n.op_type == "Cast")
    branches = [helper.make_graph([helper.make_node("Identity", [cast.output[0]], [f"b{i}"])], f"b{i}", [],
                                  [helper.make_empty_tensor_value_info(f"b{i}")]) for i in range(2)]
    source.graph.initializer.append(onnx.numpy_helper.from_array(np.array(True), "cond"))
    source.graph.node.append(helper.make_node("If", ["cond"], ["read"], then_branch=branches[0],
                                              else_branch=branches[1]))
    source.graph.output.append(helper.make_empty_tensor_value_info("read"))
    r = convert_model(source, os.path.dirname(models["cnn_dyn_u8_op11"]), Options(11, to_format="qdq",
                                                                                  tolerance=1))
    assert r.model is not None, [x.detail for x in r.refused]
    ops = [n.op_type for n in r.model.graph.node]
    assert ops.count("Cast") == 1 and ops.count("ConvInteger") + ops.count("MatMulInteger") == 1
    assert cast.output[0] in {o for n in r.model.graph.node for o in n.output}


def test_a_node_short_of_what_the_pattern_reads_is_not_taken_for_it():
    """chain() reads a Cast's `to` by name and counts inputs and outputs before indexing them:
    a Cast without `to`, a DynamicQuantizeLinear with two outputs or a Mul with one input
    is not the pattern (no IndexError)."""
    from qlin_cli.convert.formats import dynamic

    def nodes(cast_attrs=True, dql_outputs=("xq", "xs", "xz"), mul_inputs=("f", "s")):
        dql = helper.make_node("DynamicQuantizeLinear", ["x"], list(dql_outputs))
        mm = helper.make_node("MatMulInteger", ["xq", "w", "xz", "wz"], ["i"])
        cast = helper.make_node("Cast", ["i"], ["f"], **({"to": 1} if cast_attrs else {}))
        scales = helper.make_node("Mul", ["xs", "ws"], ["s"])
        out = helper.make_node("Mul", list(mul_inputs), ["y"])
        writer = {o: n for n in (dql, mm, cast, scales, out) for o in n.output}
        readers: dict = {}
        for n in (dql, mm, cast, scales, out):
            for i in n.input:
                readers.setdefault(i, []).append(n)
        return mm, writer, readers

    assert dynamic.chain(*nodes()) is not None  # the pattern itself
    assert dynamic.chain(*nodes(cast_attrs=False)) is None
    assert dynamic.chain(*nodes(dql_outputs=("xq", "xs"))) is None
    assert dynamic.chain(*nodes(mul_inputs=("f",))) is None


def test_a_gather_fed_matmul_integer_reads_its_table_at_its_constant_scale(models, tmp_path):
    """The quantizer's Gather of a quantized embedding table feeds a MatMulInteger at the
    table's constant scale and zero point (the scale Mul reads both scales): it becomes
    DequantizeLinear(gathered codes, table scale, table zero point) -> MatMul, measured within 1
    step of x_scale * min |w_scale|; the result passes onnx.checker and qlin check, and
    onnxruntime's MatMul output lies within the measured steps of the source's (onnx.reference:
    the Gather reads the graph input, so both compute the same codes)."""
    from onnx.reference import ReferenceEvaluator

    from qlin_cli.check.engine import check_file

    name = "transformer_dyn_s8_channel_op21"
    source, r = _convert(models[name], tolerance=1)
    assert r.model is not None, [x.detail for x in r.refused]
    mm = next(n for n in source.graph.node if n.op_type == "MatMulInteger"
              and next(w for w in source.graph.node if n.input[0] in w.output).op_type == "Gather")
    (entry,) = [e for e in r.entries if e.action == "reformatted" and f"'{mm.name}'" in e.where]
    assert "constant scale" in entry.changes[0] and not entry.verified and entry.measured.steps <= 1
    writers = {o: n for n in r.model.graph.node for o in n.output}
    cast = next(n for n in source.graph.node if mm.output[0] in n.input)
    out = next(n for n in source.graph.node if cast.output[0] in n.input)
    scales = next(n for n in source.graph.node if n.output[0] in out.input)
    value = out.output[0]
    matmul = writers[value]
    assert matmul.op_type == "MatMul" and writers[matmul.input[0]].op_type == "DequantizeLinear"
    assert writers[writers[matmul.input[0]].input[0]].op_type == "Gather"
    out = str(tmp_path / "qdq.onnx")
    onnx.save(r.model, out)
    onnx.checker.check_model(out, full_check=True)
    assert [d.code for d in check_file(out).diagnostics if d.severity == "error"] == []
    feeds = corpus.sample_feeds(corpus.BY_NAME[name].model, corpus.SAMPLE_SEED)
    (after,) = ort.InferenceSession(_with_outputs(r.model, [value]).SerializeToString(),
                                    providers=["CPUExecutionProvider"]).run([value], feeds)
    (before,) = ReferenceEvaluator(_with_outputs(source, [value])).run([value], feeds)
    inits = {t.name: onnx.numpy_helper.to_array(t) for t in source.graph.initializer}
    step = float(inits[scales.input[0]]) * float(np.min(np.abs(inits[scales.input[1]])))
    assert np.abs(before.astype(np.float64) - after).max() <= entry.measured.steps * step


def test_which_constant_scale_is_x_s():
    """chain() with constants: the per-axis scale of the Mul is the weight's, whichever side it
    is on; two per-tensor scales are read as Mul(x_scale, w_scale); an x scale or zero point of
    more than one value (per row), or a run-time one, leaves the node as it is."""
    from qlin_cli.convert.formats import dynamic

    def found(a: str, b: str, values: dict):
        mm = helper.make_node("MatMulInteger", ["xq", "w", "xz", "wz"], ["i"])
        cast = helper.make_node("Cast", ["i"], ["f"], to=1)
        scales = helper.make_node("Mul", [a, b], ["s"])
        out = helper.make_node("Mul", ["f", "s"], ["y"])
        nodes = (helper.make_node("Gather", ["table", "ids"], ["xq"]), mm, cast, scales, out)
        writer = {o: n for n in nodes for o in n.output}
        readers: dict = {}
        for n in nodes:
            for i in n.input:
                readers.setdefault(i, []).append(n)
        return dynamic.chain(mm, writer, readers, values.get)

    one, four = np.float32(0.1), np.full(4, 0.2, np.float32)
    base = {"xz": np.uint8(3)}
    assert found("xs", "ws", {**base, "xs": one, "ws": four})[0] == ["xq", "xs", "xz"]
    assert found("ws", "xs", {**base, "xs": one, "ws": four})[0] == ["xq", "xs", "xz"]
    assert found("xs", "ws", {**base, "xs": one, "ws": one})[0] == ["xq", "xs", "xz"]
    assert found("xs", "ws", {**base, "xs": four, "ws": four}) is None
    assert found("xs", "ws", {"xz": np.full(2, 3, np.uint8), "xs": one, "ws": four}) is None
    assert found("xs", "ws", {"xs": one, "ws": four}) is None  # xz computed at run time
    assert found("xs", "ws", {**base, "ws": four}) is None
