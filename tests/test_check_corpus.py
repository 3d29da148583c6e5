"""`qlin check` on models made by real quantizers (fixtures/corpus.py: onnxruntime's
quantize_static in QDQ and QOperator formats, quantize_dynamic, MatMulNBitsQuantizer;
8/16-bit, int4, per-tensor, per-channel, blocked): every model checks clean (no error, no
warning) unless it carries a real producer bug, and each such bug is reported.

NNCF's output is checked too where nncf is installed (it is not a dependency of qlin)."""

from __future__ import annotations

import importlib.util
from collections import Counter

import corpus
import pytest

from qlin_cli.check.engine import check_file

# The producer bugs in the corpus, with why each is one. Everything else must be clean.
PRODUCER_BUGS = {
    # int4 tensors in an IR 7 file: int4/uint4 exist from IR 10 (onnx.proto's Version notes);
    # the quantizer writes int4 weights and zero points into the opset-13 model's IR.
    "cnn_qdq_u8s4_op13": {"QL205"},
}
# Not bugs: 16-bit activations make the quantizer raise the ai.onnx import to 21 and keep the
# input model's IR (7, 8, 9). Versioning.md calls IR and opset versions "distinct and largely
# independent", onnx.checker and onnxruntime accept these files: QL206 says it as an info.
IR_BELOW_OPSET = {"cnn_qdq_u16s8_contrib_op13", "cnn_qdq_u16u8_op17", "transformer_qdq_u16u16_contrib_op19"}
# Configurations onnxruntime cannot load (corpus.KNOWN_FAILURES) that qlin explains.
KNOWN_FAILURE_BUGS = {
    # per-channel DequantizeLinear with `axis` at opset 10, which has neither
    "cnn_qdq_u8s8_channel_op10": {"QL102", "QL403"},
}


@pytest.fixture(scope="module")
def checked(tmp_path_factory):
    folder = tmp_path_factory.mktemp("corpus_check")
    paths = corpus.build(folder)
    return {name: check_file(path) for name, path in paths.items()}


def _serious(result):
    return {d.code for d in result.diagnostics if d.severity != "info"}


def test_the_corpus_is_checked_whole(checked):
    assert len(checked) >= 70
    assert all(r.error is None for r in checked.values()), {n: r.error for n, r in checked.items() if r.error}
    assert set(PRODUCER_BUGS) <= set(checked)


BUILDABLE = sorted(c.name for c in corpus.CONFIGS if c.name not in corpus.KNOWN_FAILURES)


@pytest.mark.parametrize("name", BUILDABLE)
def test_real_quantizer_output_is_clean_unless_it_carries_a_producer_bug(checked, name):
    result = checked[name]
    assert _serious(result) == PRODUCER_BUGS.get(name, set()), \
        [d.message for d in result.diagnostics if d.severity != "info"]


def test_every_family_in_the_corpus_was_read(checked):
    """The clean verdicts mean something only if the new families' nodes were checked:
    plant one mistake in a QOperator, a dynamic and a MatMulNBits model and see it."""
    import onnx

    from qlin_cli.check.engine import check_model

    plants = {"cnn_qop_u8s8_channel_op13": ("QLinearConv", 4, "QL410"),
              "transformer_dyn_s8_channel_op21": ("MatMulInteger", 3, "QL410"),
              "transformer_nbits4_asym_b32_op21": ("MatMulNBits", 2, "QL411")}
    for name, (op, k, code) in plants.items():
        model = onnx.load(checked[name].path)
        node = next(n for n in model.graph.node if n.op_type == op and len(n.input) > k)
        init = next(t for t in model.graph.initializer if t.name == node.input[k])
        init.CopyFrom(onnx.numpy_helper.from_array(
            onnx.numpy_helper.to_array(init).reshape(-1)[:3].copy(), init.name))
        assert code in {d.code for d in check_model(model, ".")}, name


@pytest.mark.parametrize("name", sorted(KNOWN_FAILURE_BUGS))
def test_models_onnxruntime_refuses_are_explained(tmp_path, name):
    path = corpus.build(tmp_path, [name])[name]
    assert KNOWN_FAILURE_BUGS[name] <= _serious(check_file(path))


def test_no_false_alarm_is_only_an_info_note(checked):
    notes = Counter(d.code for r in checked.values() for d in r.diagnostics if d.severity == "info")
    # weights kept in float with their own Q -> DQ (QL604, the AddQDQPairToWeight option),
    # com.microsoft imported by QDQ models with no contrib op (QL109), opset 21 at an older IR
    # (QL206, on exactly the IR_BELOW_OPSET models); shape-[1] bias scales (QL409) only when
    # selected (test_one_element_scales_only_when_selected)
    assert set(notes) <= {"QL604", "QL109", "QL206"}, notes
    ir_notes = {name for name, r in checked.items() if any(d.code == "QL206" for d in r.diagnostics)}
    assert ir_notes == IR_BELOW_OPSET


def test_one_element_scales_only_when_selected(checked):
    """QL409 is off by default (docs/decisions.md, "One-element scales"): quantize_static writes
    every bias DequantizeLinear of a per-tensor QDQ model with a shape-[1] scale. Selected, it
    finds them: on a DequantizeLinear of a 1-D constant (a Conv / Gemm bias, a LayerNorm beta)."""
    import onnx

    assert not [d for r in checked.values() for d in r.diagnostics if d.code == "QL409"]
    selected = {name: check_file(r.path, ["QL409"]) for name, r in checked.items()}
    found = {name: r.diagnostics for name, r in selected.items() if r.diagnostics}
    assert len(found) >= 20 and sum(map(len, found.values())) >= 30, {n: len(f) for n, f in found.items()}
    for name, diagnostics in found.items():
        model = onnx.load(checked[name].path, load_external_data=False)
        nodes = {n.name: n for n in model.graph.node}
        dims = {t.name: list(t.dims) for t in model.graph.initializer}
        for d in diagnostics:
            node = nodes[d.node]
            assert d.code == "QL409" and node.op_type == "DequantizeLinear", (name, d.node)
            assert len(dims[node.input[0]]) == 1 and dims[node.input[0]][0] > 1, (name, d.node)


@pytest.mark.skipif(importlib.util.find_spec("nncf") is None, reason="nncf is not installed")
@pytest.mark.parametrize("model", ["cnn", "transformer", "mixed"])
@pytest.mark.parametrize("opset", [13, 17, 21])
def test_nncf_output_is_clean(tmp_path, model, opset):
    import nncf
    import onnx

    data = nncf.Dataset(corpus.calibration_feeds(model))
    quantized = nncf.quantize(corpus.FLOAT_MODELS[model](opset), data,
                              subset_size=corpus.CALIBRATION_SAMPLES)
    path = str(tmp_path / "nncf.onnx")
    onnx.save(quantized, path)
    result = check_file(path)
    assert result.error is None and _serious(result) == set(), [d.message for d in result.diagnostics]
