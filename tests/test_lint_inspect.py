"""`qlin inspect MODEL`: the quantization scheme at a glance, as tables and JSON."""

from __future__ import annotations

import json
import os

from click.testing import CliRunner
from paths import MODELS

from qlin_cli.cli import main
from qlin_cli.model.load import load_model
from qlin_cli.targets import predict, registry


def run(*args):
    r = CliRunner().invoke(main, ["inspect", *map(str, args)])
    return r.exit_code, r.stdout, r.stderr


def test_json_counts_ops_types_granularity_and_scales():
    code, out, _ = run("--format", "json", os.path.join(MODELS, "broken", "chain.onnx"))
    doc = json.loads(out)
    assert code == 0 and doc["version"] == 1
    assert doc["ir_version"] == 10 and doc["opset_imports"] == [{"domain": "ai.onnx", "version": 13}]
    assert doc["nodes"] == 4
    assert {(o["op_type"], o["domain"], o["version"], o["count"]) for o in doc["ops"]} == {
        ("QuantizeLinear", "ai.onnx", 13, 2), ("DequantizeLinear", "ai.onnx", 13, 2)}
    assert doc["quantized_types"] == {"int8": 2, "uint8": 2}
    assert doc["granularity"] == {"per-axis": 2, "per-tensor": 2}
    s = doc["scales"]  # s_in (a zero: QL501) and s_w (4 values), each counted once
    assert (s["tensors"], s["values"], s["not_positive"], s["non_finite"]) == (2, 5, 1, 0)
    assert s["min"] == s["max"] == s["median"] and s["max_over_min"] == 1.0


def test_blocked_model_reports_its_block_size():
    _, out, _ = run("--format", "json", os.path.join(MODELS, "clean", "blocked_int4.onnx"))
    doc = json.loads(out)
    assert doc["granularity"] == {"blocked": 1} and doc["block_sizes"] == {"32": 1}
    assert doc["quantized_types"] == {"int4": 1}


def test_targets_are_predict_findings():
    path = os.path.join(MODELS, "clean", "blocked_int4.onnx")
    _, out, _ = run("--format", "json", path)
    doc = json.loads(out)
    assert [t["target"] for t in doc["targets"]] == registry.names()
    model = load_model(path, weights=False)
    for t in doc["targets"]:
        found = predict.findings(model, os.path.dirname(path), [t["target"]])
        assert t["errors"] == sum(f.severity == "error" for f in found)
        assert sum(c["count"] for c in t["codes"]) == len(found)
    _, out, _ = run("--format", "json", "--target", "onnxruntime", path)
    assert [t["target"] for t in json.loads(out)["targets"]] == ["onnxruntime"]


def test_text_tables():
    code, out, _ = run(os.path.join(MODELS, "clean", "blocked_int4.onnx"))
    assert code == 0
    assert "IR 10, opsets ai.onnx 21; 1 quantization node" in out
    for words in ("DequantizeLinear", "scales: 1 constant", "onnxruntime", "runs as is"):
        assert words in out, words
    rows = [line.split() for line in out.splitlines()]
    # the scheme: one row per property and value, with its node count
    for row in (["quantized", "type", "int4", "1"], ["granularity", "blocked", "1"],
                ["block", "size", "32", "1"]):
        assert row in rows, row


def test_bad_inputs_exit_2(tmp_path):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"nope")
    code, _, err = run(bad)
    assert code == 2 and err.startswith(f"qlin: error: {bad}: ")
    code, _, err = run("--target", "nosuch", os.path.join(MODELS, "clean", "blocked_int4.onnx"))
    assert code == 2 and "nosuch" in err and len(err.splitlines()) == 1


def test_the_convert_helps_column_says_yes_no_or_nothing_to_help():
    """Each target's row ends yes, no (findings a conversion does not remove) or - (nothing
    to remove), as the JSON's convert_helps says; it was blank for no."""
    model = os.path.join(MODELS, "clean", "blocked_int4.onnx")
    names = "onnxruntime@1.18,openvino,tensorrt-10,onnxruntime@1.31"
    code, out, _ = run("--target", names, model)
    rows = {line.split()[0]: line.split() for line in out.splitlines() if line.split()}
    assert code == 0 and rows["onnxruntime@1.18"][-1] == "no" and rows["tensorrt-10"][-1] == "-"
    assert rows["onnxruntime@1.31"][-1] == "no"  # QT501: its fusion data says the MatMul runs in float
    doc = json.loads(run("--format", "json", "--target", names, model)[1])
    for t in doc["targets"]:
        want = "yes" if t["convert_helps"] else "no" if t["errors"] or t["warnings"] else "-"
        assert rows[t["target"]][-1] == want, t
