"""The corpus of models made by onnxruntime's real quantizers (fixtures/corpus.py): every
configuration builds, loads and runs, holds what it claims, and the corpus as a whole covers
the formats, domains, types and granularities later tests rely on."""

from __future__ import annotations

import functools
import os
from collections import Counter

import corpus
import numpy as np
import onnx
import pytest

BUILDABLE = [c.name for c in corpus.CONFIGS if c.name not in corpus.KNOWN_FAILURES]
NBITS = [c.name for c in corpus.CONFIGS if c.quantizer == "MatMulNBitsQuantizer"]
NBITS_BUILDABLE = [n for n in NBITS if n in BUILDABLE]

# Worst |quantized - float| / max|float| allowed on a calibration input, graph optimizations
# off. The largest measured is about 0.43 (dynamic per-channel int8 MatMulInteger: u8s8 products
# saturate on x86 CPUs without VNNI); garbage (wrong scale, zero output) lands well above.
FIDELITY = 0.5


@functools.cache
def _float_run(path: str, model: str, seed: int = corpus.SAMPLE_SEED) -> tuple:
    """onnxruntime's outputs of a float model (the reference every configuration quantized
    from it is held to): each float model and input run once, not once per configuration."""
    return tuple(corpus.run(path, model, seed))


@pytest.fixture(scope="session")
def built(tmp_path_factory):
    folder = tmp_path_factory.mktemp("corpus")
    return {"folder": str(folder), "paths": corpus.build(folder)}


@pytest.fixture(scope="session")
def summaries(built):
    return {name: corpus.summarize(onnx.load(path)) for name, path in built["paths"].items()}


def test_configurations_are_well_formed():
    assert 40 <= len(corpus.CONFIGS) <= 80
    assert len(corpus.BY_NAME) == len(corpus.CONFIGS)
    assert set(corpus.KNOWN_FAILURES) <= set(corpus.BY_NAME)
    assert set(corpus.FAILURE_SIGNS) == set(corpus.KNOWN_FAILURES)
    for cfg in corpus.CONFIGS:
        assert cfg.quantizer in {"quantize_static", "quantize_dynamic", "MatMulNBitsQuantizer"}, cfg.name
        assert cfg.fmt in {"QDQ", "QOperator"}, cfg.name
        assert cfg.model in corpus.FLOAT_MODELS and 10 <= cfg.opset <= 21, cfg.name
        assert cfg.expect and cfg.qtypes, f"{cfg.name} records no expected ops or types"
        assert cfg.granularity.split("-")[0] in {"per", "blocked"}, cfg.name
        ex = cfg.exercises
        assert ex["ops"] and ex["quantizer"] and ex["weight"], cfg.name
    assert {10, 11, 13, 17, 19, 21} <= {c.opset for c in corpus.CONFIGS}
    quantizers = Counter(c.quantizer for c in corpus.CONFIGS)
    assert set(quantizers) == {"quantize_static", "quantize_dynamic", "MatMulNBitsQuantizer"}


@pytest.mark.parametrize("opset", range(10, 22))
@pytest.mark.parametrize("model", sorted(corpus.FLOAT_MODELS))
def test_float_models_at_every_opset(model, opset):
    """Each float model passes the full ONNX checker (the builder runs it) and is small."""
    built_model = corpus.FLOAT_MODELS[model](opset)
    assert built_model.opset_import[0].version == opset
    assert built_model.ByteSize() < 200_000


def test_whole_corpus_builds(built):
    assert set(built["paths"]) == set(BUILDABLE)


@pytest.mark.parametrize("name", BUILDABLE)
def test_config_builds_loads_and_runs(built, name):
    cfg = corpus.BY_NAME[name]
    path = built["paths"][name]
    assert os.path.basename(path) == f"{name}.onnx" and os.path.getsize(path) > 0
    model = onnx.load(path)
    onnx.checker.check_model(model)
    ref = _float_run(corpus.float_path(built["folder"], cfg.model, cfg.opset), cfg.model)
    outs = corpus.run(path, cfg.model)
    assert len(outs) == len(ref)
    for out, want in zip(outs, ref, strict=True):
        assert out.shape == want.shape and out.dtype == want.dtype
        assert np.isfinite(out).all(), f"{name}: non-finite output"


@pytest.mark.parametrize("name", BUILDABLE)
def test_config_holds_what_it_claims(summaries, name):
    cfg = corpus.BY_NAME[name]
    info = summaries[name]
    missing = [f"{e[1] or 'ai.onnx'}:{e[0]}" for e in cfg.expect
               if info["ops"][e[0], e[1]] < (e[2] if len(e) > 2 else 1)]
    assert not missing, f"{name} lacks {missing}; has {sorted(info['ops'])}"
    absent = [t for t in cfg.qtypes if t not in info["qtypes"]]
    assert not absent, f"{name} lacks quantized types {absent}; has {sorted(info['qtypes'])}"
    if info["granularity"]:  # models whose weights go through DequantizeLinear or MatMulNBits
        kind = "blocked" if cfg.granularity.startswith("blocked") else cfg.granularity
        assert kind in info["granularity"], f"{name}: {cfg.granularity} not in {info['granularity']}"
    if cfg.options.get("UseQDQContribOps"):
        if cfg.fmt == "QDQ":
            assert ("QuantizeLinear", "") not in info["ops"] and ("DequantizeLinear", "") not in info["ops"]


@pytest.mark.parametrize("name", BUILDABLE)
def test_quantized_output_tracks_float(built, name):
    cfg = corpus.BY_NAME[name]
    float_model = corpus.float_path(built["folder"], cfg.model, cfg.opset)
    for seed in (corpus.CALIBRATION_SEED, corpus.CALIBRATION_SEED + 3):
        want = _float_run(float_model, cfg.model, seed)[0]
        got = corpus.run(built["paths"][name], cfg.model, seed, optimize=False)[0]
        err = float(np.abs(got - want).max() / np.abs(want).max())
        assert err <= FIDELITY, f"{name}: relative error {err:.3f} on calibration input {seed}"


def _union(summaries):
    ops: Counter = Counter()
    qtypes: set[str] = set()
    granularity: set[str] = set()
    for info in summaries.values():
        ops.update(info["ops"])
        qtypes |= info["qtypes"]
        granularity |= info["granularity"]
    return ops, qtypes, granularity


FEATURES = {
    "QDQ (ai.onnx Q and DQ)": lambda ops, q, g: ops[("QuantizeLinear", "")] and ops[("DequantizeLinear", "")],
    "com.microsoft Q/DQ": lambda ops, q, g: ops[("QuantizeLinear", corpus.MS)]
    and ops[("DequantizeLinear", corpus.MS)],
    "QLinearConv": lambda ops, q, g: ops[("QLinearConv", "")],
    "QLinearMatMul": lambda ops, q, g: ops[("QLinearMatMul", "")],
    "com.microsoft QOperator ops": lambda ops, q, g: all(
        ops[(op, corpus.MS)] for op in ("QLinearAdd", "QGemm", "QLinearSoftmax", "QLinearConcat",
                                        "QLinearGlobalAveragePool")),
    "DynamicQuantizeLinear": lambda ops, q, g: ops[("DynamicQuantizeLinear", "")],
    "MatMulInteger": lambda ops, q, g: ops[("MatMulInteger", "")],
    "ConvInteger": lambda ops, q, g: ops[("ConvInteger", "")],
    "DynamicQuantizeLSTM": lambda ops, q, g: ops[("DynamicQuantizeLSTM", corpus.MS)],
    "8-bit types": lambda ops, q, g: {"int8", "uint8"} <= q,
    "16-bit types": lambda ops, q, g: {"int16", "uint16"} <= q,
    "4-bit types": lambda ops, q, g: {"int4", "uint4"} <= q,
    "int32 bias": lambda ops, q, g: "int32" in q,
    "per-tensor, per-channel and blocked weights": lambda ops, q, g: {"per-tensor", "per-channel",
                                                                      "blocked"} <= g,
}


@pytest.mark.parametrize("feature", sorted(FEATURES))
def test_corpus_covers(summaries, feature):
    ops, qtypes, granularity = _union(summaries)
    assert FEATURES[feature](ops, qtypes, granularity), f"no model in the corpus has {feature}"


@pytest.mark.parametrize("op", ["MatMulNBits", "GatherBlockQuantized"])
def test_corpus_covers_nbits(summaries, op):
    if not NBITS_BUILDABLE:
        pytest.skip("MatMulNBitsQuantizer cannot run here: " + corpus.KNOWN_FAILURES[NBITS[0]])
    ops, _, _ = _union(summaries)
    assert ops[(op, corpus.MS)], f"no model in the corpus has com.microsoft {op}"


def test_corpus_outputs_span_opsets(built):
    opsets = set()
    for path in built["paths"].values():
        model = onnx.load(path)
        opsets |= {o.version for o in model.opset_import if o.domain in ("", "ai.onnx")}
    assert {10, 11, 13, 17, 19, 21} <= opsets


@pytest.mark.parametrize("name", sorted(corpus.KNOWN_FAILURES))
def test_known_failure_still_fails(tmp_path_factory, name):
    """A known failure that starts working should be moved back into the corpus."""
    folder = tmp_path_factory.mktemp("known")
    with pytest.raises(Exception) as err:  # noqa: B017 - the quantizer or onnxruntime, whichever fails
        path = corpus.build(folder, [name])[name]
        corpus.run(path, corpus.BY_NAME[name].model)
    assert corpus.FAILURE_SIGNS[name] in str(err.value), f"{name} now fails differently: {err.value}"


def test_build_caches_and_is_deterministic(built, tmp_path):
    again = corpus.build(built["folder"])
    assert again == built["paths"]
    mtimes = {n: os.stat(p).st_mtime_ns for n, p in again.items()}
    corpus.build(built["folder"])
    assert mtimes == {n: os.stat(p).st_mtime_ns for n, p in again.items()}, "build ran twice"
    names = ["cnn_qdq_u8s8_channel_op13", "transformer_qop_u8s8_tensor_op13", "lstm_dyn_s8_tensor_op13"]
    fresh = corpus.build(tmp_path, names, fresh=True)  # quantized again, not copied
    for name in names:
        with open(fresh[name], "rb") as a, open(built["paths"][name], "rb") as b:
            assert a.read() == b.read(), f"{name} differs between two builds"
