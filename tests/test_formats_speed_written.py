"""The shortcuts of what the weights' rewrites write (convert/formats/nbits.py): each is held
to the slow way it stands for, a node read and written on its own."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper, numpy_helper

from qlin_cli.convert.formats import nbits
from qlin_cli.convert.formats.to_qdq import Lookups, Plain, _made, attribute_values


def _node(rng, i: int, consts: dict, k: int = 64, n: int = 5, bits: int = 4, block: int = 32,
          zero: bool = True, bias: bool = False, **extra):
    """A MatMulNBits node of its own constants (``consts``), attributes ``extra`` added."""
    blocks = -(-k // block)
    codes = rng.integers(0, 1 << bits, (n, blocks * block)).astype(np.uint8)
    consts[f"b{i}"] = nbits.pack(codes, bits, blocks * block * bits // 8).reshape(n, blocks, -1)
    consts[f"s{i}"] = rng.uniform(0.01, 0.5, (n, blocks)).astype(np.float32)
    inputs = ["a", f"b{i}", f"s{i}"]
    if zero or bias:
        consts[f"z{i}"] = nbits.pack(rng.integers(0, 1 << bits, (n, blocks)).astype(np.uint8), bits,
                                     -(-blocks * bits // 8)).reshape(-1)
        inputs.append(f"z{i}" if zero else "")
    if bias:
        inputs += ["", f"bias{i}"]
    return helper.make_node("MatMulNBits", inputs, [f"y{i}"], name=f"m{i}", domain="com.microsoft", K=k, N=n,
                            bits=bits, block_size=block, **extra)


def _nodes():
    rng = np.random.default_rng(7)
    consts: dict = {}
    nodes = [_node(rng, 0, consts), _node(rng, 1, consts), _node(rng, 2, consts, accuracy_level=4),
             _node(rng, 3, consts, accuracy_level=4), _node(rng, 4, consts, accuracy_level=1),
             _node(rng, 5, consts, k=96), _node(rng, 6, consts, bits=8, block=16, bias=True),
             _node(rng, 7, consts, bits=2, block=16, zero=False, accuracy_level=4),
             _node(rng, 8, consts, k=48, accuracy_level=4), _node(rng, 9, consts, k=48)]
    return nodes, consts


class _Names:
    """New names as Namer makes them (a base as it is, then base_1, base_2 ...)."""

    def __init__(self, taken=()):
        self.taken: set = set(taken)

    def __call__(self, base: str) -> str:
        name, i = base, 0
        while name in self.taken:
            i += 1
            name = f"{base}_{i}"
        self.taken.add(name)
        return name


def test_each_node_written_from_the_weights_read_together_is_written_alone():
    """to_qdq of each node given what weights_of read of all of them together (their
    attributes read once where they equal the node's before, message by message; accuracy_level
    4, 1 and none mixed; another K, bits, blocks, a bias; the names a Namer makes at once, some
    taken) writes what to_qdq of the node alone writes, its names made one call each: the same
    nodes, byte for byte, initializers, changes and twins."""
    from qlin_cli.convert.sites import Namer

    nodes, consts = _nodes()
    read = nbits.weights_of([(n, Lookups(consts.get, lambda name: None, _Names())) for n in nodes])
    assert all(r is not None for r in read)
    taken = {"m0_weight", "m6_matmul", "m6_matmul_1", "y6_product", "m2_weight_scale"}
    for node, got in zip(nodes, read, strict=True):
        together = nbits.to_qdq(node, 25, Lookups(consts.get, lambda name: None, Namer(set(taken))), got)
        alone = nbits.to_qdq(node, 25, Lookups(consts.get, lambda name: None, _Names(taken)))
        a, b = alone[0], together[0]
        assert [n.SerializeToString() for n in a.nodes] == [n.SerializeToString() for n in b.nodes]
        assert [t.SerializeToString() for t in a.inits] == [t.SerializeToString() for t in b.inits]
        assert a.changes == b.changes and a.plain == b.plain
        four = node.name in ("m2", "m3", "m7", "m8")
        assert any("accuracy_level=4" in c for c in alone[0].changes) == four


def test_attributes_read_once_are_each_nodes_own():
    """``Attributes.of`` (the values of the node read last, for a node whose attributes equal
    its) gives each node what attribute_values reads of it, whether it has accuracy_level=4
    and a block_size not 0, nodes of equal and other attributes mixed, one read twice."""
    nodes, _ = _nodes()
    dq = [helper.make_node("DequantizeLinear", ["q", "s"], ["w"], axis=0, block_size=b) for b in (32, 32, 0)]
    dq.append(helper.make_node("DequantizeLinear", ["q", "s"], ["w"], axis=0))
    memo = nbits.Attributes()
    for node in nodes + nodes[::-1] + dq + [dq[0], dq[0], nodes[2]]:
        got = memo.of(node)
        assert got.values == attribute_values(node)
        assert got.accuracy_four == any(a.name == "accuracy_level" and a.i == 4 for a in node.attribute)
        assert got.blocked == any(a.name == "block_size" and a.i for a in node.attribute)


@pytest.mark.parametrize("block_size", [16, 32, 128])
def test_the_dequantize_linear_made_from_its_template_is_made_nodes(block_size):
    """``_dq_made`` (a copy of one DequantizeLinear made once a block size) adds what _made
    adds: the same node, byte for byte, and twin; unnamed too."""
    for name in ("w_dq", ""):
        want_nodes, want_twins, nodes, twins = [], [], [], []
        _made(want_nodes, want_twins, "DequantizeLinear", ["q", "s", "z"], ["w"], name, axis=0,
              block_size=block_size)
        nbits._dq_made(nodes, twins, ["q", "s", "z"], ["w"], name, block_size)
        assert nodes[0].SerializeToString() == want_nodes[0].SerializeToString()
        assert nodes[0] == helper.make_node("DequantizeLinear", ["q", "s", "z"], ["w"], name=name or None,
                                            axis=0, block_size=block_size)
        assert isinstance(twins[0], Plain) and twins[0] == want_twins[0]


@pytest.mark.parametrize("layout", [(32, 32, 4, 32), (48, 5, 2, 16), (64, 3, 8, 64)])
def test_the_matmul_nbits_made_from_its_template_is_made_nodes(layout):
    """``_nbits_made`` (a copy of one MatMulNBits made once a layout) is made_node's node, byte
    for byte; unnamed too."""
    from qlin_cli.convert.formats.to_qdq import made_node

    k, n, bits, bs = layout
    for name in ("mm_MatMulNBits", ""):
        want = made_node("MatMulNBits", ["x", "b", "s"], ["y"], name, "com.microsoft", K=k, N=n, bits=bits,
                         block_size=bs)
        got = nbits._nbits_made(["x", "b", "s"], ["y"], name, layout)
        assert got.SerializeToString() == want.SerializeToString()


def test_many_four_bit_tables_of_one_shape_read_together_are_what_to_array_reads():
    """read_codes of raw 4-bit tables of a few shapes (odd counts: a padded last byte), many of
    each shape and type, read a shape at once, and of int32_data ones: each exactly
    numpy_helper.to_array's."""
    import ml_dtypes
    from onnx import TensorProto, numpy_helper

    rng = np.random.default_rng(9)
    tables = []
    for i in range(40):
        dims = [(3, 5), (32, 32), (7,)][i % 3]
        kind = [ml_dtypes.uint4, ml_dtypes.int4][i % 2]
        low = -8 if kind is ml_dtypes.int4 else 0
        tables.append(numpy_helper.from_array(rng.integers(low, 8, dims).astype(kind), f"t{i}"))
        if i % 5 == 0:
            tables.append(helper.make_tensor(f"i{i}", TensorProto.INT4, list(dims),
                                             rng.integers(-8, 8, dims).flatten().tolist()))
    got = nbits.read_codes(tables)
    assert len(got) == len(tables)
    for t in tables:
        want = numpy_helper.to_array(t)
        assert got[id(t)].dtype == want.dtype and got[id(t)].shape == want.shape
        assert got[id(t)].tobytes() == want.tobytes(), t.name


def test_names_made_at_once_are_namers_own():
    """``named`` of a Namer (its set of names read once) makes the names Namer's calls make one
    by one, in order, and leaves it the same set taken: bases taken, their _1 taken, a base
    given twice, a Namer that finds its names when first asked; any other namer is called."""
    from qlin_cli.convert.sites import Namer

    bases = ["w", "w", "w_1", "x", "w_q", "w", "y_product", "w_q"]
    for taken in ({"w", "w_1", "x_1"}, set(), {"w_q", "w_q_1", "w_q_2"}):
        one, two = Namer(set(taken)), Namer(lambda taken=taken: set(taken))
        want = [one(b) for b in bases]
        assert nbits.named(two, bases) == want and two.taken == one.taken
    calls = []
    assert nbits.named(lambda b: calls.append(b) or b.upper(), ["a", "b"]) == ["A", "B"]
    assert calls == ["a", "b"]


def test_initializers_read_back_together_are_what_read_raw_reads():
    """What write_later reads back of the initializers it wrote (a place of many nodes at once,
    ``_read_written``) is read_raw of each: B, scales and zero points of 2, 4 and 8 bits; and
    where some tensors of a place are not like the first (other dims, float16, values in
    float_data), each of those read by read_raw itself, and each from its own bytes (one
    changed)."""
    from onnx import TensorProto

    from qlin_cli.convert.formats.to_qdq import read_raw

    rng = np.random.default_rng(13)
    later, back = [], []
    for i in range(12):
        elem, k, n, bs, zero = [(TensorProto.INT4, 64, 8, 32, True), (TensorProto.UINT2, 32, 3, 16, True),
                                (TensorProto.INT8, 32, 4, 16, False)][i % 3]
        codes = rng.integers(-2, 2, (k, n))
        weight = helper.make_tensor(f"w{i}", elem, [k, n], codes.flatten().tolist())
        scale = rng.uniform(0.01, 0.5, (-(-k // bs), n)).astype(np.float32)
        zp = rng.integers(-2, 2, scale.shape).astype(helper.tensor_dtype_to_np_dtype(elem)) if zero else None
        dq = helper.make_node("DequantizeLinear", [f"w{i}", f"s{i}"] + ([f"z{i}"] if zero else []), [f"f{i}"],
                              axis=0, block_size=bs)
        mm = helper.make_node("MatMul", ["x", f"f{i}"], [f"y{i}"], name=f"mm{i}")
        nbits.from_qdq(dq, mm, weight, scale, zp, lambda base: base, back=back, later=later)
    nbits.write_later(later)
    assert sum(len(p.inits) == 3 for p in later) >= 4
    for p in later:
        assert set(p.written) == {t.name for t in p.inits}
        for t in p.inits:
            want = read_raw(t)
            assert p.written[t.name].dtype == want.dtype and p.written[t.name].shape == want.shape
            assert p.written[t.name].tobytes() == want.tobytes()
    part = [p for p in later if p.layout == later[0].layout]
    part[1].inits[0].dims[:] = [int(np.prod(part[1].inits[0].dims))]
    part[2].inits[1].CopyFrom(numpy_helper.from_array(read_raw(part[2].inits[1]).astype(np.float16),
                                                      part[2].inits[1].name))
    typed = part[3].inits[1]
    values = read_raw(typed).flatten()
    typed.CopyFrom(helper.make_tensor(typed.name, TensorProto.FLOAT, list(typed.dims), values))
    part[0].inits[2].raw_data = part[0].inits[2].raw_data[:-1] + b"\x01"
    for place in range(3):
        for p in part:
            p.written.clear()
        nbits._read_written([p for p in part if len(p.inits) > place], place)
        for p in part:
            if len(p.inits) > place:
                t = p.inits[place]
                want = read_raw(t)
                assert p.written[t.name].dtype == want.dtype and p.written[t.name].shape == want.shape
                assert p.written[t.name].tobytes() == want.tobytes(), (place, t.name)
