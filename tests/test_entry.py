"""The process entry point (qlin_cli/entry.py): the process ends as SystemExit would end it,
with the atexit handlers run and stdout and stderr flushed, only without the teardown."""

from __future__ import annotations

import os
import subprocess
import sys

import fast_process
import pytest
from paths import ROOT

CODE = """
import atexit, sys
from qlin_cli.entry import leave
atexit.register(lambda: print("atexit ran", flush=False))
sys.stdout.write("unflushed")
sys.stderr.write("err")
leave({code})
"""


@pytest.mark.parametrize(("code", "status", "stderr"), [
    ("None", 0, "err"), ("0", 0, "err"), ("1", 1, "err"), ("2", 2, "err"), ("261", 5, "err"),
    ("-1", 255, "err"), ("'boom'", 1, "errboom\n")])
def test_leave_ends_as_system_exit_would(code, status, stderr):
    env = dict(os.environ, PYTHONPATH=ROOT)
    mine = fast_process.run([sys.executable, "-c", CODE.format(code=code)], capture_output=True, text=True,
                            env=env)
    assert (mine.returncode, mine.stdout, mine.stderr) == (status, "unflushedatexit ran\n", stderr)
    # the same script ending by SystemExit, in a fresh interpreter: the same status and output
    plain = CODE.format(code=code).replace("from qlin_cli.entry import leave", "")
    plain = plain.replace("leave(", "sys.exit(")
    theirs = subprocess.run([sys.executable, "-c", plain], capture_output=True, text=True, env=env)
    assert (theirs.returncode, theirs.stdout, theirs.stderr) == (mine.returncode, mine.stdout, mine.stderr)


def test_the_command_line_runs_through_the_entry_point():
    """`qlin`, `python -m qlin_cli` and `python -m qlin` end by entry.run."""
    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as f:
        assert 'qlin = "qlin_cli.entry:run"' in f.read().splitlines()
    for main in ("qlin_cli/__main__.py", "qlin/__main__.py"):
        with open(os.path.join(ROOT, main), encoding="utf-8") as f:
            assert "from qlin_cli.entry import run" in f.read().replace("from .entry", "from qlin_cli.entry")


def test_without_cpythons_exit_functions_the_interpreter_ends_it():
    """Where atexit has no _run_exitfuncs (not CPython), leave() is SystemExit itself."""
    code = ("import atexit, sys\nfrom qlin_cli.entry import leave\ndel atexit._run_exitfuncs\n"
            "atexit.register(lambda: print('atexit ran'))\nleave(3)\n")
    env = dict(os.environ, PYTHONPATH=ROOT)
    p = fast_process.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert (p.returncode, p.stdout) == (3, "atexit ran\n"), p.stderr
