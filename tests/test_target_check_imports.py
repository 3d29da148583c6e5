"""What naming a target makes a small check import: the modules of the QT codes it reports
and no other (issue 35: naming a target adds at most 10 ms; importing the 42 code modules for
``judging`` was about 6 ms of it, and a module each of the codes a target runs on every node,
about 0.15 ms each, where base.NEEDS says whether the code can find anything there)."""

from __future__ import annotations

import json
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


def _code_modules(target: str) -> tuple[set[str], set[str]]:
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, "-c", SCRIPT, target, SMALL], capture_output=True, text=True,
                          cwd=ROOT, env=env, check=True)
    reported = {d["code"] for f in json.loads(done.stdout)["files"] for d in f["diagnostics"]}
    modules = done.stderr.rstrip("\n").rpartition("\n")[2]
    return {m for m in modules.split(",") if m}, reported


def test_a_small_check_naming_a_target_imports_the_modules_of_the_codes_it_reports_alone():
    """per_channel_chain.onnx: openvino reports QT406, onnxruntime no QT code; the check of it
    imports the module of QT406 for openvino and none for onnxruntime (it imported all 42 when
    ``judging`` and ``off_by_default`` listed them, and 10 to 16 before base.NEEDS: those of
    the codes each target runs on every node)."""
    for target, code in (("onnxruntime", None), ("openvino", "QT406")):
        found, reported = _code_modules(target)
        assert {m[:5].upper() for m in found} == {c for c in reported if c.startswith("QT")}, target
        assert (code in reported) if code else not found, (target, sorted(found), sorted(reported))
