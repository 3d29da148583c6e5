"""Start-up and packaging: `qlin rules` / `qlin rule` without onnx, the rule metadata read
from source equal to the registry's, onnxruntime only a test dependency, an empty folder a
warning, error lines never glued onto the progress bar."""

from __future__ import annotations

import ast
import io
import os
import subprocess
import sys
import time

import pytest
import source_trees
from click.testing import CliRunner
from paths import ROOT

from qlin_cli import rule_docs, rules
from qlin_cli.cli import main

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib


def _modules_after(argv) -> set[str]:
    probe = ("import sys\nfrom qlin_cli.cli import main\n"
             f"try:\n    main({argv!r})\nexcept SystemExit:\n    pass\n"
             "print('MODULES', sorted({m.split('.')[0] for m in sys.modules}))\n")
    p = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    line = next(x for x in p.stdout.splitlines() if x.startswith("MODULES"))
    return set(ast.literal_eval(line[len("MODULES "):]))


@pytest.mark.parametrize("argv", [["rules"], ["rules", "--format", "json"], ["rule", "QL409"],
                                  ["rule", "QC102"]])
def test_rules_and_rule_import_neither_onnx_nor_numpy(argv):
    assert not _modules_after(argv) & {"onnx", "numpy", "onnxruntime", "ml_dtypes", "rich"}


def test_rules_in_a_pipe_are_plain_columns():
    import subprocess as sp

    p = sp.run([sys.executable, "-m", "qlin_cli", "rules"], capture_output=True, text=True)
    lines = p.stdout.splitlines()
    assert lines[0].split() == ["code", "name", "severity", "fix", "default", "summary"]
    row = next(x for x in lines if x.startswith("QL409 "))
    assert row.split()[:5] == ["QL409", "one-element-scale", "info", "yes", "off"]  # off by default
    from qlin_cli.convert import codes as convert_codes
    from qlin_cli.targets import codes as target_codes

    assert len(lines) == 1 + len(rules.all_rules()) + len(target_codes.all_codes()) + len(
        convert_codes.all_codes())
    assert [x.split()[0][:2] for x in lines[1:]] == sorted(
        (x.split()[0][:2] for x in lines[1:]), key=("QL", "QT", "QC").index)


def test_rule_metadata_from_source_equals_the_registry():
    from_source = rule_docs._read()
    imported = {r.code: r for r in rules.all_rules()}
    assert set(from_source) == set(imported)
    for code, r in imported.items():
        d = from_source[code]
        assert (d.name, d.severity, d.summary, d.fixable, d.default, d.doc()) == (
            r.name, r.severity, r.summary, bool(r.fixable), bool(r.default), r.doc()), code


def test_cleandoc_equals_inspects_on_every_code_and_odd_layouts():
    import inspect

    from qlin_cli.severity import cleandoc
    from qlin_cli.targets import codes as target_codes

    docs = [r.__doc__ for r in rules.all_rules()] + [c.__doc__ for c in target_codes.all_codes()]
    docs += ["", "\n\n", "one", "  first\n    a\n      b\n\n", "\n\tx\n\t  y\n", "a\n\n  b\n c  \n"]
    for doc in docs:
        assert cleandoc(doc) == inspect.cleandoc(doc), doc


def test_one_rule_read_from_its_own_module_equals_the_registry():
    # `qlin rule CODE` reads the rule's module and the base modules only
    for r in rules.all_rules():
        d = rule_docs._read(r.code.lower() + "_")[r.code]
        assert (d.name, d.severity, d.summary, d.fixable, d.default, d.doc()) == (
            r.name, r.severity, r.summary, bool(r.fixable), bool(r.default), r.doc()), r.code
    from qlin_cli import codes

    for c in codes.all_codes():
        assert codes.get(c.code.lower()) == c
    assert codes.get("QL999") is None and codes.get("QT9/9") is None and codes.get("XX101") is None


def test_rules_output_unchanged_by_reading_source():
    out = CliRunner().invoke(main, ["rules", "--format", "json"]).stdout
    import json

    from qlin_cli.convert import codes as convert_codes
    from qlin_cli.targets import codes as target_codes

    listed = json.loads(out)
    assert listed[:len(rules.all_rules())] == [
        {"code": r.code, "name": r.name, "severity": r.severity, "summary": r.summary,
         "fixable": r.fixable, "default": r.default} for r in rules.all_rules()]
    assert [i["code"] for i in listed[len(rules.all_rules()):]] == [
        c.code for c in [*target_codes.all_codes(), *convert_codes.all_codes()]]


def test_onnxruntime_is_a_dev_dependency_only():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        project = tomllib.load(f)["project"]
    names = [d.split(">")[0].split("=")[0].split(";")[0].strip() for d in project["dependencies"]]
    assert "onnxruntime" not in names
    assert any(d.startswith("onnxruntime") for d in project["optional-dependencies"]["dev"])
    # and no module of qlin imports it, but where a command needs it, inside a function:
    # `convert --to-format qdq` measures a com.microsoft node against the runtime that
    # defines it (without onnxruntime such a node is refused, saying so); `check --confirm` runs
    # targets/runner.py in a subprocess (without the runtime it says so: QT210)
    needs = {os.path.join("convert", "formats", "measure.py"), os.path.join("targets", "runner.py")}
    for folder, _, files in os.walk(os.path.join(ROOT, "qlin_cli")):
        for name in files:
            if name.endswith(".py"):
                tree = source_trees.tree(os.path.join(folder, name))
                if os.path.relpath(os.path.join(folder, name), os.path.join(ROOT, "qlin_cli")) in needs:
                    top = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
                    tree = ast.Module(body=top, type_ignores=[])  # its module level imports no runtime
                for node in ast.walk(tree):
                    if isinstance(node, ast.Import):
                        mods = [a.name for a in node.names]
                    elif isinstance(node, ast.ImportFrom):
                        mods = [node.module or ""]
                    else:
                        continue
                    assert not any(m.split(".")[0] == "onnxruntime" for m in mods), (name, mods)


def test_empty_folder_is_a_warning_and_exit_0(tmp_path):
    (tmp_path / "empty" / "deeper").mkdir(parents=True)
    r = CliRunner().invoke(main, ["check", "--no-config", str(tmp_path / "empty")])
    assert r.exit_code == 0
    assert r.stderr == f"qlin: warning: {tmp_path / 'empty'}: directory holds no .onnx files\n"
    assert r.stdout.splitlines()[-1] == "0 errors, 0 warnings, 0 infos in 0 files checked"


def test_a_folder_named_like_a_model_is_still_an_error(tmp_path):
    (tmp_path / "m.onnx").mkdir()
    r = CliRunner().invoke(main, ["check", "--no-config", str(tmp_path / "m.onnx")])
    assert r.exit_code == 2 and "no .onnx files" in r.stderr


def test_error_lines_are_printed_above_the_bar_never_glued_to_it():
    from rich.console import Console

    from qlin_cli import output, progress

    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, width=80)
    for i in progress.track(range(4), 4, "Checking models", console=console):
        time.sleep(0.05)
        if i:
            output.error(f"m{i}.onnx: cannot check")
    text = buf.getvalue()
    for i in (1, 2, 3):
        line = f"qlin: error: m{i}.onnx: cannot check\n"
        at = text.index(line)
        # each starts on a cleared line (\r + erase line) and ends with its newline
        assert text[:at].endswith("\r\x1b[2K"), repr(text[max(0, at - 40):at + 40])


def test_check_loads_no_other_commands_module_and_every_command_is_still_there(tmp_path):
    """convert, inspect and targets are imported when named (cli._LAZY): `qlin check` runs
    without their modules; --help lists them, each runs, and a misspelt one is suggested."""
    import onnx
    from onnx import TensorProto, helper

    node = helper.make_node("QuantizeLinear", ["x", "s"], ["y"], name="q")
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                          [helper.make_tensor_value_info("y", TensorProto.UINT8, [2])],
                          [helper.make_tensor("s", TensorProto.FLOAT, [], [0.5])])
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)]), str(path))
    probe = ("import sys\nfrom qlin_cli.cli import main\n"
             f"try:\n    main(['check', '--no-cache', {str(path)!r}])\nexcept SystemExit:\n    pass\n"
             "print('MODULES', sorted(m for m in sys.modules if m.startswith('qlin_cli.')))\n")
    p = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    loaded = set(ast.literal_eval(next(x for x in p.stdout.splitlines() if x.startswith("MODULES"))[8:]))
    assert "qlin_cli.check.engine" in loaded
    assert not loaded & {"qlin_cli.convert_command", "qlin_cli.inspect_command", "qlin_cli.targets_command"}
    listed = CliRunner().invoke(main, ["--help"]).stdout
    for name in ("check", "convert", "inspect", "rule", "rules", "targets"):
        assert f"\n  {name} " in listed, name
    assert CliRunner().invoke(main, ["inspect", str(path)]).exit_code == 0
    for typed, meant in (("conver", "convert"), ("inspekt", "inspect"), ("chek", "check")):
        # (a fresh process: this one's group may hold the commands other tests ran)
        r = subprocess.run([sys.executable, "-m", "qlin_cli", typed, str(path)], capture_output=True,
                           text=True)
        assert r.returncode == 2 and f"Did you mean '{meant}'?" in r.stderr, r.stderr
