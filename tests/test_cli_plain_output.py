"""Output in pipes and files: tables as plain columns, never cut; --statistics in JSON;
every finding on a node with the node's view on a terminal."""

from __future__ import annotations

import io
import json
import os

from click.testing import CliRunner
from paths import MODELS
from rich.console import Console

from qlin_cli.check.engine import check_file, summarize
from qlin_cli.cli import main
from qlin_cli.report.text import render

BAD = os.path.join(MODELS, "rules", "QL401-bad.onnx")
BOX = set("┏┃┡━│└┗╇")


def _run(*args):
    return CliRunner().invoke(main, list(args))


def test_targets_in_a_file_are_plain_columns_with_whole_cells():
    r = _run("targets")
    assert r.exit_code == 0, r.output
    assert not BOX & set(r.stdout), r.stdout[:400]
    assert "…" not in r.stdout
    rows = {line.split()[0]: line for line in r.stdout.splitlines() if line.strip()}
    # a whole cell: every quantized type onnxruntime runs, on the target's one line
    assert "float8e5m2fnuz" in rows["onnxruntime"] and "int4" in rows["onnxruntime"]


def test_inspect_in_a_file_is_plain_and_names_each_scheme_property_on_its_row():
    r = _run("inspect", BAD)
    assert r.exit_code == 0, r.output
    assert not BOX & set(r.stdout) and "…" not in r.stdout
    lines = r.stdout.splitlines()
    assert any(line.split()[:3] == ["quantized", "type", "uint8"] for line in lines), lines
    assert any(line.split()[:2] == ["granularity", "per-axis"] for line in lines), lines


def test_rules_in_a_file_are_plain_columns():
    r = _run("rules")
    assert r.exit_code == 0 and not BOX & set(r.stdout)
    assert r.stdout.splitlines()[0].split() == ["code", "name", "severity", "fix", "default", "summary"]


def test_statistics_in_json_are_counts_not_the_report():
    r = _run("check", "--jobs", "1", "--statistics", "--format", "json", "--target", "openvino", BAD)
    assert r.exit_code == 1, r.output
    doc = json.loads(r.stdout)
    assert "files" not in doc and doc["summary"]["errors"] >= 1
    by_code = {row["code"]: row for row in doc["statistics"]}
    assert by_code["QL401"]["count"] == 1 and by_code["QL401"]["severity"] == "error"
    assert by_code["QL401"]["name"] and "QT405" in by_code
    counts = [row["count"] for row in doc["statistics"]]
    assert counts == sorted(counts, reverse=True)


def test_statistics_with_sarif_is_a_usage_error():
    r = _run("check", "--statistics", "--format", "sarif", BAD)
    assert r.exit_code == 2 and "--statistics gives text or json" in r.output


def test_every_finding_on_a_node_shows_the_node_on_a_terminal():
    """A target's finding (QT405, a warning) gets the node's view like a rule's."""
    result = check_file(BAD, targets=["openvino"])
    on_nodes = [d for d in result.diagnostics if d.node]
    assert {d.code for d in on_nodes} >= {"QL401", "QT405"}
    assert all(d.frame for d in on_nodes), [(d.code, d.frame) for d in on_nodes]
    buf = io.StringIO()
    render([result], summarize([result]), Console(file=buf, force_terminal=True, width=200))
    text = buf.getvalue()
    assert text.count("│") >= 2 * len(on_nodes), text


def test_node_views_are_built_only_where_the_report_shows_them(monkeypatch):
    """A terminal's text report shows each finding's node; a pipe, a file or JSON does not,
    and the check then builds none (3,000 views cost a tenth of a large model's check)."""
    import dataclasses

    import qlin_cli.api as api

    asked = []
    real = api.check_file

    def spy(*args, **kwargs):
        asked.append(kwargs["frames"])
        return real(*args, **kwargs)

    monkeypatch.setattr(api, "check_file", spy)
    runs = {"terminal": (["check", "--jobs", "1", BAD], {"TTY_COMPATIBLE": "1", "NO_COLOR": "1"}),
            "pipe": (["check", "--jobs", "1", BAD], {"TTY_COMPATIBLE": "0"}),
            "json on a terminal": (["check", "--jobs", "1", "--format", "json", BAD],
                                   {"TTY_COMPATIBLE": "1"})}
    out = {}
    for name, (args, env) in runs.items():
        r = CliRunner().invoke(main, args, env=env)
        assert r.exit_code == 1, r.output
        out[name] = r.stdout
    assert asked == [True, False, False]
    assert "│   scale" in out["terminal"] and "│" not in out["pipe"]
    framed, bare = check_file(BAD), check_file(BAD, frames=False)
    assert framed.diagnostics and all(d.frame for d in framed.diagnostics)
    assert all(not d.frame for d in bare.diagnostics)
    assert [dataclasses.replace(d, frame=()) for d in framed.diagnostics] == bare.diagnostics


def test_plain_text_is_what_rich_prints_where_there_is_no_terminal():
    """Into a pipe or a file the text report is written without rich (report/console.Plain):
    every line, the statistics and the summary are the bytes rich's Console prints there,
    names with markup, escapes and wide characters included."""
    import glob

    from qlin_cli.report.console import Plain

    models = sorted(glob.glob(os.path.join(MODELS, "*", "*.onnx")))
    results = [check_file(p, targets=["openvino"]) for p in models]
    d = results[0].diagnostics[0] if results[0].diagnostics else None
    odd = "[bold]x[/bold] \\[y] 名前 :warning: \x1b[31m"
    if d is not None:  # a finding whose node, graph and message are hostile to markup
        import dataclasses

        results[0].diagnostics.append(dataclasses.replace(d, node=odd, graph=odd, detail=odd, title=odd))
    assert sum(len(r.diagnostics) for r in results) > 100
    summary = summarize(results)
    for options in ({}, {"statistics": True}, {"quiet": True}, {"frames": False}):
        theirs, mine = io.StringIO(), io.StringIO()
        render(results, summary, Console(file=theirs, highlight=False), **options)
        render(results, summary, Plain(mine), **options)
        assert mine.getvalue() == theirs.getvalue(), options
        assert mine.getvalue() or options.get("quiet")


def test_statistics_mark_the_codes_check_fix_fixes():
    """ruff's [*]: a code some of whose findings have a safe fix is marked, the others are not."""
    import glob

    folder = os.path.join(MODELS, "rules")
    r = _run("check", "--jobs", "1", "--statistics", folder)
    rows = {line.split()[1]: line for line in r.stdout.splitlines() if line.strip()[:1].isdigit()}
    results = [check_file(p) for p in sorted(glob.glob(os.path.join(folder, "*.onnx")))]
    fixable = {d.code for res in results for d in res.diagnostics if d.fix is not None and d.fix.safe}
    assert fixable and set(rows) - fixable
    for code, line in rows.items():
        assert (line.split()[2] == "[*]") == (code in fixable), line


def _pairs(path, n: int):
    """n Q -> DQ pairs in a chain (opset 21, int8 per tensor): openvino computes each pair
    as one fused op (QT406), the same behaviour on every DequantizeLinear."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    nodes, inits, prev = [], [], "x"
    for i in range(n):
        inits += [numpy_helper.from_array(np.float32(0.05), f"s{i}"),
                  numpy_helper.from_array(np.int8(0), f"z{i}")]
        nodes += [helper.make_node("QuantizeLinear", [prev, f"s{i}", f"z{i}"], [f"q{i}"], name=f"q{i}"),
                  helper.make_node("DequantizeLinear", [f"q{i}", f"s{i}", f"z{i}"], [f"d{i}"], name=f"d{i}"),
                  helper.make_node("Relu", [f"d{i}"], [f"r{i}"], name=f"r{i}")]
        prev = f"r{i}"
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                          [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [4])], initializer=inits)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)], ir_version=10), path)


def test_a_runtime_behaviour_on_many_nodes_is_one_line_with_the_count(tmp_path):
    """The new user's list, point 5: a target's warning whose message is the same on every
    node of a file is said once, at its first node, with the count and the first names;
    --show-all gives each; JSON keeps every node; the summary and --fail-on count each."""
    path = str(tmp_path / "pairs.onnx")
    _pairs(path, 6)
    grouped = _run("check", "--jobs", "1", "--target", "openvino", "--fail-on", "warning", path)
    each = _run("check", "--jobs", "1", "--target", "openvino", "--show-all", path)
    doc = json.loads(_run("check", "--jobs", "1", "--target", "openvino", "--format", "json", path).stdout)
    lines = [x for x in grouped.stdout.splitlines() if " QT" in x]
    assert grouped.exit_code == 1  # --fail-on warning still fails on it
    every = [d for d in doc["files"][0]["diagnostics"] if d["code"] == "QT406"]
    assert len(every) == 6 and len({d["message"] for d in every}) == 1
    qt406 = [x for x in lines if " QT406 " in x]
    assert len(qt406) == 1 and qt406[0].endswith(
        "(and 5 more nodes alike: d1, d2, d3, ...; --show-all lists each)"), qt406
    assert sum(" QT406 " in x for x in each.stdout.splitlines()) == 6
    assert grouped.stdout.splitlines()[-1] == each.stdout.splitlines()[-1]  # the same counts
    result = check_file(path, targets=["openvino"])
    buf = io.StringIO()
    render([result], summarize([result]), Console(file=buf, force_terminal=True, width=300), show_all=False)
    assert buf.getvalue().count("QT406") == 1 and "5 more nodes alike" in buf.getvalue()
