"""Ways out that are qlin commands: a message that names `qlin convert --to-opset N` is
taken at its word (the command, run, leaves a clean model); the summary counts what
`qlin check --fix` fixes; QL405 names the axis the scale fits; --diff is a unified diff
of the nodes' text, the one --fix then writes."""

from __future__ import annotations

import os
import re
import shutil

import onnx
import pytest
from click.testing import CliRunner
from onnx import TensorProto, helper
from paths import MODELS

from qlin_cli.api import check_model
from qlin_cli.check.engine import check_file
from qlin_cli.cli import main
from qlin_cli.fix.text import model_text, unified


def _run(*args):
    return CliRunner().invoke(main, [*map(str, args)])


def _save(nodes, inits, opset, path, ir=10, shape=(4,)):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, list(shape))
    g = helper.make_graph(nodes, "g", [x], [y], inits)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=ir), path)
    return path


def _int4_pair(path):
    inits = [helper.make_tensor("s", TensorProto.FLOAT, [], [0.5]),
             helper.make_tensor("z", TensorProto.INT4, [], [1])]
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], name="q"),
             helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], name="dq")]
    return _save(nodes, inits, 19, path, ir=9)


def _q_at_9(path):
    """QuantizeLinear at ai.onnx 9, before its first version (QL104)."""
    shutil.copy(os.path.join(MODELS, "rules", "QL104-bad.onnx"), path)
    return path


@pytest.mark.parametrize("build,code", [(_int4_pair, "QL201"), (_q_at_9, "QL104")])
def test_the_command_a_message_names_resolves_it(build, code, tmp_path):
    src = build(tmp_path / "m.onnx")
    found = [d for d in check_file(str(src)).diagnostics if d.code == code]
    assert found, check_file(str(src)).diagnostics
    command = re.search(r"`qlin (convert [^`]+)`", found[0].detail)
    assert command, found[0].detail
    out = tmp_path / "o.onnx"
    r = _run(*command.group(1).split(), src, "-o", out)
    assert r.exit_code == 0, r.output
    assert [d for d in check_file(str(out)).diagnostics if d.severity == "error"] == []


def test_the_summary_counts_what_fix_fixes():
    r = _run("check", "--jobs", "1", os.path.join(MODELS, "rules", "QL303-bad.onnx"))
    assert "1 fixable with `qlin check --fix`" in r.output.splitlines()[-1]
    clean = _run("check", "--jobs", "1", os.path.join(MODELS, "rules", "QL401-bad.onnx"))
    assert "fixable" not in clean.output


def _per_axis(shape, n, axis):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))
    y = helper.make_tensor_value_info("y", TensorProto.UINT8, None)
    g = helper.make_graph([helper.make_node("QuantizeLinear", ["x", "s"], ["y"], name="q", axis=axis)],
                          "g", [x], [y], [helper.make_tensor("s", TensorProto.FLOAT, [n], [0.1] * n)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])


@pytest.mark.parametrize("shape,n,axis,says", [
    ((4, 3), 4, 1, "set axis to 0, the axis of x with 4 elements"),
    ((4, 4, 3), 4, 2, "(0, 1 have 4 elements)"),
    ((2, 3), 5, 1, "give the scale 3 elements or fix axis"),
])
def test_ql405_names_the_axis_the_scale_fits(shape, n, axis, says):
    found = [f.detail for f in check_model(_per_axis(shape, n, axis)) if f.code == "QL405"]
    assert len(found) == 1 and says in found[0], found


def test_diff_is_the_unified_diff_fix_then_writes(tmp_path):
    path = tmp_path / "m.onnx"
    shutil.copy(os.path.join(MODELS, "rules", "QL303-bad.onnx"), path)
    before = model_text(onnx.load(path))
    r = _run("check", "--no-config", "--diff", path)
    assert r.exit_code == 1
    lines = r.stdout.splitlines()
    start = lines.index(f"--- {path}")
    assert lines[start + 1] == f"+++ {path} (fixed)" and lines[start + 2].startswith("@@ ")
    removed = [x for x in lines if x.startswith("-  ")]
    added = [x for x in lines if x.startswith("+  ")]
    assert len(removed) == len(added) == 1 and "saturate" in removed[0] and "saturate" not in added[0]
    assert _run("check", "--no-config", "--fix", path).exit_code == 0
    assert "\n".join(lines[start:-1]) == unified(str(path), before, model_text(onnx.load(path)))


def test_one_model_edit_shows_once_for_two_findings(tmp_path):
    """Two tensors of a type IR 10 introduced at IR 9: two QL205 findings, one edit."""
    src = _int4_pair(tmp_path / "m.onnx")
    m = onnx.load(src)
    m.opset_import[0].version = 21
    onnx.save(m, src)
    assert len([d for d in check_file(str(src)).diagnostics if d.code == "QL205"]) >= 1
    r = _run("check", "--no-config", "--diff", src)
    assert [x for x in r.stdout.splitlines() if x.startswith(("-ir_version", "+ir_version"))] == [
        "-ir_version: 9", "+ir_version: 10"]
