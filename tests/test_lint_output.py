"""`qlin check` output: one line per finding holding its file, one word per severity,
--statistics, --output-file, --quiet, --exit-zero, --fail-on info, the JSON summary."""

from __future__ import annotations

import json
import os
import re
import stat
import sys

import fast_process
from click.testing import CliRunner
from paths import MODELS

from qlin_cli.cli import main

LINE = re.compile(r"^(?P<path>[^:]+):(?P<graph>[^:]*):(?P<node>[^:]*): "
                  r"(?P<code>Q[LT]\d{3}) (?P<severity>error|warning|info) \[(?P<what>[^\]]+)\] (?P<msg>.+)$")


def run(*args):
    r = CliRunner().invoke(main, ["check", "--no-config", *args])
    return r.exit_code, r.stdout, r.stderr


def model(rel):
    return os.path.join(MODELS, rel)


def test_every_finding_is_one_line_with_path_graph_node_code_severity():
    code, out, _ = run(model("broken"))
    lines = out.splitlines()
    findings, summary = lines[:-1], lines[-1]
    assert code == 1 and len(findings) == 9
    for text in findings:
        m = LINE.match(text)
        assert m, text
        assert m["path"].startswith(os.path.join(MODELS, "broken")) and m["path"].endswith(".onnx")
        assert not m["msg"].startswith("node ")  # the location is in the line, not repeated
    loop = [LINE.match(t) for t in findings if "loop.onnx" in t]
    assert (loop[0]["graph"], loop[0]["node"], loop[0]["what"]) == (
        "main/loop.body/inner_if.else_branch", "#0", "QuantizeLinear-21 ai.onnx")
    assert summary == ("8 errors, 0 warnings, 1 info in 3 files checked; "
                       "1 fixable with `qlin check --fix` (`--diff` shows how)")


def test_one_word_per_severity_in_the_summary():
    _, out, _ = run("--select", "QL409", model("rules/QL409-bad.onnx"))  # QL409: off by default
    assert out.splitlines()[-1] == ("0 errors, 0 warnings, 1 info in 1 file checked; "
                                    "1 fixable with `qlin check --fix` (`--diff` shows how)")
    assert "note" not in out and "notice" not in out


def test_plain_text_in_a_pipe():
    r = fast_process.run([sys.executable, "-m", "qlin_cli", "check", "--no-config",
                        model("rules/QL405-bad.onnx")], capture_output=True, text=True)
    assert r.returncode == 1 and "\x1b" not in r.stdout
    assert LINE.match(r.stdout.splitlines()[0])


def test_colour_on_a_terminal():
    from rich.console import Console

    from qlin_cli.check.engine import check_file, summarize
    from qlin_cli.report.text import render

    results = [check_file(model("rules/QL405-bad.onnx"))]
    console = Console(force_terminal=True, color_system="standard", width=300)
    with console.capture() as cap:
        render(results, summarize(results), console)
    assert "\x1b[" in cap.get()
    plain = re.sub(r"\x1b\[[0-9;]*m", "", cap.get())
    assert LINE.match(plain.splitlines()[0])


def test_fail_on_info_and_exit_zero():
    path = model("rules/QL409-bad.onnx")  # one info only, when QL409 (off by default) is selected
    assert run("--select", "QL409", path)[0] == 0
    assert run("--select", "QL409", "--fail-on", "warning", path)[0] == 0
    assert run("--select", "QL409", "--fail-on", "info", path)[0] == 1
    assert run("--fail-on", "info", path)[0] == 0  # not selected: nothing to fail on
    assert run("--select", "QL409", "--fail-on", "info", "--exit-zero", path)[0] == 0
    assert run(model("rules/QL405-bad.onnx"))[0] == 1
    assert run("--exit-zero", model("rules/QL405-bad.onnx"))[0] == 0
    # a file that cannot be checked is still exit 2
    assert run("--exit-zero", model("rules/QL405-bad.onnx"), "missing.onnx")[0] == 2


def test_fail_on_info_in_config(tmp_path):
    import shutil

    shutil.copy(model("rules/QL409-bad.onnx"), tmp_path / "m.onnx")
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        (tmp_path / "pyproject.toml").write_text('[tool.qlin]\nfail-on = "info"\n')
        alone = CliRunner().invoke(main, ["check", "m.onnx"])  # QL409 is off by default
        (tmp_path / "pyproject.toml").write_text('[tool.qlin]\nfail-on = "info"\nselect = ["QL409"]\n')
        r = CliRunner().invoke(main, ["check", "m.onnx"])
    finally:
        os.chdir(old)
    assert alone.exit_code == 0 and r.exit_code == 1


def test_statistics_counts_per_code():
    code, out, _ = run("--statistics", model("broken"))
    lines = out.splitlines()
    assert code == 1
    assert lines[:-1] == [
        "3 QL501     error   scale-value",
        "2 QL401     error   axis-out-of-range",
        "2 QL405     error   per-axis-shape",
        "1 QL103 [*] error   domain-not-imported",
        "1 QL604     info    prequantizable-weight",
    ]
    assert lines[-1].startswith("8 errors, 0 warnings, 1 info in 3 files checked; 1 fixable")


def test_quiet_prints_findings_only():
    _, out, _ = run("--quiet", model("rules/QL405-bad.onnx"))
    assert len(out.splitlines()) == 1 and LINE.match(out.splitlines()[0])
    _, out, _ = run("-q", model("clean/blocked_int4.onnx"))
    assert out == ""


def test_output_file_gets_the_report_and_keeps_its_mode(tmp_path):
    target = tmp_path / "report.json"
    target.write_text("old")
    os.chmod(target, 0o640)
    code, out, _ = run("--format", "json", "--output-file", str(target), model("rules/QL405-bad.onnx"))
    assert code == 1 and out == ""
    doc = json.loads(target.read_text())
    assert doc["summary"]["errors"] == 1
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o640
    assert os.listdir(tmp_path) == ["report.json"]  # no temporary file left
    code, _, err = run("-o", str(tmp_path / "no" / "such" / "dir.txt"), model("rules/QL405-bad.onnx"))
    assert code == 2 and err.startswith("qlin: error: cannot write")


def test_json_summary_counts_infos_unchecked_files_and_nodes(tmp_path):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    code, out, _ = run("--format", "json", model("broken"), str(bad))
    doc = json.loads(out)
    assert code == 2 and doc["version"] == 2
    nodes = sum(f["nodes"] for f in doc["files"])
    assert nodes > 0 and doc["files"][-1]["nodes"] == 0
    assert doc["summary"] == {"files": 4, "unchecked": 1, "nodes": nodes, "errors": 8,
                              "warnings": 0, "infos": 1}


def test_github_keeps_notice_as_its_word_for_info():
    _, out, _ = run("--format", "github", "--select", "QL409", model("rules/QL409-bad.onnx"))
    assert out.startswith("::notice ") and "qlin QL409 info" in out


def test_terminal_shows_the_node_under_each_finding_with_the_named_parts_marked():
    from rich.console import Console

    from qlin_cli.check.engine import check_file, summarize
    from qlin_cli.report.text import render

    results = [check_file(model("broken/chain.onnx"))]
    console = Console(force_terminal=True, color_system=None, width=300)
    with console.capture() as cap:
        render(results, summarize(results), console)
    lines = cap.get().splitlines()
    at = next(i for i, t in enumerate(lines) if ":weight_q: QL405" in t)
    assert [t.rstrip() for t in lines[at + 1:at + 6]] == [
        "  │   w     float [8, 4]",
        "  │   s_w   float [4]  <--",
        "  │   z_w   int8 [4]",
        "  │ @ axis  0  <--",
        "  │ > wq    int8",
    ]
    with console.capture() as cap:  # --quiet: the findings only
        render(results, summarize(results), console, quiet=True)
    assert all(LINE.match(t) for t in cap.get().splitlines())


def test_plain_node_view_is_what_rich_prints_of_its_markup():
    """Without colour (NO_COLOR on a terminal) the findings and their node views go out as
    plain text in one print: the characters rich prints of each line's and row's markup."""
    import io

    from rich.console import Console

    from qlin_cli.check.engine import check_file, summarize
    from qlin_cli.report.text import frame, line, render

    results = [check_file(model("broken/chain.onnx"))]
    fast = Console(file=io.StringIO(), force_terminal=True, color_system=None, width=300)
    render(results, summarize(results), fast, quiet=True, frames=True)
    slow = Console(file=io.StringIO(), force_terminal=True, color_system=None, width=300, emoji=False)
    for d in results[0].diagnostics:
        for text in (line(results[0].path, d), *frame(d)):
            slow.print(text, highlight=False, soft_wrap=True)
    assert "<--" in fast.file.getvalue() and fast.file.getvalue() == slow.file.getvalue()


def test_no_node_view_in_pipes():
    code, out, _ = run(model("broken/chain.onnx"))
    assert "│" not in out and all(LINE.match(t) for t in out.splitlines()[:-1])
