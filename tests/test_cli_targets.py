"""`qlin check --target`, `qlin targets` and `qlin convert --target` on the command line."""

from __future__ import annotations

import json
import os

import numpy as np
import onnx
import pytest
from builders import qdq_model
from click.testing import CliRunner
from paths import MODELS

from qlin_cli.cli import main

ort = pytest.importorskip("onnxruntime")
QUARK = os.path.join(MODELS, "clean", "quark_int16.onnx")
CLEAN = os.path.join(MODELS, "clean", "per_channel_chain.onnx")


def cli(*args, cwd=None):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_targets_lists_every_target_with_its_sources():
    r = cli("targets", "--format", "json")
    assert r.exit_code == 0
    rows = json.loads(r.output)["targets"]
    names = {row["name"] for row in rows}
    assert {"onnxruntime", "openvino", "tensorrt-10", "tensorrt-11"} <= names
    assert all(row["sources"] for row in rows)
    text = cli("targets")
    assert text.exit_code == 0 and "onnxruntime" in text.output and "docs/targets.md" in text.output


def test_check_target_reports_what_the_runtime_refuses():
    r = cli("check", "--no-config", "--format", "json", "--target", "onnxruntime", QUARK)
    assert r.exit_code == 1
    codes = [d["code"] for d in json.loads(r.output)["files"][0]["diagnostics"]]
    assert "QT104" in codes
    # the spec alone finds nothing wrong with it
    assert cli("check", "--no-config", QUARK).exit_code == 0


def test_check_target_unknown_is_one_line():
    r = cli("check", "--no-config", "--target", "onnxruntime,cuda-maybe", QUARK)
    assert r.exit_code == 2 and "unknown target 'cuda-maybe'" in r.stderr


def test_target_from_config(tmp_path, monkeypatch):
    import shutil

    shutil.copy(QUARK, tmp_path / "m.onnx")
    (tmp_path / "pyproject.toml").write_text('[tool.qlin]\ntarget = ["onnxruntime"]\n')
    monkeypatch.chdir(tmp_path)
    r = cli("check", "m.onnx")
    assert r.exit_code == 1 and "QT104" in r.output
    (tmp_path / "pyproject.toml").write_text('[tool.qlin]\ntarget = ["tpu-of-dreams"]\n')
    r = cli("check", "m.onnx")
    assert r.exit_code == 2 and "pyproject.toml" in r.stderr and "tpu-of-dreams" in r.stderr


def test_convert_target_makes_the_model_run_in_onnxruntime(tmp_path):
    out = tmp_path / "o.onnx"
    r = cli("convert", QUARK, "--target", "onnxruntime", "-o", out)
    assert r.exit_code == 0, r.output + r.stderr
    assert cli("check", "--no-config", "--target", "onnxruntime", out).exit_code == 0
    sess = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    feeds = {i.name: np.ones([d if isinstance(d, int) else 1 for d in i.shape], np.float32)
             for i in sess.get_inputs()}
    assert sess.run(None, feeds)


def test_convert_target_when_nothing_helps_names_why(tmp_path):
    """bfloat16 x: no onnxruntime CPU kernel quantizes it, at any opset or in any domain."""
    model = qdq_model(opset=21, x_type="bfloat16", scale=np.float32(0.5), scale_type="bfloat16",
                      zero_point=np.int8(0), zp_type="int8")
    src = tmp_path / "m.onnx"
    onnx.save(model, src)
    r = cli("convert", src, "--target", "onnxruntime", "-o", tmp_path / "o.onnx")
    assert r.exit_code == 1 and not (tmp_path / "o.onnx").exists()
    assert "no conversion makes onnxruntime run it" in r.stderr and "QT202" in r.stderr


def test_convert_target_and_an_opset_conflict(tmp_path):
    r = cli("convert", QUARK, "--target", "onnxruntime", "--to-opset", "13", "-o", tmp_path / "o.onnx")
    assert r.exit_code == 2 and "give it alone" in r.stderr


def test_a_model_that_already_runs_is_copied_unchanged(tmp_path):
    """-o always gets a file on success: a pipeline's next step reads it."""
    r = cli("convert", CLEAN, "--target", "onnxruntime", "-o", tmp_path / "o.onnx")
    assert r.exit_code == 0 and "already runs on onnxruntime" in r.output
    assert "a copy of the source, unchanged" in r.output
    assert onnx.load(tmp_path / "o.onnx") == onnx.load(CLEAN)
    dry = cli("convert", CLEAN, "--target", "onnxruntime", "--dry-run", "--format", "json")
    assert dry.exit_code == 0 and json.loads(dry.stdout)["status"] == "unchanged"


def test_target_codes_are_documented_like_rules():
    r = cli("rule", "QT104")
    assert r.exit_code == 0
    for section in ("## What it checks", "## Why is this bad?", "## Example", "## Fix"):
        assert section in r.output
    listed = cli("rules", "--format", "json")
    codes = {row["code"] for row in json.loads(listed.output)}
    assert {"QL405", "QT104", "QT408"} <= codes


def test_convert_target_unknown_is_one_line(tmp_path):
    r = cli("convert", QUARK, "--target", "mystery-npu", "-o", tmp_path / "o.onnx")
    assert r.exit_code == 2 and not (tmp_path / "o.onnx").exists()
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "unknown target 'mystery-npu'" in lines[0]
