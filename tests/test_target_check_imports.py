"""What naming a target makes a small check import: the QT code modules it may report and
the divergences (QT4xx) that targets.codes.judging reads, not every code module (issue 35:
naming a target adds at most 10 ms; importing the 42 code modules for ``judging`` was about
6 ms of it)."""

from __future__ import annotations

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SMALL = os.path.join(ROOT, "fixtures", "models", "clean", "per_channel_chain.onnx")
SCRIPT = """
import sys
from qlin_cli.cli import main
sys.argv = ["qlin", "check", "--no-cache", "--format", "json", "--target", sys.argv[1], sys.argv[2]]
try:
    main()
except SystemExit:
    pass
sys.stderr.write(",".join(sorted(m.rsplit(".", 1)[1] for m in sys.modules
                                 if m.startswith("qlin_cli.targets.codes."))))
"""


def _code_modules(target: str) -> set[str]:
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, "-c", SCRIPT, target, SMALL], capture_output=True, text=True,
                          cwd=ROOT, env=env, check=True)
    return set(done.stderr.strip().splitlines()[-1].split(","))


def test_a_small_check_naming_a_target_imports_no_code_it_cannot_report():
    """per_channel_chain.onnx reports no QT1xx and no QT2xx or QT3xx but those whose modules
    hold the check run on each node (QT207, QT308, QT309): the check of it imports none of the
    others (it imported all 42 when ``judging`` and ``off_by_default`` listed them)."""
    for target in ("onnxruntime", "openvino"):
        found = _code_modules(target)
        assert found, target
        unwanted = {m for m in found if m[:3] in ("qt1", "qt2", "qt3")} - {
            m for m in found if m.startswith(("qt207_", "qt308_", "qt309_"))}
        assert not unwanted, (target, sorted(unwanted))
