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
