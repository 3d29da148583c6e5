"""QT501 (runs in float) against onnxruntime's measured QDQ fusion (targets/fusion.py, written
by tools/probe_fusion.py): the data holds every release qlin predicts, each answering every
group of the matrix from its key; the code reads the judged release's own outcomes (1.20
runs a Conv with a float bias in float, 1.21 fuses it; the opset's range and a MaxPool's Q
fanning out are facts of the key), and (`make remeasure`) the installed
release agrees with the data on the whole matrix and on onnxruntime's quantizer outputs
(fixtures/corpus.py)."""

from __future__ import annotations

import collections
import os

import onnx
import probe_fusion
import pytest

from qlin_cli.targets import fusion, predict, probe_store

MEASURED = "1.31.1"


def installed(package: str) -> str | None:
    """The installed release of ``package`` (None without it)."""
    try:
        from importlib.metadata import version

        return version(package)
    except Exception:
        return None


def test_the_data_holds_the_measured_release_without_conflicts():
    table = fusion.table("onnxruntime", MEASURED)
    assert table is not None and table.machine and "probe_fusion.py" in table.command
    assert len(table.outcomes) >= 900
    done = collections.Counter(table.outcomes.values())
    assert done[fusion.FLOAT] > 400 and done["fused into QLinearConv (com.microsoft)"] > 10
    assert fusion.table("onnxruntime", "1.30") is None and fusion.table("openvino", "2026.3.0") is None


def test_an_outcome_is_read_by_its_key_alone(monkeypatch):
    """A check asks a release for the outcomes of its model's groups: each is read from the
    key's entry, the file is not parsed whole, and every key reads as the whole file has it."""
    from qlin_cli.targets import data_files

    whole = data_files.read(fusion.FILE)["groups"]
    fusion.table.cache_clear()
    data_files.block.cache_clear()
    monkeypatch.setattr(data_files, "read", lambda name: pytest.fail("the whole file was parsed"))
    monkeypatch.setattr(data_files, "raw", lambda name: pytest.fail("the whole file was decompressed"))
    try:
        for version in ("1.18.1", MEASURED):
            table = fusion.table("onnxruntime", version)
            key = sorted(whole)[len(whole) // 2]
            assert table.outcome(key) == whole[key]["outcomes"][version]
            assert table.outcome("MatMul(no such group) -> output") is None
            assert "_entries" in vars(table) and "outcomes" not in vars(table)  # nothing walked
        monkeypatch.undo()
        table = fusion.table("onnxruntime", MEASURED)
        want = {k: e["outcomes"][MEASURED] for k, e in whole.items() if MEASURED in e["outcomes"]}
        assert table.outcomes == want
    finally:
        fusion.table.cache_clear()


def test_every_release_qlin_predicts_is_measured_on_every_key_of_the_matrix():
    keys = set(fusion.table("onnxruntime", MEASURED).outcomes)
    for version in probe_store.releases("onnxruntime"):  # docs/targets.md: 1.18.1 .. 1.32.0
        table = fusion.table("onnxruntime", version)
        assert table is not None and table.machine == "x86_64", version
        assert "--python VENV/bin/python" in table.command or version == MEASURED, version
        assert set(table.outcomes) == keys, version


def test_the_releases_differ_as_measured():
    def integer(version):
        table = fusion.table("onnxruntime", version)
        return sum(o.startswith(fusion.INTEGER) for o in table.outcomes.values())

    # 1.18 reads no int4 / uint4 tensor, 1.19 no QLinearMatMul-21; 1.21 leaves a MatMul or Gemm
    # with a Relu / Clip before its Q in float; 1.25 makes MatMulNBits of 8-bit blocked
    # weights, 1.32 of non-blocked ones beside 16-bit activations too
    assert integer("1.18.1") < integer("1.19.2") < integer("1.20.1") > integer("1.21.1")
    assert integer("1.24.4") < integer("1.25.1") and integer("1.31.1") < integer("1.32.0")
    key = "MatMul(float, int4 blocked axis=0 block=32 sym const) -> output"
    assert fusion.table("onnxruntime", "1.18.1").outcome(key).startswith("load: ")
    assert fusion.table("onnxruntime", "1.19.2").outcome(key) == "fused into MatMulNBits (com.microsoft)"


def test_every_group_of_the_matrix_reads_to_a_measured_key():
    table = fusion.table("onnxruntime", MEASURED)
    specs = probe_fusion.matrix()
    for spec in specs[::12]:  # a twelfth in make test; the remeasure below reads all
        model = probe_fusion.build(spec)
        groups = probe_fusion.measured_groups(model)  # (a "before_" helper op's key: its own cases')
        assert groups and all(table.outcome(g.text) is not None for _, g in groups), spec


def _qt501(spec: dict, target: str = "onnxruntime@1.31") -> list:
    model = probe_fusion.build(spec)
    return [f for f in predict.findings(model, ".", target) if f.code == "QT501"]


def test_an_unfused_conv_is_said_with_the_way_out_and_a_fused_one_is_silent():
    found = _qt501(probe_fusion._spec(after="output"))  # no QuantizeLinear after the Conv
    assert len(found) == 1 and found[0].severity == "warning"
    assert "runs in float" in found[0].message and "'Q uint8' instead of 'output'" in found[0].message
    assert "QLinearConv" in found[0].message
    assert _qt501(probe_fusion._spec()) == []  # uint8 x, int8 weights, a Q after: QLinearConv
    assert _qt501(probe_fusion._spec(act="int8")) == []  # QLinearConv takes int8 x too
    # measured on x86_64: an int8 MatMul is fused too, into QLinearMatMul with a Q after it once
    # onnxruntime has turned its int8 Q/DQ pairs into uint8 ones (QDQS8ToU8Transformer: the node
    # keeps its name, its output gets another), into MatMulIntegerToFloat without one
    for after in ("q", "output"):
        assert _qt501(probe_fusion._spec(op="MatMul", act="int8", bias="none", after=after)) == []


def test_a_blocked_weight_shared_by_two_matmuls_runs_in_float():
    spec = probe_fusion._spec(op="MatMul", act="float", w="int4", gran="blocked", axis=0, block=32,
                              after="output", bias="none", shared="init")
    found = _qt501(spec)
    assert len(found) == 2 and all("MatMulNBits" in f.message and "shared-init" in f.message for f in found)
    spec["shared"] = ""
    assert _qt501(spec) == []


def test_each_release_answers_from_its_own_measurement():
    """A Conv with a float bias: 1.18 .. 1.20 leave its group in float, 1.21 on fuse it."""
    spec = probe_fusion._spec(bias="float")
    key = "Conv(uint8 tensor, int8 tensor sym const, float) -> Q uint8"
    assert [g.text for _, g in probe_fusion.group_ops(probe_fusion.build(spec))] == [key]
    assert fusion.table("onnxruntime", "1.20.1").outcome(key) == fusion.FLOAT
    assert fusion.table("onnxruntime", "1.21.1").outcome(key) == "fused into QLinearConv (com.microsoft)"
    for target, release in (("onnxruntime@1.18", "1.18.1"), ("onnxruntime@1.20", "1.20.1")):
        found = _qt501(spec, target)
        assert len(found) == 1 and f"is not fused by onnxruntime {release} on x86_64" in found[0].message
        assert "bias 'int32 tensor sym const' instead of 'float'" in found[0].message
    for target in ("onnxruntime@1.21", "onnxruntime@1.31", "onnxruntime@1.32", "onnxruntime>=1.21"):
        assert _qt501(spec, target) == [], target
    assert len(_qt501(spec, "onnxruntime>=1.18")) == 1  # a range: the releases that leave it in float


def test_the_opset_below_21_is_a_fact_of_the_key():
    """1.18 and 1.19 fuse a MatMul with a Q after it into the model's opset's QLinearMatMul: at
    opset 21 QLinearMatMul-21, which they have no kernel for (the model fails to load), at
    opset 13 QLinearMatMul-10; 1.20 on fuse both."""
    spec = probe_fusion._spec(op="MatMul", bias="none")
    new, old = (probe_fusion.group_ops(probe_fusion.build(dict(spec, opset=v)))[0][1] for v in (21, 13))
    assert old.text == new.text + ", opset<21" and fusion.Group.from_json(old.to_json()) == old
    for version in ("1.18.1", "1.19.2"):
        table = fusion.table("onnxruntime", version)
        assert "QLinearMatMul(21)" in table.outcome(new.text), version
        assert table.outcome(old.text) == "fused into QLinearMatMul", version
    table = fusion.table("onnxruntime", "1.20.1")
    assert table.outcome(new.text) == table.outcome(old.text) == "fused into QLinearMatMul"


def test_a_maxpool_below_opset_12_or_an_int8_one_whose_q_fans_out_runs_in_float():
    """Found on onnxruntime's quantizer outputs: the Q/DQ around MaxPool-10 / -11 are kept
    (DropQDQNodesRules take MaxPool-12), and an int8 MaxPool whose Q's output is read twice
    keeps them (x86's int8 -> uint8 conversion passes that Q by), in every release."""
    cases = {(11, "uint8", False): fusion.FLOAT, (13, "uint8", False): fusion.DROPPED,
             (21, "int8", True): fusion.FLOAT, (21, "uint8", True): fusion.DROPPED}
    for (opset, act, fan), want in cases.items():
        spec = probe_fusion._spec(op="MaxPool", act=act, after="q_same", opset=opset, fan=fan)
        key = probe_fusion.group_ops(probe_fusion.build(spec))[0][1].text
        assert ("fan-out" in key) == fan and ("opset<12" in key) == (opset == 11), key
        for version in probe_store.releases("onnxruntime"):
            assert fusion.table("onnxruntime", version).outcome(key) == want, (key, version)
    found = _qt501(probe_fusion._spec(op="MaxPool", act="uint8", after="q_same", opset=11))
    assert len(found) == 1 and "; it runs on the quantized tensor with ai.onnx opset" in found[0].message
    assert found[0].message.endswith("instead of below 12: change the group so")


@pytest.mark.parametrize("target", ["openvino@2026.1", "tensorrt-10"])
def test_a_target_without_fusion_data_says_nothing(target):
    assert _qt501(probe_fusion._spec(after="output"), target) == []


def tally(counts, wrong: list, name: str, key: str, said: str | None, got: str) -> None:
    """Count a group of a quantizer output: not measured (no outcome stored), agree (the
    stored outcome is what the runtime did), or a disagreement kept in ``wrong``."""
    if said is None:
        counts["not measured"] += 1
    elif said == got:
        counts["agree"] += 1
    else:
        wrong.append((name, key, said, got))


def _skip_unless_measured_release():
    if installed("onnxruntime") != MEASURED:
        pytest.skip(f"onnxruntime {MEASURED} is not the one installed")


@pytest.mark.remeasure
def test_the_installed_release_agrees_with_the_data_on_the_matrix(tmp_path):
    import sys

    _skip_unless_measured_release()
    release, found, conflicts = probe_fusion.measure(sys.executable, str(tmp_path))
    assert release.split()[0] == MEASURED and not conflicts
    table = fusion.table("onnxruntime", MEASURED)
    assert release.split()[1] == table.machine, "measured on another machine"
    differ = {k: (table.outcome(k), d) for k, (d, _) in found.items() if table.outcome(k) != d}
    assert not differ
    assert len(found) == len(table.outcomes)


@pytest.mark.remeasure
def test_the_prediction_agrees_with_the_installed_release_on_the_quantizer_outputs(tmp_path):
    import corpus
    import onnxruntime as ort

    _skip_unless_measured_release()
    table = fusion.table("onnxruntime", MEASURED)
    names = [c.name for c in corpus.CONFIGS
             if c.name not in corpus.KNOWN_FAILURES and c.fmt == "QDQ" and c.quantizer == "quantize_static"]
    counts: collections.Counter = collections.Counter()
    wrong = []
    for name, path in corpus.build(tmp_path, names).items():
        options = ort.SessionOptions()
        options.log_severity_level = 4
        options.optimized_model_filepath = os.fspath(path) + ".opt.onnx"
        ort.InferenceSession(os.fspath(path), options, providers=["CPUExecutionProvider"])
        model, optimized = onnx.load(path), onnx.load(options.optimized_model_filepath)
        for node, g in probe_fusion.group_ops(model):
            tally(counts, wrong, name, g.text, table.outcome(g.text),
                  probe_fusion.outcome_of(model, optimized, node))
    assert not wrong
    assert counts["agree"] >= 170, counts  # docs/targets.md: 177 agree, 73 keys not measured
