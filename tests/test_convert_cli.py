"""The `qlin convert` command: exit codes, nothing written on refusal, safe writing, nothing lost."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import onnx
import pytest
from builders import make, tensor
from click.testing import CliRunner
from convert_builders import q_model
from onnx import TensorProto, helper

from qlin_cli.cli import main


def _cli(*args):
    return CliRunner().invoke(main, ["convert", *map(str, args)])


@pytest.fixture
def q21_int16(tmp_path):
    p = tmp_path / "m.onnx"
    onnx.save(q_model(21, zero_point=np.int16(5), zp_type="int16"), p)
    return p


def test_refusal_exits_1_lists_the_way_out_and_writes_nothing(q21_int16, tmp_path):
    out = tmp_path / "out.onnx"
    r = _cli(q21_int16, "--to-opset", 19, "-o", out)
    assert r.exit_code == 1
    assert "int16" in r.output and "'node0'" in r.output
    assert "--to-domain com.microsoft" in r.output and "--lower" in r.output and "--to-opset 21" in r.output
    assert not out.exists()
    assert sorted(os.listdir(tmp_path)) == ["m.onnx"]


def test_dry_run_writes_nothing(q21_int16, tmp_path):
    r = _cli(q21_int16, "--to-opset", 23, "--dry-run")
    assert r.exit_code == 0 and "dry run" in r.output
    r = _cli(q21_int16, "--to-opset", 13, "--dry-run")
    assert r.exit_code == 1
    assert sorted(os.listdir(tmp_path)) == ["m.onnx"]


def test_json_report(q21_int16, tmp_path):
    r = _cli(q21_int16, "--to-opset", 13, "--to-domain", "com.microsoft", "-o", tmp_path / "o.onnx",
             "--format", "json")
    assert r.exit_code == 0, r.output
    rep = json.loads(r.output)
    assert rep["summary"]["converted"] == 1 and rep["summary"]["verified"] == 1
    assert rep["version"] == 3
    assert rep["opsets"]["to"] == {"ai.onnx": 13, "com.microsoft": 1}  # domains as check's JSON names them
    assert rep["ir_version"]["to"] == 7


def test_lower_writes_primitive_ops(q21_int16, tmp_path):
    out = tmp_path / "low.onnx"
    r = _cli(q21_int16, "--to-opset", 13, "--lower", "-o", out)
    assert r.exit_code == 0, r.output
    ops = [n.op_type for n in onnx.load(out).graph.node]
    assert "QuantizeLinear" not in ops and "Round" in ops and ops[-1] == "Cast"
    onnx.checker.check_model(str(out), full_check=True)


def test_no_verify(q21_int16, tmp_path):
    r = _cli(q21_int16, "--to-domain", "com.microsoft", "--no-verify", "-o", tmp_path / "o.onnx")
    assert r.exit_code == 0 and "1 Q/DQ converted; 0 proven bit for bit, 1 not proven" in r.output
    r = _cli(q21_int16, "--to-domain", "com.microsoft", "-o", tmp_path / "p.onnx")
    assert r.exit_code == 0 and "1 Q/DQ converted; 1 proven bit for bit" in r.output
    assert "opsets: ai.onnx 21 -> ai.onnx 21, com.microsoft 1" in r.output  # --to-domain keeps the opset


def test_a_node_the_target_takes_as_it_is_is_not_reproven(q21_int16, tmp_path):
    r = _cli(q21_int16, "--to-opset", 23, "-v", "-o", tmp_path / "o.onnx")
    assert r.exit_code == 0 and "1 Q/DQ valid as they are; 0 proven bit for bit" in r.output
    assert "kept" in r.output and "nothing to rewrite" in r.output  # --verbose: one line per node


def test_symlink_output_refused(q21_int16, tmp_path):
    target = tmp_path / "real.onnx"
    target.write_bytes(b"keep")
    link = tmp_path / "link.onnx"
    link.symlink_to(target)
    r = _cli(q21_int16, "--to-opset", 23, "-o", link)
    assert r.exit_code == 2 and "symbolic link" in r.output
    assert target.read_bytes() == b"keep"


def test_output_that_is_the_input_needs_in_place(q21_int16, tmp_path):
    before = q21_int16.read_bytes()
    hard = tmp_path / "same.onnx"
    os.link(q21_int16, hard)
    for out in (q21_int16, hard):
        r = _cli(q21_int16, "--to-opset", 23, "-o", out)
        assert r.exit_code == 2 and "--in-place" in r.output
    assert q21_int16.read_bytes() == before
    os.unlink(hard)
    r = _cli(q21_int16, "--to-opset", 23, "--in-place")
    assert r.exit_code == 0, r.output
    assert {o.domain: o.version for o in onnx.load(q21_int16).opset_import}[""] == 23


def test_bad_input_exits_2_without_traceback(tmp_path):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    r = _cli(bad, "--to-opset", 13, "-o", tmp_path / "o.onnx")
    assert r.exit_code == 2 and "qlin: error:" in r.output and "Traceback" not in r.output
    r = _cli(bad, "--to-opset", 13)
    assert r.exit_code == 2


def _rich_model(tmp_path):
    """Weights as external data, a model-local function with Q/DQ, metadata everywhere."""
    w = tensor("w", np.arange(64, dtype=np.int8).reshape(8, 8))
    s = tensor("s", np.float32(0.05))
    z = tensor("z", np.int8(0))
    nodes = [
        helper.make_node("DequantizeLinear", ["w", "s", "z"], ["wf"], name="dq_w", doc_string="weights"),
        helper.make_node("MatMul", ["x", "wf"], ["m"], name="mm"),
        helper.make_node("QDQ", ["m", "s", "z"], ["y"], name="call", domain="local"),
    ]
    nodes[0].metadata_props.add(key="origin", value="test")
    fn = helper.make_function(
        "local", "QDQ", ["a", "sc", "zp"], ["b"],
        [helper.make_node("QuantizeLinear", ["a", "sc"], ["q"], name="fq",
                          output_dtype=TensorProto.INT8),
         helper.make_node("DequantizeLinear", ["q", "sc", "zp"], ["b"], name="fdq")],
        [helper.make_opsetid("", 21)])
    # a function body carries no types unless it declares them: qlin needs the scale's shape
    fn.value_info.extend([helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 8]),
                          helper.make_tensor_value_info("sc", TensorProto.FLOAT, []),
                          helper.make_tensor_value_info("zp", TensorProto.INT8, []),
                          helper.make_tensor_value_info("q", TensorProto.INT8, [2, 8])])
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 8])], initializer=[w, s, z],
        value_info=[helper.make_tensor_value_info("m", TensorProto.FLOAT, [2, 8])], doc_string="graph doc")
    model = make(graph, {"": 21, "local": 1}, functions=[fn])
    model.producer_version = "9.9"
    model.doc_string = "model doc"
    model.metadata_props.add(key="author", value="qlin")
    path = tmp_path / "rich.onnx"
    onnx.save(model, path, save_as_external_data=True, all_tensors_to_one_file=True,
              location="rich.weights", size_threshold=16)
    return path


def test_nothing_lost_and_external_data_stays_external(tmp_path):
    src = _rich_model(tmp_path)
    outdir = tmp_path / "out"
    outdir.mkdir()
    out = outdir / "r13.onnx"
    r = _cli(src, "--to-opset", 13, "-o", out)
    assert r.exit_code == 0, r.output
    assert sorted(os.listdir(outdir)) == ["r13.onnx", "r13.onnx.data"]
    m = onnx.load(out, load_external_data=False)
    w = next(t for t in m.graph.initializer if t.name == "w")
    assert w.data_location == TensorProto.EXTERNAL
    assert {e.key: e.value for e in w.external_data}["location"] == "r13.onnx.data"
    assert (m.producer_name, m.producer_version, m.doc_string) == ("qlin-fixtures", "9.9", "model doc")
    assert {p.key: p.value for p in m.metadata_props} == {"author": "qlin"}
    assert m.graph.doc_string == "graph doc" and [v.name for v in m.graph.value_info] == ["m"]
    dq = m.graph.node[0]
    assert dq.doc_string == "weights" and {p.key: p.value for p in dq.metadata_props} == {"origin": "test"}
    fn = m.functions[0]
    assert {o.domain: o.version for o in fn.opset_import} == {"": 13}
    assert [n.op_type for n in fn.node] == ["Constant", "QuantizeLinear", "DequantizeLinear"]
    assert not fn.node[1].attribute  # output_dtype became the Constant zero point
    assert m.ir_version == 10  # opset 13 needs IR 7, functions 8, node metadata_props 10
    onnx.checker.check_model(str(out), full_check=True)
    full_in = onnx.load(src)
    full_out = onnx.load(out)
    wa = onnx.numpy_helper.to_array(next(t for t in full_in.graph.initializer if t.name == "w"))
    wb = onnx.numpy_helper.to_array(next(t for t in full_out.graph.initializer if t.name == "w"))
    assert wa.tobytes() == wb.tobytes()
    import onnxruntime as ort

    x = np.random.default_rng(0).standard_normal((2, 8)).astype(np.float32)
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    a = ort.InferenceSession(str(src), so, providers=["CPUExecutionProvider"]).run(None, {"x": x})
    b = ort.InferenceSession(str(out), so, providers=["CPUExecutionProvider"]).run(None, {"x": x})
    assert a[0].tobytes() == b[0].tobytes()


def test_ir_version_override(q21_int16, tmp_path):
    out = tmp_path / "o.onnx"
    assert _cli(q21_int16, "--to-opset", 23, "--ir-version", 12, "-o", out).exit_code == 0
    assert onnx.load(out).ir_version == 12


def test_help_does_not_import_onnxruntime():
    code = ("import sys; from click.testing import CliRunner; from qlin_cli.cli import main; "
            "r = CliRunner().invoke(main, ['convert', '--help']); assert r.exit_code == 0, r.output; "
            "assert 'onnxruntime' not in sys.modules and 'onnx' not in sys.modules, 'heavy import'")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_model_with_errors_is_refused_before_conversion(tmp_path):
    from paths import MODELS

    bad = os.path.join(MODELS, "rules", "QL405-bad.onnx")
    r = _cli(bad, "--to-opset", 13, "-o", tmp_path / "o.onnx")
    assert r.exit_code == 1 and not (tmp_path / "o.onnx").exists()
    assert "has 1 error (QL405) that the conversion does not resolve: run `qlin check" in r.stderr
    assert "proof" not in r.stderr + r.output


def test_target_needed(q21_int16, tmp_path):
    r = _cli(q21_int16, "-o", tmp_path / "o.onnx")
    assert r.exit_code == 2 and "--to-opset" in r.stderr


def test_ir_version_too_low_for_the_target_is_one_line(q21_int16, tmp_path):
    r = _cli(q21_int16, "--to-opset", 21, "--ir-version", 9, "-o", tmp_path / "o.onnx")
    assert r.exit_code == 2 and not (tmp_path / "o.onnx").exists()
    assert r.stderr.strip().splitlines() == [
        "qlin: error: --ir-version: 9 cannot carry the result: it needs IR 10 or later (ai.onnx opset 21)"]


def test_ir_raised_when_the_input_stores_a_type_its_ir_lacks(tmp_path):
    """onnxruntime's quantizer writes int4 weights into IR 7 files (int4 exists from IR 10):
    `qlin check` reports it (QL205), and convert, which mends it, goes ahead and writes
    the IR the stored types need."""
    model = q_model(21, zero_point=np.zeros((), np.int8), zp_type="int4", out_type="int4")
    model.ir_version = 7
    src = tmp_path / "m.onnx"
    onnx.save(model, src)
    r = _cli(src, "--to-domain", "com.microsoft", "-o", tmp_path / "o.onnx")
    assert r.exit_code == 0, r.output + r.stderr
    assert onnx.load(tmp_path / "o.onnx").ir_version == 10
    from qlin_cli.check.engine import check_file

    assert "QL205" in {d.code for d in check_file(str(src)).diagnostics}
    assert "QL205" not in {d.code for d in check_file(str(tmp_path / "o.onnx")).diagnostics}


def test_lowering_never_expands_a_blocked_scale_past_its_cap(tmp_path):
    """A small file declaring a huge x: --lower would write the scale once per element of x."""
    scale = np.full((64, 512), 0.5, np.float32)
    node = onnx.helper.make_node("QuantizeLinear", ["x", "s"], ["y"], name="q", axis=1, block_size=1024)
    graph = onnx.helper.make_graph(
        [node], "g", [onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [64, 2**19])],
        [onnx.helper.make_tensor_value_info("y", onnx.TensorProto.UINT8, [64, 2**19])],
        initializer=[tensor("s", scale)])
    src = tmp_path / "m.onnx"
    onnx.save(make(graph, {"": 21}), src)
    r = _cli(src, "--to-opset", 19, "--lower", "--dry-run")
    assert r.exit_code == 1
    assert "would hold 33554432 values (at most 16777216 are written)" in r.output


# ---- the conversion as the fix; JSON on every path -----------------------------------
def _int4_at(opset: int, path):
    """Q -> DQ on int4 at ``opset``: errors below 21 (QL201), valid at 21."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])
    inits = [helper.make_tensor("s", TensorProto.FLOAT, [], [0.5]),
             helper.make_tensor("z", TensorProto.INT4, [], [1])]
    g = helper.make_graph([helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], name="q"),
                           helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], name="dq")],
                          "g", [x], [y], inits)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=9), path)
    return path


def test_a_model_whose_errors_the_target_opset_resolves_is_converted(tmp_path):
    src = _int4_at(19, tmp_path / "m.onnx")
    out = tmp_path / "o.onnx"
    r = _cli(src, "--to-opset", 21, "-o", out, "--format", "json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    # the types' errors, and the IR 9 file's int4 (QL205), which the conversion's IR 10 mends
    assert doc["status"] == "converted"
    assert {f["code"] for f in doc["resolved"]} == {"QL201", "QL202", "QL205"}
    check = CliRunner().invoke(main, ["check", "--jobs", "1", str(out)])
    assert check.exit_code == 0 and "0 errors" in check.output, check.output
    onnx.checker.check_model(onnx.load(out), full_check=True)  # and onnx's own checker agrees
    ort = pytest.importorskip("onnxruntime")
    x = np.array([-1.0, 0.2, 1.3, 9.0], np.float32)
    got = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    # int4 saturates to [-8, 7]: q = clip(round(x / 0.5) + 1), y = (q - 1) * 0.5
    np.testing.assert_array_equal(got, (np.clip(np.round(x / 0.5) + 1, -8, 7) - 1) * 0.5)


def test_a_model_whose_errors_stay_is_refused_with_them(tmp_path):
    src = _int4_at(19, tmp_path / "m.onnx")
    r = _cli(src, "--to-opset", 20, "-o", tmp_path / "o.onnx")
    assert r.exit_code == 1 and not (tmp_path / "o.onnx").exists()
    assert "that the conversion does not resolve" in r.stderr and "QL201" in r.stderr


@pytest.mark.parametrize("case", ["usage", "unreadable", "invalid", "no-way", "converted", "dry-run"])
def test_json_on_every_path(case, tmp_path):
    from paths import MODELS

    clean = os.path.join(MODELS, "clean", "per_channel_chain.onnx")
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"\x00not a model")
    args, status, word = {
        "usage": ([clean, "--to-opset", 21, "-o", tmp_path / "a.onnx", "--in-place"], 2, "error"),
        "unreadable": ([junk, "--to-opset", 21, "-o", tmp_path / "a.onnx"], 2, "error"),
        "invalid": ([_int4_at(19, tmp_path / "m19.onnx"), "--to-opset", 20, "--dry-run"], 1, "refused"),
        "no-way": ([_int4_at(21, tmp_path / "m21.onnx"), "--target", "nnapi", "--dry-run"], 1, "refused"),
        "converted": ([clean, "--to-opset", 21, "-o", tmp_path / "a.onnx"], 0, "converted"),
        "dry-run": ([clean, "--to-opset", 21, "--dry-run"], 0, "converted"),
    }[case]
    r = _cli(*args, "--format", "json")
    assert r.exit_code == status, r.output
    doc = json.loads(r.stdout)
    assert doc["status"] == word and doc["input"] == str(args[0]) and doc["version"] == 3  # every path
    if status:
        assert doc["output"] is None and doc["reason"]
        assert r.stderr.startswith("qlin: error: ")


def test_a_rewrite_the_target_computes_differently_is_refused(monkeypatch):
    """With --target, a converted node on which the target would compute something else
    than the spec (a QT4xx warning) where it ran the source's node as the spec says is not
    written; a warning on a node the target refused in the source is reported."""
    from qlin_cli import convert_pipeline
    from qlin_cli.finding import Finding
    from qlin_cli.targets import predict

    def warning(code, node, severity="warning"):
        return Finding(code, severity, "m", node, "QuantizeLinear", "ai.onnx", 21, "main")

    source, result = _stub_analysis(), object()  # two analyses: the source's and the result's
    seen = {result: [warning("QT401", "q1")], source: []}
    monkeypatch.setattr(predict, "findings_in", lambda a, targets, advice=True, severities=None: seen[a])
    with pytest.raises(convert_pipeline.Stop) as stop:
        convert_pipeline._hold_against(source, result, "onnxruntime", "m.onnx")
    assert [f.code for f in stop.value.findings] == ["QT401"] and "differently" in stop.value.reason
    seen[source] = [warning("QT401", "q1")]  # the same warning on the source: nothing new
    assert convert_pipeline._hold_against(source, result, "onnxruntime", "m.onnx") == []
    seen[source] = [warning("QT104", "q1", "error")]  # refused in the source: reported, not refused
    kept = convert_pipeline._hold_against(source, result, "onnxruntime", "m.onnx")
    assert [f.code for f in kept] == ["QT401"]
    # without a target: the measured runtimes' new warnings are listed, none refused
    seen[source] = []
    assert [f.code for f in convert_pipeline._differences(source, result)] == ["QT401", "QT401"]


def test_without_a_target_the_source_is_judged_only_where_the_result_has_something_to_report(monkeypatch):
    """Plain convert lists what a measured runtime does differently with the result: an
    error or a warning on the result. Where the result has neither for a runtime (infos
    only, or nothing), the source's findings for it cannot change the report and are not
    worked out; where it has one, they are."""
    from qlin_cli import convert_pipeline
    from qlin_cli.finding import Finding
    from qlin_cli.targets import predict

    def finding(code, severity):
        return Finding(code, severity, "m", "q1", "QuantizeLinear", "ai.onnx", 21, "main")

    source, result = _stub_analysis(), object()
    asked = []
    found = {"onnxruntime": [finding("QT207", "info")], "openvino": [finding("QT405", "warning")]}

    def spy(a, targets, advice=True, severities=None):  # (as findings_in: only those severities)
        asked.append((a is source, targets[0]))
        kept = found[targets[0]] if a is not source else []
        return [f for f in kept if severities is None or f.severity in severities]

    monkeypatch.setattr(predict, "findings_in", spy)
    assert [f.code for f in convert_pipeline._differences(source, result)] == ["QT405"]
    assert [name for was_source, name in asked if was_source] == ["openvino"]
    assert sorted(name for was_source, name in asked if not was_source) == ["onnxruntime", "openvino"]


def _stub_analysis(names=("q1",)):
    """An analysis as _differences reads it to place the source's findings: its model, one
    QuantizeLinear node of each name (and one unnamed, #len(names))."""
    from onnx import helper

    class Stub:
        pass

    nodes = [helper.make_node("QuantizeLinear", ["x", "s"], [f"y{i}"], name=n) for i, n in enumerate(names)]
    nodes.append(helper.make_node("QuantizeLinear", ["x", "s"], ["z"]))
    stub = Stub()
    stub.model = helper.make_model(helper.make_graph(nodes, "g", [], []))
    return stub


def test_the_source_is_not_judged_where_the_result_warns_only_on_new_nodes(monkeypatch):
    """A result whose runtime findings are warnings on nodes the source has no node for (a
    format rewrite's new nodes) keeps every one whatever the source's findings are: those
    are not worked out. A warning on a name or #index the source has, or an error, asks them."""
    from qlin_cli import convert_pipeline
    from qlin_cli.finding import Finding
    from qlin_cli.targets import predict

    def finding(node, severity="warning"):
        return Finding("QT406", severity, "m", node, "DequantizeLinear", "ai.onnx", 21, "main")

    source, result = _stub_analysis(), object()
    asked = []
    found: list = []

    def spy(a, targets, advice=True, severities=None):
        asked.append(a is source)
        return [finding("q1")] if a is source else found

    monkeypatch.setattr(predict, "findings_in", spy)
    for nodes, severity, source_asked in [(["q1_dq0", "#7"], "warning", False), (["q1"], "warning", True),
                                          (["#1"], "warning", True), (["new"], "error", True)]:
        asked.clear()
        found[:] = [finding(n, severity) for n in nodes]
        kept = convert_pipeline._differences(source, result)
        assert any(asked) == source_asked, nodes
        # what is kept is what differing keeps against the source's real findings
        assert kept == convert_pipeline.differing([finding("q1")], found, convert_pipeline._placed) * 2


def test_names_in_resolved_errors_are_printable(tmp_path):
    """A node name with a terminal escape reaches the report of resolved errors escaped."""
    src = _int4_at(19, tmp_path / "m.onnx")
    m = onnx.load(src)
    m.graph.node[0].name = "q\x1b[31mred"
    onnx.save(m, src)
    # color=True: click would otherwise strip escapes from what is not a terminal
    args = ["convert", str(src), "--to-opset", "21", "-o", str(tmp_path / "o.onnx"), "-v"]
    r = CliRunner().invoke(main, args, color=True)
    assert r.exit_code == 0, r.output
    assert "resolved:" in r.output and "\x1b" not in r.output and "red" in r.output
    js = _cli(src, "--to-opset", 20, "--dry-run", "--format", "json")
    assert js.exit_code == 1 and "\x1b" not in js.stdout
    assert any("red" in f["node"] for f in json.loads(js.stdout)["refused"])


def test_a_refusal_is_a_finding_with_its_code_in_json_and_text(tmp_path):
    """Each refused node is a Finding (convert/codes/): JSON gives it as check's JSON gives a
    finding (node, graph, op, domain, opset as fields) with its ways out; the text report
    leads with the code."""
    src = _int4_at(21, tmp_path / "m.onnx")
    r = _cli(src, "--to-opset", 13, "--dry-run", "--format", "json")
    assert r.exit_code == 1, r.output
    doc = json.loads(r.stdout)
    assert doc["status"] == "refused" and doc["summary"]["refused"] == 2
    first = doc["refused"][0]
    assert first["code"] == "QC102" and (first["node"], first["graph"]) == ("q", "main")
    assert (first["op_type"], first["domain"], first["opset"]) == ("QuantizeLinear", "ai.onnx", 21)
    assert "int4" in first["message"] and first["severity"] == "error"
    assert "--to-domain com.microsoft" in first["ways_out"], first
    text = _cli(src, "--to-opset", 13, "--dry-run")
    assert text.exit_code == 1 and "QC102 'q' in main  QuantizeLinear (ai.onnx 21): " in text.output
    from qlin_cli.convert.run import convert_model
    from qlin_cli.convert.state import Options
    from qlin_cli.finding import Finding

    result = convert_model(onnx.load(src), str(tmp_path), Options(13))
    assert all(isinstance(f, Finding) and f.code == "QC102" for f in result.refused)
    assert [(f.node, f.op_type, f.domain, f.opset, f.graph) for f in result.refused] == [
        ("q", "QuantizeLinear", "ai.onnx", 21, "main"), ("dq", "DequantizeLinear", "ai.onnx", 21, "main")]


def test_a_refusal_with_nothing_converted_opens_with_the_refusal():
    """No 'nothing to change; 0 proven bit for bit' before 'refused (1)' (new user's list,
    point 6): a conversion refused whole says so first; one that converts some nodes still
    counts them."""
    import os

    from click.testing import CliRunner
    from paths import MODELS

    from qlin_cli.cli import main

    r = CliRunner().invoke(main, ["convert", os.path.join(MODELS, "clean", "blocked_int4.onnx"),
                                  "--to-opset", "19", "--dry-run"])
    lines = r.stdout.splitlines()
    assert r.exit_code == 1 and lines[1].startswith("refused (1)"), lines
    assert "nothing to change" not in r.stdout
    ok = CliRunner().invoke(main, ["convert", os.path.join(MODELS, "clean", "per_channel_chain.onnx"),
                                   "--to-opset", "21", "--dry-run"])
    assert ok.exit_code == 0 and "proven bit for bit" in ok.stdout


def test_errors_every_conversion_mends_are_mended_and_listed(tmp_path):
    """The new user's list, point 8: onnxruntime's quantizer writes int4 into an IR 7 file
    (QL205). `convert --target onnxruntime`, which runs it, raised nothing and wrote "a copy
    of the source, unchanged" with the error still in it; `--to-opset 21` raised the IR but
    said "nothing to change". Both now write IR 10, list QL205 as resolved, and the result
    checks clean."""
    import json as _json

    import corpus
    import onnx as _onnx
    from click.testing import CliRunner

    from qlin_cli.check.engine import check_file
    from qlin_cli.cli import main

    src = corpus.build(tmp_path / "corpus", ["cnn_qdq_u8s4_op13"])["cnn_qdq_u8s4_op13"]
    assert "QL205" in {d.code for d in check_file(src).diagnostics}
    for args in (["--target", "onnxruntime"], ["--to-opset", "21"]):
        out = tmp_path / f"out{len(args[1])}.onnx"
        r = CliRunner().invoke(main, ["convert", src, *args, "-o", str(out), "--format", "json"])
        assert r.exit_code == 0, r.output
        doc = _json.loads(r.stdout)
        assert [f["code"] for f in doc["resolved"]] == ["QL205"], doc
        assert _onnx.load(str(out)).ir_version >= 10
        assert not [d for d in check_file(str(out)).diagnostics if d.severity == "error"]
    text = CliRunner().invoke(main, ["convert", src, "--to-opset", "21", "--dry-run"])
    assert "resolved: 1 error of the source (QL205)" in text.stdout and "nothing to change" not in text.stdout
