"""`qlin convert --format json`, contract version 3: one shape on every path (docs/convert.md,
"JSON report"): every key on every document, `refused` always a list of findings, each node
named by fields, and the documented example holding exactly the keys qlin writes."""

from __future__ import annotations

import json
import os
import re

import pytest
from click.testing import CliRunner
from paths import MODELS, ROOT

from qlin_cli.cli import main

FINDING = {"code", "severity", "message", "title", "node", "op_type", "domain", "opset", "graph", "fix"}
NODE = {"node", "graph", "op_type", "domain", "opset", "action", "changes", "verified", "measured"}


def _convert(*args) -> tuple[int, dict]:
    r = CliRunner().invoke(main, ["convert", *map(str, args), "--format", "json"])
    return r.exit_code, json.loads(r.stdout)


def _documented() -> dict:
    """The example document of docs/convert.md's JSON section ("..." stands for text)."""
    with open(os.path.join(ROOT, "docs", "convert.md"), encoding="utf-8") as f:
        text = f.read()
    section = text[text.index("## JSON report"):]
    block = re.search(r"```json\n(.*?)```", section, re.S).group(1)
    return json.loads(block)


def _paths(tmp_path):
    clean = os.path.join(MODELS, "clean")
    return {
        "converted": ([os.path.join(clean, "per_channel_chain.onnx"), "--to-opset", 19, "--dry-run"], 0),
        "refused": ([os.path.join(clean, "blocked_int4.onnx"), "--to-opset", 19, "--dry-run"], 1),
        "stopped": ([os.path.join(MODELS, "broken", "chain.onnx"), "--to-opset", 19, "--dry-run"], 1),
        "error": ([os.path.join(clean, "per_channel_chain.onnx"), "--to-opset", 19, "--in-place", "-o",
                   tmp_path / "o.onnx"], 2),
    }


@pytest.mark.parametrize("case", ["converted", "refused", "stopped", "error"])
def test_every_path_gives_the_documented_keys(case, tmp_path):
    args, status = _paths(tmp_path)[case]
    code, doc = _convert(*args)
    assert code == status
    example = _documented()
    assert doc["version"] == example["version"] == 3
    assert set(doc) == set(example), set(doc) ^ set(example)
    assert set(doc["summary"]) == set(example["summary"]) and set(doc["opsets"]) == {"from", "to"}
    assert doc["summary"]["refused"] == len(doc["refused"])
    assert (doc["reason"] is None) == (case in ("converted", "refused")), doc["reason"]
    for f in doc["refused"]:
        assert set(f) == FINDING | {"ways_out"} and isinstance(f["ways_out"], list), f
    for n in doc["nodes"]:
        assert set(n) == NODE and n["op_type"] and n["domain"] and n["opset"] > 0, n


def test_refused_is_one_list_of_findings_whether_a_node_is_refused_or_the_conversion_stops(tmp_path):
    paths = _paths(tmp_path)
    _, node = _convert(*paths["refused"][0])
    _, stop = _convert(*paths["stopped"][0])
    assert "findings" not in stop and stop["status"] == node["status"] == "refused"
    (qc,) = node["refused"]
    assert (qc["code"], qc["node"], qc["graph"], qc["op_type"], qc["domain"], qc["opset"]) == (
        "QC102", "w_dq", "main", "DequantizeLinear", "ai.onnx", 21)
    assert qc["ways_out"] == ["--to-opset 21"] and "int4" in qc["message"]
    assert {f["code"] for f in stop["refused"]} == {"QL405", "QL501"} and stop["reason"]
    assert all(f["ways_out"] == [] and f["graph"] == "main" for f in stop["refused"])


def test_nodes_are_fields_not_phrases(tmp_path):
    _, doc = _convert(*_paths(tmp_path)["converted"][0])
    got = [(n["node"], n["graph"], n["op_type"], n["domain"], n["opset"], n["action"]) for n in doc["nodes"]]
    assert got == [("input_q", "main", "QuantizeLinear", "ai.onnx", 13, "kept"),
                   ("input_dq", "main", "DequantizeLinear", "ai.onnx", 13, "kept"),
                   ("weight_q", "main", "QuantizeLinear", "ai.onnx", 13, "kept"),
                   ("weight_dq", "main", "DequantizeLinear", "ai.onnx", 13, "kept")]


def test_the_api_entries_carry_the_same_fields():
    import qlin

    result = qlin.convert(os.path.join(MODELS, "scopes", "loop-ok.onnx"), to_opset=19)
    got = sorted((e.node, e.graph, e.op_type, e.domain, e.opset) for e in result.entries)
    assert got == [("#0", "main/loop.body/inner_if.else_branch", "QuantizeLinear", "ai.onnx", 21),
                   ("#0", "main/loop.body/inner_if.then_branch", "QuantizeLinear", "ai.onnx", 21)], got
