"""Rules off by default (``Rule.default = False``, ruff's rules outside its default set): they
run only when a select names them or a prefix of them, on the command line, in [tool.qlin] and
in the API alike. QL409 is one (docs/decisions.md, "One-element scales")."""

from __future__ import annotations

import os
import shutil

import onnx
from click.testing import CliRunner
from paths import MODELS

import qlin
from qlin_cli import codes, rules
from qlin_cli.check.engine import check_file
from qlin_cli.check.suppress import selected
from qlin_cli.cli import main

BAD = os.path.join(MODELS, "rules", "QL409-bad.onnx")


def found(*args, cwd=None):
    r = CliRunner().invoke(main, ["check", "--jobs", "1", "--format", "json", *args])
    import json

    doc = json.loads(r.stdout)
    return [d["code"] for f in doc["files"] for d in f["diagnostics"]]


def test_ql409_is_the_rule_off_by_default():
    assert codes.off_by_default() == {r.code for r in rules.all_rules() if not r.default} == {"QL409"}
    assert not selected("QL409", None, None) and not selected("QL409", [], None)
    assert selected("QL409", ["QL409"], None) and selected("QL409", ["ql4"], None)
    assert not selected("QL409", ["QL409"], ["QL40"]) and selected("QL408", None, None)


def test_the_cli_runs_it_only_when_selected():
    assert found("--no-config", BAD) == []
    assert found("--no-config", "--select", "QL409", BAD) == ["QL409"]
    assert found("--no-config", "--select", "QL4", BAD) == ["QL409"]  # a prefix selects it, as in ruff
    assert found("--no-config", "--select", "QL409", "--ignore", "QL409", BAD) == []
    diff = CliRunner().invoke(main, ["check", "--no-config", "--diff", BAD])
    assert diff.stdout.startswith("0 fixes"), diff.stdout


def test_config_select_turns_it_on(tmp_path):
    shutil.copy(BAD, tmp_path / "m.onnx")
    (tmp_path / "qlin.toml").write_text('select = ["QL409"]\n')
    assert found(str(tmp_path / "m.onnx")) == ["QL409"]
    (tmp_path / "qlin.toml").write_text('select = ["QL"]\n')
    assert found(str(tmp_path / "m.onnx")) == ["QL409"]
    (tmp_path / "qlin.toml").write_text('ignore = ["QL001"]\n')
    assert found(str(tmp_path / "m.onnx")) == []


def test_the_api_runs_it_only_when_selected():
    assert [d.code for d in qlin.check(BAD).diagnostics] == []
    assert [d.code for d in qlin.check(BAD, select=["QL409"]).diagnostics] == ["QL409"]
    model = onnx.load(BAD)
    assert [d.code for d in qlin.check_model(model)] == []
    assert [d.code for d in qlin.check_model(model, select=["QL409"])] == ["QL409"]
    assert [d.code for d in check_file(BAD, ["QL409"]).diagnostics] == ["QL409"]


def test_rules_and_rule_say_it_is_off():
    listed = CliRunner().invoke(main, ["rules", "--format", "json"])
    import json

    off = [c["code"] for c in json.loads(listed.stdout) if not c["default"]]
    assert off == ["QL409"]
    doc = CliRunner().invoke(main, ["rule", "QL409"]).stdout
    assert "Off by default" in doc and "--select QL409" in doc
    assert "Off by default" not in CliRunner().invoke(main, ["rule", "QL408"]).stdout
