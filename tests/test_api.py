"""The Python API (qlin_cli/api.py, ``import qlin``): check, check_model, convert, inspect,
targets; findings as objects; errors as QlinError; nothing printed, no exit."""

from __future__ import annotations

import os
import subprocess
import sys

import onnx
import pytest
from paths import MODELS

import qlin
from qlin_cli.check.engine import check_file

BAD = os.path.join(MODELS, "rules", "QL401-bad.onnx")
CLEAN = os.path.join(MODELS, "clean", "per_channel_chain.onnx")


def test_check_gives_findings_as_objects(capsys):
    result = qlin.check(BAD, config=False)
    assert [f.code for f in result.findings] == [d.code for d in check_file(BAD).diagnostics] == ["QL401"]
    f = result.findings[0]
    assert isinstance(f, qlin.Finding)
    assert (f.severity, f.graph) == ("error", "main") and f.node and f.detail and f.title
    assert capsys.readouterr() == ("", "")  # nothing printed


def test_check_with_targets_select_and_ignore():
    with_targets = qlin.check(BAD, targets=["openvino"], config=False).findings
    assert any(f.target == "openvino" for f in with_targets)
    assert qlin.check(BAD, ignore=["QL4"], config=False).findings == []
    assert [f.code for f in qlin.check(BAD, select=["QL401"], config=False).findings] == ["QL401"]


def test_check_reads_the_nearest_config(tmp_path):
    model = tmp_path / "m.onnx"
    model.write_bytes(open(BAD, "rb").read())
    (tmp_path / "qlin.toml").write_text('ignore = ["QL401"]\n')
    assert qlin.check(model).findings == []
    assert [f.code for f in qlin.check(model, config=False).findings] == ["QL401"]


def test_errors_are_exceptions_not_exits(tmp_path):
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"not a model")
    with pytest.raises(qlin.QlinError) as e:
        qlin.check(junk, config=False)
    assert str(junk) in str(e.value)
    with pytest.raises(qlin.QlinError):
        qlin.check(BAD, targets=["no-such-runtime"], config=False)
    with pytest.raises(qlin.QlinError):
        qlin.convert(BAD, to_opset=21)  # a model with errors is not converted


def test_check_model_in_memory():
    model = onnx.load(BAD)
    assert [f.code for f in qlin.check_model(model, MODELS)] == ["QL401"]


def test_convert_returns_the_model_and_writes_only_when_asked(tmp_path):
    result = qlin.convert(CLEAN, to_opset=21)
    assert result.model is not None and not result.refused
    assert {o.domain: o.version for o in result.model.opset_import}[""] == 21
    out = tmp_path / "o.onnx"
    qlin.convert(CLEAN, to_opset=21, output=out)
    assert onnx.load(out).SerializeToString() == result.model.SerializeToString()


def test_inspect_and_targets():
    scheme = qlin.inspect(CLEAN, targets=["onnxruntime"])
    assert scheme["nodes"] > 0 and [t["target"] for t in scheme["targets"]] == ["onnxruntime"]
    names = {row["name"] for row in qlin.targets()}
    assert {"onnxruntime", "openvino"} <= names


def test_import_qlin_works_from_anywhere(tmp_path):
    p = subprocess.run([sys.executable, "-c", "import qlin; print(sorted(qlin.__all__)[0])"],
                       capture_output=True, text=True, cwd=tmp_path)
    assert p.returncode == 0 and p.stdout.strip() == "Config", p.stderr


def test_discover_and_check_paths_walk_folders_as_the_command_does(tmp_path, capsys):
    import shutil

    for rel in ("models/a.onnx", "models/legacy/b.onnx", ".venv/site-packages/c.onnx"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(BAD, tmp_path / rel)
    (tmp_path / "qlin.toml").write_text('extend-exclude = ["legacy"]\n')
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        assert qlin.discover() == [os.path.join("models", "a.onnx")]
        assert qlin.discover(config=False, exclude=[]) == [
            os.path.join(".venv", "site-packages", "c.onnx"), os.path.join("models", "a.onnx"),
            os.path.join("models", "legacy", "b.onnx")]
        results = qlin.check_paths(["models"], config=False)
        assert [(r.path, [f.code for f in r.findings]) for r in results] == [
            (os.path.join("models", "a.onnx"), ["QL401"]),
            (os.path.join("models", "legacy", "b.onnx"), ["QL401"])]
        (tmp_path / "models" / "junk.onnx").write_bytes(b"not a model")
        broken = {r.path: r.error for r in qlin.check_paths(["models"])}
        assert broken[os.path.join("models", "junk.onnx")] and len(broken) == 2
    finally:
        os.chdir(old)
    assert capsys.readouterr() == ("", "")  # the API prints nothing
