"""Hardening 3: a process started without a standard output (``qlin check M >&-``).

Python gives None for a closed stdout; every command used to end in a traceback
(AttributeError on ``flush`` / ``isatty``) and exit 1. Now each ends with one
``qlin: error:`` line naming standard output and exit 2, and a command that reports
elsewhere (``check -o FILE``) runs as usual.
"""

from __future__ import annotations

import os
import subprocess
import sys

import fast_process
import pytest
from paths import MODELS, ROOT

CLEAN = os.path.join(MODELS, "clean", "per_channel_chain.onnx")
BROKEN = os.path.join(MODELS, "broken", "chain.onnx")


def _closed_stdout(*args):
    env = dict(os.environ, PYTHONPATH=ROOT)
    return fast_process.run([sys.executable, "-m", "qlin_cli", *map(str, args)], stdout=None,
                          stderr=subprocess.PIPE, env=env, timeout=120, text=True,
                            closed=(1,))


@pytest.mark.parametrize("args", [
    ("check", BROKEN), ("check", "--format", "json", CLEAN), ("rules",), ("rule", "QL405"),
    ("inspect", CLEAN), ("convert", CLEAN, "--to-opset", "21", "--dry-run"), ("targets",),
], ids=["check", "check-json", "rules", "rule", "inspect", "convert", "targets"])
def test_a_closed_stdout_is_one_line_and_exit_2(args):
    p = _closed_stdout(*args)
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert p.stderr.splitlines() == [
        "qlin: error: standard output is closed: nothing can be reported there "
        "(give it a file or a pipe, or -o FILE)"], p.stderr


def test_check_with_an_output_file_needs_no_stdout(tmp_path):
    out = tmp_path / "report.txt"
    p = _closed_stdout("check", BROKEN, "-o", out)
    assert p.returncode == 1 and p.stderr == "", p.stderr
    assert "QL501" in out.read_text()


def _check_to(target) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=ROOT)
    return fast_process.run([sys.executable, "-m", "qlin_cli", "check", BROKEN, "-o", str(target)],
                          capture_output=True, env=env, timeout=120, text=True)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_o_onto_a_device_writes_it_in_place(tmp_path):
    """A device named by -o (here through links to /dev/null and /dev/full, so that the
    old behaviour replaces the links, not the system's devices) is written as a shell's
    redirection writes it; a full one is exit 2 with one line."""
    import stat

    null, full = tmp_path / "null", tmp_path / "full"
    null.symlink_to("/dev/null")
    full.symlink_to("/dev/full")
    p = _check_to(null)
    assert p.returncode == 1 and p.stderr == "", p.stderr
    assert null.is_symlink() and stat.S_ISCHR(os.stat(null).st_mode)
    p = _check_to(full)
    assert p.returncode == 2 and p.stderr == f"qlin: error: cannot write {full}: No space left on device\n"
    assert full.is_symlink() and stat.S_ISCHR(os.stat(full).st_mode)
    assert sorted(os.listdir(tmp_path)) == ["full", "null"]  # no temporary file left beside them


def test_o_onto_a_fifo_feeds_its_reader(tmp_path):
    import threading

    fifo = tmp_path / "report"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()))
    reader.start()
    p = _check_to(fifo)
    reader.join(timeout=60)
    assert p.returncode == 1 and p.stderr == "", p.stderr
    assert "QL501" in got[0] and fifo.is_fifo()
