"""`qlin check --target T --confirm` (targets/confirm.py): the model run in the release a target
judges where it is the one installed here, and the runtime's verdict held against qlin's."""

from __future__ import annotations

import importlib.util
import json

import numpy as np
import onnx
import pytest
from click.testing import CliRunner
from onnx import TensorProto, helper, numpy_helper

import qlin
from qlin_cli.cli import main
from qlin_cli.finding import Finding
from qlin_cli.targets import confirm

HAS_ORT = importlib.util.find_spec("onnxruntime") is not None
HAS_OV = importlib.util.find_spec("openvino") is not None


def _reshape(path, shape, batch="n") -> str:
    """x [batch, 6] -> Q -> DQ (uint8) -> Reshape(shape): qlin predicts onnxruntime and
    openvino run it whatever ``shape`` is (its probes are of nodes and chains); [4, -1]
    cannot be (6 elements), and both runtimes fail at run time."""
    inits = [numpy_helper.from_array(np.float32(0.1), "s"), numpy_helper.from_array(np.uint8(128), "z"),
             numpy_helper.from_array(np.array(shape, np.int64), "shape")]
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
             helper.make_node("DequantizeLinear", ["q", "s", "z"], ["d"]),
             helper.make_node("Reshape", ["d", "shape"], ["y"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 6])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, None])], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10), path)
    return str(path)


def _codes(result, code: str) -> list:
    return [f for f in result.findings if f.code == code]


@pytest.mark.skipif(not HAS_ORT, reason="onnxruntime is not installed")
def test_a_model_qlin_predicts_runs_but_the_installed_onnxruntime_refuses(tmp_path):
    import onnxruntime

    path = _reshape(tmp_path / "bad.onnx", [4, -1])
    plain = qlin.check(path, targets="onnxruntime", config=False)
    assert not [f for f in plain.findings if f.severity == "error"]  # the prediction: it runs
    target = f"onnxruntime@{onnxruntime.__version__}"
    result = qlin.check(path, targets=target, config=False, confirm=True)
    [refused] = _codes(result, "QT208")
    assert refused.severity == "error" and refused.node == "model"
    assert "fails at run" in refused.detail and "cannot be reshaped" in refused.detail
    assert "\n" not in refused.detail and "reshape_helper.h" not in refused.detail  # one line, no source
    assert not _codes(result, "QT210")


@pytest.mark.skipif(not HAS_OV, reason="openvino is not installed")
def test_openvino_quotes_its_own_error_through_the_command(tmp_path):
    import openvino

    path = _reshape(tmp_path / "bad.onnx", [4, -1])
    release = openvino.__version__.split("-")[0]
    r = CliRunner().invoke(main, ["check", "--no-config", "--format", "json", "--target",
                                  f"openvino@{release}", "--confirm", path])
    assert r.exit_code == 1, r.output
    [found] = [d for f in json.loads(r.stdout)["files"] for d in f["diagnostics"] if d["code"] == "QT208"]
    assert "conflicts with the reshape pattern" in found["message"]


@pytest.mark.skipif(not HAS_ORT, reason="onnxruntime is not installed")
def test_a_model_both_agree_on_gets_nothing_more(tmp_path):
    import onnxruntime

    path = _reshape(tmp_path / "good.onnx", [3, -1])
    result = qlin.check(path, targets=f"onnxruntime@{onnxruntime.__version__}", config=False, confirm=True)
    assert not [f for f in result.findings if f.code in ("QT208", "QT209", "QT210")]


def test_a_release_not_installed_or_not_run_is_said_not_confirmed(tmp_path, monkeypatch):
    path = _reshape(tmp_path / "good.onnx", [3, -1])
    monkeypatch.setitem(confirm._INSTALLED, "onnxruntime", "0.0.1")  # as if a run had said so
    result = qlin.check(path, targets="onnxruntime@1.20,tensorrt,onnxruntime>=1.18,<1.21", config=False,
                        confirm=True)
    why = [f.detail for f in _codes(result, "QT210")]
    assert all(f.severity == "info" for f in _codes(result, "QT210")) and len(why) == 3, why
    assert "the release judged is onnxruntime 1.20.1, the one installed here 0.0.1" in why[0]
    assert "qlin runs onnxruntime and openvino only" in why[1]
    assert "it judges 3 releases" in why[2]
    assert not _codes(result, "QT208")
    with pytest.raises(qlin.QlinError, match="give targets"):
        qlin.check(path, config=False, confirm=True)
    r = CliRunner().invoke(main, ["check", "--no-config", "--confirm", path])
    assert r.exit_code == 2 and "--confirm" in r.output


def test_a_runtime_that_is_missing_crashes_or_hangs_ends_its_run_only(tmp_path, monkeypatch):
    path = _reshape(tmp_path / "good.onnx", [3, -1])
    # what the runner's subprocess says, read back (confirm._read)
    assert confirm._read("openvino", "2026.4.1", '{"missing": "No module named \'openvino\'"}\n', 0).skipped \
        == "openvino is not installed here (No module named 'openvino')"
    crashed = confirm._read("openvino", "2026.4.1", 'noise\n{"version": "2026.4.1"}\n{"stage": "load"}\n'
                            '{"stage": "compile"}\n', -11)
    assert crashed.stage == "crash" and crashed.error == "the process ended at compile (killed by SIGSEGV) " \
                                                         "without a verdict"
    monkeypatch.delitem(confirm._INSTALLED, "openvino", raising=False)
    attempt = confirm.run_attempt
    monkeypatch.setattr(confirm, "run_attempt", lambda *args: crashed)
    result = qlin.check(path, targets="openvino", config=False, confirm=True)
    [found] = _codes(result, "QT208")
    assert "crashed where qlin predicted no error" in found.detail and "SIGSEGV" in found.detail

    def hang(*args, **kwargs):
        import subprocess

        raise subprocess.TimeoutExpired(args[0], confirm.TIMEOUT)

    monkeypatch.setattr(confirm.subprocess, "run", hang)
    outcome = attempt("openvino", "2026.4.1", path, {"x": ([1, 6], 1)})
    assert outcome.skipped == f"openvino 2026.4.1 did not end in {confirm.TIMEOUT:g} s"


def test_a_prediction_the_runtime_disproves_and_inputs_that_cannot_be_made(tmp_path, monkeypatch):
    path = _reshape(tmp_path / "good.onnx", [3, -1])
    predicted = Finding("QT205", "error", "refused", "#1", "DequantizeLinear", "", 21, "main",
                        target="onnxruntime")
    [found] = confirm.confirm_findings(path, ["onnxruntime"], [predicted],
                                       attempt=lambda *a: confirm.Outcome(ran=True))
    assert found.code == "QT209" and found.severity == "warning" and "(QT205)" in found.detail
    both_fail = confirm.confirm_findings(path, ["onnxruntime"], [predicted],
                                         attempt=lambda *a: confirm.Outcome(stage="load", error="no"))
    assert both_fail == []
    # a symbolic dimension is fed as 1; a string input cannot be made
    assert confirm.feeds(path) == {"x": ([1, 6], TensorProto.FLOAT)}
    strings = _reshape(tmp_path / "s.onnx", [3, -1])
    model = onnx.load(strings)
    model.graph.input[0].type.tensor_type.elem_type = TensorProto.STRING
    onnx.save(model, strings)
    [found] = confirm.confirm_findings(strings, ["onnxruntime"], [], attempt=lambda *a: pytest.fail("ran"))
    assert found.code == "QT210" and "the inputs cannot be made: 'x' holds string" in found.detail
