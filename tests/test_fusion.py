"""QT501 (runs in float) against onnxruntime's measured QDQ fusion (targets/fusion.py, written
by tools/probe_fusion.py): the data answers every group of the matrix from its key, the code
reads it for the release measured and for no other, and (`make remeasure`) the installed
release agrees with the data on the whole matrix and on onnxruntime's quantizer outputs
(fixtures/corpus.py)."""

from __future__ import annotations

import collections
import os

import onnx
import probe_fusion
import pytest

from qlin_cli.targets import fusion, predict

MEASURED = "1.31.1"


def _installed() -> str | None:
    try:
        from importlib.metadata import version

        return version("onnxruntime")
    except Exception:
        return None


def test_the_data_holds_the_measured_release_without_conflicts():
    table = fusion.table("onnxruntime", MEASURED)
    assert table is not None and table.machine and "probe_fusion.py" in table.command
    assert len(table.outcomes) >= 700
    done = collections.Counter(table.outcomes.values())
    assert done[fusion.FLOAT] > 400 and done["fused into QLinearConv (com.microsoft)"] > 10
    assert fusion.table("onnxruntime", "1.30.0") is None and fusion.table("openvino", "2026.4.1") is None


def test_every_group_of_the_matrix_reads_to_a_measured_key():
    table = fusion.table("onnxruntime", MEASURED)
    specs = probe_fusion.matrix()
    for spec in specs[::12]:  # a twelfth in make test; the remeasure below reads all
        model = probe_fusion.build(spec)
        groups = probe_fusion.group_ops(model)
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
    # measured on x86_64: an int8 MatMul with a Q after it stays float (QLinearMatMul wants uint8 x)
    int8 = _qt501(probe_fusion._spec(op="MatMul", act="int8", bias="none"))
    assert len(int8) == 1 and "MatMulIntegerToFloat" in int8[0].message  # the nearest: no Q after


def test_a_blocked_weight_shared_by_two_matmuls_runs_in_float():
    spec = probe_fusion._spec(op="MatMul", act="float", w="int4", gran="blocked", axis=0, block=32,
                              after="output", bias="none", shared="init")
    found = _qt501(spec)
    assert len(found) == 2 and all("MatMulNBits" in f.message and "shared-init" in f.message for f in found)
    spec["shared"] = ""
    assert _qt501(spec) == []


@pytest.mark.parametrize("target", ["onnxruntime@1.30", "onnxruntime@1.32", "openvino", "tensorrt-10"])
def test_a_release_without_fusion_data_says_nothing(target):
    assert _qt501(probe_fusion._spec(after="output"), target) == []


def _skip_unless_measured_release():
    if _installed() != MEASURED:
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
            got, said = probe_fusion.outcome_of(model, optimized, node), table.outcome(g.text)
            if said is None:
                counts["not measured"] += 1
            elif said == got:
                counts["agree"] += 1
            else:
                wrong.append((name, g.text, said, got))
    assert not wrong
    assert counts["agree"] >= 170, counts  # docs/targets.md: 177 agree, 73 keys not measured
