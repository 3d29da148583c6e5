"""`qlin convert --to-format qdq`: every QOperator configuration of onnxruntime's quantizer
(fixtures/corpus.py) rewritten into DequantizeLinear -> float op -> QuantizeLinear, each
rewrite measured (convert/formats/measure.py), never called proven.

The results are held to things qlin did not write: onnx.checker's full check, onnxruntime
(loaded and run: the outputs against the source's) and openvino (compiled and run; it
refuses per-channel QLinearConv and the com.microsoft QLinear ops of the sources).
"""

from __future__ import annotations

import functools
import json
import os

import corpus
import numpy as np
import onnx
import pytest
from click.testing import CliRunner
from onnx import TensorProto

from qlin_cli.check.engine import check_file
from qlin_cli.cli import main
from qlin_cli.convert.run import Options, convert_model
from qlin_cli.convert.write import write_model
from qlin_cli.schema.qdq_forms import FORMS

pytest.importorskip("onnxruntime")

QOPERATOR = sorted(c.name for c in corpus.CONFIGS
                   if "_qop_" in c.name and c.name not in corpus.KNOWN_FAILURES)
ANY_BOUND = 255  # every 8-bit difference allowed: what a rewrite measures is what is tested


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    return corpus.build(tmp_path_factory.mktemp("formats"), QOPERATOR)


@functools.cache
def _converted(path: str, opset: int, **options):
    """convert_model of a corpus file (QOperator or n-bits to QDQ): several tests start from
    the same conversion of the same file, made once per process. Nothing reads it to change it."""
    return convert_model(onnx.load(path), os.path.dirname(path), Options(opset, **options))


@functools.cache
def _source_run(path: str, model: str, optimize: bool) -> tuple:
    """onnxruntime's outputs of a corpus file (what each conversion of it is held to), once."""
    return tuple(corpus.run(path, model, optimize=optimize))


def _written(model: onnx.ModelProto, base: str, out) -> str:
    """``model`` written to ``out``: it passes onnx.checker's full check, and qlin check finds
    no error in it."""
    out = str(out)
    write_model(model, base, out)
    onnx.checker.check_model(out, full_check=True)
    assert [d.code for d in check_file(out).diagnostics if d.severity == "error"] == []
    return out


def _opset(model: onnx.ModelProto) -> int:
    return {o.domain: o.version for o in model.opset_import}[""]


def _final_steps(model: onnx.ModelProto, want: list, got: list) -> int:
    """The largest difference of the model outputs, in steps of the scale of the
    DequantizeLinear that writes each (the corpus models end in one)."""
    inits = {t.name: onnx.numpy_helper.to_array(t) for t in model.graph.initializer}
    writers = {n.output[0]: n for n in model.graph.node}
    worst = 0
    for out, a, b in zip(model.graph.output, want, got, strict=True):
        node = writers[out.name]
        assert node.op_type == "DequantizeLinear", node.op_type
        scale = float(np.max(inits[node.input[1]]))
        worst = max(worst, int(np.ceil(np.abs(a.astype(np.float64) - b).max() / scale - 1e-6)))
    return worst


def test_the_corpus_writes_most_forms(models):
    """The QOperator configurations hold eight of the twelve forms; QLinearSigmoid,
    QLinearLeakyRelu, QLinearAveragePool and com.microsoft QLinearConv are tested on models
    of their own below."""
    seen = set()
    for path in models.values():
        seen |= {(n.domain, n.op_type) for n in onnx.load(path, load_external_data=False).graph.node}
    assert len(seen & set(FORMS)) >= 8, sorted(seen & set(FORMS))


@pytest.mark.parametrize("name", QOPERATOR)
def test_qoperator_models_convert_to_qdq_that_the_runtimes_run(name, models, tmp_path):
    path = models[name]
    source = onnx.load(path)
    r = _converted(path, _opset(source), to_format="qdq", tolerance=ANY_BOUND)
    assert r.model is not None, [f"{x.code} {x.detail}" for x in r.refused]
    reformatted = [e for e in r.entries if e.action == "reformatted"]
    assert reformatted and all(e.measured is not None and not e.verified for e in reformatted)
    assert not {(n.domain, n.op_type) for n in r.model.graph.node} & set(FORMS)
    out = _written(r.model, os.path.dirname(path), tmp_path / "qdq.onnx")
    cfg = corpus.BY_NAME[name]
    bound = max(e.measured.steps for e in reformatted)
    if "u8s8" not in name:  # only onnxruntime's u8s8 kernels (pairs of products saturate) stray
        assert bound <= 1, [(e.where, e.measured.text()) for e in reformatted]
    for optimize in (False, True):
        want = _source_run(path, cfg.model, optimize)
        got = corpus.run(out, cfg.model, optimize=optimize)
        # each node's bound is measured on a sample of its inputs: a value of the model's
        # own activations near a rounding tie may add one step
        assert _final_steps(source, want, got) <= max(bound, 1), (optimize, bound)
    pytest.importorskip("openvino")
    from qlin_cli.targets import predict

    # openvino computes a Q -> DQ pair as one op, rounding a tie the other way: the report's
    # QT406 warning (one step more than the pages), which every one of these results carries
    warned = [p for p in predict.findings(r.model, "", ["openvino"]) if p.code == "QT406"]
    assert warned
    got = _openvino_run(out, cfg.model)
    assert got is not None
    assert _final_steps(source, _source_run(path, cfg.model, False), got) <= max(bound, 1) + 1, bound


def _openvino_run(path: str, model: str) -> list | None:
    """openvino's outputs (CPU) of a model file on the corpus' sample feeds, in the graph's
    output order; None where it refuses to read or compile it."""
    import openvino as ov

    core = ov.Core()
    try:
        compiled = core.compile_model(core.read_model(path), "CPU")
    except RuntimeError:
        return None
    results = compiled(corpus.sample_feeds(model, corpus.SAMPLE_SEED))
    return [np.asarray(results[o]) for o in compiled.outputs]


def test_a_rewrite_beyond_the_tolerance_is_refused_naming_the_bound(models, tmp_path):
    """onnxruntime's u8s8 QGemm kernel (the com.microsoft node's only implementation here)
    differs from Gemm in float on these inputs; the refusal says by how much, and the
    --tolerance that allows it writes the model."""
    path = models["cnn_qop_u8s8_tensor_op13"]
    out = str(tmp_path / "q.onnx")
    r = CliRunner().invoke(main, ["convert", path, "--to-format", "qdq", "-o", out, "--format", "json"])
    report = json.loads(r.output)
    exact = [n for n in report["nodes"] if n["measured"] and n["measured"]["steps"] == 0]
    assert exact and all(n["action"] == "reformatted" and not n["verified"] for n in exact)
    if r.exit_code == 0:  # a CPU whose kernel computes what the page says: nothing to refuse
        assert os.path.exists(out)
        return
    assert r.exit_code == 1 and not os.path.exists(out)
    (refusal,) = report["refused"]
    assert refusal["code"] == "QC402" and refusal["op_type"] == "QGemm"
    steps = int(refusal["message"].split("--tolerance ")[1].split()[0])
    r = CliRunner().invoke(main, ["convert", path, "--to-format", "qdq", "-o", out,
                                  "--tolerance", str(steps)])
    assert r.exit_code == 0, r.output
    assert f"within {steps} step" in r.output and os.path.exists(out)


def test_per_channel_weights_need_opset_13_and_the_refusal_says_so(models):
    path = models["cnn_qop_u8s8_channel_op13"]
    opts = Options(11, to_format="qdq", tolerance=ANY_BOUND)
    r = convert_model(onnx.load(path), os.path.dirname(path), opts)
    assert r.model is None
    reasons = [x.detail for x in r.refused if x.code == "QC202"]
    assert any("per-channel" in x and "--to-opset 13" in x for x in reasons), reasons


def _one_node(op: str, attrs: dict, x_shape=(1, 2, 4, 4)) -> onnx.ModelProto:
    from onnx import TensorProto, helper, numpy_helper

    inits = [numpy_helper.from_array(np.array(0.05, np.float32), "xs"),
             numpy_helper.from_array(np.array(128, np.uint8), "xz"),
             numpy_helper.from_array(np.array(0.04, np.float32), "ys"),
             numpy_helper.from_array(np.array(120, np.uint8), "yz")]
    node = helper.make_node(op, ["x", "xs", "xz", "ys", "yz"], ["y"], domain="com.microsoft", **attrs)
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.UINT8, list(x_shape))],
                          [helper.make_tensor_value_info("y", TensorProto.UINT8, None)], inits)
    imports = [helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)]
    return helper.make_model(g, opset_imports=imports, ir_version=7)


@pytest.mark.parametrize("op, attrs", [("QLinearSigmoid", {}), ("QLinearLeakyRelu", {"alpha": 0.2}),
                                       ("QLinearAveragePool", {"kernel_shape": [2, 2], "strides": [2, 2]}),
                                       ("QLinearGlobalAveragePool", {"channels_last": 0})])
def test_the_other_unary_ops_have_a_qdq_form_onnxruntime_runs(op, attrs):
    import onnxruntime as ort

    model = _one_node(op, attrs)
    r = convert_model(model, "", Options(13, to_format="qdq", tolerance=ANY_BOUND))
    assert r.model is not None, [x.detail for x in r.refused]
    (entry,) = r.entries
    assert entry.measured.outputs > 0 and entry.measured.steps <= 1, entry.measured
    x = np.random.default_rng(1).integers(0, 256, (1, 2, 4, 4)).astype(np.uint8)
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    runs = [ort.InferenceSession(m.SerializeToString(), opts, providers=["CPUExecutionProvider"])
            .run(None, {"x": x})[0] for m in (model, r.model)]
    assert np.abs(runs[0].astype(int) - runs[1].astype(int)).max() <= max(entry.measured.steps, 1)


def test_channels_last_has_no_qdq_form():
    model = _one_node("QLinearGlobalAveragePool", {"channels_last": 1}, (1, 4, 4, 2))
    r = convert_model(model, "", Options(13, to_format="qdq"))
    assert r.model is None and [x.code for x in r.refused] == ["QC202"]
    assert "channels_last=1" in r.refused[0].detail


def test_without_onnxruntime_a_vendor_node_is_refused_saying_why(monkeypatch):
    """Nothing but onnxruntime computes a com.microsoft QLinear op: without it there is
    nothing to measure the rewrite against, and the node is refused (an ai.onnx node is
    still measured against onnx.reference)."""
    from qlin_cli.convert.formats import measure

    monkeypatch.setattr(measure, "_onnxruntime", lambda: None)
    r = convert_model(_one_node("QLinearSigmoid", {}), "", Options(13, to_format="qdq", tolerance=ANY_BOUND))
    assert r.model is None and [x.code for x in r.refused] == ["QC402"]
    assert "onnxruntime is not installed" in r.refused[0].detail


NBITS = sorted(c.name for c in corpus.CONFIGS if "_nbits" in c.name and "_qdq_" not in c.name
               and c.name not in corpus.KNOWN_FAILURES)


@pytest.fixture(scope="module")
def nbits_models(tmp_path_factory):
    return corpus.build(tmp_path_factory.mktemp("nbits"), NBITS)


@pytest.mark.parametrize("name", NBITS)
def test_matmul_nbits_becomes_blocked_dequantize_linear_and_matmul(name, nbits_models, tmp_path):
    """onnxruntime's MatMul n-bits quantizer output (4 and 8 bits, with and without zero
    points, blocks of 32 and 128) at opset 21: the dequantized weights proven bit for bit,
    and onnxruntime (ops as written) gives the source's outputs exactly, but where the
    source asked for accuracy_level 4 (A quantized to int8 inside MatMulNBits)."""
    path = nbits_models[name]
    r = _converted(path, 21, to_format="qdq")
    if "nbits2" in name:  # uint2 is a DequantizeLinear type from opset 25 (test_convert_formats_two_bits)
        assert r.model is None and {x.code for x in r.refused} == {"QC202"}
        assert all("bits=2" in x.detail for x in r.refused)
        return
    assert r.model is not None, [x.detail for x in r.refused]
    reformatted = [e for e in r.entries if e.action == "reformatted"]
    assert reformatted and all(e.verified for e in reformatted)
    ops = {n.op_type for n in r.model.graph.node}
    assert "MatMulNBits" not in ops and "DequantizeLinear" in ops
    out = _written(r.model, os.path.dirname(path), tmp_path / "qdq.onnx")
    cfg = corpus.BY_NAME[name]
    want, got = _source_run(path, cfg.model, False), corpus.run(out, cfg.model, optimize=False)
    if "acc4" in name:
        assert all(np.allclose(a, b, atol=1e-2) for a, b in zip(want, got, strict=True))
    else:
        assert all(a.tobytes() == b.tobytes() for a, b in zip(want, got, strict=True))
    ov = pytest.importorskip("openvino")
    core = ov.Core()
    from qlin_cli.targets import predict

    refused = [p.code for p in predict.findings(r.model, "", ["openvino"]) if p.severity == "error"]
    if refused:  # a block longer than K (64 < 128): openvino refuses it, and qlin says so (QT302)
        assert refused == ["QT302"] * len(refused)
        with pytest.raises(RuntimeError, match="block_size"):
            core.compile_model(core.read_model(out), "CPU")
        return
    compiled = core.compile_model(core.read_model(out), "CPU")
    results = compiled(corpus.sample_feeds(cfg.model, corpus.SAMPLE_SEED))
    assert all(np.isfinite(np.asarray(v)).all() for v in results.values())


def test_the_unpacking_is_checked_by_the_evaluator():
    """A planted error in the unpacked codes is caught by the proof (QC401)."""
    from qlin_cli.convert.formats import nbits_proof

    codes = np.arange(64, dtype=np.uint8).reshape(2, 32) % 16
    w = {"K": 32, "N": 2, "bits": 4, "block_size": 32, "codes": codes,
         "scales": np.array([[0.5], [0.25]], np.float32), "zero": np.full((2, 1), 8, np.uint8)}
    from onnx import TensorProto, helper, numpy_helper

    inits = [helper.make_tensor("q", TensorProto.UINT4, [32, 2], w["codes"].T.reshape(-1).tolist()),
             numpy_helper.from_array(np.ascontiguousarray(w["scales"].T), "s"),
             helper.make_tensor("z", TensorProto.UINT4, [1, 2], [8, 8])]
    dq = helper.make_node("DequantizeLinear", ["q", "s", "z"], ["w"], axis=0, block_size=32)
    assert nbits_proof.NBitsCase(w, dq, inits).prove() is None
    w["codes"] = w["codes"].copy()
    w["codes"][1, 5] ^= 1
    assert "where the page gives" in nbits_proof.NBitsCase(w, dq, inits).prove()


def test_the_batched_proof_gives_each_case_its_own_verdict():
    """prove_all proves many cases at once: a planted error in one case's codes fails that case
    alone, with the message its own proof gives, also where two cases name different tensors
    alike."""
    from onnx import TensorProto, helper, numpy_helper

    from qlin_cli.convert.formats import nbits_proof

    def case(i: int, name: str):
        codes = (np.arange(64, dtype=np.uint8).reshape(2, 32) + i) % 16
        w = {"K": 32, "N": 2, "bits": 4, "block_size": 32, "codes": codes,
             "scales": np.array([[0.5], [0.25 * (i + 1)]], np.float32), "zero": np.full((2, 1), 8, np.uint8)}
        inits = [helper.make_tensor(f"q{name}", TensorProto.UINT4, [32, 2], codes.T.reshape(-1)),
                 numpy_helper.from_array(np.ascontiguousarray(w["scales"].T), f"s{name}"),
                 helper.make_tensor(f"z{name}", TensorProto.UINT4, [1, 2], [8, 8])]
        dq = helper.make_node("DequantizeLinear", [f"q{name}", f"s{name}", f"z{name}"], [f"w{i}"], axis=0,
                              block_size=32)
        return nbits_proof.NBitsCase(w, dq, inits)

    for names in (["a", "b", "c"], ["a", "a", "c"]):  # the second: 'a' names two tables
        cases = [case(i, n) for i, n in enumerate(names)]
        cases[1].w["codes"] = cases[1].w["codes"].copy()
        cases[1].w["codes"][1, 5] ^= 1
        got = nbits_proof.prove_all(cases)
        assert got[0] is None and got[2] is None, got
        assert got[1] == cases[1].prove() and "where the page gives" in got[1]


@pytest.mark.parametrize("name", QOPERATOR)
def test_qoperator_to_qdq_and_back_gives_the_source_again(name, models, tmp_path):
    """QOperator -> QDQ -> QOperator (every bound allowed): the source's ops again, and
    onnxruntime (ops as written) gives the source's outputs exactly."""
    path = models[name]
    source = onnx.load(path)
    opset = _opset(source)
    there = _converted(path, opset, to_format="qdq", tolerance=ANY_BOUND)
    mid = str(tmp_path / "qdq.onnx")
    write_model(there.model, os.path.dirname(path), mid)
    opts = Options(opset, to_format="qoperator", tolerance=ANY_BOUND)
    back = convert_model(onnx.load(mid), str(tmp_path), opts)
    assert back.model is not None and back.count("unfused") == 0, [e.changes for e in back.entries]
    assert sorted((n.domain, n.op_type) for n in back.model.graph.node) == sorted(
        (n.domain, n.op_type) for n in source.graph.node)
    out = _written(back.model, str(tmp_path), tmp_path / "back.onnx")
    cfg = corpus.BY_NAME[name]
    want, got = _source_run(path, cfg.model, False), corpus.run(out, cfg.model, optimize=False)
    assert all(a.tobytes() == b.tobytes() for a, b in zip(want, got, strict=True))
    pytest.importorskip("openvino")
    from qlin_cli.targets import predict

    # openvino runs the result where it runs the source, with the source's outputs bit for bit;
    # where it refuses the source (per-channel QLinearConv, QLinearConv at all in these,
    # com.microsoft ops), it refuses the result too, and qlin's openvino target says so
    ov_source, ov_back = _openvino_run(path, cfg.model), _openvino_run(out, cfg.model)
    assert (ov_source is None) == (ov_back is None)
    said = any(p.severity == "error" for p in predict.findings(back.model, "", ["openvino"]))
    assert said == (ov_back is None)
    if ov_back is not None:
        assert all(a.tobytes() == b.tobytes() for a, b in zip(ov_source, ov_back, strict=True))


QDQ = ["cnn_qdq_u8s8_tensor_op13", "cnn_qdq_s8s8_channel_actsym_op17", "transformer_qdq_u8s8_channel_op17",
       "mixed_qdq_u8s8_tensor_op13"]


@pytest.mark.parametrize("name", QDQ)
def test_quantizer_qdq_output_fuses_where_within_the_tolerance(name, tmp_path):
    """onnxruntime's QDQ output to QOperator at the default tolerance (0): each group fuses
    or stays, saying why; the result is valid and onnxruntime runs it, with the outputs of
    the source wherever every group fused exactly."""
    path = corpus.build(tmp_path / "src", [name])[name]
    source = onnx.load(path)
    r = convert_model(source, os.path.dirname(path), Options(_opset(source), to_format="qoperator"))
    assert r.model is not None, [x.detail for x in r.refused]
    fused = [e for e in r.entries if e.action == "reformatted"]
    assert fused and all(e.measured.steps == 0 for e in fused)
    assert all(e.changes[0].startswith("stays QDQ: ") for e in r.entries if e.action == "unfused")
    if "s8s8" in name:  # no u8 x s8 kernel to saturate: everything fuses
        assert r.count("unfused") == 0
    out = _written(r.model, os.path.dirname(path), tmp_path / "qop.onnx")
    cfg = corpus.BY_NAME[name]
    want, got = corpus.run(path, cfg.model, optimize=False), corpus.run(out, cfg.model, optimize=False)
    assert _final_steps(source, want, got) <= 1


def test_onnxruntime_runs_matmul_nbits_qdq_form_with_int8_activations_by_default(nbits_models, tmp_path):
    """What docs/convert.md says of onnxruntime's default optimization level: it fuses a blocked
    DequantizeLinear + MatMul back into MatMulNBits with accuracy_level 4 (activations quantized
    to int8 inside the node: session option session.qdq_matmulnbits_accuracy_level, default 4),
    so the QDQ form of an accuracy_level 0 source differs from it there; with the option at 0
    the outputs are the source's bit for bit, as with optimizations off."""
    import onnxruntime as ort

    name = "transformer_nbits4_asym_b32_op21"
    path = nbits_models[name]
    out = _written(_converted(path, 21, to_format="qdq").model, os.path.dirname(path), tmp_path / "qdq.onnx")
    feeds = corpus.sample_feeds(corpus.BY_NAME[name].model, corpus.SAMPLE_SEED)

    def run(p, level=None):
        opts = ort.SessionOptions()
        opts.log_severity_level = 4
        if level is not None:
            opts.add_session_config_entry("session.qdq_matmulnbits_accuracy_level", level)
        return ort.InferenceSession(p, opts, providers=["CPUExecutionProvider"]).run(None, feeds)

    want = run(path)
    same = [all(a.tobytes() == b.tobytes() for a, b in zip(want, run(out, level), strict=True))
            for level in (None, "0")]
    assert same == [False, True]


@pytest.mark.parametrize("name", [n for n in NBITS if "nbits2" not in n])
def test_matmul_nbits_to_qdq_and_back_gives_the_source_again(name, nbits_models, tmp_path):
    """MatMulNBits -> blocked DequantizeLinear + MatMul -> MatMulNBits, each step proven (the
    weights as written read back against onnx.reference's DequantizeLinear): onnxruntime
    gives the source's outputs at each step, but that accuracy_level 4 (int8 A inside the
    node) is not carried through the QDQ form; there the result gives the QDQ form's."""
    path = nbits_models[name]
    there = _converted(path, 21, to_format="qdq")
    mid = _written(there.model, os.path.dirname(path), tmp_path / "qdq.onnx")
    back = convert_model(onnx.load(mid), str(tmp_path), Options(21, to_format="qoperator"))
    fused = [e for e in back.entries if e.action == "reformatted" and e.op_type == "MatMul"]
    assert len(fused) == 3 and all(e.verified for e in fused), [e.changes for e in back.entries]
    ops = [n.op_type for n in back.model.graph.node]  # (a source below opset 21 has other ops
    assert ops.count("MatMulNBits") == 3 and "DequantizeLinear" not in ops  # rewritten for 21)
    out = _written(back.model, str(tmp_path), tmp_path / "back.onnx")
    cfg = corpus.BY_NAME[name]
    runs = [_source_run(path, cfg.model, False),
            *(corpus.run(p, cfg.model, optimize=False) for p in (mid, out))]
    same = [all(a.tobytes() == b.tobytes() for a, b in zip(x, y, strict=True)) for x, y in
            ((runs[0], runs[2]), (runs[1], runs[2]))]
    assert same == [("acc4" not in name), True]


@pytest.mark.parametrize("name", ["transformer_nbits4_qdq_sym_b32_op21",
                                  "transformer_nbits4_qdq_asym_b128_op21"])
def test_quantizer_blocked_qdq_output_becomes_matmul_nbits(name, tmp_path):
    """onnxruntime's n-bits quantizer in QDQ mode (int4 / uint4 blocked DequantizeLinear +
    MatMul) to MatMulNBits: proven, and onnxruntime gives the source's outputs exactly."""
    path = corpus.build(tmp_path / "src", [name])[name]
    r = convert_model(onnx.load(path), os.path.dirname(path), Options(21, to_format="qoperator"))
    assert [n.op_type for n in r.model.graph.node].count("MatMulNBits") == 3
    assert all(e.verified for e in r.entries if e.action == "reformatted")
    out = _written(r.model, os.path.dirname(path), tmp_path / "nbits.onnx")
    cfg = corpus.BY_NAME[name]
    want, got = corpus.run(path, cfg.model, optimize=False), corpus.run(out, cfg.model, optimize=False)
    assert all(a.tobytes() == b.tobytes() for a, b in zip(want, got, strict=True))


def test_packing_reads_back():
    """pack and unpack are each other's inverse (the proof of the way back reads the packed
    weights with unpack; test_the_unpacking_is_checked_by_the_evaluator shows the
    proof failing on a changed code)."""
    from qlin_cli.convert.formats import nbits

    rng = np.random.default_rng(3)
    for bits in (4, 8):
        codes = rng.integers(0, 1 << bits, (5, 40)).astype(np.uint8)
        assert np.array_equal(nbits.unpack(nbits.pack(codes, bits, 64 * bits // 8), bits, 40), codes)


def test_a_target_refusal_names_what_check_names_not_an_opset_step(tmp_path):
    """`convert --target tensorrt-10` of a com.microsoft per-axis model is refused for what
    `check --target tensorrt-10` finds (QT104: no com.microsoft QuantizeLinear), not for a
    step of the closest candidate's opset."""
    from paths import MODELS

    path = os.path.join(MODELS, "clean", "microsoft_per_axis.onnx")
    check = CliRunner().invoke(main, ["check", "--no-config", "--target", "tensorrt-10", "--format", "json",
                                      path])
    found = json.loads(check.stdout)["files"][0]["diagnostics"]
    named = {f["code"] for f in found if f["severity"] == "error"}
    r = CliRunner().invoke(main, ["convert", path, "--target", "tensorrt-10", "--dry-run", "--format",
                                  "json"])
    assert r.exit_code == 1
    stop = json.loads(r.stdout)
    assert {f["code"] for f in stop["refused"]} == named == {"QT104"}
    assert "opset 12" not in r.output


@pytest.mark.parametrize("name", ["cnn_qop_u8s8_channel_op13", "cnn_qop_u8s8_tensor_op13",
                                  "transformer_qop_u8s8_channel_op17"])
def test_target_openvino_takes_a_qoperator_model_through_its_qdq_form(name, models, tmp_path):
    """openvino refuses these sources (QT205, as the installed openvino does: their QGemm,
    per-channel QLinearMatMul, a QLinearConv it cannot read); `convert --target openvino`
    writes the QDQ form, which it loads, compiles and runs."""
    ov = pytest.importorskip("openvino")
    path = models[name]
    out = str(tmp_path / "ov.onnx")
    check = CliRunner().invoke(main, ["check", "--no-config", "--target", "openvino", path])
    assert check.exit_code == 1  # refused as it is
    with pytest.raises(RuntimeError):
        ov.Core().compile_model(ov.Core().read_model(path), "CPU")
    r = CliRunner().invoke(main, ["convert", path, "--target", "openvino", "--tolerance", str(ANY_BOUND),
                                  "-o", out])
    assert r.exit_code == 0, r.output
    assert "through its QDQ form" in r.output
    assert CliRunner().invoke(main, ["check", "--no-config", "--target", "openvino", out]).exit_code == 0
    core = ov.Core()
    compiled = core.compile_model(core.read_model(out), "CPU")
    results = compiled(corpus.sample_feeds(corpus.BY_NAME[name].model, corpus.SAMPLE_SEED))
    assert all(np.isfinite(np.asarray(v)).all() for v in results.values())


@pytest.mark.parametrize("name, mode", [("cnn_qdq_u8s8_weight_pair_op13", "fold"),
                                        ("cnn_qdq_u8s8_tensor_op13", "unfold"),
                                        ("transformer_qdq_u8s8_channel_op17", "unfold")])
def test_weights_folded_or_unfolded_compute_the_same(name, mode, tmp_path):
    """--weights fold (onnxruntime's AddQDQPairToWeight output: QuantizeLinear of float
    weights, QL604) and --weights unfold (DequantizeLinear of int8 weights -> float): each
    rewrite proven against onnx.reference, the constants nothing reads any more gone, and
    onnxruntime (ops as written) gives the source's outputs bit for bit."""
    path = corpus.build(tmp_path / "src", [name])[name]
    source = onnx.load(path)
    r = convert_model(source, os.path.dirname(path), Options(_opset(source), weights=mode))
    changed = [e for e in r.entries if e.action == "weights"]
    assert changed and all(e.verified for e in changed), [e.changes for e in r.entries]
    gone = "QuantizeLinear" if mode == "fold" else "DequantizeLinear"
    count = [n.op_type for n in r.model.graph.node].count
    assert count(gone) == [n.op_type for n in source.graph.node].count(gone) - len(changed)
    read = {x for n in r.model.graph.node for x in n.input}
    assert all(t.name in read for t in r.model.graph.initializer)  # nothing left unread
    out = _written(r.model, os.path.dirname(path), tmp_path / "w.onnx")
    before = {d.code for d in check_file(path).diagnostics}
    after = {d.code for d in check_file(out).diagnostics}
    if mode == "fold":
        assert "QL604" in before and "QL604" not in after
    cfg = corpus.BY_NAME[name]
    want, got = corpus.run(path, cfg.model, optimize=False), corpus.run(out, cfg.model, optimize=False)
    assert all(a.tobytes() == b.tobytes() for a, b in zip(want, got, strict=True))


def test_weights_strip_leaves_the_float_model(tmp_path):
    """--weights strip: no QuantizeLinear or DequantizeLinear left (weights unfolded exactly,
    activation pairs become Identity of the float value), valid, and onnxruntime runs it;
    its outputs are the float path's, near the quantized model's but not equal (by design)."""
    name = "cnn_qdq_u8s8_tensor_op13"
    path = corpus.build(tmp_path / "src", [name])[name]
    source = onnx.load(path)
    r = convert_model(source, os.path.dirname(path), Options(_opset(source), weights="strip"))
    ops = {n.op_type for n in r.model.graph.node}
    assert not ops & {"QuantizeLinear", "DequantizeLinear"} and "Identity" in ops
    assert not any(e.verified for e in r.entries if "stripped" in " ".join(e.changes))
    # the scales and zero points the stripped nodes read go with them (passes/unread.py)
    read = {x for n in r.model.graph.node for x in n.input}
    assert [t.name for t in r.model.graph.initializer if t.name not in read] == []
    out = _written(r.model, os.path.dirname(path), tmp_path / "float.onnx")
    cfg = corpus.BY_NAME[name]
    want, got = corpus.run(path, cfg.model, optimize=False), corpus.run(out, cfg.model, optimize=False)
    differ = [float(np.abs(a.astype(np.float64) - b).max()) for a, b in zip(want, got, strict=True)]
    assert 0 < max(differ) < 0.1, differ


@pytest.mark.parametrize("name", ["cnn_qdq_u8s8_tensor_op13", "cnn_qdq_u8u8_tensor_wasym_op11",
                                  "transformer_qdq_u8s8_channel_op17"])
def test_to_int8_moves_every_uint8_tensor_exactly(name, tmp_path):
    """--to-int8 on onnxruntime's uint8 QDQ output: every Q/DQ node proven (evaluator: codes
    128 apart, values bit for bit), no uint8 left anywhere, and onnxruntime gives the
    source's outputs bit for bit."""
    path = corpus.build(tmp_path / "src", [name])[name]
    source = onnx.load(path)
    r = convert_model(source, os.path.dirname(path), Options(_opset(source), to_int8=True))
    moved = [e for e in r.entries if any("uint8 -> int8" in c for c in e.changes)]
    assert moved and all(e.verified for e in moved)
    assert TensorProto.UINT8 not in {t.data_type for t in r.model.graph.initializer}
    out = _written(r.model, os.path.dirname(path), tmp_path / "s8.onnx")
    cfg = corpus.BY_NAME[name]
    want, got = corpus.run(path, cfg.model, optimize=False), corpus.run(out, cfg.model, optimize=False)
    assert all(a.tobytes() == b.tobytes() for a, b in zip(want, got, strict=True))


def test_target_tensorrt_moves_symmetric_uint8_to_int8(tmp_path):
    """uint8 with zero point 128 (TensorRT#2774: refused, QT202 and QT306) holds the values
    int8 with zero point 0 holds: `convert --target tensorrt-10` writes that, which `check
    --target tensorrt-10` passes, and onnxruntime computes as the source."""
    import onnxruntime as ort
    from onnx import helper, numpy_helper

    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(np.float32(0.02), "s"), numpy_helper.from_array(np.uint8(128), "z"),
             numpy_helper.from_array(rng.integers(0, 256, (4, 4, 3, 3)).astype(np.uint8), "w"),
             numpy_helper.from_array(np.float32(0.01), "ws"), numpy_helper.from_array(np.uint8(128), "wz")]
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "s", "z"], ["xd"]),
             helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wd"]),
             helper.make_node("Conv", ["xd", "wd"], ["y"], pads=[1, 1, 1, 1])]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8, 8])], inits)
    src = str(tmp_path / "u8.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8), src)
    assert CliRunner().invoke(main, ["check", "--no-config", "--target", "tensorrt-10", src]).exit_code == 1
    out = str(tmp_path / "trt.onnx")
    r = CliRunner().invoke(main, ["convert", src, "--target", "tensorrt-10", "-o", out])
    assert r.exit_code == 0 and "through int8" in r.output, r.output
    assert CliRunner().invoke(main, ["check", "--no-config", "--target", "tensorrt-10", out]).exit_code == 0
    x = {"x": rng.standard_normal((1, 4, 8, 8)).astype(np.float32)}
    runs = [ort.InferenceSession(p, providers=["CPUExecutionProvider"]).run(None, x)[0] for p in (src, out)]
    assert runs[0].tobytes() == runs[1].tobytes()


def test_moving_float16_qdq_into_com_microsoft_is_refused_where_onnxruntime_computes_otherwise(tmp_path):
    """ModelOpt's float16 Q/DQ (fixtures/producers.py fp16_scales): onnxruntime, the runtime
    of com.microsoft, has no float16 kernel there and would not round the node's output to
    float16 (QT409, measured by its probes). `--to-domain com.microsoft` is refused naming
    it, nothing written (it was written with a warning); the same move of a float32 model
    still converts."""
    import producers
    from paths import MODELS

    src = str(tmp_path / "fp16.onnx")
    onnx.save(producers.fp16_scales(), src)
    out = tmp_path / "ms.onnx"
    r = CliRunner().invoke(main, ["convert", src, "--to-domain", "com.microsoft", "-o", str(out)])
    assert r.exit_code == 1 and not out.exists()
    assert "QT409" in r.stderr and "keep the nodes in ai.onnx" in r.stderr
    clean = os.path.join(MODELS, "clean", "per_channel_chain.onnx")
    r = CliRunner().invoke(main, ["convert", clean, "--to-domain", "com.microsoft", "-o", str(out)])
    assert r.exit_code == 0 and out.exists(), r.output


def _read_by_a_branch(op: str) -> onnx.ModelProto:
    """x -> QuantizeLinear -> q -> DequantizeLinear -> d -> ``op`` -> QuantizeLinear -> y,
    and an If whose then-branch reads q and d from the graph around it."""
    from onnx import helper, numpy_helper

    inits = [numpy_helper.from_array(np.float32(0.05), "s"), numpy_helper.from_array(np.uint8(128), "z"),
             numpy_helper.from_array(np.float32(0.01), "s2"), numpy_helper.from_array(np.uint8(0), "z2")]
    reads = [helper.make_node("Identity", ["q"], ["bq"]), helper.make_node("Identity", ["d"], ["bd"])]
    branch = helper.make_graph(
        reads, "then", [],
        [helper.make_tensor_value_info("bq", TensorProto.UINT8, [4]),
         helper.make_tensor_value_info("bd", TensorProto.FLOAT, [4])])
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
             helper.make_node("DequantizeLinear", ["q", "s", "z"], ["d"]),
             helper.make_node(op, ["d"], ["f"]),
             helper.make_node("QuantizeLinear", ["f", "s2", "z2"], ["y"]),
             helper.make_node("If", ["c"], ["oq", "od"], then_branch=branch, else_branch=branch)]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4]),
                                       helper.make_tensor_value_info("c", TensorProto.BOOL, [])],
                          [helper.make_tensor_value_info(n, t, [4]) for n, t in
                           (("y", TensorProto.UINT8), ("oq", TensorProto.UINT8), ("od", TensorProto.FLOAT))],
                          inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13),
                                               helper.make_opsetid("com.microsoft", 1)], ir_version=8)


def test_a_value_a_subgraph_reads_is_neither_moved_nor_folded(tmp_path):
    """q and d are read inside the If as well: --to-int8 leaves q uint8 (its type is the
    branch's too), --to-format qoperator fuses the Sigmoid but keeps the DequantizeLinear
    writing d; both results pass onnx.checker's full check."""
    model = _read_by_a_branch("Sigmoid")
    moved = convert_model(model, "", Options(13, to_int8=True))
    assert not any("('q')" in c for e in moved.entries for c in e.changes)
    onnx.checker.check_model(moved.model, full_check=True)
    fused = convert_model(model, "", Options(13, to_format="qoperator", tolerance=ANY_BOUND))
    ops = [n.op_type for n in fused.model.graph.node]
    assert "QLinearSigmoid" in ops and "DequantizeLinear" in ops
    onnx.checker.check_model(fused.model, full_check=True)
