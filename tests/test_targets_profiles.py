"""The target profiles as a whole: registry, codes and their documentation, sources, the
capability matrix, the TensorRT rules (documented, not measured: each on a triggering model
and a near miss), the onnxruntime kernel check on ops other than Q/DQ (held against
onnxruntime), and where findings are placed (subgraphs, functions, external data).
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import ml_dtypes
import numpy as np
import onnx
import pytest
import source_trees
from onnx import TensorProto, helper, numpy_helper
from test_targets_matrix import Case, build
from test_targets_ort_table import CASES, _case_id, build_case, ort_outcome

from qlin_cli.finding import Finding
from qlin_cli.targets import codes, ort_table, predict, registry
from qlin_cli.targets.base import DOCUMENTED, KINDS, MEASURED, SOURCE

ROOT = Path(__file__).resolve().parents[1]
TARGETS = ["nnapi", "onnxruntime", "openvino", "tensorrt-10", "tensorrt-11"]


def found(model, target) -> list[Finding]:
    return predict.findings(model, "", [target])


def found_codes(model, target) -> set[str]:
    return {p.code for p in found(model, target)}


# ---- registry, codes, sources ---------------------------------------------------------------------
def test_registry_names_and_aliases():
    assert registry.names() == TARGETS
    pinned = registry.get("onnxruntime@1.31.1")  # a version is a target of its own, judged by its data
    assert pinned.name == "onnxruntime@1.31.1" and pinned.versions == ("1.31.1",)
    assert registry.get("onnxruntime-cpu").name == "onnxruntime"
    assert registry.get(" OpenVINO ").name == "openvino"
    assert registry.get("tensorrt").name == "tensorrt-11"
    assert registry.get("tensorrt@10").name == "tensorrt-10"
    with pytest.raises(registry.UnknownTarget, match="known targets: nnapi, onnxruntime, openvino"):
        registry.get("qnn")
    with pytest.raises(LookupError):
        predict.findings(build(Case("q", "", 21, "float", "float", "int8"))[0], "", "onnxruntime,dml")


def test_every_code_is_documented_like_a_rule():
    all_codes = codes.all_codes()
    assert len(all_codes) >= 20
    for c in all_codes:
        assert re.fullmatch(r"QT[1-5]\d\d", c.code), c.code
        assert re.fullmatch(r"[a-z0-9-]+", c.name) and c.summary.endswith(".")
        doc = c.doc()
        for section in ("What it checks", "Why is this bad?", "Example", "Fix"):
            assert f"## {section}" in doc, (c.code, section)
        # QT4xx: the runtime computes something else (a warning); QT100: judged by older data;
        # QT206: runs on some measured CPUs only; QT207 (an info): the kind was not measured;
        # --confirm's QT209: the runtime ran what qlin said it refuses, QT210 (an info): not confirmed;
        # QT5xx: the runtime runs the op in float where it could have run it in integers
        warns = ("QT100", "QT206", "QT209")
        assert (c.severity == "warning") == (c.code[:3] in ("QT4", "QT5") or c.code in warns), c.code
        assert (c.severity == "info") == (c.code in ("QT207", "QT210")), c.code
    assert len({c.name for c in all_codes}) == len(all_codes)
    with pytest.raises(KeyError):
        codes.get("QT999")


def _emitted_codes() -> set[str]:
    """Every code a target module or a code module passes to ``finding`` (read from the source)."""
    out = set()
    for path in (ROOT / "qlin_cli" / "targets").glob("**/*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "attr", "") == "finding"
                and node.args
                and isinstance(node.args[0], ast.Constant)
            ):
                out.add(node.args[0].value)
    return out


def test_every_code_is_emitted_and_every_emitted_code_exists():
    assert _emitted_codes() == {c.code for c in codes.all_codes()}


def _coded() -> set[str]:
    """Every code a target module hands to ``base.coded`` (whose module holds the logic):
    named in the call, or every code that declares it judges a QuantizeLinear's arithmetic
    (``base.arithmetic_codes()``)."""
    from qlin_cli.targets import base

    out = set()
    for path in (ROOT / "qlin_cli" / "targets").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and "coded" in (getattr(node.func, "id", ""),
                                                          getattr(node.func, "attr", "")):
                given = node.args[1]
                named = isinstance(given, ast.Tuple)
                out |= {e.value for e in given.elts} if named else set(base.arithmetic_codes())
    return out


def test_a_code_of_quantize_arithmetic_is_run_by_declaring_it():
    """A new QT4xx code of a QuantizeLinear's arithmetic is its module: declaring ``judges``
    puts it in what onnxruntime and openvino run on each QuantizeLinear, in code order."""
    from qlin_cli.targets import base
    from qlin_cli.targets.codes import QUANTIZE_ARITHMETIC

    found = base.arithmetic_codes()
    assert found == tuple(sorted(found)) and {"QT401", "QT412"} <= set(found)
    assert all(codes.get(c).judges == QUANTIZE_ARITHMETIC for c in found)
    assert "QT406" not in found  # a DequantizeLinear's: the targets name it where they read it


def test_codes_with_their_logic_are_the_codes_the_targets_run_by_code():
    from qlin_cli.code import Code

    own = {c.code for c in codes.all_codes() if c.check is not Code.check}
    assert own == _coded() == {"QT207", "QT308", "QT309", *(f"QT4{i:02}" for i in range(1, 13)), "QT501"}
    # each reads the targets' facts: a target without them gets nothing, on sites each of
    # which another target reports under that code
    from test_targets_divergence import F16_S, F16_X, _pair, f16_matmul_block, quantize
    from test_targets_probes import _matrix_case

    fixtures = sorted((ROOT / "fixtures").glob("**/*.onnx"))
    models = [onnx.load(str(p), load_external_data=False) for p in fixtures]
    models += [
        quantize(F16_X, F16_S, np.int8(0), x_type=TensorProto.FLOAT16),  # QT401; QT411 on 1.29
        quantize(np.ones(4, np.float32), np.float32(-0.1), np.int8(0)),  # QT407
        _pair(TensorProto.INT16, inner=True), _pair(TensorProto.INT16, inner=False),  # QT408, QT308
        f16_matmul_block("com.microsoft"),  # QT409
        _matrix_case(kind="q", domain="", opset=21, float_type="float", scale_type="float",  # QT410
                     q_type="float8e4m3fnuz", gran="tensor", axis=None, block=0, zp="none",
                     attrs=(("saturate", 0),)),
        __import__("probe_fusion").build(__import__("probe_fusion")._spec(after="output")),  # QT501
    ]
    sites = {}
    for model in models:
        for site in predict.sites(model, str(ROOT)):
            for t in ("onnxruntime", "onnxruntime@1.29", "openvino", "openvino@2025.3", "tensorrt-10"):
                for x in registry.get(t).findings_for(site):
                    sites.setdefault(x.code, site)
    assert own <= set(sites), own - set(sites)
    for code in own:
        assert list(codes.get(code).check(registry.get("nnapi"), sites[code])) == [], code


def _test_names(path: Path) -> set[str]:
    return {n.name for n in ast.walk(source_trees.tree(path)) if isinstance(n, ast.FunctionDef)}


def test_sources_name_their_kind_and_existing_tests():
    for t in registry.all_targets():
        assert t.sources, t.name
        kinds = {s.kind for s in t.sources}
        assert kinds <= set(KINDS)
        assert (MEASURED in kinds) == t.measured, t.name
        if not t.measured:
            assert kinds <= {DOCUMENTED, SOURCE}
            assert all("not measured" in s.note for s in t.sources), t.name
        for s in t.sources:
            for file, name in re.findall(r"(tests/test_targets_\w+\.py)(?:::(\w+))?", s.where):
                path = ROOT / file
                assert path.exists(), (t.name, s.where)
                if name:
                    assert name in _test_names(path), (t.name, s.where)


def test_capability_matrix_is_json_with_one_row_per_target():
    rows = predict.capability_matrix()
    assert [r["name"] for r in rows] == TARGETS
    json.dumps(rows)
    by_name = {r["name"]: r for r in rows}
    table = ort_table.load(ort_table.default_version())  # plain 'onnxruntime': the installed version
    assert (
        by_name["onnxruntime"]["max_opset"] == table.max_opset
        and by_name["onnxruntime"]["max_ir"] == table.max_ir
    )
    assert by_name["tensorrt-10"]["max_opset"] == 24 and by_name["tensorrt-11"]["max_opset"] == 25
    assert by_name["openvino"]["max_opset"] is None
    for r in rows:
        assert r["domains"] and r["quantized_types"] and r["granularities"] and r["notes"]


# ---- TensorRT (documented): every rule on a triggering model and a near miss ----------------------
def _trt(case: Case) -> set[str]:
    """The codes tensorrt-10 finds, and those tensorrt-11 finds prefixed with '@11:'."""
    model = build(case)[0]
    return found_codes(model, "tensorrt-10") | {"@11:" + c for c in found_codes(model, "tensorrt-11")}


CLEAN = Case("qdq", "", 21, "float", "float", "int8")


@pytest.mark.parametrize(
    "case,code",
    [
        (Case("q", "", 25, "float", "float", "int8"), "@11:"),  # no finding for 11 at 25 ...
        (Case("q", "", 25, "float", "float", "int8"), "QT101"),  # ... but 10 stops at 24
        (Case("q", "", 26, "float", "float", "int8"), "@11:QT101"),
        (Case("dq", "com.microsoft", 21, "float", "float", "int8"), "QT104"),
        (Case("q", "", 21, "float", "float", "uint8"), "QT202"),
        (Case("q", "", 21, "float", "float", "int16"), "QT202"),
        (Case("q", "", 19, "float", "float", "float8e5m2"), "QT202"),
        (Case("q", "", 21, "int32", "int32", "int8"), "QT202"),
        (Case("dq", "", 24, "float", "float8e8m0", "int8", out_dtype=True), "QT202"),
        (Case("dq", "", 21, "float", "float", "int8", "block", 1, 4), "QT301"),  # 10: INT4 only
        (
            Case("dq", "", 21, "float", "float", "int4", "block", 1, 4, shape=(2, 4, 8)),
            "QT301",
        ),  # 10: 2-D only
        (Case("dq", "", 21, "float", "float", "int4", "block", 1, 3), "QT302"),
        (Case("dq", "", 21, "float", "float", "int8", negative=True), "QT304"),
        (Case("q", "", 21, "float", "float", "int8", scale_input=True), "QT305"),
        (Case("dq", "", 21, "float", "float", "int8", "axis", 0, zp="nonzero"), "QT306"),
        (Case("dq", "", 21, "float", "float", "int4", shape=(3, 5)), "QT307"),
        (Case("q", "", 23, "float", "float", "int8", attrs=(("precision", TensorProto.FLOAT16),)), "QT402"),
        (Case("q", "", 21, "float", "float", "float8e4m3fn", zp="none", attrs=(("saturate", 0),)), "QT403"),
    ],
)
def test_tensorrt_rules(case, code):
    got = _trt(case)
    if code == "@11:":
        assert not any(c.startswith("@11:") for c in got), got
    else:
        assert code in got, got


@pytest.mark.parametrize(
    "case",
    [
        CLEAN,
        Case("dq", "", 21, "float", "float", "int4", "block", 1, 4),
        Case("dq", "", 21, "float16", "float16", "int4", "axis", 0),
        Case("q", "", 21, "bfloat16", "bfloat16", "float8e4m3fn", zp="none"),
        Case("dq", "", 23, "float", "float", "float4e2m1"),
        Case("q", "", 13, "float", "float", "int8", "axis", 0),
        Case("q", "", 23, "float", "float", "int8", attrs=(("precision", TensorProto.FLOAT),)),
    ],
)
def test_tensorrt_near_misses(case):
    assert not _trt(case)


def test_tensorrt_11_blocks_more_types_than_10():
    case = Case("dq", "", 21, "float", "float", "int8", "block", 1, 4)
    assert "QT301" in found_codes(build(case)[0], "tensorrt-10")
    assert "QT301" not in found_codes(build(case)[0], "tensorrt-11")


def test_tensorrt_rejects_qoperator_ops_and_old_opsets():
    x = helper.make_tensor_value_info("a", TensorProto.UINT8, [2, 3])
    b = numpy_helper.from_array(np.ones((3, 2), np.uint8), "b")
    node = helper.make_node("MatMulInteger", ["a", "b"], ["y"], name="mm")
    g = helper.make_graph([node], "g", [x], [onnx.ValueInfoProto(name="y")], initializer=[b])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 8)])
    m.ir_version = 7
    codes_ = found_codes(m, "tensorrt-10")
    assert {"QT102", "QT201"} <= codes_
    assert "QT201" not in found_codes(build(CLEAN)[0], "tensorrt-10")


def _cast_weight(op: str, chain: tuple[str, ...] = ("Cast", "Mul"), stored=np.int8, constant_node=False):
    """x -> op(x, w') where w' is the constant w (of type ``stored``) through ``chain``: Cast
    (to float), Sub / Mul by a float constant, Transpose, DequantizeLinear (scale ws)."""
    shape = [4, 3, 1, 1] if op == "Conv" else [4, 3] if "Transpose" in chain else [3, 4]
    inits = [numpy_helper.from_array(np.float32(0.1), "ws")]
    w = numpy_helper.from_array(np.ones(shape, stored), "w")
    nodes = [helper.make_node("Constant", [], ["w"], value=w)] if constant_node else []
    inits += [] if constant_node else [w]
    name = "w"
    for i, step in enumerate(chain):
        extra = {"to": TensorProto.FLOAT} if step == "Cast" else {}
        ins = [name, "ws"] if step in ("Sub", "Mul", "DequantizeLinear") else [name]
        nodes.append(helper.make_node(step, ins, [f"w{i}"], **extra))
        name = f"w{i}"
    nodes.append(helper.make_node(op, ["x", name], ["y"], name="op"))
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 4, 4] if op == "Conv" else [2, 3])
    g = helper.make_graph(nodes, "g", [x], [onnx.ValueInfoProto(name="y")], initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
    m.ir_version = 10
    return m


def _int4_quantize(x_from: str) -> onnx.ModelProto:
    """QuantizeLinear(int4) -> DequantizeLinear -> y, its x a graph input ("input"), a Relu of
    one ("Relu"), a constant weight ("constant") or a Transpose of one ("Transpose")."""
    inits = [numpy_helper.from_array(np.float32(0.1), "s"),
             numpy_helper.from_array(np.zeros((), ml_dtypes.int4), "zp")]
    inputs, nodes = [], []
    if x_from in ("input", "Relu"):
        inputs.append(helper.make_tensor_value_info("a", TensorProto.FLOAT, [4, 8]))
        nodes += [helper.make_node("Relu", ["a"], ["x"])] if x_from == "Relu" else []
    else:
        inits.append(numpy_helper.from_array(np.ones((8, 4), np.float32), "a"))
        nodes += [helper.make_node("Transpose", ["a"], ["x"])] if x_from == "Transpose" else []
    x = "a" if x_from in ("input", "constant") else "x"
    nodes += [helper.make_node("QuantizeLinear", [x, "s", "zp"], ["q"], name="q"),
              helper.make_node("DequantizeLinear", ["q", "s", "zp"], ["y"], name="dq")]
    g = helper.make_graph(nodes, "g", inputs, [onnx.ValueInfoProto(name="y")], initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
    m.ir_version = 10
    return m


@pytest.mark.parametrize("x_from,refused", [("input", True), ("Relu", True), ("constant", False),
                                            ("Transpose", False)])
def test_tensorrt_quantizes_to_int4_weights_only(x_from, refused):
    """QT202: "Weight-only quantization is supported for INT4." (developer guide, 10.11)."""
    model = _int4_quantize(x_from)
    for target in ("tensorrt-10", "tensorrt-11"):
        said = [p.message for p in found(model, target) if p.code == "QT202"]
        assert bool(said) == refused, (target, said)
        assert all("supports INT4 for weights only" in m for m in said)


@pytest.mark.parametrize(
    "model,want",
    [
        (_cast_weight("Conv"), {"QT502"}),
        (_cast_weight("MatMul", ("Cast", "Sub", "Mul")), {"QT502"}),
        (_cast_weight("Gemm", ("Cast", "Mul"), constant_node=True), {"QT502"}),
        (_cast_weight("MatMul", ("Cast",), stored=np.uint8), {"QT502"}),
        (_cast_weight("Conv", ("DequantizeLinear",)), set()),  # the documented way
        (_cast_weight("MatMul", ("DequantizeLinear", "Transpose")), set()),
        (_cast_weight("Conv", ("Cast", "Mul"), stored=np.float16), set()),  # a float16 weight
        (_cast_weight("Conv", ("Mul",), stored=np.float32), set()),
    ],
)
def test_tensorrt_weight_without_dequantize(model, want):
    """QT502: a pre-quantized weight made float by a Cast (and arithmetic), not a DequantizeLinear."""
    assert found_codes(model, "tensorrt-10") == found_codes(model, "tensorrt-11") == want
    if want:
        said = next(p for p in found(model, "tensorrt-11") if p.code == "QT502").message
        assert "constant 'w' through Cast" in said and "DequantizeLinear" in said


# ---- onnxruntime: every op, not only Q/DQ, held against onnxruntime --------------------------------
@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
def test_onnxruntime_prediction_for_other_ops(case):
    domain, op, opset, sig, types = case
    model = build_case(domain, op, opset, sig, types, ort_table.load().max_ir)
    stage, message = ort_outcome(model)
    errors = [p for p in found(model, "onnxruntime") if p.severity == "error"]
    assert bool(errors) == (stage != "ok"), (stage, message[:200], [p.message for p in errors])


def test_unknown_domain_and_function_body_ops():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    custom = helper.make_node("Frobnicate", ["x"], ["y"], domain="com.example", name="f")
    hswish = helper.make_node("HardSwish", ["x"], ["z"], name="h")  # no kernel; onnx gives it a body
    g = helper.make_graph(
        [custom, hswish], "g", [x], [onnx.ValueInfoProto(name="y"), onnx.ValueInfoProto(name="z")]
    )
    m = helper.make_model(
        g, opset_imports=[helper.make_opsetid("", 22), helper.make_opsetid("com.example", 1)]
    )
    m.ir_version = 10
    placed = found(m, "onnxruntime")
    assert [(p.node, p.code) for p in placed] == [("f", "QT104")]
    assert not placed[0].convertible


# ---- placing findings ---------------------------------------------------------------------------------
def _q_node(name, x="x", y="y", qtype=TensorProto.UINT16):
    return helper.make_node("QuantizeLinear", [x, "s", "zp"], [y], name=name), [
        numpy_helper.from_array(np.float32(0.1), "s"),
        numpy_helper.from_array(np.zeros((), onnx.helper.tensor_dtype_to_np_dtype(qtype)), "zp"),
    ]


def test_findings_in_subgraphs_and_functions_are_placed():
    q, inits = _q_node("inner", qtype=TensorProto.INT16)
    then = helper.make_graph([q], "then", [], [onnx.ValueInfoProto(name="y")])
    q2, _ = _q_node("other", y="y2", qtype=TensorProto.INT16)
    other = helper.make_graph([q2], "else", [], [onnx.ValueInfoProto(name="y2")])
    cond = numpy_helper.from_array(np.array(True), "c")
    iff = helper.make_node("If", ["c"], ["out"], then_branch=then, else_branch=other, name="branch")
    fq = helper.make_node("QuantizeLinear", ["a", "fs"], ["b"], name="in_fn")
    fs = helper.make_node("Constant", [], ["fs"], value=numpy_helper.from_array(np.float32(-0.5), "v"))
    fn = helper.make_function("local", "F", ["a"], ["b"], [fs, fq], [helper.make_opsetid("", 21)])
    call = helper.make_node("F", ["x"], ["fy"], domain="local", name="call")
    g = helper.make_graph(
        [iff, call],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [onnx.ValueInfoProto(name="out"), onnx.ValueInfoProto(name="fy")],
        initializer=[cond, *inits],
    )
    m = helper.make_model(
        g, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("local", 1)], functions=[fn]
    )
    m.ir_version = 10
    placed = found(m, "tensorrt-10")
    where = {(p.node, p.graph, p.code) for p in placed}
    assert ("inner", "main/branch.then_branch", "QT202") in where
    assert ("other", "main/branch.else_branch", "QT202") in where
    assert any(
        p.node == "in_fn" and p.graph.startswith("function local.F") and p.code == "QT304" for p in placed
    )
    assert not any(p.node == "call" for p in placed)  # the call of a local function is inlined, not an op
    inner = next(p for p in placed if p.node == "inner")
    assert (inner.target, inner.where) == ("tensorrt-10", "node 'inner' (QuantizeLinear-21 (ai.onnx))")
    assert inner.title == "QuantizeLinear-21 ai.onnx" and inner.detail.startswith("tensorrt-10: ")
    assert inner.message.startswith("node 'inner' (QuantizeLinear-21 (ai.onnx)): tensorrt-10: ")


def test_external_weights_are_never_read(tmp_path):
    """A weight stored in a missing external file: qlin reads only scales and zero points."""
    w = onnx.TensorProto(name="w", data_type=TensorProto.INT8, dims=[4, 8])
    w.data_location = TensorProto.EXTERNAL
    w.external_data.add(key="location", value="weights.bin")
    w.external_data.add(key="length", value="32")
    s = numpy_helper.from_array(np.float32(-0.1), "s")
    node = helper.make_node("DequantizeLinear", ["w", "s"], ["y"], name="dq")
    g = helper.make_graph([node], "g", [], [onnx.ValueInfoProto(name="y")], initializer=[w, s])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
    m.ir_version = 10
    assert not (tmp_path / "weights.bin").exists()
    assert "QT304" in {p.code for p in predict.findings(m, str(tmp_path), ["tensorrt-10"])}


def test_model_level_findings_come_first_and_name_the_model():
    m, _ = build(Case("dq", "", 28, "float", "float", "float6e2m3"))
    placed = found(m, "onnxruntime")
    assert [p.code for p in placed][:2] == ["QT101", "QT103"]
    from qlin_cli.targets import ort_table

    said = f"model: onnxruntime {ort_table.default_version()}: IR"  # the release it judged
    assert placed[1].message.startswith(said) and placed[1].node == "model"  # as QL001 places its own
    assert any(p.code == "QT202" and p.node == "dequantize" for p in placed)
    # float6 needs IR 14 whatever the opset, and onnxruntime has no float6 kernel: the opset
    # finding does not send the user to a conversion that cannot help
    assert not placed[0].convertible and not placed[1].convertible
    assert "no conversion makes the model run on onnxruntime" in placed[0].message
    m, _ = build(Case("dq", "", 28, "float", "float", "int8"))
    placed = found(m, "onnxruntime")
    assert [p.code for p in placed] == ["QT101", "QT103"] and all(p.convertible for p in placed)
    assert placed[0].message.endswith("run `qlin convert --target onnxruntime`")


# ---- NNAPI (read in onnxruntime's NNAPI provider): rules, near misses -------------------------------
def _weight_dq(consumer: str, qtype=TensorProto.INT8, axis: int | None = 0, zp_value=0, channels=4):
    """x -> consumer(x, DequantizeLinear(w)) with a per-channel (axis given) or per-tensor weight."""
    np_type = onnx.helper.tensor_dtype_to_np_dtype(qtype)
    shape = [channels, 3, 1, 1] if consumer == "Conv" else [3, channels]
    w = numpy_helper.from_array(np.ones(shape, np_type), "w")
    per = axis is not None
    s = numpy_helper.from_array(np.full([shape[axis]] if per else [], 0.1, np.float32), "ws")
    zp = numpy_helper.from_array(np.full([shape[axis]] if per else [], zp_value, np_type), "wzp")
    dq = helper.make_node(
        "DequantizeLinear", ["w", "ws", "wzp"], ["wf"], name="wdq", **({"axis": axis} if per else {})
    )
    op = helper.make_node(consumer, ["x", "wf"], ["y"], name="op")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 4, 4] if consumer == "Conv" else [2, 3])
    g = helper.make_graph([dq, op], "g", [x], [onnx.ValueInfoProto(name="y")], initializer=[w, s, zp])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
    m.ir_version = 10
    return m


@pytest.mark.parametrize(
    "model,want",
    [
        (_weight_dq("Conv"), set()),  # u8s8 per-channel Conv weight
        (_weight_dq("Conv", axis=None), set()),
        (_weight_dq("MatMul", axis=None), set()),
        (_weight_dq("Conv", zp_value=1), {"QT306"}),
        (_weight_dq("Conv", axis=1, channels=3), {"QT301"}),
        (_weight_dq("MatMul", axis=1), {"QT301"}),
        (_weight_dq("Conv", qtype=TensorProto.INT16), {"QT202", "QT301"}),
        (build(Case("dq", "", 21, "float", "float", "uint8"))[0], set()),
        (build(Case("qdq", "", 21, "float", "float", "uint8", zp="nonzero"))[0], set()),
        (build(Case("dq", "", 21, "float", "float", "int8"))[0], {"QT202"}),  # an int8 activation
        (build(Case("dq", "", 21, "float", "float", "uint8", "axis", 0))[0], {"QT301"}),
        (build(Case("dq", "", 21, "float", "float", "uint4", "block", 1, 4))[0], {"QT202", "QT301"}),
        (build(Case("q", "", 21, "float", "float", "uint8", scale_input=True))[0], {"QT305"}),
        (build(Case("dq", "com.microsoft", 21, "float", "float", "uint8"))[0], {"QT104"}),
    ],
)
def test_nnapi_rules(model, want):
    assert found_codes(model, "nnapi") == want


def test_nnapi_names_the_ai_onnx_op_a_vendor_node_would_be():
    """QT104 on a vendor Q/DQ names the ai.onnx op NNAPI runs (ExtendedQuantizeLinear has no
    ai.onnx namesake) and the node's own domain and op."""
    import os

    from paths import MODELS

    quark = onnx.load(os.path.join(MODELS, "clean", "quark_int16.onnx"))
    said = {p.message for p in found(quark, "nnapi") if p.code == "QT104"}
    first = "nnapi: NNAPI runs only ai.onnx QuantizeLinear, not com.amd.quark ExtendedQuantizeLinear;"
    assert said and all(first in m for m in said), said
    ms = build(Case("dq", "com.microsoft", 21, "float", "float", "uint8"))[0]
    assert "ai.onnx DequantizeLinear, not com.microsoft DequantizeLinear" in found(ms, "nnapi")[0].message


def test_nnapi_plan_moves_com_microsoft_to_ai_onnx():
    m = build(Case("dq", "com.microsoft", 21, "float", "float", "uint8"))[0]
    assert predict.plan(m, "", "nnapi").choice.to_domain == "ai.onnx"
    assert found(m, "nnapi")[0].convertible


def test_every_fixture_model_is_read_by_every_target():
    """The bundled fixtures (broken models, functions, subgraphs, external data) give findings
    and plans for every target without an exception."""
    import glob
    import os

    from paths import MODELS

    from qlin_cli.model.analysis import analyze
    from qlin_cli.model.load import load_model

    paths = sorted(glob.glob(os.path.join(MODELS, "**", "*.onnx"), recursive=True))
    assert len(paths) >= 50
    seen = set()
    for path in paths:
        a = analyze(load_model(path), os.path.dirname(path))  # one analysis: every target reads it
        seen |= {p.code for p in predict.findings_in(a, registry.names())}
        for name in registry.names():
            predict.plan_in(a, name)
    assert {"QT104", "QT202", "QT306"} <= seen


def test_asking_for_one_target_reads_no_other_targets_data():
    """`--target onnxruntime` imports onnxruntime's profile only (openvino's reads its probe
    table when imported); an unknown name still lists every target."""
    import subprocess
    import sys

    probe = ("import sys\nfrom qlin_cli.targets import registry\nregistry.get('onnxruntime-cpu')\n"
             "print(sorted(m.rsplit('.', 1)[1] for m in sys.modules if m.rsplit('.', 1)[-1]\n"
             "            in registry._MODULES and m.startswith('qlin_cli.targets.')))\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['onnxruntime']", out
    with pytest.raises(registry.UnknownTarget, match="nnapi, onnxruntime, openvino, tensorrt-10"):
        registry.get("onnxruntime-gpu")


def test_every_alias_of_a_target_is_in_the_readme():
    """A name `--target` takes is a name a reader can find: each target's aliases appear in
    the README's table of targets."""
    import os

    from paths import ROOT

    from qlin_cli.targets import registry

    readme = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    for t in registry.all_targets():
        for name in (t.name, *t.aliases):
            assert f"`{name}`" in readme, name
