"""The shortcuts of what the weights' rewrites write (convert/formats/nbits.py): each is held
to the slow way it stands for, a node read and written on its own."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

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

    def __init__(self):
        self.taken: set = set()

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
    4, 1 and none mixed; another K, bits, blocks, a bias) writes what to_qdq of the node alone
    writes: the same nodes, byte for byte, initializers, changes and twins."""
    nodes, consts = _nodes()
    read = nbits.weights_of([(n, Lookups(consts.get, lambda name: None, _Names())) for n in nodes])
    assert all(r is not None for r in read)
    for node, got in zip(nodes, read, strict=True):
        alone = nbits.to_qdq(node, 25, Lookups(consts.get, lambda name: None, _Names()))
        together = nbits.to_qdq(node, 25, Lookups(consts.get, lambda name: None, _Names()), got)
        a, b = alone[0], together[0]
        assert [n.SerializeToString() for n in a.nodes] == [n.SerializeToString() for n in b.nodes]
        assert [t.SerializeToString() for t in a.inits] == [t.SerializeToString() for t in b.inits]
        assert a.changes == b.changes and a.plain == b.plain
        four = node.name in ("m2", "m3", "m7", "m8")
        assert any("accuracy_level=4" in c for c in alone[0].changes) == four


def test_attributes_read_once_are_each_nodes_own():
    """``_attributes`` (the values of the node read last, for a node whose attributes equal
    its) gives each node what attribute_values reads of it, and whether it has
    accuracy_level=4, nodes of equal and other attributes mixed."""
    nodes, _ = _nodes()
    memo: list = []
    for node in nodes + nodes[::-1]:
        assert nbits._attributes(node, memo) == attribute_values(node)
        assert memo[2] == any(a.name == "accuracy_level" and a.i == 4 for a in node.attribute)


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
