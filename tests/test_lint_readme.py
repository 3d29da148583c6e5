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


def test_the_ci_recipe_runs_end_to_end(tmp_path):
    """The README's GitHub Actions steps, run as written (but the install) on a folder of
    models: annotations from the first, a schema-valid SARIF file from the second, with
    the targets' codes in both; a stale report is replaced, never left behind."""
    import json
    import shutil

    from paths import MODELS

    block = README.split("GitHub Actions", 1)[1].split("```yaml", 1)[1].split("```", 1)[0]
    steps = [line.split("- run: ", 1)[1] for line in block.splitlines()
             if "- run: qlin" in line]
    assert len(steps) == 2 and all("--target" in s for s in steps), steps
    models = tmp_path / "models"
    models.mkdir()
    shutil.copy(os.path.join(MODELS, "rules", "QL401-bad.onnx"), models)
    shutil.copy(os.path.join(MODELS, "clean", "quark_int16.onnx"), models)
    (tmp_path / "qlin.sarif").write_text("stale")
    bin_dir = os.path.dirname(sys.executable)
    env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ.get("PATH", ""))
    annotations = subprocess.run(steps[0], shell=True, cwd=tmp_path, env=env, capture_output=True,
                                 text=True, timeout=300)
    assert annotations.returncode == 1, annotations.stderr  # QL401 is an error
    assert "::error file=models/QL401-bad.onnx" in annotations.stdout
    assert "QT" in annotations.stdout and "Traceback" not in annotations.stderr
    sarif = subprocess.run(steps[1], shell=True, cwd=tmp_path, env=env, capture_output=True, text=True,
                           timeout=300)
    assert sarif.returncode == 1 and "Traceback" not in sarif.stderr, sarif.stderr
    log = json.loads((tmp_path / "qlin.sarif").read_text())
    ids = {r["ruleId"] for r in log["runs"][0]["results"]}
    assert "QL401" in ids and any(i.startswith("QT") for i in ids), ids
    schema = os.path.join(os.path.dirname(ROOT), "shared", "data", "sarif-schema-2.1.0.json")
    if os.path.exists(schema):
        import jsonschema

        with open(schema, encoding="utf-8") as f:
            jsonschema.validate(log, json.load(f))


def test_make_demo_installs_the_run_time_dependencies_only():
    """Trying qlin (`make demo`) does not install the test tools and runtimes `make test`
    needs (pytest, onnxruntime, openvino: hundreds of MB)."""
    makefile = open(os.path.join(ROOT, "Makefile"), encoding="utf-8").read()
    demo = re.search(r"^demo: (\S+)$", makefile, re.M).group(1)
    stamp_var = demo.strip("$()")
    recipe = re.search(rf"^\$\({stamp_var}\):.*\n((?:\t.*\n)+)", makefile, re.M).group(1)
    install = re.search(r"^INSTALL = (.*)$", makefile, re.M).group(1)  # uv, or pip where it cannot be had
    recipe = re.sub(r"\$\(call INSTALL,([^)]*)\)", lambda m: install.replace("$(1)", m.group(1)), recipe)
    for var in ("PIP_INSTALL", "UV_INSTALL"):
        recipe = recipe.replace(f"$({var})", re.search(rf"^{var} := (.*)$", makefile, re.M).group(1))
    assert "pip install" in recipe and "uv pip install" in recipe and "[dev]" not in recipe, recipe
    assert re.search(r"^test: \$\(STAMP\)$", makefile, re.M)
    assert "'.[dev]'" in re.search(r"^\$\(STAMP\):.*\n((?:\t.*\n)+)", makefile, re.M).group(1)
