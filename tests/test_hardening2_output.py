"""Hardening 2: stdout that cannot take the report.

On a full disk (stdout redirected to /dev/full) or a read-only descriptor, every command
and every format ends with one line on stderr naming standard output, exit 2, no traceback;
never Python's exit 120 and never exit 1 (which would make a clean model look like one with
findings). A closed pipe is not a failure: the command keeps its status.
"""

from __future__ import annotations

import os
import subprocess
import sys

import fast_process
import pytest
from hardening_helpers import cli, guard  # noqa: F401
from paths import MODELS, ROOT

CLEAN = os.path.join(MODELS, "clean", "per_channel_chain.onnx")
BROKEN = os.path.join(MODELS, "rules", "QL405-bad.onnx")

pytestmark = pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")


def _run(args, stdout):
    env = dict(os.environ, PYTHONPATH=ROOT)
    return fast_process.run([sys.executable, "-m", "qlin_cli", *map(str, args)], stdout=stdout,
                          stderr=subprocess.PIPE, env=env, timeout=120, text=True)


def _assert_stdout_failure(p, *words):
    assert p.returncode == 2, (p.returncode, p.stderr)
    lines = p.stderr.splitlines()
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith("qlin: error: cannot write to standard output"), lines[0]
    assert "Traceback" not in p.stderr and "Exception ignored" not in p.stderr
    for w in words:
        assert w in lines[0]


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github"])
@pytest.mark.parametrize("model", [CLEAN, BROKEN], ids=["clean", "broken"])
def test_check_on_a_full_disk(fmt, model):
    with open("/dev/full", "w") as full:
        p = _run(["check", "--format", fmt, model], full)
    if not cli("check", "--format", fmt, model).stdout:  # nothing to write (asked in-process)
        assert p.returncode in (0, 1) and not p.stderr, p.stderr
        return
    _assert_stdout_failure(p, "No space left on device")


@pytest.mark.parametrize("args", [["rules"], ["rules", "--format", "json"], ["rule", "QL401"],
                                  ["convert", CLEAN, "--to-opset", "21", "--dry-run"],
                                  ["convert", CLEAN, "--to-opset", "21", "--dry-run", "--format", "json"]])
def test_other_commands_on_a_full_disk(args):
    with open("/dev/full", "w") as full:
        p = _run(args, full)
    _assert_stdout_failure(p, "No space left on device")


def test_convert_output_is_written_even_when_the_report_cannot_be(tmp_path, guard):  # noqa: F811
    """The model is converted; only the report is lost, and the exit status says so."""
    out = tmp_path / "o.onnx"
    with open("/dev/full", "w") as full:
        p = _run(["convert", CLEAN, "--to-opset", "21", "-o", out], full)
    _assert_stdout_failure(p)
    assert out.exists()


def test_read_only_stdout(tmp_path):
    target = tmp_path / "ro"
    target.write_text("")
    with open(target) as ro:  # opened for reading: every write fails with EBADF
        p = _run(["check", "--format", "json", BROKEN], ro)
    _assert_stdout_failure(p)


@pytest.mark.parametrize("args,status", [(["check", "--format", "sarif", BROKEN], 1),
                                         (["check", CLEAN], 0), (["rules"], 0)])
def test_closed_pipe_is_not_an_error(args, status):
    """A reader that went away (`qlin check ... | head -0`, `qlin rules | head -3`): no
    message, and the exit status the command would have had (findings still fail CI)."""
    env = dict(os.environ, PYTHONPATH=ROOT)
    p = fast_process.Popen([sys.executable, "-m", "qlin_cli", *args],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
    p.stdout.close()  # before qlin writes its report
    err = p.stderr.read()
    p.wait(timeout=120)
    p.stderr.close()
    assert p.returncode == status, err
    assert err == "", err
