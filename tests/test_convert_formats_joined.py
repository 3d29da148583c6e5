"""The stacked onnxruntime session of a measurement (convert/formats/stacked.py ``Session``)
joins each output's parts in the graph: one array a run and output, the same values as the
parts one by one; parts that may be scalars come out one by one."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from qlin_cli.convert.formats import stacked

ROWS = 3


def _structure(nodes, inputs: dict, cases: list[dict], outputs: list):
    """The cases' structure, and each case's constants by slot."""
    consts = []
    for c in cases:
        found: dict = {}
        key, _ = stacked.signature(nodes, inputs, c.get, outputs, found)
        consts.append(found)
    return stacked.Structure.of(key, nodes), consts


def _values(st, rng, cases: int, consts: list[dict]) -> list:
    """Each slot's stacked value: an input's random codes [rows, cases, ...], a constant's
    [1, cases, ...] (each case its own), None for a made value."""
    out: list = [None] * len(st.kinds)
    for i, kind in enumerate(st.kinds):
        if kind[0] == "input":
            dtype = helper.tensor_dtype_to_np_dtype(kind[1])
            info = np.iinfo(dtype)
            out[i] = rng.integers(info.min, int(info.max) + 1, (ROWS, cases) + tuple(kind[2])).astype(dtype)
        elif kind[0] == "const":
            out[i] = np.stack([c[i] for c in consts])[None]
    return out


def _sessions(monkeypatch, st, cases: int, opset: int = 13):
    """The session with its outputs joined where it can, and the one with every part an output."""
    ort = pytest.importorskip("onnxruntime")
    from qlin_cli.convert.formats import measure

    def made():
        return stacked.Session(ort, st, 4, ROWS, {"": opset}, 8, measure._options(ort))
    joined = made()
    monkeypatch.setattr(stacked, "JOINED", False)
    return joined, made()


def test_each_output_is_one_array_a_run_with_the_parts_values(monkeypatch):
    """A DequantizeLinear -> MatMul -> QuantizeLinear structure whose weight's DequantizeLinear
    output (one a case, not a row) is an output too: each output joined (two graph outputs),
    the values bit for bit those of the parts one by one, 10 cases run 4 side by side (the last
    run padded)."""
    nodes = [helper.make_node("DequantizeLinear", ["x", "s", "z"], ["a"]),
             helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["b"]),
             helper.make_node("MatMul", ["a", "b"], ["m"]),
             helper.make_node("QuantizeLinear", ["m", "ys", "yz"], ["y"])]
    rng = np.random.default_rng(0)
    cases = []
    for _ in range(10):
        cases.append({"s": np.float32(rng.uniform(0.01, 0.1)), "z": np.uint8(rng.integers(100, 150)),
                      "w": rng.integers(-128, 128, (8, 4)).astype(np.int8), "ws": np.float32(0.02),
                      "wz": np.int8(0), "ys": np.float32(rng.uniform(0.1, 0.5)), "yz": np.uint8(128)})
    st, consts = _structure(nodes, {"x": (TensorProto.UINT8, (2, 8))}, cases,
                            [("y", TensorProto.UINT8), ("b", TensorProto.FLOAT)])
    values = _values(st, rng, len(cases), consts)
    joined, parts = _sessions(monkeypatch, st, len(cases))
    assert joined.joined and not parts.joined
    assert len(joined.session.get_outputs()) == 2 and len(parts.session.get_outputs()) == 4 * (ROWS + 1)
    got, want = joined.run(values), parts.run(values)
    assert [g.shape for g in got] == [(ROWS, 10, 2, 4), (ROWS, 10, 8, 4)]
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape and g.tobytes() == w.tobytes()


def test_scalar_parts_come_out_one_by_one(monkeypatch):
    """A structure of scalars (a DequantizeLinear -> QuantizeLinear pair of a scalar input): no
    Concat joins scalars, so its session has an output a part, and its values are what
    onnx.reference's arithmetic gives (stacked.reference)."""
    nodes = [helper.make_node("DequantizeLinear", ["x", "s", "z"], ["a"]),
             helper.make_node("QuantizeLinear", ["a", "t", "z"], ["y"])]
    rng = np.random.default_rng(1)
    inputs = {"x": (TensorProto.UINT8, ())}
    cases = [{"s": np.float32(rng.uniform(0.01, 0.1)), "t": np.float32(rng.uniform(0.01, 0.1)),
              "z": np.uint8(rng.integers(0, 256))} for _ in range(6)]
    st, consts = _structure(nodes, inputs, cases, [("y", TensorProto.UINT8)])
    values = _values(st, rng, len(cases), consts)
    joined, _ = _sessions(monkeypatch, st, len(cases))
    assert not joined.joined and len(joined.session.get_outputs()) == 4 * ROWS
    got = joined.run(values)
    want = stacked.reference(st, values)
    for g, w in zip(got, want, strict=True):
        assert g.tobytes() == np.broadcast_to(w, g.shape).tobytes()
