"""README: install from the repository (no invented package index name or URL), running
after `make demo`, shell completion that works."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from paths import ROOT

with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
    README = f.read()


def test_install_lines_use_placeholders_not_an_invented_package():
    installs = re.findall(r"pip install ([^\n`]+)", README)
    assert installs
    for line in installs:
        assert "<your-" in line or "/path/to/qlin" in line or line.startswith("."), line
    assert "pip install qlin" not in README


def test_running_after_make_demo_is_documented():
    assert ".venv/bin/qlin check" in README and "make demo" in README


def test_shell_completion_line_works():
    assert '_QLIN_COMPLETE=bash_source qlin' in README
    exe = os.path.join(os.path.dirname(sys.executable), "qlin")
    p = subprocess.run([exe], env=dict(os.environ, _QLIN_COMPLETE="bash_source"),
                       capture_output=True, text=True)
    assert p.returncode == 0 and "_qlin_completion" in p.stdout


def test_sarif_names_no_invented_url():
    from qlin_cli.report.sarif import render

    assert "pypi.org" not in render([])


def test_make_demo_ends_by_saying_how_to_run_qlin():
    with open(os.path.join(ROOT, "Makefile"), encoding="utf-8") as f:
        demo = f.read().split("\ndemo:", 1)[1].split("\n\n", 1)[0]
    assert "run $(BIN)/qlin check" in demo
