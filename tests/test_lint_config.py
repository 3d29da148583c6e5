"""Configuration like ruff's: the nearest qlin.toml / pyproject.toml above each checked
file, codes validated with the file named, per-node suppression in the config and in a
node's `qlin:ignore` metadata."""

from __future__ import annotations

import json
import os
import shutil

import onnx
from click.testing import CliRunner
from paths import MODELS

from qlin_cli.cli import main

BAD = os.path.join(MODELS, "rules", "QL405-bad.onnx")  # one QL405 on node 'node0'
BROKEN = os.path.join(MODELS, "broken", "chain.onnx")  # QL501, QL405, QL604 on named nodes


def check(*args, cwd):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        r = CliRunner().invoke(main, ["check", "--format", "json", *map(str, args)])
    finally:
        os.chdir(old)
    doc = json.loads(r.stdout) if r.stdout.strip().startswith("{") else None
    return r.exit_code, doc, r.stderr


def codes(doc):
    return [[d["code"] for d in f["diagnostics"]] for f in doc["files"]]


def _tree(tmp_path):
    for name in ("a", "b"):
        (tmp_path / "proj" / name).mkdir(parents=True)
        shutil.copy(BAD, tmp_path / "proj" / name / "m.onnx")
    (tmp_path / "proj" / "a" / "pyproject.toml").write_text('[tool.qlin]\nignore = ["QL405"]\n')
    (tmp_path / "elsewhere").mkdir()
    return tmp_path / "proj"


def test_each_file_gets_the_config_above_it_whatever_the_working_folder(tmp_path):
    proj = _tree(tmp_path)
    files = [proj / "a" / "m.onnx", proj / "b" / "m.onnx"]
    for cwd in (tmp_path / "elsewhere", proj / "b", proj):
        code, doc, _ = check(*files, cwd=cwd)
        assert codes(doc) == [[], ["QL405"]], cwd
        assert code == 1
    # b/m.onnx has no config above it: the working folder's is its default (as in ruff)
    _, doc, _ = check(*files, cwd=proj / "a")
    assert codes(doc) == [[], []]
    (proj / "b" / "pyproject.toml").write_text('[tool.qlin]\nselect = ["QL"]\n')
    for cwd in (tmp_path / "elsewhere", proj / "a", proj / "b", proj):
        _, doc, _ = check(*files, cwd=cwd)
        assert codes(doc) == [[], ["QL405"]], cwd


def test_qlin_toml_comes_first_and_holds_the_settings_at_top_level(tmp_path):
    proj = _tree(tmp_path)
    (proj / "b" / "qlin.toml").write_text('ignore = ["QL4"]\n')
    (proj / "b" / "pyproject.toml").write_text('[tool.qlin]\nselect = ["QL1"]\n')
    code, doc, _ = check(proj / "b" / "m.onnx", cwd=tmp_path / "elsewhere")
    assert (code, codes(doc)) == (0, [[]])
    (proj / "b" / "qlin.toml").unlink()
    _, doc, _ = check(proj / "b" / "m.onnx", cwd=tmp_path / "elsewhere")
    assert codes(doc) == [[]]  # select QL1: QL405 not run
    (proj / "b" / "pyproject.toml").write_text('[tool.qlin]\nselect = ["QL4"]\n')
    _, doc, _ = check(proj / "b" / "m.onnx", cwd=tmp_path / "elsewhere")
    assert codes(doc) == [["QL405"]]


def test_working_folder_config_is_the_default_for_files_without_one(tmp_path):
    proj = _tree(tmp_path)
    (tmp_path / "elsewhere" / "pyproject.toml").write_text('[tool.qlin]\nignore = ["QL405"]\n')
    _, doc, _ = check(proj / "b" / "m.onnx", cwd=tmp_path / "elsewhere")
    assert codes(doc) == [[]]
    _, doc, _ = check("--no-config", proj / "b" / "m.onnx", cwd=tmp_path / "elsewhere")
    assert codes(doc) == [["QL405"]]


def test_unknown_code_in_config_exits_2_naming_the_file(tmp_path):
    proj = _tree(tmp_path)
    cfg = proj / "b" / "pyproject.toml"
    cfg.write_text('[tool.qlin]\nignore = ["QL999"]\n')
    code, doc, err = check(proj / "b" / "m.onnx", cwd=tmp_path / "elsewhere")
    assert code == 2 and doc is None
    assert err.splitlines() == [f"qlin: error: {cfg}: [tool.qlin] ignore: 'QL999' matches no rule "
                                f"code (see `qlin rules`)"]
    cfg.write_text('[tool.qlin.per-node-ignores]\n"x" = ["ZZ"]\n')
    code, _, err = check(proj / "b" / "m.onnx", cwd=tmp_path / "elsewhere")
    assert code == 2 and str(cfg) in err and "'ZZ' matches no rule code" in err


def test_broken_toml_above_a_checked_file_exits_2_naming_it(tmp_path):
    proj = _tree(tmp_path)
    cfg = proj / "b" / "pyproject.toml"
    cfg.write_text("[tool.qlin\n")
    code, _, err = check(proj / "b" / "m.onnx", cwd=tmp_path / "elsewhere")
    assert code == 2 and err.startswith(f"qlin: error: {cfg}: not valid TOML")


def test_per_node_ignores(tmp_path):
    shutil.copy(BROKEN, tmp_path / "m.onnx")
    _, doc, _ = check("m.onnx", cwd=tmp_path)
    before = [(d["node"], d["code"]) for d in doc["files"][0]["diagnostics"]]
    assert ("weight_q", "QL405") in before and ("weight_q", "QL604") in before
    (tmp_path / "pyproject.toml").write_text(
        '[tool.qlin.per-node-ignores]\n"weight_*" = ["QL405"]\n"input_q" = []\n')
    _, doc, _ = check("m.onnx", cwd=tmp_path)
    after = [(d["node"], d["code"]) for d in doc["files"][0]["diagnostics"]]
    assert after == [x for x in before if x not in {("weight_q", "QL405"), ("weight_dq", "QL405"),
                                                    ("input_q", "QL501")}]
    assert ("weight_q", "QL604") in after


def _with_metadata(tmp_path, node_name, value):
    m = onnx.load(BROKEN)
    node = next(n for n in m.graph.node if n.name == node_name)
    entry = node.metadata_props.add()
    entry.key, entry.value = "qlin:ignore", value
    onnx.save(m, tmp_path / "m.onnx")
    _, doc, _ = check("--no-config", "m.onnx", cwd=tmp_path)
    return [(d["node"], d["code"]) for d in doc["files"][0]["diagnostics"]]


def test_node_metadata_qlin_ignore(tmp_path):
    _, doc, _ = check("--no-config", BROKEN, cwd=tmp_path)
    before = [(d["node"], d["code"]) for d in doc["files"][0]["diagnostics"]]
    assert _with_metadata(tmp_path, "weight_q", "QL405") == [x for x in before if x != ("weight_q", "QL405")]
    assert _with_metadata(tmp_path, "weight_q", "ql6, QL405") == [
        x for x in before if x not in {("weight_q", "QL405"), ("weight_q", "QL604")}]
    assert _with_metadata(tmp_path, "weight_q", "") == [x for x in before if x[0] != "weight_q"]
    assert _with_metadata(tmp_path, "weight_q", "QL1") == before


def test_qlin_toml_errors_name_the_file_and_key(tmp_path):
    proj = _tree(tmp_path)
    cfg = proj / "b" / "qlin.toml"
    cfg.write_text('ignore = ["QL999"]\n')
    code, _, err = check(proj / "b" / "m.onnx", cwd=tmp_path / "elsewhere")
    assert code == 2 and err == (f"qlin: error: {cfg}: ignore: 'QL999' matches no rule code "
                                 f"(see `qlin rules`)\n")
    cfg.write_text('colour = "always"\n')
    code, _, err = check(proj / "b" / "m.onnx", cwd=tmp_path / "elsewhere")
    assert code == 2 and err.startswith(f"qlin: error: {cfg}: has unknown key 'colour'")


def _target_pairs(doc):
    return [(d["node"], d["code"]) for d in doc["files"][0]["diagnostics"]]


def test_qlin_ignore_marks_and_config_apply_to_target_findings(tmp_path):
    """Suppression is decided in one place (check/suppress.py) for rule and target findings
    alike: a node marked ``qlin:ignore=""`` reports nothing for any target, a marked code
    prefix only that, and per-node-ignores / per-path-ignores / --ignore drop QT codes too."""
    from qlin_cli import api

    shutil.copy(BROKEN, tmp_path / "m.onnx")
    _, doc, _ = check("--no-config", "--target", "tensorrt-10", "m.onnx", cwd=tmp_path)
    before = _target_pairs(doc)
    on_q = [c for n, c in before if n == "input_q"]
    assert "QT202" in on_q and "QT306" in on_q and any(c.startswith("QL") for c in on_q)

    m = onnx.load(BROKEN)
    node = next(n for n in m.graph.node if n.name == "input_q")
    entry = node.metadata_props.add()
    entry.key, entry.value = "qlin:ignore", ""
    onnx.save(m, tmp_path / "m.onnx")
    _, doc, _ = check("--no-config", "--target", "tensorrt-10", "m.onnx", cwd=tmp_path)
    assert _target_pairs(doc) == [x for x in before if x[0] != "input_q"]
    found = api.check_model(m, tmp_path, targets=["tensorrt-10"])
    assert [(f.node, f.code) for f in found] == [x for x in before if x[0] != "input_q"]

    entry.value = "QT3"
    onnx.save(m, tmp_path / "m.onnx")
    _, doc, _ = check("--no-config", "--target", "tensorrt-10", "m.onnx", cwd=tmp_path)
    assert _target_pairs(doc) == [x for x in before if not (x[0] == "input_q" and x[1].startswith("QT3"))]

    shutil.copy(BROKEN, tmp_path / "m.onnx")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.qlin]\ntarget = ["tensorrt-10"]\n[tool.qlin.per-node-ignores]\n"input_*" = ["QT202"]\n')
    _, doc, _ = check("m.onnx", cwd=tmp_path)
    assert _target_pairs(doc) == [x for x in before if x[0][:6] != "input_" or x[1] != "QT202"]
    (tmp_path / "pyproject.toml").write_text(
        '[tool.qlin]\ntarget = ["tensorrt-10"]\n[tool.qlin.per-path-ignores]\n"m.onnx" = ["QT"]\n')
    _, doc, _ = check("m.onnx", cwd=tmp_path)
    assert _target_pairs(doc) == [x for x in before if not x[1].startswith("QT")]
    _, doc, _ = check("--no-config", "--target", "tensorrt-10", "--ignore", "QT306", "m.onnx", cwd=tmp_path)
    assert _target_pairs(doc) == [x for x in before if x[1] != "QT306"]


def test_the_config_search_asks_each_folder_once(tmp_path, monkeypatch):
    """A walk of a deep tree looks for qlin.toml / pyproject.toml in each folder once, not
    once per folder below it (a 1,100-level tree took 90 s)."""
    from qlin_cli import config

    (tmp_path / "qlin.toml").write_text('ignore = ["QL405"]\n')
    folders, d = [], tmp_path
    for _ in range(200):
        d = d / "d"
        folders.append(str(d))
    os.makedirs(folders[-1])
    asked = []
    real = os.path.isfile
    monkeypatch.setattr(config.os.path, "isfile", lambda p: asked.append(p) or real(p))
    finder = config.Finder(config.Config(), search=True)
    found = [finder.for_folder(f) for f in folders]
    assert {c.path for c in found} == {str(tmp_path / "qlin.toml")} and found[0].ignore == ["QL405"]
    assert len(asked) <= 2 * len(folders) + 1, len(asked)
    assert len(set(asked)) == len(asked)
