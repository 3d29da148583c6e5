"""The Python API behaves as the command line does (issue: what a new user meets, point 7):
an unknown code is an error, not an empty result; names and paths may be given as one
string; a call with nothing to do says so; a wrong argument type is a TypeError naming
what to pass; `qlin.__version__`, `python -m qlin` and the typing marker exist."""

from __future__ import annotations

import os
import subprocess
import sys

import onnx
import pytest
from paths import MODELS, ROOT

import qlin

BAD = os.path.join(MODELS, "rules", "QL401-bad.onnx")
CLEAN = os.path.join(MODELS, "clean", "per_channel_chain.onnx")


@pytest.mark.parametrize("call", [
    lambda: qlin.check(BAD, select=["QL999"]),
    lambda: qlin.check(BAD, ignore="QL401,XX1"),
    lambda: qlin.check_paths([BAD], select=["QL999"]),
    lambda: qlin.check_model(onnx.load(BAD), select=["QL999"]),
])
def test_an_unknown_code_is_an_error_as_the_flag_is(call):
    with pytest.raises(qlin.QlinError, match="matches no rule code"):
        call()


def test_the_flag_exits_2_on_the_same_code():
    from click.testing import CliRunner

    from qlin_cli.cli import main

    r = CliRunner().invoke(main, ["check", "--select", "QL999", BAD])
    assert r.exit_code == 2 and "matches no rule code" in r.output


def test_names_in_one_string_are_the_flags_comma_separated_names():
    listed = qlin.check(BAD, select=["QL4", "QT405"], targets=["openvino"])
    one = qlin.check(BAD, select="ql4,QT405", targets="openvino")
    assert [f.code for f in one.findings] == [f.code for f in listed.findings]
    assert {"QL401", "QT405"} <= {f.code for f in one.findings}
    assert [f.code for f in qlin.check_model(onnx.load(BAD), targets="openvino")] == \
        [f.code for f in qlin.check_model(onnx.load(BAD), targets=["openvino"])]
    assert qlin.inspect(BAD, targets="openvino") == qlin.inspect(BAD, targets=["openvino"])
    with pytest.raises(qlin.QlinError, match="unknown target"):
        qlin.check(BAD, targets="openvino,nosuch")


def test_one_path_is_a_path_not_its_letters():
    folder = os.path.join(MODELS, "clean")
    assert qlin.discover(folder) == qlin.discover([folder]) != []
    assert [r.path for r in qlin.check_paths(folder)] == [r.path for r in qlin.check_paths([folder])]
    from pathlib import Path

    assert qlin.discover(Path(folder)) == qlin.discover([folder])


def test_a_conversion_with_nothing_to_do_says_so():
    with pytest.raises(qlin.QlinError, match="give a target opset"):
        qlin.convert(CLEAN)
    with pytest.raises(qlin.QlinError, match="give it alone"):
        qlin.convert(CLEAN, target="onnxruntime", to_opset=21)
    assert qlin.convert(CLEAN, to_opset=21).model is not None


def test_wrong_argument_types_name_what_to_pass():
    with pytest.raises(TypeError, match=r"onnx.ModelProto, not str \(for a file, use qlin.check\(path\)\)"):
        qlin.check_model(BAD)
    with pytest.raises(TypeError, match="path of a model file, not ModelProto"):
        qlin.check(onnx.load(BAD))
    with pytest.raises(TypeError, match="names"):
        qlin.check(BAD, select=[401])


def test_version_module_and_typing_marker():
    from importlib import metadata

    assert qlin.__version__ == metadata.version("qlin")
    env = dict(os.environ, PYTHONPATH=ROOT)
    p = subprocess.run([sys.executable, "-m", "qlin", "check", BAD], capture_output=True, text=True,
                       env=env, timeout=120)
    assert p.returncode == 1 and "QL401" in p.stdout, p.stderr
    for package in ("qlin", "qlin_cli"):
        assert os.path.exists(os.path.join(ROOT, package, "py.typed"))
    text = open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8").read()
    assert '"qlin" = ["py.typed"]' in text and '"qlin_cli" = ["py.typed"]' in text


def test_fix_that_cannot_write_fixes_nothing_and_shows_every_finding(tmp_path, monkeypatch):
    """`qlin check --fix` where the model cannot be written (a read-only folder, a full disk;
    simulated: the tests run as root, whom a mode does not stop): "not fixed" on stderr, exit
    2, no "N fixed" in the summary or the JSON, and every finding still printed and counted."""
    import json
    import shutil

    from click.testing import CliRunner

    import qlin_cli.convert.write as write
    from qlin_cli.cli import main
    from qlin_cli.errors import QlinError

    model = tmp_path / "m.onnx"
    shutil.copy(os.path.join(MODELS, "rules", "QL409-bad.onnx"), model)
    before = model.read_bytes()

    def refuse(model_proto, base_dir, path, **kwargs):
        raise QlinError(path, "cannot write: [Errno 13] Permission denied")

    monkeypatch.setattr(write, "write_model", refuse)
    on = ["--select", "QL409"]  # off by default
    plain = CliRunner().invoke(main, ["check", "--jobs", "1", *on, str(model)])
    r = CliRunner().invoke(main, ["check", "--jobs", "1", "--fix", *on, str(model)])
    assert r.exit_code == 2, r.output
    assert "not fixed: cannot write" in r.stderr
    assert r.stdout.splitlines()[:-1] == plain.stdout.splitlines()[:-1]  # every finding shown
    assert "QL409" in r.stdout and "; 0 fixed" in r.stdout.splitlines()[-1]
    j = CliRunner().invoke(main, ["check", "--jobs", "1", "--fix", "--format", "json", *on, str(model)])
    doc = json.loads(j.stdout)
    assert j.exit_code == 2 and doc["summary"]["fixed"] == 0
    assert doc["summary"]["errors"] + doc["summary"]["warnings"] + doc["summary"]["infos"] == \
        len(doc["files"][0]["diagnostics"]) > 0
    assert model.read_bytes() == before


def test_convert_errors_name_the_functions_arguments_not_the_commands_flags(tmp_path):
    import shutil

    model = tmp_path / "m.onnx"
    shutil.copy(CLEAN, model)
    with pytest.raises(qlin.QlinError) as e:
        qlin.convert(model, to_opset=21, output=model)
    assert "never writes over its source" in str(e.value) and "--in-place" not in str(e.value)
    with pytest.raises(qlin.QlinError) as e:
        qlin.convert(model, to_opset=99)
    assert e.value.path == "to_opset" and str(e.value).startswith("to_opset: 99 is outside")
    from click.testing import CliRunner

    from qlin_cli.cli import main

    r = CliRunner().invoke(main, ["convert", str(model), "--to-opset", "99", "--dry-run"])
    assert r.exit_code == 2 and "--to-opset: 99 is outside" in r.stderr  # the command keeps its flags
