"""onnxruntime at each release, beside its kernel registry: what the release did with every
probe model (qlin_cli/targets/data/onnxruntime_probes.json.gz, written by
tools/gen_target_data.py from the release installed in a throwaway venv). Kernels that exist
and still refuse a case are QT205; a hand-written check measured on 1.31.1 gives way where
a release ran every probe of the node's kind."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from qlin_cli.targets import predict, probe_keys, probe_table

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tools"), str(ROOT / "fixtures"), str(ROOT / "tests")]

import family_builders as fb  # noqa: E402
import test_targets_matrix as tm  # noqa: E402


def _codes(model, target: str) -> list[str]:
    return [f.code for f in predict.findings(model, "", [target]) if f.severity == "error"]


def _case(**kw):
    base = dict(kind="dq", domain="", opset=21, float_type="float", scale_type="float", q_type="int8",
                gran="block", axis=1, block=4, zp="zero", shape=(4, 8))
    base.update(kw)
    return tm.build(tm.Case(**base))[0]


def test_every_measured_release_was_probed():
    from qlin_cli.targets import versions

    for v in versions.known("onnxruntime"):
        table = probe_table.load("onnxruntime", v)
        assert table.probes > 1000 and table.version == v


def test_blocked_dequantize_fails_in_1_18_and_runs_from_1_19():
    blocked = _case()
    assert _codes(blocked, "onnxruntime@1.18") == ["QT205"]
    found = [f for f in predict.findings(blocked, "", ["onnxruntime@1.18"]) if f.code == "QT205"][0]
    assert "at run" in found.message and "1.19 and newer run it" in found.message
    assert _codes(blocked, "onnxruntime@1.19") == []
    assert _codes(blocked, "onnxruntime") == []


def test_qlinear_matmul_21_has_no_kernel_in_1_18():
    """The registry says so (QT201), and the probes agree."""
    model = fb.qlinear_matmul(opset=21)
    assert _codes(model, "onnxruntime@1.18") == ["QT201"]
    assert _codes(model, "onnxruntime@1.31") == []
    from qlin_cli.model.analysis import analyze

    a = analyze(model, "")
    key = probe_keys.node_key(a.facts(a.bodies[0], 0))
    assert probe_table.load("onnxruntime", "1.18.1").outcome(key).refused
    assert not probe_table.load("onnxruntime", "1.31.1").outcome(key).refused


def test_a_check_of_1_31_gives_way_where_1_32_ran_every_probe():
    """QuantizeLinear-23 with x float and y_scale float16: 1.31 loads it and fails at the
    first run (QT203, measured); 1.32 runs it."""
    mixed = _case(kind="q", opset=23, scale_type="float16", gran="tensor", axis=None, block=0)
    assert _codes(mixed, "onnxruntime@1.31") == ["QT203"]
    assert _codes(mixed, "onnxruntime@1.32") == []


@pytest.mark.remeasure
def test_the_probes_match_the_onnxruntime_installed_here(tmp_path):
    """The generator's measurement repeated in this process on the first probe of each key."""
    from probe_helpers import remeasure

    pytest.importorskip("onnxruntime")
    installed = probe_table.installed_version("onnxruntime")
    table = probe_table.maybe_load("onnxruntime", installed)
    if table is None:
        pytest.skip(f"onnxruntime {installed} was not probed")
    remeasure("onnxruntime", table, tmp_path)


def _dq_matmul_q(opset: int):
    """x -> Q -> DQ -> MatMul(DQ'd int8 weight) -> Q -> DQ: the QDQ form onnxruntime's
    quantizer writes, which onnxruntime fuses into QLinearMatMul when it loads it."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    def c(name, value, dtype):
        return numpy_helper.from_array(np.asarray(value, dtype), name)

    inits = [c("s", 0.05, np.float32), c("z", 0, np.int8), c("w", np.ones((4, 3)), np.int8),
             c("ws", 0.02, np.float32), c("wz", 0, np.int8)]
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"], name="q_x"),
             helper.make_node("DequantizeLinear", ["xq", "s", "z"], ["xd"], name="dq_x"),
             helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wd"], name="dq_w"),
             helper.make_node("MatMul", ["xd", "wd"], ["m"], name="mm"),
             helper.make_node("QuantizeLinear", ["m", "s", "z"], ["mq"], name="q_m"),
             helper.make_node("DequantizeLinear", ["mq", "s", "z"], ["y"], name="dq_m")]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=10)


def test_a_fusion_into_an_op_without_kernel_is_refused():
    found = [f for f in predict.findings(_dq_matmul_q(21), "", ["onnxruntime@1.18"]) if f.severity == "error"]
    assert {f.code for f in found} == {"QT201"}
    assert all("fused into QLinearMatMul-21" in f.message for f in found)
    assert [f.node for f in found] == ["dq_x"]  # the activation's, after its QuantizeLinear
    assert _codes(_dq_matmul_q(20), "onnxruntime@1.18") == []
    # measured on the real releases: 1.18.1 and 1.19.2 fail to load it at opset 21, 1.20.1 runs it
    assert _codes(_dq_matmul_q(21), "onnxruntime@1.19") == ["QT201"]
    assert _codes(_dq_matmul_q(21), "onnxruntime@1.20") == []
    assert _codes(_dq_matmul_q(21), "onnxruntime") == []


def _qdq(opset: int, zp_type: str = "int8"):
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    inits = [numpy_helper.from_array(np.array(0.05, np.float32), "s"),
             helper.make_tensor("z", getattr(TensorProto, zp_type.upper()), [], [3])]
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], name="q"),
             helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], name="dq")]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                             ir_version=11 if opset >= 23 else 10)


def test_convert_to_an_old_release_picks_what_it_loads(tmp_path):
    """opset 23 does not load in 1.18 (21 does): convert --target onnxruntime@1.18 writes
    opset 21 at IR 10 (run in the real 1.18.1: it loads and runs the result, not the source);
    int4 has no 1.18 kernel at any opset: it says why no conversion helps."""
    import onnx
    from click.testing import CliRunner

    from qlin_cli.cli import main

    src, out = tmp_path / "m.onnx", tmp_path / "o.onnx"
    onnx.save(_qdq(23), src)
    assert _codes(onnx.load(src), "onnxruntime@1.18") == ["QT101", "QT103"]
    r = CliRunner().invoke(main, ["convert", str(src), "--target", "onnxruntime@1.18", "-o", str(out)])
    assert r.exit_code == 0, r.output
    result = onnx.load(out)
    assert [(o.domain, o.version) for o in result.opset_import] == [("", 21)] and result.ir_version == 10
    assert _codes(result, "onnxruntime@1.18") == []
    onnx.save(_qdq(21, "int4"), src)
    r = CliRunner().invoke(main, ["convert", str(src), "--target", "onnxruntime@1.18", "-o", str(out)])
    assert r.exit_code == 1 and "no conversion makes onnxruntime@1.18 run it" in r.stderr
    assert "1.19 and newer run it" in r.stderr


def _fusable(op: str, qt: str, q_after: bool):
    """x -> Q -> DQ -> op(DQ'd weight) [-> Q -> DQ] at opset 19, in ``qt``."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    t = getattr(TensorProto, qt.upper())
    w_shape, x_shape, y_shape = (([4, 3], [2, 4], [2, 3]) if op == "MatMul"
                                 else ([3, 4, 1, 1], [1, 4, 2, 2], [1, 3, 2, 2]))
    inits = [numpy_helper.from_array(np.array(0.05, np.float32), "s"), helper.make_tensor("z", t, [], [0]),
             helper.make_tensor("w", t, w_shape, [0] * 12),
             numpy_helper.from_array(np.array(0.02, np.float32), "ws")]
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"], name="q_x"),
             helper.make_node("DequantizeLinear", ["xq", "s", "z"], ["xd"], name="dq_x"),
             helper.make_node("DequantizeLinear", ["w", "ws", "z"], ["wd"], name="dq_w"),
             helper.make_node(op, ["xd", "wd"], ["m"], name="op")]
    out = "m"
    if q_after:
        nodes += [helper.make_node("QuantizeLinear", ["m", "s", "z"], ["mq"], name="q_m"),
                  helper.make_node("DequantizeLinear", ["mq", "s", "z"], ["y"], name="dq_m")]
        out = "y"
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                          [helper.make_tensor_value_info(out, TensorProto.FLOAT, y_shape)], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)], ir_version=9)


@pytest.mark.parametrize("op", ["MatMul", "Conv"])
@pytest.mark.parametrize("qt", ["float8e4m3fn", "float8e5m2", "int8", "uint8"])
@pytest.mark.parametrize("q_after", [True, False])
def test_fusions_under_default_options_agree_with_onnxruntime(op, qt, q_after):
    """The installed onnxruntime's default session options, against qlin's prediction for
    it: float8 into MatMul, or into Conv followed by a QuantizeLinear, does not load."""
    ort = pytest.importorskip("onnxruntime")
    model = _fusable(op, qt, q_after)
    try:
        ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        loads = True
    except Exception:
        loads = False
    assert (_codes(model, "onnxruntime") == []) == loads
    assert loads == (not qt.startswith("float8") or (op == "Conv" and not q_after))  # the test can fail


def _chain(qt: str, op: str, opset: int, q_after: bool):
    """x -> Q -> DQ -> op -> (Q -> DQ), shaped as a model would be (not as the chain probes of
    tools/probe_chains.py: another shape, scale and zero point, an op with other attributes)."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    from qlin_cli.schema import dtypes

    proto = dtypes.BY_NAME[qt].proto
    inits = [numpy_helper.from_array(np.array(0.125, np.float32), "s"),
             helper.make_tensor("z", proto, [], [0])]
    if op == "Transpose":
        node = helper.make_node(op, ["d"], ["t"], perm=[1, 0, 2])
    elif op == "MaxPool":
        node = helper.make_node(op, ["d"], ["t"], kernel_shape=[3], pads=[1, 1])
    else:  # Reshape
        inits.append(numpy_helper.from_array(np.array([-1, 6], np.int64), "shape"))
        node = helper.make_node(op, ["d", "shape"], ["t"])
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
             helper.make_node("DequantizeLinear", ["q", "s", "z"], ["d"]), node]
    out = "t"
    if q_after:
        nodes += [helper.make_node("QuantizeLinear", ["t", "s", "z"], ["q2"]),
                  helper.make_node("DequantizeLinear", ["q2", "s", "z"], ["y"])]
        out = "y"
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 6])],
                          [helper.make_tensor_value_info(out, TensorProto.FLOAT, None)], inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=10)
    import onnx

    shape = onnx.shape_inference.infer_shapes(model).graph.output[0].type.tensor_type.shape
    model.graph.output[0].type.tensor_type.shape.CopyFrom(shape)  # a valid model declares it
    return model


@pytest.mark.parametrize("op", ["Transpose", "Reshape", "MaxPool"])
@pytest.mark.parametrize("qt, opset", [("float8e4m3fn", 19), ("float8e5m2", 21), ("int8", 19), ("int8", 21),
                                       ("uint8", 21), ("int4", 21), ("int16", 21)])
@pytest.mark.parametrize("q_after", [True, False])
def test_chains_the_runtime_rewrites_agree_with_onnxruntime(op, qt, opset, q_after):
    """Each DQ alone runs; the chain Q -> DQ -> op may not under the default session options
    (float8 into Transpose, Reshape or MaxPool; int8 at opset 21 without a Q after the op).
    The chain probes of the installed release say which, on models of another shape."""
    import numpy as np

    ort = pytest.importorskip("onnxruntime")
    if probe_table.maybe_load("onnxruntime", probe_table.installed_version("onnxruntime")) is None:
        pytest.skip("the installed onnxruntime was not probed")
    model = _chain(qt, op, opset, q_after)
    try:
        s = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        s.run(None, {"x": np.linspace(-2, 2, 36, dtype=np.float32).reshape(2, 3, 6)})
        runs = True
    except Exception:
        runs = False
    found = predict.findings(model, "", ["onnxruntime"])
    assert (not [f for f in found if f.severity == "error"]) == runs, [f.message for f in found]


def test_a_chain_onnxruntime_refuses_is_named():
    found = [f for f in predict.findings(_chain("float8e4m3fn", "Transpose", 19, False), "", ["onnxruntime"])
             if f.code == "QT205"]
    assert len(found) == 1 and "Q -> DQ -> Transpose" in found[0].message and found[0].node == "#1"


def test_convert_says_when_the_converted_model_no_longer_runs(tmp_path):
    """int8 Q -> DQ -> Transpose -> (no Q) runs in onnxruntime at opset 19, not at 21 (the
    default optimizations write a QuantizeLinear whose output_dtype and zero point disagree):
    `qlin convert --to-opset 21` writes it, and its report says onnxruntime will refuse it."""
    import numpy as np
    import onnx

    import qlin

    ort = pytest.importorskip("onnxruntime")
    src = tmp_path / "m.onnx"
    onnx.save(_chain("int8", "Transpose", 19, False), src)
    result = qlin.convert(src, to_opset=21, output=tmp_path / "o.onnx")
    said = [w for w in result.warnings if w.target == "onnxruntime" and w.severity == "error"]
    assert [w.code for w in said] == ["QT205"]
    feeds = {"x": np.linspace(-2, 2, 36, dtype=np.float32).reshape(2, 3, 6)}
    ort.InferenceSession(str(src), providers=["CPUExecutionProvider"]).run(None, feeds)
    with pytest.raises(Exception, match="output_dtype"):
        ort.InferenceSession(str(tmp_path / "o.onnx"), providers=["CPUExecutionProvider"]).run(None, feeds)


def test_convert_to_onnxruntime_moves_a_refused_chain_to_an_opset_where_it_runs(tmp_path):
    import numpy as np
    import onnx

    import qlin

    ort = pytest.importorskip("onnxruntime")
    src = tmp_path / "m.onnx"
    onnx.save(_chain("int8", "Transpose", 21, False), src)
    assert _codes(onnx.load(src), "onnxruntime") == ["QT205"]
    result = qlin.convert(src, target="onnxruntime", output=tmp_path / "o.onnx")
    opset = next(o.version for o in result.model.opset_import if o.domain in ("", "ai.onnx"))
    assert opset < 21 and _codes(result.model, "onnxruntime") == []
    feeds = {"x": np.linspace(-2, 2, 36, dtype=np.float32).reshape(2, 3, 6)}
    ort.InferenceSession(str(tmp_path / "o.onnx"), providers=["CPUExecutionProvider"]).run(None, feeds)


def _weight_dq_matmul(opset: int, w_type: str, transposed: bool = False, activation: bool = True):
    """x -> [Q -> DQ] -> MatMul(DQ(w)) with w of ``w_type`` quantized along its output axis
    ([4, 3] per-axis; or [3, 4] blocked along axis 1 in one block, then Transposed: what
    onnxruntime's n-bits quantizer writes in QDQ form)."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    t = getattr(TensorProto, w_type.upper())
    shape = [3, 4] if transposed else [4, 3]
    scale_shape = [3, 1] if transposed else [3]
    inits = [numpy_helper.from_array(np.array(0.05, np.float32), "s"),
             helper.make_tensor("z", TensorProto.UINT8, [], [0]),
             helper.make_tensor("w", t, shape, [1] * 12),
             numpy_helper.from_array(np.full(scale_shape, 0.02, np.float32), "ws")]
    attrs = {"axis": 1, "block_size": 4} if transposed else {"axis": 1}
    nodes = [helper.make_node("DequantizeLinear", ["w", "ws"], ["wd"], name="dq_w", **attrs)]
    x = "x"
    if activation:
        nodes += [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"], name="q_x"),
                  helper.make_node("DequantizeLinear", ["xq", "s", "z"], ["xd"], name="dq_x")]
        x = "xd"
    w = "wd"
    if transposed:
        nodes.append(helper.make_node("Transpose", ["wd"], ["wt"], name="t_w", perm=[1, 0]))
        w = "wt"
    nodes.append(helper.make_node("MatMul", [x, w], ["y"], name="mm"))
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=10)


def _ort_runs(model) -> bool:
    """Whether the onnxruntime installed here loads ``model`` and runs it on ones (its input x)."""
    import numpy as np

    ort = pytest.importorskip("onnxruntime")
    shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    try:
        s = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        s.run(None, {"x": np.ones(shape, np.float32)})
        return True
    except Exception:
        return False


def test_a_fusion_needs_an_eight_bit_weight():
    """onnxruntime fuses a QDQ MatMul into QLinearMatMul only when both operands are 8-bit DQs:
    1.19 (no QLinearMatMul-21 kernel) fails uint8 x int8 at opset 21 and runs uint8 x int4
    (measured on the real 1.19.2: the u8s4 quantizer models run there)."""
    assert _codes(_weight_dq_matmul(21, "int8"), "onnxruntime@1.19") == ["QT201"]
    int4 = _weight_dq_matmul(21, "int4")
    assert _codes(int4, "onnxruntime@1.19") == []
    assert _ort_runs(int4) and _codes(int4, "onnxruntime") == []


def _transposed_weight(opset: int, w_type: str, blocks: int, zero_point: bool, n: int = 5, k: int = 6):
    """x [2, k] -> MatMul(x, Transpose(DQ(w))) with w [n, k] of ``w_type`` quantized per axis
    along axis 0 (``blocks`` 0) or in ``blocks`` blocks along axis 1 (other shapes than the
    probes')."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    t = getattr(TensorProto, w_type.upper())
    scale = [n, blocks] if blocks else [n]
    inits = [helper.make_tensor("w", t, [n, k], [1] * (n * k)),
             numpy_helper.from_array(np.full(scale, 0.02, np.float32), "ws")]
    ins = ["w", "ws"]
    if zero_point:
        inits.append(helper.make_tensor("wz", t, scale, [0] * int(np.prod(scale))))
        ins.append("wz")
    attrs = {"axis": 1, "block_size": k // blocks} if blocks else {"axis": 0}
    nodes = [helper.make_node("DequantizeLinear", ins, ["wd"], name="dq_w", **attrs),
             helper.make_node("Transpose", ["wd"], ["wt"], name="t_w", perm=[1, 0]),
             helper.make_node("MatMul", ["x", "wt"], ["y"], name="mm")]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, k])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, n])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=10 if opset < 23
                             else 11 if opset == 23 else 13)


def test_a_weight_dequantized_then_transposed_is_judged_by_its_chain_probe():
    """DQ(weight) -> Transpose -> MatMul (onnxruntime's n-bits quantizer in QDQ form): 1.19
    moves the Transpose above a DQ of int4 blocks at load and fails on the int4 QuantizeLinear
    it makes ("does not match expected type (tensor(uint8))") though it runs the DQ alone; 1.20
    runs it. The release here fails an int2 per-axis one with a zero point in constant folding
    ("Element type mismatch between tensor proto and ortvalue_initializer"), which runs alone:
    measured for weights of hundreds of codes, as real ones are (a 5 x 6 one runs)."""
    model = _transposed_weight(21, "int4", 2, False)
    found = [f for f in predict.findings(model, "", ["onnxruntime@1.19"]) if f.severity == "error"]
    assert [(f.code, f.node) for f in found] == [("QT205", "dq_w")], found
    assert "through a Transpose" in found[0].message
    assert _codes(model, "onnxruntime@1.20") == []
    big = {"n": 24, "k": 32}
    for m in (_transposed_weight(25, "int2", 0, True, **big), _transposed_weight(25, "int2", 0, False, **big),
              _transposed_weight(21, "int4", 2, False), _transposed_weight(21, "uint4", 0, True)):
        assert _ort_runs(m) == (_codes(m, "onnxruntime") == []), m.graph.node[0]
    assert "QT205" in _codes(_transposed_weight(25, "int2", 0, True, **big), "onnxruntime")  # can fail


def test_a_float16_qdq_matmul_is_judged_by_its_chain_probe():
    """onnxruntime 1.29 fuses a float16 QDQ MatMul into QLinearMatMul, which takes float scales
    only ("Type 'tensor(float16)' of input parameter (s) of operator (QLinearMatMul) ... is
    invalid"); 1.28 and 1.30 leave it unfused and run it (ModelOpt's float16 blocks)."""
    import producer_shapes

    model = producer_shapes.f16_matmul("")
    found = [f for f in predict.findings(model, "", ["onnxruntime@1.29"]) if f.severity == "error"]
    assert found and {f.code for f in found} == {"QT205"}, found
    assert "MatMul whose other operand is dequantized from int8" in found[0].message
    assert _codes(model, "onnxruntime@1.28") == [] and _codes(model, "onnxruntime@1.30") == []
