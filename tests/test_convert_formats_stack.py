"""The measurement's and the n-bits proof's shortcuts give what they stand for, bit for bit:
stacked.stack what np.stack gives, nbits.dequantized's whole-block broadcast what the
per-code indexing gives, and an entry made located (convert/entries.entry_of) the fields
run.py's locate gives it."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from qlin_cli.convert.entries import entry_of, locate, op_label, where
from qlin_cli.convert.formats import nbits, stacked
from qlin_cli.convert.sites import sites
from qlin_cli.convert.state import Entry

_TYPES = [np.uint8, np.int8, np.int16, np.uint16, np.int32, np.float16, np.float32, np.float64, bool]


def _arrays(rng, shape: tuple, count: int, mixed: bool) -> list:
    out = []
    for j in range(count):
        t = _TYPES[int(rng.integers(0, len(_TYPES)))] if mixed or j == 0 else out[0].dtype
        out.append(np.asarray((rng.standard_normal(shape) * 100).astype(t)))
    return out


@pytest.mark.parametrize("seed", range(4))
def test_stack_is_np_stack(seed):
    rng = np.random.default_rng(seed)
    for _ in range(300):
        shape = tuple(int(d) for d in rng.integers(0, 4, int(rng.integers(0, 4))))
        arrays = _arrays(rng, shape, int(rng.integers(1, 6)), rng.random() < 0.3)
        if shape and rng.random() < 0.1:  # one of another shape: np.stack's own error
            arrays[-1] = np.zeros(shape[:-1] + (shape[-1] + 1,), arrays[0].dtype)
        if rng.random() < 0.2:  # views of one stacked part, as the measurement reads them
            arrays = [a[...] for a in arrays]
        axis = int(rng.integers(0, len(shape) + 1))
        try:
            want = np.stack(arrays, axis)
        except ValueError:
            with pytest.raises(ValueError):
                stacked.stack(arrays, axis)
            continue
        got = stacked.stack(arrays, axis)
        assert (got.dtype, got.shape) == (want.dtype, want.shape)
        assert got.tobytes() == want.tobytes() and got.flags.c_contiguous and got.flags.writeable


def _indexed(w: dict) -> np.ndarray:
    """The page's formula with each block's zero point and scale copied to every code."""
    per_k = np.repeat(np.arange(w["zero"].shape[1]), w["block_size"])[: w["K"]]
    z = w["zero"][:, per_k].astype(np.float32)
    return ((w["codes"].astype(np.float32) - z) * w["scales"][:, per_k]).astype(w["scales"].dtype)


@pytest.mark.parametrize("scale_type", [np.float32, np.float16])
def test_dequantized_whole_blocks_is_the_indexed_formula(scale_type):
    rng = np.random.default_rng(1)
    for _ in range(200):
        n, bs, blocks = int(rng.integers(1, 9)), int(rng.choice([16, 32, 64])), int(rng.integers(1, 5))
        k = blocks * bs - (int(rng.integers(1, bs)) if rng.random() < 0.3 else 0)  # K short of a block
        bits = int(rng.choice([2, 4, 8]))
        scales = (rng.standard_normal((n, blocks)) * 10.0 ** rng.integers(-40, 5)).astype(scale_type)
        scales.flat[0] = np.nan if rng.random() < 0.2 else scales.flat[0]
        w = {"K": k, "block_size": bs, "codes": rng.integers(0, 2 ** bits, (n, k)).astype(np.uint8),
             "scales": scales, "zero": rng.integers(0, 2 ** bits, (n, blocks)).astype(np.uint8)}
        with np.errstate(over="ignore"):
            got, want = nbits.dequantized(w), _indexed(w)
        assert (got.dtype, got.shape) == (want.dtype, want.shape) and got.tobytes() == want.tobytes()


def test_entry_of_gives_the_fields_locate_gives():
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="r"), helper.make_node("Relu", ["a"], ["b"]),
             helper.make_node("Relu", ["b"], ["y"], name="r2", domain="")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    found = list(sites(model))
    known: dict = {}
    for site in found:
        made = entry_of(site, "reformatted", ["x"], known)
        plain = Entry(where(site), op_label(site), "reformatted", ["x"])
        locate([plain], found)
        assert made == plain
