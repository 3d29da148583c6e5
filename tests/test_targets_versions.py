"""Targets at runtime versions (qlin_cli/targets/versions.py): names, the version plain
`onnxruntime` judges, findings that say which version brings what is missing, ranges, the
feature matrix. The data is measured per release by tools/gen_target_data.py; these tests
read what it wrote (which versions are bundled is itself checked)."""

from __future__ import annotations

import json

import numpy as np
import onnx
import pytest
from click.testing import CliRunner
from onnx import TensorProto, helper, numpy_helper

from qlin_cli.cli import main
from qlin_cli.targets import ort_table, predict, registry, versions


def int4_weights(opset: int = 21) -> onnx.ModelProto:
    w = helper.make_tensor("w", TensorProto.INT4, [4, 8], (np.arange(32) % 8).tolist())
    nodes = [helper.make_node("DequantizeLinear", ["w", "s"], ["wf"], name="dq"),
             helper.make_node("MatMul", ["x", "wf"], ["y"], name="mm")]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 8])],
                          [w, numpy_helper.from_array(np.float32(0.1), "s")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 10
    return m


def test_the_measured_versions_cover_1_18_to_the_pinned_one():
    have = [ort_table.minor(v) for v in versions.known()]
    assert {"1.18", "1.19", "1.20", "1.21", "1.31"} <= set(have), have
    assert have == sorted(have, key=lambda v: tuple(map(int, v.split("."))))


def test_names_a_minor_a_full_version_and_the_default():
    assert registry.get("onnxruntime@1.20").versions == ("1.20.1",)
    assert registry.get("onnxruntime@1.20.1").versions == ("1.20.1",)
    assert registry.get("onnxruntime").versions == (ort_table.default_version(),)
    assert ort_table.default_version().startswith(ort_table.minor(ort_table.installed_version()))
    with pytest.raises(registry.UnknownTarget):
        registry.get("onnxruntime@1.10")  # older than anything measured


def test_a_version_newer_than_the_data_is_judged_as_the_newest_with_a_warning():
    found = predict.findings(int4_weights(), ".", ["onnxruntime@9.1"])
    assert [(f.code, f.severity) for f in found] == [("QT100", "warning")]
    assert versions.known()[-1] in found[0].message


def test_findings_say_which_version_brings_what_is_missing():
    """int4 DequantizeLinear: no kernel in 1.18, one from 1.19 (measured from the registries)."""
    old = [f for f in predict.findings(int4_weights(), ".", ["onnxruntime@1.18"]) if f.severity == "error"]
    assert [f.code for f in old] == ["QT202"] and "onnxruntime 1.19 and newer run it" in old[0].message
    assert predict.findings(int4_weights(), ".", ["onnxruntime@1.19"]) == []


def test_an_opset_too_new_names_the_first_version_that_loads_it():
    model = int4_weights(22)
    found = [f for f in predict.findings(model, ".", ["onnxruntime@1.20"]) if f.code == "QT101"]
    assert found and "onnxruntime 1.21 and newer run it" in found[0].message


def test_a_range_runs_only_if_every_version_runs_it_and_names_the_oldest():
    found = predict.findings(int4_weights(), ".", ["onnxruntime>=1.18"])
    assert [f.code for f in found] == ["QT202"]
    assert "onnxruntime>=1.18: onnxruntime 1.18.1" in found[0].message
    assert predict.findings(int4_weights(), ".", ["onnxruntime>=1.19"]) == []


def test_convert_for_an_old_version_picks_an_opset_it_loads():
    model = int4_weights(22)
    plan = predict.plan(model, ".", "onnxruntime@1.20")
    assert plan.needed and plan.choice is not None and plan.choice.to_opset <= 21


def test_the_version_matrix_as_text_and_json():
    r = CliRunner().invoke(main, ["targets", "--versions", "onnxruntime", "--format", "json"])
    assert r.exit_code == 0, r.output
    rows = {ort_table.minor(row["version"]): row for row in json.loads(r.stdout)["versions"]}
    assert "int4" not in rows["1.18"]["qdq_types"] and "int4" in rows["1.19"]["qdq_types"]
    assert rows["1.18"]["max_opset"] == 21 and rows["1.21"]["max_opset"] == 22
    # the division rows (each release's division probes): float16 as the page until 1.29
    q21 = "QuantizeLinear-21 float16"
    assert rows["1.29"]["divides_in"][q21] == "float16" and rows["1.30"]["divides_in"][q21] == "float"
    assert rows["1.18"]["divides_in"]["QuantizeLinear-23 float16"] == "-"  # no opset 23 there
    text = CliRunner().invoke(main, ["targets", "--versions", "onnxruntime"])
    assert text.exit_code == 0 and text.output.splitlines()[0].split()[1:] == [
        row["version"] for row in json.loads(r.stdout)["versions"]]
    line = next(x for x in text.output.splitlines() if x.startswith(f"divides {q21} in"))
    assert line.split()[-len(rows):] == [row["divides_in"][q21] for row in rows.values()]
    # the other arithmetic rows (each release's probes): onnxruntime computes pairs as the page
    assert {row["computes"]["Q -> DQ pair int16"] for row in rows.values()} == {"as the page"}
    # and keeps float32 between two com.microsoft float16 nodes in every release (QT409)
    assert {row["computes"]["float16 between com.microsoft DQ -> Q"] for row in rows.values()} == {
        "keeps float32 between the nodes"}
    # and between ai.onnx Q/DQ-21 computes otherwise up to 1.29, as the page from 1.30
    f16 = {v: row["computes"]["float16 between DQ-21 -> Q-21"] for v, row in rows.items()}
    assert f16["1.29"] == "otherwise" and f16["1.30"] == f16["1.32"] == "as the page"


def test_openvino_version_matrix_shows_when_16_bit_pairs_are_removed():
    """openvino's 16-bit pair probes: computed otherwise (one fused op) before 2026.1, removed
    from 2026.1 (QT406 then QT408); every release reads a 1-D scale without axis along axis 1."""
    r = CliRunner().invoke(main, ["targets", "--versions", "openvino", "--format", "json"])
    assert r.exit_code == 0, r.output
    rows = {row["version"]: row["computes"] for row in json.loads(r.stdout)["versions"]}
    pair = "Q -> DQ pair int16"
    assert rows["2024.0.0"][pair] == rows["2026.0.0"][pair] == "otherwise"
    assert rows["2026.1.0"][pair] == rows["2026.4.1"][pair] == "removes the pair"
    assert {c["com.microsoft Q without axis, 1-D scale"] for c in rows.values()} == {"reads along axis 1"}
    # a float16-scale com.microsoft DQ is refused before 2025.3, then its value kept in float32
    for f16 in ("float16 between com.microsoft DQ -> Q", "float16 between DQ-21 -> Q-21"):
        assert rows["2025.2.0"][f16] == "-" and rows["2025.3.0"][f16] == rows["2026.4.1"][f16] == (
            "keeps float32 between the nodes")
    text = CliRunner().invoke(main, ["targets", "--versions", "openvino"])
    out = text.output.splitlines()
    # a value wider than a release number is a mark explained under the table, so the
    # 17 releases fit in a terminal
    assert max(len(x) for x in out) < 230
    legend = dict(x.split(" ", 1) for x in out if x.startswith("["))
    line = next(x for x in out if x.startswith(pair))
    shown = [legend.get(cell, cell) for cell in line[len(pair):].split()]
    assert shown == [c[pair] for c in rows.values()]
    assert shown.count("removes the pair") == 4


def test_check_names_the_version_it_judged(tmp_path):
    path = str(tmp_path / "m.onnx")
    onnx.save(int4_weights(), path)
    r = CliRunner().invoke(main, ["check", "--jobs", "1", "--target", "onnxruntime@1.18", path])
    assert r.exit_code == 1 and "QT202" in r.output and "onnxruntime 1.18.1:" in r.output, r.output
    ok = CliRunner().invoke(main, ["check", "--jobs", "1", "--target", "onnxruntime@1.19", path])
    assert ok.exit_code == 0, ok.output
