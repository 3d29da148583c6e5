"""Models and cases the format conversions' tests share: a QLinearMatMul chain, a
MatMulNBits-like proof case of its own tables, and a model's readers counted by a walk."""

from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from qlin_cli.convert.formats import nbits, nbits_proof
from qlin_cli.convert.sites import sites


def qlinear_chain(n_tensor: int, n_column: int, seed: int = 3, opset: int = 13, rows: int = 1):
    """x -> QuantizeLinear -> QLinearMatMul nodes (``n_tensor`` with per-tensor weights, then
    ``n_column`` per column), each with its own weights, scales and zero points ->
    DequantizeLinear; x is [rows, 16]."""
    rng = np.random.default_rng(seed)
    inits = [numpy_helper.from_array(np.float32(0.05), "s"), numpy_helper.from_array(np.uint8(128), "z")]
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q0"])]
    for i in range(n_tensor + n_column):
        shape = (16,) if i >= n_tensor else ()
        inits += [numpy_helper.from_array(rng.integers(-128, 128, (16, 16)).astype(np.int8), f"w{i}"),
                  numpy_helper.from_array(rng.uniform(0.001, 0.02, shape).astype(np.float32), f"ws{i}"),
                  numpy_helper.from_array(rng.integers(-8, 8, shape).astype(np.int8), f"wz{i}"),
                  numpy_helper.from_array(np.float32(rng.uniform(0.02, 0.2)), f"ys{i}"),
                  numpy_helper.from_array(np.uint8(rng.integers(100, 156)), f"yz{i}")]
        x_scale, x_zero = ("s", "z") if i == 0 else (f"ys{i - 1}", f"yz{i - 1}")
        nodes.append(helper.make_node("QLinearMatMul", [f"q{i}", x_scale, x_zero, f"w{i}", f"ws{i}", f"wz{i}",
                                                        f"ys{i}", f"yz{i}"], [f"q{i + 1}"], name=f"mm{i}"))
    last = n_tensor + n_column
    nodes.append(helper.make_node("DequantizeLinear", [f"q{last}", f"ys{last - 1}", f"yz{last - 1}"], ["y"]))
    g = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [rows, 16])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [rows, 16])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                             ir_version=8 if opset < 21 else 10)


def nbits_case(seed: int, k: int = 64, n: int = 6, block: int = 32, bits: int = 4, zero: bool = True,
               name: str = "", scale_type=np.float32, read: bool = False):
    """A MatMulNBits-like case of its own tables (codes [N, K], blocked along K), written as
    to_qdq writes them; ``zero`` False: the default zero point, 2^(bits-1); ``read``: its codes
    given as the array to_array reads (``NBitsCase.read``)."""
    rng = np.random.default_rng(seed)
    blocks = -(-k // block)
    codes = rng.integers(0, 1 << bits, (n, k)).astype(np.uint8)
    scales = rng.uniform(0.01, 0.5, (n, blocks)).astype(scale_type)
    zp = rng.integers(0, 1 << bits, (n, blocks)) if zero else np.full((n, blocks), 1 << (bits - 1))
    zp = zp.astype(np.uint8)
    w = {"K": k, "N": n, "bits": bits, "block_size": block, "codes": codes, "scales": scales, "zero": zp}
    elem = nbits.TYPES[bits]
    inits = [nbits.codes_tensor(f"q{name}", elem, [k, n], codes.T),
             numpy_helper.from_array(np.ascontiguousarray(scales.T), f"s{name}"),
             nbits.codes_tensor(f"z{name}", elem, [blocks, n], zp.T)]
    dq = helper.make_node("DequantizeLinear", [f"q{name}", f"s{name}", f"z{name}"], [f"w{name}"], axis=0,
                          block_size=block)
    given = {f"q{name}": numpy_helper.to_array(inits[0])} if read else None
    return nbits_proof.NBitsCase(w, dq, inits, given)


def walked_readers(model) -> dict[str, int]:
    """How many node inputs, in every graph and function of ``model``, read each name: every
    node of the walk, each input read from protobuf (what sites.readers_anywhere counts from
    an analysis)."""
    count: dict[str, int] = {}
    for site in sites(model):
        for x in site.node.input:
            count[x] = count.get(x, 0) + 1
    return count
