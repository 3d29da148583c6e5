"""`qlin check`, `qlin rules` and `qlin rule` as a user runs them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from click.testing import CliRunner
from paths import MODELS, ROOT

from qlin_cli import rules
from qlin_cli.cli import main
from qlin_cli.rules.base import SECTIONS


def run(*args):
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def model(rel):
    return os.path.join(MODELS, rel)


def test_clean_model_exits_0():
    code, out, _ = run("check", model("clean/blocked_int4.onnx"))
    assert code == 0
    assert "0 errors" in out


def test_error_exits_1_and_names_file_node_code():
    code, out, _ = run("check", model("rules/QL405-bad.onnx"))
    assert code == 1
    path = model("rules/QL405-bad.onnx")
    assert out.splitlines()[0].startswith(f"{path}:main:node0: QL405 error [QuantizeLinear-21 ai.onnx] ")


def test_warning_only_exits_0():
    code, out, _ = run("check", model("rules/QL303-bad.onnx"))
    assert code == 0
    assert "QL303" in out and "1 warning" in out


def test_json_contract():
    code, out, _ = run("check", "--format", "json", model("rules/QL501-bad.onnx"),
                       model("rules/QL501-ok.onnx"))
    assert code == 1
    doc = json.loads(out)
    assert doc["version"] == 2
    assert [os.path.basename(f["path"]) for f in doc["files"]] == ["QL501-bad.onnx", "QL501-ok.onnx"]
    d = doc["files"][0]["diagnostics"][0]
    assert set(d) == {"code", "severity", "message", "title", "node", "op_type", "domain", "opset",
                      "graph", "fix"}
    assert d["title"] == "QuantizeLinear-21 ai.onnx" and not d["message"].startswith("node ")
    assert (d["code"], d["severity"], d["node"], d["op_type"], d["domain"], d["opset"], d["graph"]) == (
        "QL501", "error", "node0", "QuantizeLinear", "ai.onnx", 21, "main")
    assert doc["files"][0]["error"] is None
    assert [f["nodes"] for f in doc["files"]] == [1, 1]
    assert doc["summary"] == {"files": 2, "unchecked": 0, "nodes": 2, "errors": 1, "warnings": 0,
                              "infos": 0}


def test_directory_is_searched_recursively_for_onnx_files():
    code, out, _ = run("check", "--format", "json", os.path.join(MODELS, "scopes"))
    doc = json.loads(out)
    assert doc["summary"]["files"] == 6
    assert code == 1


def test_select_and_ignore_by_code_and_prefix():
    path = model("broken/chain.onnx")
    _, out, _ = run("check", "--format", "json", "--select", "QL5", path)
    assert {d["code"] for d in json.loads(out)["files"][0]["diagnostics"]} == {"QL501"}
    _, out, _ = run("check", "--format", "json", "--ignore", "QL501,QL405,QL604", path)
    assert json.loads(out)["files"][0]["diagnostics"] == []
    code, _, err = run("check", "--select", "XX9", path)
    assert code == 2 and "matches no rule" in err


def test_bad_inputs_exit_2_with_one_line_and_others_still_checked(tmp_path):
    empty = tmp_path / "empty.onnx"
    empty.write_bytes(b"")
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(os.urandom(64) + b"\xff\xff\xff")
    text = tmp_path / "text.onnx"
    text.write_text("hello, this is not a model\n")
    missing = tmp_path / "missing.onnx"
    good = model("rules/QL405-bad.onnx")
    code, out, err = run("check", "--format", "json", str(empty), str(junk), str(text),
                         str(missing), good)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 4
    for line, name in zip(lines, ["empty.onnx", "junk.onnx", "text.onnx", "missing.onnx"], strict=True):
        assert line.startswith("qlin: error: ") and name in line
    assert "Traceback" not in err
    doc = json.loads(out)
    assert doc["files"][4]["diagnostics"][0]["code"] == "QL405"
    assert all(f["error"] for f in doc["files"][:4])


def test_rules_json_lists_every_rule():
    code, out, _ = run("rules", "--format", "json")
    assert code == 0
    items = json.loads(out)
    from qlin_cli.convert import codes as convert_codes
    from qlin_cli.targets import codes as target_codes

    # the spec rules, then the deployment targets' codes (`qlin check --target`), then
    # convert's refusals
    assert [i["code"] for i in items] == ([r.code for r in rules.all_rules()]
                                          + [c.code for c in target_codes.all_codes()]
                                          + [c.code for c in convert_codes.all_codes()])
    assert all(set(i) == {"code", "name", "severity", "summary", "fixable", "default"} for i in items)
    assert len(items) >= 20


@pytest.mark.parametrize("rule", rules.all_rules(), ids=lambda r: r.code)
def test_rule_doc_has_every_section(rule):
    code, out, _ = run("rule", rule.code.lower())
    assert code == 0
    for section in SECTIONS:
        assert f"## {section}" in out, (rule.code, section)
    assert rule.name in out


def test_unknown_rule_exits_2():
    code, _, err = run("rule", "QL999")
    assert code == 2 and "no rule" in err


def test_console_script_and_module_entry_points():
    exe = shutil.which("qlin", path=os.path.dirname(sys.executable))
    assert exe, "console script `qlin` not installed"
    p = subprocess.run([exe, "check", model("rules/QL401-bad.onnx")], capture_output=True, text=True)
    assert p.returncode == 1 and "QL401" in p.stdout
    p = subprocess.run([sys.executable, "-m", "qlin_cli", "rules"], capture_output=True, text=True,
                       cwd=ROOT)
    assert p.returncode == 0 and "QL101" in p.stdout
