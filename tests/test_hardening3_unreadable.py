"""Hardening 3: a model file the user may not read (mode 000). click's own check printed a
three-line "Error: Invalid value for '[PATHS]...': Path ... is not readable" and checked
nothing; now each command says so in one `qlin: error:` line naming the file, and check
goes on with the readable files. (Root reads any file: the test denies the read as the
kernel would, through os.access and open.)"""

from __future__ import annotations

import builtins
import os

import pytest
from click.testing import CliRunner
from paths import MODELS

from qlin_cli.cli import main
from qlin_cli.model import load

CLEAN = os.path.join(MODELS, "clean", "per_channel_chain.onnx")
OTHER = os.path.join(MODELS, "clean", "blocked_int4.onnx")


@pytest.fixture
def denied(monkeypatch):
    real_access, real_open = os.access, builtins.open

    def access(path, mode, *a, **k):
        return False if str(path) == CLEAN else real_access(path, mode, *a, **k)

    def fake_open(file, *a, **k):
        if str(file) == CLEAN:
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *a, **k)

    monkeypatch.setattr(os, "access", access)
    monkeypatch.setattr(load, "open", fake_open, raising=False)


def test_check_names_the_file_and_checks_the_others(denied):
    r = CliRunner().invoke(main, ["check", "--no-config", CLEAN, OTHER])
    assert r.exit_code == 2
    assert r.stderr.strip().splitlines() == [f"qlin: error: {CLEAN}: cannot read: Permission denied"]
    assert "in 1 file checked; 1 file could not be checked" in r.stdout


@pytest.mark.parametrize("command", [["convert", CLEAN, "--to-opset", "21", "--dry-run"], ["inspect", CLEAN]])
def test_convert_and_inspect_say_it_in_one_line(denied, command):
    r = CliRunner().invoke(main, command)
    assert r.exit_code == 2
    want = [f"qlin: error: {CLEAN}: cannot read: Permission denied"]
    assert r.stderr.strip().splitlines() == want, r.stderr
