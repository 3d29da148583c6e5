"""The measurement's joined sessions of cases whose constants a kernel packs (convert/formats/
baked.py): each case's nodes side by side reading their own constants as initializers, the
inputs and outputs joined. Every measurement they give is the one running the cases as models
gives (measure.BAKED off), and a session they cannot give falls back to the models."""

from __future__ import annotations

import numpy as np
import pytest
from format_models import qlinear_chain
from onnx import TensorProto, helper, numpy_helper

from qlin_cli.convert.formats import baked, measure, stacked
from qlin_cli.convert.run import Options, convert_model

pytest.importorskip("onnxruntime")


def _qlinear_add_chain(n: int, seed: int = 7):
    """x -> QuantizeLinear -> com.microsoft QLinearAdd nodes, each adding a constant of its own
    at scales and zero points of its own -> DequantizeLinear (opset 13)."""
    rng = np.random.default_rng(seed)
    inits = [numpy_helper.from_array(np.float32(0.05), "s"), numpy_helper.from_array(np.uint8(128), "z")]
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q0"])]
    for i in range(n):
        inits += [numpy_helper.from_array(rng.integers(0, 256, (1, 16)).astype(np.uint8), f"b{i}"),
                  numpy_helper.from_array(np.float32(rng.uniform(0.01, 0.1)), f"bs{i}"),
                  numpy_helper.from_array(np.uint8(rng.integers(0, 256)), f"bz{i}"),
                  numpy_helper.from_array(np.float32(rng.uniform(0.05, 0.3)), f"ys{i}"),
                  numpy_helper.from_array(np.uint8(rng.integers(100, 156)), f"yz{i}")]
        xs, xz = ("s", "z") if i == 0 else (f"ys{i - 1}", f"yz{i - 1}")
        nodes.append(helper.make_node("QLinearAdd", [f"q{i}", xs, xz, f"b{i}", f"bs{i}", f"bz{i}", f"ys{i}",
                                                     f"yz{i}"], [f"q{i + 1}"], name=f"add{i}",
                                      domain="com.microsoft"))
    nodes.append(helper.make_node("DequantizeLinear", [f"q{n}", f"ys{n - 1}", f"yz{n - 1}"], ["y"]))
    g = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 16])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 16])], inits)
    imports = [helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)]
    return helper.make_model(g, opset_imports=imports, ir_version=8)


def _measured(model, opset: int, to_format: str) -> list:
    r = convert_model(model, "", Options(opset, to_format=to_format, tolerance=255))
    assert r.model is not None
    return [(e.where, e.action, e.measured.to_json() if e.measured else None) for e in r.entries]


def _counted(monkeypatch) -> tuple[list, list]:
    """(the cases of each joined session made, the models onnxruntime ran) from now on."""
    made, models = [], []
    real = baked.Baked.__init__

    def counted(self, ort, st, consts, *args):
        made.append(len(consts))
        real(self, ort, st, consts, *args)

    monkeypatch.setattr(baked.Baked, "__init__", counted)
    real_ort = measure._run_ort
    monkeypatch.setattr(measure, "_run_ort", lambda *a: models.append(1) or real_ort(*a))
    return made, models


@pytest.mark.parametrize("opset", [11, 13, 21])
def test_fusing_qdq_groups_measures_what_models_measure(monkeypatch, opset):
    """`--to-format qoperator` of a QDQ chain (37 per-tensor and 19 per-column weights: their
    QLinearMatMul packs the weight): the joined sessions give every group the measurement the
    models give, and no group runs as a model (at 11, whose DequantizeLinear has no per-column
    scales, the 37 alone); Split takes its sizes as an attribute at 11, as an input after."""
    qop = qlinear_chain(37, 19 if opset >= 13 else 0, 5, opset, rows=2)
    qdq = convert_model(qop, "", Options(opset, to_format="qdq", tolerance=255)).model
    made, models = _counted(monkeypatch)
    joined = _measured(qdq, opset, "qoperator")
    assert sum(made) == (56 if opset >= 13 else 37) and not models
    assert sum(1 for _, action, m in joined if action == "reformatted" and m) == sum(made)
    monkeypatch.setattr(measure, "BAKED", False)
    assert _measured(qdq, opset, "qoperator") == joined and models


def test_a_vendor_source_is_measured_in_joined_sessions_as_in_models(monkeypatch):
    """`--to-format qdq` of com.microsoft QLinearAdd nodes, which onnxruntime alone computes (the
    truth): each adds a constant of its own, read as an initializer; every node's measurement
    (bound, outputs that differ, outputs, engines) is the models'."""
    model = _qlinear_add_chain(20)
    made, models = _counted(monkeypatch)
    joined = _measured(model, 13, "qdq")
    assert made == [20] and not models
    assert sum(1 for _, action, m in joined if action == "reformatted" and m) == 20
    monkeypatch.setattr(measure, "BAKED", False)
    assert _measured(model, 13, "qdq") == joined and models


def test_a_declined_session_falls_back_to_the_models(monkeypatch):
    """Outputs that do not come apart into parts of one length: the cases run as models, and
    measure what the models measure."""
    qop = qlinear_chain(12, 0, 5, 13, rows=2)
    qdq = convert_model(qop, "", Options(13, to_format="qdq", tolerance=255)).model
    want = _measured(qdq, 13, "qoperator")
    real = baked.Baked.run

    def uneven(self, values, rows):
        self.copies += 1  # one part more than the joined output holds
        return real(self, values, rows)

    monkeypatch.setattr(baked.Baked, "run", uneven)
    made, models = _counted(monkeypatch)
    assert _measured(qdq, 13, "qoperator") == want
    assert made == [12] and models


def test_only_structures_whose_outputs_have_one_shape_are_joined():
    """An op whose output's shape its inputs' values set (Reshape) is not taken, nor an input
    whose first dimension is not known, nor a constant of a type raw_tensor does not write."""
    q = helper.make_node("QLinearMatMul", ["a", "s", "z", "w", "s", "z", "s", "z"], ["y"])

    def st(node, a_shape, w_dtype=np.int8):
        consts = {"s": np.float32(0.1), "z": np.uint8(0), "w": np.zeros((4, 4), w_dtype),
                  "shape": np.array([16], np.int64)}
        key, _ = stacked.signature([node], {"a": (TensorProto.UINT8, a_shape)}, consts.get,
                                   [("y", TensorProto.UINT8)])
        return stacked.Structure.of(key, [node])

    assert baked.bakeable(st(q, (1, 4)))
    assert not baked.bakeable(st(q, ()))
    assert not baked.bakeable(st(helper.make_node("Reshape", ["a", "shape"], ["y"]), (1, 4)))
    assert not baked.bakeable(st(q, (1, 4), np.int64))


def test_equal_constants_are_one_initializer():
    """Cases whose constants are equal in type, shape and bytes read one initializer; others
    their own."""
    node = helper.make_node("QLinearMatMul", ["a", "s", "z", "w", "s", "z", "s", "z"], ["y"])
    consts = [{"s": np.float32(0.1), "z": np.uint8(3), "w": np.full((4, 4), k % 2, np.int8)}
              for k in range(4)]
    key, names = stacked.signature([node], {"a": (TensorProto.UINT8, (1, 4))}, consts[0].get,
                                   [("y", TensorProto.UINT8)])
    st = stacked.Structure.of(key, [node])
    by_slot = [{i: c[n] for i, n in enumerate(names) if n in c} for c in consts]
    inits: dict = {}
    named = baked._constants(st, by_slot, inits)
    assert len(inits) == 4  # s, z, and the two weights
    assert named[0] == named[2] and named[1] == named[3] and named[0] != named[1]
