"""`qlin inspect`'s count of QDQ groups a release fuses into integer kernels and those it
runs in float (issue 38 point 4), read from the same measured fusion QT501 reports from."""

from __future__ import annotations

import json
import os
import sys

import numpy as np
import onnx
from click.testing import CliRunner
from onnx import helper
from paths import FIXTURES

from qlin_cli.cli import main
from qlin_cli.model.analysis import analyze
from qlin_cli.targets import predict

sys.path.insert(0, FIXTURES)
from builders import tensor  # noqa: E402
from family_builders import conv_qdq  # noqa: E402


def _with_q_after(model: onnx.ModelProto) -> onnx.ModelProto:
    """The Conv's output quantized (uint8) and dequantized again: the group onnxruntime fuses."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    g = m.graph
    conv = next(n for n in g.node if n.op_type == "Conv")
    conv.output[0] = "y_f"
    g.node.extend([helper.make_node("QuantizeLinear", ["y_f", "y_s", "y_zp"], ["y_q"], name="y_q"),
                   helper.make_node("DequantizeLinear", ["y_q", "y_s", "y_zp"], ["y"], name="y_dq")])
    g.initializer.extend([tensor("y_s", np.float32(0.05)), tensor("y_zp", 128, "uint8")])
    return m


def _inspect(tmp_path, model, *args):
    path = tmp_path / "m.onnx"
    onnx.save(model, path)
    r = CliRunner().invoke(main, ["inspect", str(path), *args])
    assert r.exit_code == 0, r.output
    return r.output


def test_a_group_the_release_leaves_in_float_is_counted_as_qt501_reports_it(tmp_path):
    a = analyze(conv_qdq(), ".")
    groups = predict.groups_in(a, "onnxruntime")
    qt501 = [f for f in predict.findings_in(a, ["onnxruntime"]) if f.code == "QT501"]
    assert groups == {"integer": 0, "float": 1, "not_measured": 0, "float_ops": {"Conv": 1}}
    assert len(qt501) == groups["float"]
    doc = json.loads(_inspect(tmp_path, conv_qdq(), "--format", "json", "--target", "onnxruntime"))
    assert doc["targets"][0]["groups"] == groups
    assert "0 of 1 (float: Conv x1)" in _inspect(tmp_path, conv_qdq(), "--target", "onnxruntime")


def test_a_fused_group_is_counted_in_integer(tmp_path):
    model = _with_q_after(conv_qdq())
    onnx.checker.check_model(model, full_check=True)
    a = analyze(model, ".")
    groups = predict.groups_in(a, "onnxruntime")
    assert groups["integer"] >= 1 and groups["float_ops"] == {}
    assert not [f for f in predict.findings_in(a, ["onnxruntime"]) if f.code == "QT501"]
    assert f"{groups['integer']} of " in _inspect(tmp_path, model, "--target", "onnxruntime")


def test_a_release_without_measured_fusion_says_nothing_of_groups(tmp_path):
    a = analyze(conv_qdq(), ".")
    assert predict.groups_in(a, "nnapi") is None  # no fusion measured
    assert predict.groups_in(a, "tensorrt-10") is None  # every onnxruntime release is measured
    doc = json.loads(_inspect(tmp_path, conv_qdq(), "--format", "json", "--target", "nnapi"))
    assert doc["targets"][0]["groups"] is None
    assert os.path.exists(FIXTURES)
