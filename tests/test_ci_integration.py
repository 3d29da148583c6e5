"""qlin in CI pipelines: SARIF, GitHub annotations, pre-commit, [tool.qlin], fast start-up,
progress bars."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import fast_process
import pytest
from click.testing import CliRunner
from paths import MODELS, ROOT

from qlin_cli import codes
from qlin_cli.cli import main

SARIF_SCHEMA = os.path.join(ROOT, "..", "shared", "data", "sarif-schema-2.1.0.json")


def run(*args, cwd=None):
    old = os.getcwd()
    if cwd:
        os.chdir(cwd)
    try:
        r = CliRunner().invoke(main, list(args))
    finally:
        os.chdir(old)
    return r.exit_code, r.stdout, r.stderr


def broken(name="chain.onnx"):
    return os.path.join(MODELS, "broken", name)


# ---- SARIF ------------------------------------------------------------------
def _sarif_schema():
    if not os.path.exists(SARIF_SCHEMA):
        pytest.skip("shared/data/sarif-schema-2.1.0.json is not beside this checkout")
    with open(SARIF_SCHEMA) as f:
        return json.load(f)


def test_sarif_from_real_fixtures_validates_against_the_official_schema(tmp_path):
    import jsonschema

    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"\x00not a model")
    code, out, _ = run("check", "--format", "sarif", broken(), broken("function.onnx"),
                       os.path.join(MODELS, "rules", "QL303-bad.onnx"), str(junk))
    assert code == 2
    doc = json.loads(out)
    jsonschema.validate(doc, _sarif_schema())
    run0 = doc["runs"][0]
    driver = run0["tool"]["driver"]
    assert [r["id"] for r in driver["rules"]] == codes.known(codes.CHECKED)  # QL and QT: what check fires
    for r in driver["rules"]:
        assert r["name"] and r["shortDescription"]["text"] and r["fullDescription"]["text"]
        assert "## Fix" in r["help"]["text"]
        assert r["defaultConfiguration"]["level"] in ("error", "warning", "note")
    by_rule = {}
    for res in run0["results"]:
        by_rule.setdefault(res["ruleId"], res)
    assert {"QL501", "QL405", "QL103", "QL303"} <= set(by_rule)
    res = by_rule["QL405"]
    assert res["level"] == "error" and "length 4" in res["message"]["text"]
    loc = res["locations"][0]
    assert loc["physicalLocation"]["artifactLocation"]["uri"].endswith("broken/chain.onnx")
    assert loc["logicalLocations"][0]["name"] == "weight_q"
    assert by_rule["QL303"]["level"] == "warning"
    assert run0["invocations"][0]["executionSuccessful"] is False
    assert "junk.onnx" in run0["invocations"][0]["toolExecutionNotifications"][0]["message"]["text"]


def test_sarif_uri_is_relative_under_the_working_directory():
    code, out, _ = run("check", "--format", "sarif", "broken/chain.onnx", cwd=MODELS)
    uri = json.loads(out)["runs"][0]["results"][0]["locations"][0]["physicalLocation"][
        "artifactLocation"]["uri"]
    assert uri == "broken/chain.onnx"


# ---- GitHub annotations -----------------------------------------------------
def test_github_format_is_one_workflow_command_per_diagnostic():
    code, out, _ = run("check", "--format", "github", broken(),
                       os.path.join(MODELS, "rules", "QL303-bad.onnx"))
    lines = out.strip().splitlines()
    assert code == 1
    assert len(lines) == 6
    assert sum(line.startswith("::error file=") for line in lines) == 4
    assert sum(line.startswith("::notice file=") for line in lines) == 1  # QL604 on weight_q
    warning = [line for line in lines if line.startswith("::warning file=")]
    assert len(warning) == 1 and "QL303" in warning[0]
    for line in lines:
        head, _, message = line.partition("::")[2].partition("::")
        assert ",title=qlin QL" in head and message
        assert "\n" not in message


def test_github_format_escapes_property_separators():
    from qlin_cli.report.github import _prop

    assert _prop("a,b:c%\n") == "a%2Cb%3Ac%25%0A"


# ---- pre-commit ---------------------------------------------------------------
def test_pre_commit_hook_runs_qlin_check_on_onnx_files():
    text = open(os.path.join(ROOT, ".pre-commit-hooks.yaml")).read()
    assert "- id: qlin" in text
    assert "entry: qlin check" in text
    assert r"files: \.onnx$" in text


# ---- configuration -------------------------------------------------------------
def _project(tmp_path, table: str):
    (tmp_path / "pyproject.toml").write_text("[project]\nname='x'\n\n" + table)
    models = tmp_path / "models" / "legacy"
    models.mkdir(parents=True)
    for name in ("QL303-bad.onnx", "QL405-bad.onnx"):
        (models / name).write_bytes(open(os.path.join(MODELS, "rules", name), "rb").read())
    sub = tmp_path / "deep" / "er"
    sub.mkdir(parents=True)
    return tmp_path, sub


def _codes(out):
    return sorted(d["code"] for f in json.loads(out)["files"] for d in f["diagnostics"])


def test_config_is_found_walking_up_and_flags_win(tmp_path):
    root, sub = _project(tmp_path, '[tool.qlin]\nignore = ["QL405"]\nfail-on = "warning"\n')
    target = str(root / "models")
    code, out, _ = run("check", "--format", "json", target, cwd=str(sub))
    assert _codes(out) == ["QL303"]
    assert code == 1  # fail-on = warning from the config
    code, out, _ = run("check", "--format", "json", "--fail-on", "error", target, cwd=str(sub))
    assert code == 0  # the flag wins
    code, out, _ = run("check", "--format", "json", "--ignore", "QL303", target, cwd=str(sub))
    assert _codes(out) == ["QL405"]  # --ignore replaces the config's ignore
    code, out, _ = run("check", "--format", "json", "--no-config", target, cwd=str(sub))
    assert _codes(out) == ["QL303", "QL405"]


def test_config_select_and_per_path_ignores(tmp_path):
    root, _ = _project(tmp_path, '[tool.qlin]\nselect = ["QL3", "QL4"]\n'
                                 '[tool.qlin.per-path-ignores]\n"models/legacy/QL405*" = ["QL405"]\n')
    code, out, _ = run("check", "--format", "json", "models", cwd=str(root))
    assert _codes(out) == ["QL303"]
    assert code == 0


@pytest.mark.parametrize("table, words", [
    ('[tool.qlin]\nfail-on = "sometimes"\n', "fail-on"),
    ('[tool.qlin]\nselekt = ["QL1"]\n', "unknown key 'selekt'"),
    ('[tool.qlin]\nignore = "QL1"\n', "list of rule codes"),
])
def test_bad_config_exits_2_naming_the_file(tmp_path, table, words):
    root, _ = _project(tmp_path, table)
    code, _, err = run("check", "models", cwd=str(root))
    assert code == 2
    assert err.startswith("qlin: error: ") and "pyproject.toml" in err and words in err


# ---- fast start-up ----------------------------------------------------------------
LIGHT = ["onnxruntime"]


@pytest.mark.parametrize("argv", [["--help"], ["rules"], ["rule", "QL401"],
                                  ["check", "rules/QL401-ok.onnx"], ["convert", "--help"]])
def test_light_commands_do_not_import_onnxruntime(argv):
    probe = (
        "import sys\nfrom qlin_cli.cli import main\n"
        f"try:\n    main({argv!r})\nexcept SystemExit:\n    pass\n"
        "print('HEAVY', sorted(m for m in sys.modules if m.split('.')[0] in ('onnxruntime',)))\n"
    )
    # forked from the test server for -c code, which imports onnx and numpy but not onnxruntime
    assert "onnxruntime" not in fast_process.PRELOAD
    p = fast_process.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=MODELS)
    assert "HEAVY []" in p.stdout, p.stdout[-500:] + p.stderr[-500:]


def test_help_does_not_import_onnx_or_numpy():
    probe = ("import sys\nfrom qlin_cli.cli import main\ntry:\n    main(['--help'])\n"
             "except SystemExit:\n    pass\n"
             "print('HEAVY', sorted({m.split('.')[0] for m in sys.modules} & {'onnx', 'numpy', "
             "'onnxruntime', 'rich'}))\n")
    p = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert "HEAVY []" in p.stdout, p.stdout[-500:]


# ---- progress -----------------------------------------------------------------------
def test_progress_only_on_a_terminal(monkeypatch):
    import io

    from rich.console import Console

    from qlin_cli import progress

    monkeypatch.setattr(progress, "stderr_is_terminal", lambda: False)
    assert list(progress.track(range(5), 5, "Checking")) == list(range(5))
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, width=80)
    assert list(progress.track(range(5), 5, "Checking models", console=console)) == list(range(5))
    assert "Checking models" in buf.getvalue()


def test_check_shows_no_progress_when_not_a_terminal():
    code, out, err = run("check", os.path.join(MODELS, "scopes"))
    assert "Checking models" not in err + out


def test_per_path_ignores_match_globs_and_folders(tmp_path):
    from qlin_cli.config import Config

    cfg = Config(path=str(tmp_path / "pyproject.toml"),
                 per_path_ignores={"models/legacy/": ["QL403"], "*/old_*.onnx": ["QL409"]})
    assert cfg.ignored_for(str(tmp_path / "models" / "legacy" / "a.onnx")) == ["QL403"]
    assert cfg.ignored_for(str(tmp_path / "models" / "old_b.onnx")) == ["QL409"]
    assert cfg.ignored_for(str(tmp_path / "models" / "new.onnx")) is None


def test_meter_shows_only_on_a_terminal_after_its_delay(monkeypatch):
    import io

    from rich.console import Console

    from qlin_cli import progress

    def run(**kw):
        buf = io.StringIO()
        with progress.Meter("verifying", console=Console(file=buf, force_terminal=True, width=80),
                            **kw) as update:
            update(1, 4)
            update(4, 4)
        return buf.getvalue()

    assert "verifying" in run(delay=0)
    assert run(delay=60) == ""  # quick work shows nothing
    assert run(delay=0, enabled=False) == ""  # e.g. --format json
    monkeypatch.setattr(progress, "stderr_is_terminal", lambda: False)
    meter = progress.Meter("verifying", delay=0)
    with meter as update:  # no terminal: never starts
        update(1, 2)
    assert meter.bar is None
