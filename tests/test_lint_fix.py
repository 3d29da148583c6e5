"""`qlin check --fix` / `--diff`: safe fixes applied to the node the finding names, node
edits proven with qlin's evaluator, the fixed model re-checked, written in place keeping
its mode; --diff writes nothing; rule docs say which rules have a fix."""

from __future__ import annotations

import hashlib
import os
import shutil
import stat

import numpy as np
import onnx
import pytest
from click.testing import CliRunner
from onnx import TensorProto, helper, numpy_helper
from paths import MODELS

from qlin_cli import rule_docs
from qlin_cli.check.engine import check_file
from qlin_cli.cli import main
from qlin_cli.codes import off_by_default
from qlin_cli.evaluator import evaluate
from qlin_cli.fix import fix_file
from qlin_cli.rules.base import Fix, SetAttribute

FIXABLE = ["QL012", "QL103", "QL108", "QL109", "QL205", "QL206", "QL303", "QL402", "QL409"]


def run(*args):
    r = CliRunner().invoke(main, ["check", "--no-config", *map(str, args)])
    return r.exit_code, r.stdout, r.stderr


def digest(path) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


@pytest.mark.parametrize("code", FIXABLE)
def test_fix_removes_the_finding_and_keeps_the_mode(code, tmp_path):
    path = tmp_path / "m.onnx"
    shutil.copy(os.path.join(MODELS, "rules", f"{code}-bad.onnx"), path)
    os.chmod(path, 0o640)
    select = [code] if code in off_by_default() else None  # a rule off by default fixes when selected
    flags = ["--select", code] if select else []
    assert code in {d.code for d in check_file(str(path), select).diagnostics}
    before = digest(path)
    rc, out, err = run("--diff", *flags, path)
    assert rc == 1 and f"{path}:" in out and f" {code} " in out and digest(path) == before
    assert "nothing written" in out.splitlines()[-1]
    rc, out, err = run("--fix", *flags, path)
    assert err == "" and "fixed" in out.splitlines()[-1]
    assert code not in {d.code for d in check_file(str(path), select).diagnostics}
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640
    assert sorted(os.listdir(tmp_path)) == ["m.onnx"]  # no temporary or data file left
    rc, out, _ = run("--diff", *flags, path)
    assert rc == 0 and out.startswith("0 fixes")


def _two_quantizers_and_a_mul(tmp_path):
    """Two QuantizeLinear-21 share a shape-[1] scale (QL409 on both); a Mul reads it too."""
    s = numpy_helper.from_array(np.array([0.5], np.float32), "s")
    z = numpy_helper.from_array(np.array([3], np.uint8), "z")
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q1"], name="q1"),
             helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q2"], name="q2"),
             helper.make_node("Mul", ["x", "s"], ["m"], name="mul")]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                          [helper.make_tensor_value_info(n, t, [2, 3]) for n, t in
                           (("q1", TensorProto.UINT8), ("q2", TensorProto.UINT8), ("m", TensorProto.FLOAT))],
                          initializer=[s, z])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
    m.ir_version = 10
    path = tmp_path / "shared.onnx"
    onnx.save(m, path)
    return path


def q_inputs(m):
    return [list(n.input) for n in m.graph.node if n.op_type == "QuantizeLinear"]


def test_a_shared_constant_is_copied_for_the_fixed_node_only(tmp_path):
    path = _two_quantizers_and_a_mul(tmp_path)
    assert [d.code for d in check_file(str(path), ["QL409"]).diagnostics] == ["QL409", "QL409"]
    rc, out, err = run("--fix", "--select", "QL409", path)
    assert err == "" and out.splitlines()[-1].endswith("; 2 fixed")
    m = onnx.load(path)
    inits = {t.name: list(t.dims) for t in m.graph.initializer}
    assert inits["s"] == [1]  # the Mul still reads the shape-[1] scale
    # z: q1 got a copy; q2, then its only reader, has it reshaped in place
    assert q_inputs(m) == [["x", "s_scalar", "z_scalar"], ["x", "s_scalar_2", "z"]]
    q1, q2, mul = m.graph.node
    assert list(mul.input) == ["x", "s"]
    for q in (q1, q2):
        assert inits[q.input[1]] == [] and inits[q.input[2]] == []
    assert [d.code for d in check_file(str(path)).diagnostics] == []


def test_an_edit_that_would_change_results_is_not_applied(tmp_path):
    """x [3, 3], per-axis scale along axis 0: setting axis=1 fits the shapes but changes
    what the node computes; the proof refuses it and nothing is written."""
    s = numpy_helper.from_array(np.array([0.5, 1.0, 2.0], np.float32), "s")
    node = helper.make_node("QuantizeLinear", ["x", "s"], ["y"], name="q", axis=0)
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 3])],
                          [helper.make_tensor_value_info("y", TensorProto.UINT8, [3, 3])], initializer=[s])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
    m.ir_version = 10
    path = tmp_path / "q.onnx"
    onnx.save(m, path)
    from qlin_cli.check.diagnostic import Diagnostic

    where = "node 'q' (QuantizeLinear-21 (ai.onnx))"
    wrong = Diagnostic("QL402", "warning", "test", "q", "QuantizeLinear", "ai.onnx", 21, "main",
                       Fix("axis along the other dimension", (SetAttribute("axis", 1),)), where)
    same = Diagnostic("QL402", "warning", "test", "q", "QuantizeLinear", "ai.onnx", 21, "main",
                      Fix("axis counted from the end", (SetAttribute("axis", -2),)), where)
    before = digest(path)
    out = fix_file(str(path), [wrong], write=True, post=lambda ds: ds)
    assert out.fixed == [] and "not proven" in out.skipped[0][1] and not out.written
    assert digest(path) == before
    out = fix_file(str(path), [same], write=False, post=lambda ds: ds)
    assert out.fixed == [same]


def test_fixed_models_compute_the_same(tmp_path):
    path = _two_quantizers_and_a_mul(tmp_path)
    x = np.array([[0.1, -3.0, 7.25], [100.0, 0.75, -0.25]], np.float32)
    model = onnx.load(path)
    q_only = onnx.load(path)
    del q_only.graph.node[2]
    del q_only.graph.output[2]
    want = evaluate(q_only, {"x": x})
    run("--fix", path)
    fixed = onnx.load(path)
    del fixed.graph.node[2]
    del fixed.graph.output[2]
    got = evaluate(fixed, {"x": x})
    assert model.graph.node[0].input[1] == "s"
    for a, b in zip(want, got, strict=True):
        assert np.asarray(a).tobytes() == np.asarray(b).tobytes()


def test_rule_docs_say_whether_a_rule_has_a_fix():
    assert sorted(d.code for d in rule_docs.all_docs() if d.fixable) == FIXABLE
    r = CliRunner().invoke(main, ["rule", "QL409"])
    assert "Fixable: `qlin check --fix`" in r.stdout
    r = CliRunner().invoke(main, ["rule", "QL405"])
    assert "Fixable: no" in r.stdout


def test_target_and_convert_code_docs_say_which_command_reports_them():
    r = CliRunner().invoke(main, ["rule", "QT104"])
    assert "Reported by `qlin check --target`" in r.stdout and "Fixable" not in r.stdout
    r = CliRunner().invoke(main, ["rule", "qc401"])
    assert r.exit_code == 0 and "# QC401 proof-failed (error)" in r.stdout
    assert "Reported by `qlin convert`" in r.stdout and "Fixable" not in r.stdout


def test_diff_in_json_is_one_document_of_the_same_fixes():
    """`check --diff --format json` gives what the text --diff prints as one JSON document
    (it printed the text diff); sarif and github are a usage error, as with --statistics."""
    import json as _json

    models = [os.path.join(MODELS, "rules", f"{code}-bad.onnx") for code in ("QL409", "QL303", "QL401")]
    every = ["--select", "QL"]  # QL409 is off by default
    text = CliRunner().invoke(main, ["check", "--jobs", "1", "--diff", *every, *models])
    doc_r = CliRunner().invoke(main, ["check", "--jobs", "1", "--diff", "--format", "json", *every, *models])
    assert doc_r.exit_code == text.exit_code == 1
    doc = _json.loads(doc_r.stdout)
    assert doc["version"] == 2 and doc["summary"] == {"fixes": 2, "files": 2, "written": False}
    said = [f"{f['path']}:{x['graph']}:{x['node']}: {x['code']} {x['title']}"
            for f in doc["files"] for x in f["fixes"]]
    assert said == [line for line in text.stdout.splitlines() if line in said] and len(said) == 2
    assert any(f["diff"].startswith("--- ") and f["diff"] in text.stdout for f in doc["files"])
    bad = CliRunner().invoke(main, ["check", "--diff", "--format", "sarif", *models])
    assert bad.exit_code == 2 and "--diff gives text or json" in bad.output
