"""A large quantized model for benchmarks: N Q/DQ pairs, weights in a sparse external file."""

from __future__ import annotations

import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def build(folder: str, pairs: int = 10_000, weight_bytes: int = 3 * 2**30) -> str:
    """Write folder/big.onnx and its sparse folder/weights.bin; returns the model path.

    Each pair quantizes an activation and feeds an Add with its own float weight
    of weight_bytes / pairs bytes, stored externally. The data file is sparse.
    """
    os.makedirs(folder, exist_ok=True)
    per = max(4, (weight_bytes // pairs) // 4 * 4)
    elems = per // 4
    nodes, inits = [], []
    prev = "x"
    for i in range(pairs):
        s = numpy_helper.from_array(np.float32(0.05), f"s{i}")
        z = numpy_helper.from_array(np.uint8(128), f"z{i}")
        inits += [s, z]
        w = onnx.TensorProto(name=f"w{i}", data_type=TensorProto.FLOAT, dims=[elems])
        w.data_location = TensorProto.EXTERNAL
        for k, v in (("location", "weights.bin"), ("offset", str(i * per)), ("length", str(per))):
            e = w.external_data.add()
            e.key, e.value = k, v
        inits.append(w)
        nodes.append(helper.make_node("QuantizeLinear", [prev, f"s{i}", f"z{i}"], [f"q{i}"], name=f"q{i}"))
        nodes.append(helper.make_node("DequantizeLinear", [f"q{i}", f"s{i}", f"z{i}"], [f"d{i}"],
                                      name=f"dq{i}"))
        nodes.append(helper.make_node("Add", [f"d{i}", f"w{i}"], [f"a{i}"], name=f"add{i}"))
        prev = f"a{i}"
    graph = helper.make_graph(
        nodes, "big", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [elems])],
        [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [elems])], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    path = os.path.join(folder, "big.onnx")
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    with open(os.path.join(folder, "weights.bin"), "wb") as f:
        f.truncate(pairs * per)
    return path


def build_chain(path: str, nodes: int, width: int = 32, seed: int = 0, opset: int = 21) -> str:
    """Write a QDQ chain of about ``nodes`` nodes with inline weights to ``path``: blocks of
    DequantizeLinear(int8 weight, per-channel) -> MatMul -> QuantizeLinear -> DequantizeLinear
    (uint8 activation, per-tensor), ai.onnx ``opset`` (21; 13 for a conversion to move: IR 7),
    every scale drawn at random as a quantizer's calibration gives them (so no two blocks have
    equal scales). Returns ``path``."""
    rng = np.random.default_rng(seed)
    out, inits = [], []
    x = "x"
    for b in range((nodes + 3) // 4):
        w = f"w{b}"
        inits.append(numpy_helper.from_array(rng.integers(-127, 127, (width, width)).astype(np.int8), w))
        inits.append(numpy_helper.from_array(rng.uniform(0.001, 0.01, width).astype(np.float32), f"{w}_s"))
        inits.append(numpy_helper.from_array(np.zeros(width, np.int8), f"{w}_z"))
        inits.append(numpy_helper.from_array(np.float32(rng.uniform(0.01, 0.1)), f"a{b}_s"))
        inits.append(numpy_helper.from_array(np.uint8(rng.integers(100, 156)), f"a{b}_z"))
        out += [
            helper.make_node("DequantizeLinear", [w, f"{w}_s", f"{w}_z"], [f"{w}_f"], name=f"dqw{b}", axis=1),
            helper.make_node("MatMul", [x, f"{w}_f"], [f"m{b}"], name=f"mm{b}"),
            helper.make_node("QuantizeLinear", [f"m{b}", f"a{b}_s", f"a{b}_z"], [f"q{b}"], name=f"q{b}"),
            helper.make_node("DequantizeLinear", [f"q{b}", f"a{b}_s", f"a{b}_z"], [f"d{b}"], name=f"dq{b}"),
        ]
        x = f"d{b}"
    graph = helper.make_graph(out, "chain",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, width])],
                              [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, width])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10 if opset >= 21 else 7
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    return path


if __name__ == "__main__":  # python bench/big_model.py FOLDER: the models bench_check_sizes.py reads
    import sys

    folder = sys.argv[1]
    for n in (3_000, 15_000, 50_000):
        build_chain(os.path.join(folder, f"chain{n // 1000}k.onnx"), n)
    build(os.path.join(folder, "pairs10k"), pairs=10_000, weight_bytes=3 * 2**30)
