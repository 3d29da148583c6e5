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


BLAS = """
import atexit, builtins, os, sys
real, seen = builtins.__import__, []
def hook(name, *args, **kwargs):
    if name == "numpy" and not seen:
        seen.append(os.environ.get("OPENBLAS_NUM_THREADS"))
    return real(name, *args, **kwargs)
builtins.__import__ = hook
atexit.register(lambda: print("numpy saw", seen))
sys.argv = ["qlin", "check", "--no-cache", {model!r}]
from qlin_cli.entry import run
run()
"""


@pytest.mark.parametrize(("given", "seen"), [(None, "1"), ("3", "3")])
def test_the_command_line_gives_numpys_blas_one_thread_unless_told(given, seen):
    """OPENBLAS_NUM_THREADS is set before numpy is first imported (when OpenBLAS starts its
    threads), to 1 where the user set nothing; a user's number is left as it is."""
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    env["PYTHONPATH"] = ROOT
    if given is not None:
        env["OPENBLAS_NUM_THREADS"] = given
    model = os.path.join(ROOT, "fixtures", "models", "clean", "per_channel_chain.onnx")
    p = subprocess.run([sys.executable, "-c", BLAS.format(model=model)], capture_output=True, text=True,
                       env=env)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[-1] == f"numpy saw [{seen!r}]"
