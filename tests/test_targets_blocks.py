"""QT211 (block refused) for openvino, from the blocks measured per release and CPU
(tools/blocks_openvino.py --write: the quantizer outputs of fixtures/corpus.py compiled in
every release, each failure no other qlin error explains cut down to its smallest failing
block, every block compiled in every release; qlin_cli/targets/data/openvino_blocks.json.gz).
The finding is on the models and releases the data says failed, silent elsewhere; live
(`make remeasure`), the installed release fails the model and the block again, on the CPU
the data was measured on."""

from __future__ import annotations

import re

import corpus
import onnx
import pytest

from qlin_cli.model.analysis import analyze
from qlin_cli.targets import block_store, predict, probe_store
from qlin_cli.targets.releases import minor

FAILING = "transformer_nbits2_asym_b32_op21"  # issue 37: 2026.4.1 fails it on an Intel Xeon
BUILDABLE = [c.name for c in corpus.CONFIGS if c.name not in corpus.KNOWN_FAILURES]


@pytest.fixture(scope="module")
def corpus_models(tmp_path_factory):
    paths = corpus.build(tmp_path_factory.mktemp("blocks"), BUILDABLE)
    return {name: onnx.load(path) for name, path in paths.items()}


def _qt211(model: onnx.ModelProto, target: str) -> list:
    return [f for f in predict.findings_in(analyze(model, ""), [target], advice=False) if f.code == "QT211"]


def _failed_pairs() -> set[tuple[str, str]]:
    """(release, model) of every block the data says a release failed on some CPU."""
    out = set()
    for key, models in block_store._data("openvino").get("found", {}).items():
        for v in block_store.releases("openvino"):
            if block_store.failures("openvino", v, key)[0]:
                out |= {(v, m) for m in models}
    return out


def test_the_data_is_the_tools_and_names_the_cpu():
    data = block_store._data("openvino")
    assert data, "no openvino_blocks.json.gz"  # the measured data must be there
    assert set(data["releases"]) == set(probe_store.releases("openvino"))  # every release measured
    for release in data["releases"].values():
        for cpu, how in release["hosts"].items():
            assert re.fullmatch(r".+ \((avx[^)]*|no AVX2)\)", cpu), cpu  # gen_target_data.host_cpu
            assert how["source"].startswith("python tools/blocks_openvino.py --write") and how["models"] >= 70
    assert block_store.fold("openvino", *block_store.unfold(data), lambda v: v.split(".")) == data


def test_onnxruntime_ran_every_model_no_other_error_explains_in_every_release():
    """tools/blocks_onnxruntime.py --write: each release loaded and ran every quantizer output
    qlin gives no error for, so no block was cut (1,125 of 1,125 pairs agree)."""
    data = block_store._data("onnxruntime")
    assert set(data["releases"]) == set(probe_store.releases("onnxruntime"))
    for release in data["releases"].values():
        (how,) = release["hosts"].values()
        assert how["source"].startswith("python tools/blocks_onnxruntime.py --write") and how["models"] >= 70
    assert data["blocks"] == {} and block_store.failing_heads("onnxruntime", "1.31.1") == frozenset()


def test_the_failing_block_is_the_two_bit_matmulnbits_with_its_shape():
    data = block_store._data("openvino")
    failed = [k for k in data["blocks"] if block_store.failures("openvino", "2026.4.1", k)[0]]
    assert len(failed) == 1 and " -> " not in failed[0], failed  # one node: the smallest block
    key = failed[0]
    assert key.startswith("com.microsoft:MatMulNBits-1(float,uint8,float,uint8)") and "bits=2" in key
    assert "K=128" in key and FAILING in block_store.found_in("openvino", key)
    (cpu, error), = block_store.failures("openvino", "2026.4.1", key)[0]
    assert "avx512f" in cpu and "could not create a primitive descriptor" in error
    for v in ("2025.3.0", "2026.1.0", "2026.2.1"):  # compiled on the same CPU
        assert block_store.failures("openvino", v, key) == ([], [cpu]), v


def test_qt211_on_the_failing_model_at_2026_4_only(corpus_models):
    found = _qt211(corpus_models[FAILING], "openvino@2026.4")
    assert len(found) == 1 and found[0].severity == "error", found
    msg = found[0].detail
    assert "openvino 2026.4.1 failed to compile this block when measured" in msg
    assert "Intel" in msg and "avx512f" in msg and "inner product forward propagation primitive" in msg
    assert found[0].node == "matmul_6_Q2"  # K = 128; matmul_1_Q2 and matmul_4_Q2 (K = 64) compile


def test_qt211_is_on_the_failing_model_at_2026_4_and_silent_elsewhere(corpus_models):
    """On the 75 models in the 17 releases: QT211 once, where the node probes miss the fault;
    every other release the data says failed the block gets another error on the node."""
    failed = _failed_pairs()
    got = set()
    for name, model in corpus_models.items():
        a = analyze(model, "")  # one analysis a model, asked for each release
        for v in probe_store.releases("openvino"):
            found = predict.findings_in(a, [f"openvino@{minor(v)}"], advice=False)
            if any(f.code == "QT211" for f in found):
                got.add((v, name))
            elif (v, name) in failed:
                assert any(f.severity == "error" and f.node == "matmul_6_Q2" for f in found), (v, name)
    assert got == {("2026.4.1", FAILING)}


def _fake(monkeypatch, hosts: dict, measured: list[str]):
    data = block_store._data("openvino")
    key = next(iter(data["blocks"]))
    fake = {**data, "blocks": {key: [{"since": "2024.0.0", "hosts": hosts}]},
            "releases": {v: {"hosts": {c: {} for c in measured}} for v in data["releases"]}}
    monkeypatch.setattr(block_store, "_data", lambda runtime: fake)
    block_store.failing_heads.cache_clear()
    return key


def test_a_release_measured_on_another_cpu_is_not_claimed(monkeypatch, corpus_models):
    _fake(monkeypatch, {"CPU A (avx2)": "load: no"}, ["CPU B (avx2)"])
    assert _qt211(corpus_models[FAILING], "openvino@2026.4") == []
    _fake(monkeypatch, {"CPU A (avx2)": block_store.RUNS}, ["CPU A (avx2)"])
    assert _qt211(corpus_models[FAILING], "openvino@2026.4") == []
    _fake(monkeypatch, {"CPU A (avx2)": "load: no", "CPU B (avx2)": block_store.RUNS},
          ["CPU A (avx2)", "CPU B (avx2)"])
    (found,) = _qt211(corpus_models[FAILING], "openvino@2026.4")
    assert "on CPU A (avx2): load: no" in found.detail and "it ran on CPU B (avx2)" in found.detail
    block_store.failing_heads.cache_clear()


def test_without_the_data_the_model_gets_no_error(monkeypatch, corpus_models):
    monkeypatch.setattr(block_store, "_data", lambda runtime: {})
    block_store.failing_heads.cache_clear()
    found = predict.findings_in(analyze(corpus_models[FAILING], ""), ["openvino@2026.4"], advice=False)
    assert not [f for f in found if f.severity == "error"]  # the miss the blocks mend
    block_store.failing_heads.cache_clear()


@pytest.mark.remeasure
def test_the_installed_release_fails_the_model_and_its_block_again(tmp_path, corpus_models):
    """On the CPU the data was measured on (else skipped), the installed openvino fails the
    model, and cutting it again finds the same block with the same error."""
    import sys

    import block_cut
    from gen_target_data import host_cpu
    from test_fusion import installed

    v = installed("openvino")
    data = block_store._data("openvino")
    if v not in data.get("releases", {}) or host_cpu() not in data["releases"][v]["hosts"]:
        pytest.skip(f"openvino {v} was not measured on {host_cpu()}")
    release, said = block_cut.run_cases("openvino", sys.executable, str(tmp_path / "m"),
                                        {"m": corpus_models[FAILING]})
    key = next(k for k in data["blocks"] if FAILING in block_store.found_in("openvino", k))
    stored = dict(block_store.failures("openvino", v, key)[0]).get(host_cpu())
    assert release == v and (stored is None) == (said["m"] == block_cut.OK), said["m"]
    if stored is not None:
        cut = block_cut.cut_all("openvino", sys.executable, {FAILING: (corpus_models[FAILING], said["m"])},
                                str(tmp_path / "cut"))
        assert block_cut.key_of_block(cut[FAILING][0]) == key and said["m"] == stored
