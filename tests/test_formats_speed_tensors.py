"""The format conversions' shortcuts write and read what onnx's own helpers do."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import numpy_helper

from qlin_cli.convert import verify
from qlin_cli.convert.formats import nbits, to_qdq


@pytest.mark.parametrize("array", [
    np.arange(32, dtype=np.float32).reshape(1, 32) / 7,
    np.arange(64, dtype=np.float32).reshape(8, 8).T,  # not contiguous: written in C order
    np.float32(0.25).reshape(()),
    np.arange(24, dtype=np.float16).reshape(2, 3, 4),
    np.arange(200, dtype=np.uint8).reshape(4, 5, 10),
    np.zeros((0, 3), np.uint8),
    np.arange(-3, 3, dtype=np.int32).reshape(2, 3),
    np.int8(-3).reshape(()),
    np.arange(6, dtype=np.uint16).reshape(3, 2)[::2],
    np.array([True, False]),  # another type: from_array itself
    np.arange(6, dtype=np.float64),
])
def test_raw_tensor_is_what_from_array_writes(array):
    got = to_qdq.raw_tensor(array, "t")
    assert got.SerializeToString() == numpy_helper.from_array(array, "t").SerializeToString()
    assert np.array_equal(numpy_helper.to_array(got), array)


def _four_bit(name: str, elem: int, dims: list, codes: np.ndarray):
    from onnx import helper

    return helper.make_tensor(name, elem, dims, codes.flatten().tolist())


def test_read_codes_is_what_to_array_reads():
    """4-bit tables in int32_data and in raw_data (even and odd counts, uint4 and int4, one of
    each shape mixed), read together: each exactly numpy_helper.to_array's; tables of another
    size or type (a raw table a byte short, 8-bit) are left out."""
    import ml_dtypes
    from onnx import TensorProto

    rng = np.random.default_rng(3)
    tables = []
    for i, dims in enumerate([[32, 32], [3, 5], [1, 7], [4, 1, 3], [2, 2], [1]]):
        tables.append(_four_bit(f"u{i}", TensorProto.UINT4, dims, rng.integers(0, 16, dims)))
        tables.append(_four_bit(f"s{i}", TensorProto.INT4, dims, rng.integers(-8, 8, dims)))
        tables.append(numpy_helper.from_array(rng.integers(0, 16, dims).astype(ml_dtypes.uint4), f"ru{i}"))
        tables.append(numpy_helper.from_array(rng.integers(-8, 8, dims).astype(ml_dtypes.int4), f"rs{i}"))
    assert sum(t.HasField("raw_data") for t in tables) == 12
    raw = TensorProto(name="raw", data_type=TensorProto.UINT4, dims=[3, 3], raw_data=b"\x12\x34\x56\x78\x09")
    short = TensorProto(name="short", data_type=TensorProto.INT4, dims=[3, 3], raw_data=b"\x12\x34\x56\x78")
    eight = numpy_helper.from_array(rng.integers(0, 255, (4, 4)).astype(np.uint8), "u8")
    got = nbits.read_codes(tables + [raw, short, eight])
    assert id(short) not in got and id(eight) not in got
    for t in tables + [raw]:
        want = numpy_helper.to_array(t)
        assert got[id(t)].dtype == want.dtype and got[id(t)].shape == want.shape
        assert got[id(t)].tobytes() == want.tobytes(), t.name


def _qlinear_model():
    """A QLinearMatMul and a per-channel QLinearConv with a bias (DequantizeLinear with an axis,
    the bias's scale added, Conv's attributes) at opset 13."""
    import onnx
    from onnx import TensorProto, helper

    rng = np.random.default_rng(5)
    f = numpy_helper.from_array
    inits = [f(np.float32(0.05), "s"), f(np.uint8(128), "z"),
             f(rng.integers(-9, 9, (4, 4)).astype(np.int8), "w"), f(np.float32(0.01), "ws"),
             f(np.int8(0), "wz"),
             f(rng.integers(-9, 9, (3, 1, 2, 2)).astype(np.int8), "cw"),
             f(np.array([0.01, 0.02, 0.03], np.float32), "cs"), f(np.zeros(3, np.int8), "cz"),
             f(np.array([5, -7, 9], np.int32), "cb")]
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q0"]),
             helper.make_node("QLinearMatMul", ["q0", "s", "z", "w", "ws", "wz", "s", "z"], ["q1"],
                              name="mm"),
             helper.make_node("Reshape", ["q1", "shape"], ["q2"]),
             helper.make_node("QLinearConv", ["q2", "s", "z", "cw", "cs", "cz", "s", "z", "cb"], ["q3"],
                              name="conv", pads=[1, 1, 1, 1], strides=[1, 1]),
             helper.make_node("DequantizeLinear", ["q3", "s", "z"], ["y"])]
    inits.append(f(np.array([1, 1, 4, 4], np.int64), "shape"))
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    return onnx.shape_inference.infer_shapes(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)],
                                                               ir_version=8))


def test_the_plain_twins_are_the_nodes_and_give_their_structures(monkeypatch):
    """Every measured QOperator -> QDQ case keeps its nodes as to_qdq.Plain: each the Plain of
    the node itself, and the measurement's structure read from them is the one read from the
    nodes (names by slot, constants and all)."""
    pytest.importorskip("onnxruntime")
    from qlin_cli.convert.formats import stacked
    from qlin_cli.convert.passes import prove
    from qlin_cli.convert.run import Options, convert_model

    seen = []
    real = prove.measure_all

    def kept(cases, *args):
        seen.extend(cases)
        return real(cases, *args)

    monkeypatch.setattr(prove, "measure_all", kept)
    result = convert_model(_qlinear_model(), "", Options(13, to_format="qdq", tolerance=255))
    assert result.model is not None and len(seen) == 2
    for case in seen:
        for side in ("before", "after"):
            nodes, twins = getattr(case, side), case.plain[side]
            assert twins == [to_qdq.plain(n) for n in nodes]

            def const(name, case=case):
                return np.asarray(case.consts[name]) if name in case.consts else None
            assert stacked.signature(twins, case.inputs, const, case.output_list()) == \
                stacked.signature(nodes, case.inputs, const, case.output_list())
    assert any(a.name == "axis" for n in seen[1].plain["after"] for a in n.attribute)


@pytest.mark.parametrize("ints", [
    {}, {"axis": 0}, {"axis": 0, "block_size": 32}, {"block_size": 16, "axis": -1},
    {"K": 64, "N": 32, "bits": 4, "block_size": 16}, {"axis": None, "block_size": 8}])
def test_made_node_is_what_make_node_writes(ints):
    """Its message and bytes are make_node's: a domain of None unset, "" set (proto2 writes it),
    an empty name unset, an attribute of value None left out."""
    from onnx import helper

    for domain in (None, "", "com.microsoft"):
        for name in ("n", ""):
            want = helper.make_node("Op", ["a", "", "b"], ["y"], name=name, domain=domain, **ints)
            for _ in range(2):  # made, then from the attributes kept
                got = to_qdq.made_node("Op", ["a", "", "b"], ["y"], name, domain, **ints)
                assert got == want and got.SerializeToString() == want.SerializeToString()


def _blocked(rng, elem: int, k: int, n: int, block: int, zero: bool):
    """A blocked DequantizeLinear of a [k, n] table of ``elem`` and its MatMul: (dq, matmul,
    weight tensor, scale, zero point or None)."""
    from onnx import TensorProto, helper

    low, high = {TensorProto.UINT4: (0, 16), TensorProto.INT4: (-8, 8), TensorProto.UINT2: (0, 4),
                 TensorProto.INT8: (-128, 128), TensorProto.UINT8: (0, 256)}[elem]
    blocks = -(-k // block)
    codes = rng.integers(low, high, (k, n))
    weight = helper.make_tensor("w", elem, [k, n], codes.flatten().tolist())
    dtype = helper.tensor_dtype_to_np_dtype(elem)
    scale = rng.uniform(0.01, 0.5, (blocks, n)).astype(np.float32)
    zp = rng.integers(low, high, (blocks, n)).astype(dtype) if zero else None
    dq = helper.make_node("DequantizeLinear", ["w", "s"] + (["z"] if zero else []), ["wf"], axis=0,
                          block_size=block)
    return dq, helper.make_node("MatMul", ["x", "wf"], ["y"], name="mm"), weight, scale, zp


def test_the_weights_read_back_together_are_each_nodes_own():
    """nbits.read_back (the MatMulNBits nodes from_qdq wrote, read back in one weights_of)
    gives each node the page's weights from_qdq reads back for it alone: the same arrays,
    dtypes and shapes, for tables of 2, 4 and 8 bits, signed and not, with and without zero
    points, a K that is not a whole number of blocks, layouts mixed in one call."""
    from onnx import TensorProto

    rng = np.random.default_rng(5)
    layouts = [(TensorProto.UINT4, 64, 8, 32, True), (TensorProto.INT4, 48, 5, 32, False),
               (TensorProto.UINT2, 32, 3, 16, True), (TensorProto.INT8, 32, 4, 16, True),
               (TensorProto.UINT8, 40, 6, 16, False), (TensorProto.UINT4, 64, 8, 32, True)]
    alone, back = [], []
    for layout in layouts:
        args = _blocked(rng, *layout)
        alone.append(nbits.from_qdq(*args, lambda base: base)[2])
        node, _, w = nbits.from_qdq(*args, lambda base: base, back=back)
        assert w is None and back[-1][0] is node
    together = nbits.read_back(back)
    assert len(together) == len(alone)
    for want, got in zip(alone, together, strict=True):
        assert set(got) == set(want)
        for key, value in want.items():
            if isinstance(value, np.ndarray):
                assert got[key].dtype == value.dtype and np.array_equal(got[key], value), key
            else:
                assert got[key] == value, key


@pytest.mark.parametrize("array", [
    np.arange(32, dtype=np.float32).reshape(1, 32) / 7,
    np.float32(0.25).reshape(()),
    np.arange(24, dtype=np.float16).reshape(2, 3, 4),
    np.arange(200, dtype=np.uint8).reshape(4, 5, 10),
    np.zeros((0, 3), np.uint8),
    np.arange(-3, 3, dtype=np.int32).reshape(2, 3),
    np.arange(-8, 8, dtype=np.int8).reshape(4, 4),
    np.arange(6, dtype=np.uint16).reshape(3, 2),
    np.arange(6, dtype=np.int16),
])
def test_read_raw_is_what_to_array_reads(array):
    """A raw tensor of each plain numeric type read back as to_array reads it: the same
    type, shape and bytes, read-only as to_array's is."""
    t = numpy_helper.from_array(array, "t")
    got, want = to_qdq.read_raw(t), numpy_helper.to_array(t)
    assert got.dtype == want.dtype and got.shape == want.shape and got.tobytes() == want.tobytes()
    assert got.flags.writeable == want.flags.writeable


def test_read_raw_reads_other_tensors_through_to_array():
    """Tensors stored otherwise (typed fields, 4-bit, doubles, booleans) read as to_array reads them."""
    from onnx import TensorProto, helper

    tensors = [helper.make_tensor("f", TensorProto.FLOAT, [2, 2], [1.0, 2.5, -3.0, 4.0]),
               helper.make_tensor("u4", TensorProto.UINT4, [3], [1, 15, 7]),
               TensorProto(name="r4", data_type=TensorProto.INT4, dims=[3], raw_data=b"\x12\x0f"),
               numpy_helper.from_array(np.arange(3, dtype=np.float64), "d"),
               numpy_helper.from_array(np.array([True, False]), "b")]
    for t in tensors:
        got, want = to_qdq.read_raw(t), numpy_helper.to_array(t)
        assert got.dtype == want.dtype and got.shape == want.shape and got.tobytes() == want.tobytes(), t.name


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.uint8, np.int32, np.float64])
def test_same_bits_is_tobytes_equal(dtype):
    """verify.same_bits on views (transposed) is the bytes of C-order copies compared: equal
    arrays equal, NaN equal to the same NaN, -0.0 not 0.0, one element changed found."""
    rng = np.random.default_rng(5)
    a = (rng.standard_normal((6, 40)) * 50).astype(dtype)
    b = np.ascontiguousarray(a.T).T  # the same values in another layout
    assert verify.same_bits(a, b) and verify.same_bits(a.T, b.T)
    c = a.copy()
    c[3, 17] = c[3, 17] + 1
    assert not verify.same_bits(a, c) and not verify.same_bits(a.T, np.ascontiguousarray(c.T))
    assert not verify.same_bits(a, a.T) and not verify.same_bits(a, a[:5])
    assert not verify.same_bits(a, a.astype(np.int64 if a.dtype != np.int64 else np.int32))
    if np.dtype(dtype).kind == "f":
        n = a.copy()
        n[0, 0], n[1, 1] = np.nan, -0.0
        m = n.copy()
        assert verify.same_bits(n, m)
        m[1, 1] = 0.0
        assert not verify.same_bits(n, m) and (n.tobytes() == m.tobytes()) is False


def test_nodes_written_later_together_are_each_written_alone():
    """from_qdq with ``later`` (the initializers written by one write_later, layouts mixed,
    zero points given, left out, and the page's default) writes the same node and
    initializers, byte for byte, and reads the same weights back, as each node written alone."""
    from onnx import TensorProto

    rng = np.random.default_rng(11)
    layouts = [(TensorProto.UINT4, 64, 8, 32, True), (TensorProto.INT4, 48, 5, 32, False),
               (TensorProto.UINT2, 32, 3, 16, True), (TensorProto.INT8, 32, 4, 16, True),
               (TensorProto.UINT8, 40, 6, 16, False), (TensorProto.UINT4, 64, 8, 32, True),
               (TensorProto.INT4, 48, 5, 32, False), (TensorProto.UINT4, 64, 8, 32, False)]
    made = [_blocked(rng, *layout) for layout in layouts]
    alone = [nbits.from_qdq(*args, lambda base: base) for args in made]
    later, back, together = [], [], []
    for args in made:
        together.append(nbits.from_qdq(*args, lambda base: base, back=back, later=later))
    assert all(not inits for _, inits, _ in together)  # nothing written yet
    nbits.write_later(later)
    assert any(len(node.input) == 3 for node, _, _ in alone)
    assert any(len(node.input) == 4 for node, _, _ in alone)
    for (node, inits, _), (got, got_inits, _) in zip(alone, together, strict=True):
        assert got.SerializeToString() == node.SerializeToString()
        assert [t.SerializeToString() for t in got_inits] == [t.SerializeToString() for t in inits]
    for (_, _, want), got in zip(alone, nbits.read_back(back), strict=True):
        assert all(np.array_equal(got[key], value) if isinstance(value, np.ndarray) else got[key] == value
                   for key, value in want.items())


def _packed_by_hand(codes: np.ndarray, bits: int, per_row: int) -> bytes:
    """Rows of unsigned codes packed low bits first, code by code, ``per_row`` bytes a row."""
    out = bytearray()
    per = 8 // bits
    for row in codes.tolist():
        row_bytes = [0] * per_row
        for j, code in enumerate(row):
            row_bytes[j // per] |= int(code) << (bits * (j % per))
        out += bytes(row_bytes)
    return bytes(out)


def test_nodes_written_later_hold_the_codes_packed_by_hand():
    """The B, scales and zero points write_later writes are the source's codes shifted to
    unsigned, column by column, packed low bits first (worked out here code by code)."""
    from onnx import TensorProto

    rng = np.random.default_rng(12)
    for elem, k, n, bs, zero in [(TensorProto.INT4, 48, 5, 32, True), (TensorProto.UINT2, 32, 3, 16, True),
                                 (TensorProto.UINT4, 64, 8, 32, False), (TensorProto.INT8, 32, 4, 16, True)]:
        dq, mm, weight, scale, zp = _blocked(rng, elem, k, n, bs, zero)
        later, back = [], []
        node, inits, _ = nbits.from_qdq(dq, mm, weight, scale, zp, lambda base: base, back=back, later=later)
        nbits.write_later(later)
        bits, shift = nbits.SIGNED.get(elem) or (nbits.UNSIGNED[elem], 0)
        blocks = -(-k // bs)
        codes = numpy_helper.to_array(weight).astype(np.int64) + shift
        assert inits[0].raw_data == _packed_by_hand(codes.T, bits, blocks * bs * bits // 8)
        assert list(inits[0].dims) == [n, blocks, bs * bits // 8]
        assert numpy_helper.to_array(inits[1]).tobytes() == np.ascontiguousarray(scale.T).tobytes()
        zeros = (np.zeros((blocks, n), np.int64) if zp is None else zp.astype(np.int64)) + shift
        if (zeros == 1 << (bits - 1)).all():
            assert len(inits) == 2 and len(node.input) == 3
        else:
            assert inits[2].raw_data == _packed_by_hand(zeros.T, bits, -(-blocks * bits // 8))
            assert list(node.input)[3] == inits[2].name


def test_attribute_values_are_what_get_attribute_value_reads():
    """Integer attributes read directly, every other kind through helper.get_attribute_value:
    the same names and values (ints, a negative int, floats, strings, lists, a tensor)."""
    from onnx import helper

    node = helper.make_node("Op", ["x"], ["y"], axis=-1, block_size=32, K=0, alpha=0.5, mode="nearest",
                            pads=[1, 2], scales=[0.5, 1.0], value=numpy_helper.from_array(np.int8(3)))
    want = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    got = to_qdq.attribute_values(node)
    assert list(got) == list(want) and got == want
    assert all(type(got[k]) is type(want[k]) for k in want)
