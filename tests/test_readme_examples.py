"""The README's commands and API example run as written (the new user's list): every `qlin`
line of its shell blocks and its Python block, in a folder holding the files they name
(model.onnx, m.onnx, qop.onnx, qdq.onnx, models/), each ending as a command should (0 or 1, never a usage
error, a traceback or exit 2), and each file they write written."""

from __future__ import annotations

import os
import re
import shlex
import shutil

import onnx
import pytest
from click.testing import CliRunner
from paths import MODELS, ROOT

from qlin_cli.cli import main

README = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()


def _commands() -> list[str]:
    found = []
    for block in re.findall(r"```sh\n(.*?)```", README, re.S):
        for line in block.splitlines():
            line = line.split("  #", 1)[0].strip()
            if line.startswith("qlin ") or line == "qlin":
                found.append(line)
    return found


@pytest.fixture(scope="module")
def qdq_model(tmp_path_factory) -> str:
    """The QDQ form of qop.onnx, as the README's first format command writes it."""
    import qlin

    out = tmp_path_factory.mktemp("qdq") / "qdq.onnx"
    qlin.convert(os.path.join(MODELS, "clean", "qoperator.onnx"), to_format="qdq", tolerance=1, output=out)
    return str(out)


@pytest.fixture
def folder(tmp_path, monkeypatch, qdq_model):
    shutil.copy(os.path.join(MODELS, "clean", "per_channel_chain.onnx"), tmp_path / "model.onnx")
    shutil.copy(os.path.join(MODELS, "rules", "QL405-bad.onnx"), tmp_path / "m.onnx")
    shutil.copy(os.path.join(MODELS, "clean", "qoperator.onnx"), tmp_path / "qop.onnx")
    shutil.copytree(os.path.join(MODELS, "rules"), tmp_path / "models")
    shutil.copy(qdq_model, tmp_path / "qdq.onnx")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_readme_shows_the_commands_of_each_section():
    commands = _commands()
    for verb in ("check", "rules", "rule", "targets", "inspect", "convert"):
        assert any(c.split()[1:2] == [verb] for c in commands if len(c.split()) > 1), verb
    assert len(commands) >= 20


@pytest.mark.parametrize("command", _commands())
def test_each_readme_command_runs_as_written(folder, command):
    args = shlex.split(command)[1:]
    r = CliRunner().invoke(main, args)
    assert r.exception is None or isinstance(r.exception, SystemExit), (command, r.exception)
    assert r.exit_code in (0, 1), (command, r.exit_code, r.output[-600:])
    if "-o" in args and r.exit_code == 0:
        written = folder / args[args.index("-o") + 1]
        assert written.stat().st_size > 0, command


def test_the_readme_api_example_runs_as_written(folder, capsys):
    block = re.search(r"```python\n(.*?)```", README, re.S).group(1)
    scope = {"model_proto": onnx.load("m.onnx")}
    exec(compile(block, "README.md", "exec"), scope)  # noqa: S102 - the README's own example
    assert scope["result"].findings is not None and scope["results"]
    assert "model.onnx" in " ".join(scope["files"])
    assert scope["converted"].model is not None and isinstance(scope["scheme"], dict) and scope["rows"]
    assert capsys.readouterr().out  # the example prints findings
