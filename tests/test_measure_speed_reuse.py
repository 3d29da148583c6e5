"""A measurement's stacked onnxruntime session keeps each value in a buffer of its own
(measure._options(reuse=False): where values are kept, not what the kernels compute): its
outputs are those of the session that reuses buffers, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from qlin_cli.convert.formats import stacked

ROWS = 9


def test_a_session_without_reused_buffers_computes_the_same_values():
    """The QLinearMatMul chain's QDQ form (per-tensor and per-column weights, 20 cases run 8
    side by side, the last run padded), on random and edge codes: every output equal."""
    ort = pytest.importorskip("onnxruntime")
    from qlin_cli.convert.formats import measure

    nodes = [helper.make_node("DequantizeLinear", ["x", "s", "z"], ["a"]),
             helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["b"], axis=1),
             helper.make_node("MatMul", ["a", "b"], ["m"]),
             helper.make_node("QuantizeLinear", ["m", "ys", "yz"], ["y"])]
    rng = np.random.default_rng(3)
    for per_column in (False, True):
        shape = (16,) if per_column else ()
        consts, key = [], None
        for _ in range(20):
            case = {"s": np.float32(rng.uniform(0.01, 0.1)), "z": np.uint8(rng.integers(100, 150)),
                    "w": rng.integers(-128, 128, (16, 16)).astype(np.int8),
                    "ws": rng.uniform(0.001, 0.05, shape).astype(np.float32), "wz": np.zeros(shape, np.int8),
                    "ys": np.float32(rng.uniform(0.05, 0.5)), "yz": np.uint8(rng.integers(0, 256))}
            found: dict = {}
            key, _ = stacked.signature(nodes, {"x": (TensorProto.UINT8, (1, 16))}, case.get,
                                       [("y", TensorProto.UINT8)], found)
            consts.append(found)
        st = stacked.Structure.of(key, nodes)
        feeds = measure._feeds({f"x{k}": (TensorProto.UINT8, (1, 16)) for k in range(20)}, rng)
        values: list = [None] * len(st.kinds)
        for i, kind in enumerate(st.kinds):
            if kind[0] == "input":
                values[i] = np.stack([feeds[f"x{k}"] for k in range(20)], 1)
            elif kind[0] == "const":
                values[i] = np.stack([c[i] for c in consts])[None]
        got = [stacked.Session(ort, st, 8, ROWS, {"": 13}, 8, measure._options(ort, reuse=reuse)).run(values)
               for reuse in (False, True)]
        for g, w in zip(*got, strict=True):
            assert g.dtype == w.dtype and g.shape == w.shape and g.tobytes() == w.tobytes()
