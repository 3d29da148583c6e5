"""2-bit MatMulNBits (com.microsoft, bits=2) <-> blocked DequantizeLinear of uint2 + MatMul:
uint2 is a DequantizeLinear type from opset 25 (onnx.defs), so the QDQ form exists there and is
refused below it, naming the type and the opset. The dequantized weights are proven bit for bit
against qlin's evaluator (convert/formats/nbits_proof.py); onnxruntime runs both forms."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from qlin_cli.convert.formats.nbits import pack
from qlin_cli.convert.run import Options, convert_model

ort = pytest.importorskip("onnxruntime")
K, N, BLOCK = 48, 8, 16  # three blocks along K, the last of them padded in the packed bytes


def _nbits2(zero_points: bool, seed: int = 0) -> onnx.ModelProto:
    rng = np.random.default_rng(seed)
    blocks = -(-K // BLOCK)
    codes = rng.integers(0, 4, (N, K)).astype(np.uint8)
    packed = pack(codes, 2, blocks * BLOCK * 2 // 8).reshape(N, blocks, BLOCK * 2 // 8)
    scales = rng.uniform(0.01, 0.2, N * blocks).astype(np.float32)
    inits = [numpy_helper.from_array(packed, "B"), numpy_helper.from_array(scales, "scales")]
    inputs = ["A", "B", "scales"]
    if zero_points:
        zero = rng.integers(0, 4, (N, blocks)).astype(np.uint8)
        inits.append(numpy_helper.from_array(pack(zero, 2, -(-blocks * 2 // 8)), "zp"))
        inputs.append("zp")
    node = helper.make_node("MatMulNBits", inputs, ["Y"], domain="com.microsoft", K=K, N=N, bits=2,
                            block_size=BLOCK)
    a = helper.make_tensor_value_info("A", TensorProto.FLOAT, [3, K])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [3, N])
    graph = helper.make_graph([node], "nbits2", [a], [y], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21),
                                                   helper.make_opsetid("com.microsoft", 1)], ir_version=10)


def _run(model: onnx.ModelProto, a: np.ndarray) -> np.ndarray:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {"A": a})[0]


@pytest.mark.parametrize("zero_points", [True, False])
def test_two_bit_matmul_nbits_becomes_uint2_dequantize_linear_and_back(zero_points, tmp_path):
    source = _nbits2(zero_points)
    r = convert_model(source, str(tmp_path), Options(25, to_format="qdq"))
    assert r.model is not None, [f"{x.code} {x.detail}" for x in r.refused]
    (entry,) = [e for e in r.entries if e.action == "reformatted"]
    assert entry.verified, entry.changes
    dq = next(n for n in r.model.graph.node if n.op_type == "DequantizeLinear")
    weight = next(t for t in r.model.graph.initializer if t.name == dq.input[0])
    assert weight.data_type == TensorProto.UINT2
    onnx.checker.check_model(r.model, full_check=True)
    a = np.random.default_rng(1).standard_normal((3, K)).astype(np.float32)
    want = _run(source, a)
    assert _run(r.model, a).tobytes() == want.tobytes()
    back = convert_model(r.model, str(tmp_path), Options(25, to_format="qoperator"))
    assert back.model is not None, [f"{x.code} {x.detail}" for x in back.refused]
    (node,) = [n for n in back.model.graph.node if n.op_type == "MatMulNBits"]
    assert {a.name: helper.get_attribute_value(a) for a in node.attribute}["bits"] == 2
    assert _run(back.model, a).tobytes() == want.tobytes()


def test_below_opset_25_the_refusal_names_uint2_and_the_opset(tmp_path):
    r = convert_model(_nbits2(True), str(tmp_path), Options(21, to_format="qdq"))
    assert r.model is None
    (refusal,) = r.refused
    assert "uint2" in refusal.detail and "--to-opset 25" in refusal.detail, refusal.detail


@pytest.mark.parametrize("which", ["B", "scales", "zp"])
def test_a_constant_of_the_wrong_size_is_refused_naming_it(which, tmp_path):
    """A MatMulNBits whose packed weights, scales or zero points hold another count than K,
    N, bits and block_size give (zero points packed two columns to a byte, say) is refused
    naming the input and both sizes, not an internal error."""
    source = _nbits2(True)
    (init,) = [t for t in source.graph.initializer if t.name == which]
    init.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(init).reshape(-1)[:-1].copy(), which))
    r = convert_model(source, str(tmp_path), Options(25, to_format="qdq"))
    assert r.model is None
    (refusal,) = r.refused
    name = {"B": "B", "scales": "scales", "zp": "zero_points"}[which]
    assert f"its {name} holds" in refusal.detail and "give" in refusal.detail, refusal.detail


def _gather2(zero_points: bool, data_elem=TensorProto.UINT8, seed: int = 0) -> onnx.ModelProto:
    """A GatherBlockQuantized of a uint8 table of 2-bit codes [6, 48] (packed [6, 12]), blocks of
    16 along axis 1; or, with ``data_elem`` a float8 type, a float8 table [6, 48]."""
    rng = np.random.default_rng(seed)
    rows, cols, blocks = 6, K, K // BLOCK
    scales = rng.uniform(0.01, 0.2, (rows, blocks)).astype(np.float32)
    if data_elem == TensorProto.UINT8:
        data = numpy_helper.from_array(pack(rng.integers(0, 4, (rows, cols)).astype(np.uint8), 2, cols // 4),
                                       "data")
    else:
        values = rng.uniform(-2, 2, rows * cols).astype(np.float32)
        data = helper.make_tensor("data", data_elem, [rows, cols], values.tolist())
    inits = [data, numpy_helper.from_array(scales, "scales")]
    inputs = ["data", "ids", "scales"]
    if zero_points:
        inits.append(numpy_helper.from_array(pack(rng.integers(0, 4, (rows, blocks)).astype(np.uint8), 2, 1),
                                             "zp"))
        inputs.append("zp")
    node = helper.make_node("GatherBlockQuantized", inputs, ["Y"], name="gbq", domain="com.microsoft", bits=2,
                            block_size=BLOCK, gather_axis=0, quantize_axis=1)
    ids = helper.make_tensor_value_info("ids", TensorProto.INT64, [4])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [4, cols])
    graph = helper.make_graph([node], "gbq2", [ids], [y], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21),
                                                   helper.make_opsetid("com.microsoft", 1)], ir_version=10)


def _proven_and_run_alike(source, r) -> None:
    """The table's one rewrite proven, the result valid by onnx.checker's full check, and
    onnxruntime's outputs of source and result the same bytes."""
    assert r.model is not None, [f"{x.code} {x.detail}" for x in r.refused]
    (entry,) = [e for e in r.entries if e.action == "reformatted"]
    assert entry.verified, entry.changes
    onnx.checker.check_model(r.model, full_check=True)
    ids = {"ids": np.array([5, 0, 3, 3], np.int64)}
    run = [ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, ids)[0]
           for m in (source, r.model)]
    assert run[0].tobytes() == run[1].tobytes()


@pytest.mark.parametrize("zero_points", [True, False])
def test_two_bit_gather_block_quantized_becomes_uint2_dequantize_linear(zero_points, tmp_path):
    source = _gather2(zero_points)
    r = convert_model(source, str(tmp_path), Options(25, to_format="qdq"))
    _proven_and_run_alike(source, r)
    below = convert_model(source, str(tmp_path), Options(21, to_format="qdq"))
    assert below.model is None
    assert "uint2" in below.refused[0].detail and "--to-opset 25" in below.refused[0].detail


@pytest.mark.parametrize("block, scale_shape", [(BLOCK, (6, K // BLOCK)), (0, (1, 1)), (0, (6, 1))])
def test_a_float8_table_becomes_blocked_dequantize_linear_and_gather(block, scale_shape, tmp_path):
    """float8e4m3fn data: "output[...] = float(data[...]) * scales[block_index(...)]" is
    DequantizeLinear-21's (x - 0) * x_scale; block_size 0 is one block along the whole axis,
    and a scale dimension of 1 is broadcast (written out in full)."""
    source = _gather2(False, TensorProto.FLOAT8E4M3FN)
    node = source.graph.node[0]
    for a in node.attribute:
        if a.name == "block_size":
            a.i = block
    scales = np.random.default_rng(5).uniform(0.01, 0.2, scale_shape).astype(np.float32)
    source.graph.initializer[1].CopyFrom(numpy_helper.from_array(scales, "scales"))
    r = convert_model(source, str(tmp_path), Options(21, to_format="qdq"))
    _proven_and_run_alike(source, r)
    back = convert_model(r.model, str(tmp_path), Options(21, to_format="qoperator"))
    _proven_and_run_alike(source, back)  # and back: GatherBlockQuantized of the float8 table again
    (node,) = back.model.graph.node
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    assert node.op_type == "GatherBlockQuantized" and attrs["block_size"] == block and attrs["bits"] == 8
    assert next(t for t in back.model.graph.initializer if t.name == node.input[0]).data_type == \
        TensorProto.FLOAT8E4M3FN


def test_a_float4_table_is_refused_naming_the_type_and_the_opset(tmp_path):
    r = convert_model(_gather2(False, TensorProto.FLOAT4E2M1), str(tmp_path), Options(23, to_format="qdq"))
    assert r.model is None
    (refusal,) = r.refused
    assert refusal.node == "gbq" and "float4e2m1" in refusal.detail and "opset 23" in refusal.detail


def test_the_quantizers_two_bit_model_goes_to_opset_25_and_back_unchanged(tmp_path):
    """onnxruntime's MatMul n-bits quantizer at bits=2 (fixtures/corpus.py): QDQ at opset 25 and
    back to MatMulNBits, onnxruntime's outputs bit for bit at each step."""
    import corpus

    name = "transformer_nbits2_asym_b32_op21"
    path = corpus.build(tmp_path / "corpus", [name])[name]
    r = convert_model(onnx.load(path), str(tmp_path / "corpus"), Options(25, to_format="qdq"))
    assert r.model is not None, [x.detail for x in r.refused]
    assert "MatMulNBits" not in {n.op_type for n in r.model.graph.node}
    back = convert_model(r.model, str(tmp_path), Options(25, to_format="qoperator"))
    assert back.model is not None and "MatMulNBits" in {n.op_type for n in back.model.graph.node}
    want = corpus.run(path, "transformer", optimize=False)
    for i, m in enumerate((r.model, back.model)):
        out = str(tmp_path / f"{i}.onnx")
        onnx.save(m, out)
        got = corpus.run(out, "transformer", optimize=False)
        assert all(a.tobytes() == b.tobytes() for a, b in zip(want, got, strict=True)), i


def test_int2_qdq_weights_pack_into_two_bit_matmul_nbits(tmp_path):
    """A blocked DequantizeLinear of int2 weights [K, N] and its MatMul, at opset 25: the codes
    shifted by 2 into MatMulNBits' unsigned 2-bit codes, onnxruntime's outputs bit for bit."""
    rng = np.random.default_rng(3)
    blocks = K // BLOCK
    w = helper.make_tensor("w", TensorProto.INT2, [K, N], rng.integers(-2, 2, K * N).tolist())
    zp = helper.make_tensor("zp", TensorProto.INT2, [blocks, N], rng.integers(-2, 2, blocks * N).tolist())
    scale = numpy_helper.from_array(rng.uniform(0.01, 0.2, (blocks, N)).astype(np.float32), "s")
    nodes = [helper.make_node("DequantizeLinear", ["w", "s", "zp"], ["wf"], axis=0, block_size=BLOCK),
             helper.make_node("MatMul", ["A", "wf"], ["Y"], name="mm")]
    a = helper.make_tensor_value_info("A", TensorProto.FLOAT, [3, K])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [3, N])
    source = helper.make_model(helper.make_graph(nodes, "int2", [a], [y], [w, scale, zp]),
                               opset_imports=[helper.make_opsetid("", 25)], ir_version=13)
    r = convert_model(source, str(tmp_path), Options(25, to_format="qoperator"))
    assert r.model is not None, [x.detail for x in r.refused]
    (node,) = [n for n in r.model.graph.node if n.op_type == "MatMulNBits"]
    assert {x.name: helper.get_attribute_value(x) for x in node.attribute}["bits"] == 2
    feed = np.random.default_rng(4).standard_normal((3, K)).astype(np.float32)
    assert _run(r.model, feed).tobytes() == _run(source, feed).tobytes()
