"""Vendor domains (com.microsoft, com.amd.quark) and the evaluator's API contract."""

from __future__ import annotations

import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest
from evaluator_helpers import bits, run_reference
from onnx import TensorProto, helper, numpy_helper

import qlin_cli
from qlin_cli.evaluator import EvaluationError, chunks, dequantize, evaluate, quantize, run_node
from qlin_cli.schema import MICROSOFT, QUARK

BF16 = ml_dtypes.bfloat16


def node(op, domain="", n_inputs=3, **attrs):
    names = ["x", "s", "z"][:n_inputs]
    return helper.make_node(op, names, ["y"], domain=domain, **attrs)


# ---- com.microsoft --------------------------------------------------------------

def test_microsoft_absent_axis_is_per_tensor():
    """"If it's not specified, it means per-tensor quantization and input 'x_scale'
    and 'x_zero_point' must be scalars." (no default)"""
    x = np.array([[0, 2, 3], [1000, -254, -1000]], np.float32)
    y = run_node(node("QuantizeLinear", MICROSOFT), 1, [x, np.float32(2), np.uint8(128)])
    assert y.tolist() == [[128, 129, 130], [255, 1, 0]]  # the page's example
    with pytest.raises(EvaluationError, match="needs an axis"):
        run_node(node("QuantizeLinear", MICROSOFT), 1,
                 [x, np.full(3, 2, np.float32), np.zeros(3, np.uint8)])
    y = run_node(node("QuantizeLinear", MICROSOFT, axis=1), 1,
                 [x, np.array([2, 4, 5], np.float32), np.zeros(3, np.uint8)])
    assert y.tolist() == [[0, 0, 1], [255, 0, 0]]


def test_microsoft_page_axis_example():
    x = np.array([[[[-162, 10], [-100, 232], [-20, -50]], [[-76, 0], [0, 252], [32, -44]],
                   [[245, -485], [-960, -270], [-375, -470]]]], np.float32)
    s = np.array([2, 4, 5], np.float32)
    z = np.array([84, 24, 196], np.uint8)
    y = run_node(node("QuantizeLinear", MICROSOFT, axis=1), 1, [x, s, z])
    want = np.clip(np.rint(x / s.reshape(1, 3, 1, 1)) + z.reshape(1, 3, 1, 1), 0, 255)
    np.testing.assert_array_equal(y, want.astype(np.uint8))


def test_microsoft_float16_and_int4_and_dequantize():
    x = np.array([1.5, 2.5, -9.0, 100.0], np.float16)
    y = run_node(node("QuantizeLinear", MICROSOFT), 1,
                 [x, np.float16(1), np.array(0, ml_dtypes.int4)])
    assert y.dtype == ml_dtypes.int4 and y.astype(int).tolist() == [2, 2, -8, 7]
    d = run_node(node("DequantizeLinear", MICROSOFT), 1, [y, np.float16(0.5), None])
    assert d.dtype == np.float16 and d.tolist() == [1.0, 1.0, -4.0, 3.5]
    with pytest.raises(EvaluationError, match="needs them to have one type"):
        run_node(node("QuantizeLinear", MICROSOFT), 1, [x, np.float32(1), np.uint8(0)])


# ---- com.amd.quark -------------------------------------------------------------

EQ, EDQ = "ExtendedQuantizeLinear", "ExtendedDequantizeLinear"


def test_quark_axis_defaults_to_one_as_the_page_says():
    """Page: "axis - INT (default is '1')" (Quark's kernel uses 0; qlin follows
    the page, rule QL402 warns where it matters)."""
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    s = np.array([1, 2, 4], np.float32)
    y = run_node(node(EQ, QUARK), 1, [x, s, np.zeros(3, np.int8)])
    assert y.tolist() == [[0, 0, 0], [3, 2, 1]]
    with pytest.raises(EvaluationError, match="axis 1"):
        run_node(node(EQ, QUARK), 1, [x, np.ones(2, np.float32), np.zeros(2, np.int8)])


def test_quark_float16_outputs_round_to_the_type_not_to_integers():
    """Decision: "It enables floating-point quantization"; "For (x / y_scale), it
    rounds to the nearest even for types" - to the output type. Saturation to
    the page's ranges, +-Inf included; NaN stays NaN."""
    x = np.array([1.3, 2.5, 1e6, -np.inf, np.nan, 3.0], np.float32)
    y = run_node(node(EQ, QUARK), 1, [x, np.float32(1), np.float16(0)])
    assert y.dtype == np.float16
    assert y[:4].tolist() == [np.float16(1.3), 2.5, 65504.0, -65504.0]
    assert np.isnan(y[4]) and y[5] == 3.0
    z = run_node(node(EQ, QUARK), 1, [x, np.float32(2), np.float16(0.5)])
    assert z[:2].tolist() == [np.float16(0.65 + 0.5), 1.75]


def test_quark_bfloat16_saturates_to_max_finite():
    """Page: "bfloat16: [-3.4e38, 3.4e38]": qlin clamps to the largest finite
    bfloat16, 3.3895e38 (float32 values above it would round to Inf)."""
    x = np.array([3.4e38, -np.inf, 1.0 / 3], np.float32)
    y = run_node(node(EQ, QUARK), 1, [x, np.float32(1), np.zeros((), BF16)])
    assert y.dtype == BF16
    assert bits(y).tolist() == [0x7F7F, 0xFF7F, 0x3EAB]


def test_quark_int32_outputs_divide_in_float32():
    """Decision: "The type of y_scale determines the precision of the division":
    y_scale is float, so float32, even for int32/uint32 outputs (the quotient
    100000007 is 100000008 in float32). Saturation to the page's ranges."""
    x = np.array([100000007.0, 3e9, -3e9, np.nan], np.float32)
    y = run_node(node(EQ, QUARK), 1, [x, np.float32(1), np.int32(0)])
    assert y.dtype == np.int32
    assert y.tolist() == [100000008, 2**31 - 1, -(2**31), -(2**31)]
    u = run_node(node(EQ, QUARK), 1, [x, np.float32(1), np.uint32(5)])
    assert u.tolist() == [100000013, 3000000005, 0, 0]
    d = run_node(node(EDQ, QUARK), 1, [u, np.float32(2), np.uint32(5)])
    assert d.dtype == np.float32 and d.tolist() == [200000016.0, 6e9, -10.0, -10.0]


def test_quark_dequantize_float16_input():
    x = np.array([1.5, -2.0], np.float16)
    d = run_node(node(EDQ, QUARK), 1, [x, np.float32(4), np.float16(0.5)])
    assert d.tolist() == [4.0, -10.0]


# ---- evaluate(), run_node() and errors -----------------------------------------

def test_lazy_export_does_not_import_numpy():
    code = ("import sys, qlin_cli; assert 'numpy' not in sys.modules; "
            "assert 'qlin_cli.evaluator' not in sys.modules; "
            "f = qlin_cli.evaluate; assert 'qlin_cli.evaluator' in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=_root())


def _root():
    import os

    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_evaluate_with_constant_identity_and_chain():
    x = np.array([0.4, 1.6, -3.0], np.float32)
    nodes = [
        helper.make_node("Constant", [], ["s"], value=numpy_helper.from_array(
            np.float32(0.5))),
        helper.make_node("Identity", ["x"], ["xi"]),
        helper.make_node("QuantizeLinear", ["xi", "s", "z"], ["q"]),
        helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"]),
    ]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                      [3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3]),
                           helper.make_tensor_value_info("q", TensorProto.INT8, [3])],
                          [numpy_helper.from_array(np.int8(1), "z")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
    y, q = qlin_cli.evaluate(m, {"x": x})
    assert q.tolist() == [2, 4, -5] and y.tolist() == [0.5, 1.5, -3.0]
    with pytest.raises(EvaluationError, match="dtype"):
        evaluate(m, {"x": x.astype(np.float16)})
    with pytest.raises(EvaluationError, match="no feed"):
        evaluate(m, {})


def test_unknown_op_and_version():
    with pytest.raises(EvaluationError, match="knows no"):
        run_node(node("QuantizeLinear"), 9, [np.zeros(1, np.float32), np.float32(1), None])
    with pytest.raises(EvaluationError, match="knows no"):
        run_node(node("QuantizeLinear", "com.example"), 1, [np.zeros(1, np.float32),
                                                            np.float32(1), None])


@pytest.mark.parametrize("args, attrs, match", [
    ((np.zeros((2, 3), np.float32), np.ones(2, np.float32), None), {"axis": 1}, "entries"),
    ((np.zeros((2, 3), np.float32), np.ones(3, np.float32), None), {"axis": 2}, "out of range"),
    ((np.zeros((2, 3), np.float32), np.ones((2, 2), np.float32), None),
     {"axis": 1, "block_size": 1}, "blocked scale shape"),
    ((np.zeros((2, 3), np.float32), np.ones((2, 2), np.float32), None), {"axis": 1},
     "needs block_size"),
    ((np.zeros((2, 3), np.float32), np.ones((2, 2), np.float32), None),
     {"axis": 1, "block_size": -2}, "positive"),
    ((np.zeros((2, 3), np.float32), np.ones(3, np.float32), np.zeros(2, np.uint8)),
     {"axis": 1}, "zero point shape"),
    ((np.zeros(3, np.float32), np.float32(1), np.int8(0)), {"output_dtype": 2}, "differs"),
    ((np.zeros(3, np.float64), np.float32(1), None), {}, "is double, which this version does not allow"),
    ((np.zeros(3, np.float32), np.float32(1), None), {"precision": TensorProto.INT8},
     "precision"),
])
def test_invalid_inputs_raise_evaluation_error(args, attrs, match):
    with pytest.raises(EvaluationError, match=match):
        run_node(helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], **attrs), 23,
                 list(args))


def test_version_rules_enforced():
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(EvaluationError, match="needs an axis"):  # 10: per-tensor only
        run_node(node("QuantizeLinear"), 10, [x, np.ones(3, np.float32), np.zeros(3, np.uint8)])
    with pytest.raises(EvaluationError, match="one type"):  # 19/21: scale shares x's type
        run_node(node("QuantizeLinear"), 21, [x, np.float16(1), None])
    with pytest.raises(EvaluationError, match="is int2, which this version does not allow"):
        run_node(node("QuantizeLinear"), 21, [x, np.float32(1), np.array(0, ml_dtypes.int2)])
    with pytest.raises(EvaluationError, match="not defined by this version"):
        run_node(node("QuantizeLinear", block_size=2), 19, [x, np.float32(1), None])
    assert run_node(node("QuantizeLinear", output_dtype=TensorProto.INT2), 25,
                    [np.array([1.0, -3.0], np.float32), np.float32(1), None]).astype(
        int).tolist() == [1, -2]


def test_rank_one_and_scalar_inputs():
    x = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    assert quantize(x, np.float32(2), np.uint8(0)).tolist() == [0, 1, 2, 2]
    assert quantize(x, np.float32(2), np.uint8(0), axis=1).tolist() == [0, 1, 2, 2]
    assert quantize(x, np.array([1, 2, 1, 2], np.float32), np.zeros(4, np.uint8),
                    axis=-1).tolist() == [1, 1, 3, 2]
    assert quantize(x, np.array([1, 2], np.float32), np.zeros(2, np.uint8), axis=0,
                    block_size=3).tolist() == [1, 2, 3, 2]
    assert quantize(np.float32(5.5), np.float32(1), np.uint8(0)).tolist() == 6
    assert dequantize(np.uint8(7), np.float32(0.5)).tolist() == 3.5
    assert quantize(x, np.array([2.0], np.float32), np.array([1], np.uint8)).tolist() == \
        [1, 2, 3, 3]


@pytest.mark.parametrize("shape, axis, block", [
    ((600_000,), None, 0), ((50, 101, 13), 1, 0), ((50, 101, 13), -1, 0),
    ((50, 101, 13), 1, 7), ((3, 200_003), 1, 32), ((200_003, 3), 0, 5), ((7, 90_001), 0, 2),
])
def test_chunked_threaded_matches_reference(shape, axis, block, monkeypatch):
    """Large inputs go through several pieces and both workers; the result must
    equal onnx.reference's on the same model (finite inputs, float32)."""
    rng = np.random.default_rng(7)
    x = (rng.standard_normal(shape) * 40).astype(np.float32)
    x.reshape(-1)[::97] += 0.5 - x.reshape(-1)[::97] % 1  # ties
    if axis is None:
        s = np.float32(0.37)
    elif block:
        ss = list(shape)
        ss[axis] = -(-shape[axis] // block)
        s = (rng.random(ss) + 0.25).astype(np.float32)
    else:
        s = (rng.random(shape[axis]) + 0.25).astype(np.float32)
    zp = np.zeros(np.shape(s), np.int8) + np.int8(3)
    attrs = {} if axis is None else {"axis": axis}
    if block:
        attrs["block_size"] = block
    from evaluator_helpers import make_model

    m = make_model("QuantizeLinear", 21, [("x", x), ("s", s), ("z", zp)], "int8", attrs,
                   init=("s", "z"))
    want = run_reference(m, {"x": x})
    monkeypatch.setenv("QLIN_THREADS", "2")
    np.testing.assert_array_equal(evaluate(m, {"x": x})[0], want)
    monkeypatch.setenv("QLIN_THREADS", "1")
    np.testing.assert_array_equal(evaluate(m, {"x": x})[0], want)
    m8 = make_model("QuantizeLinear", 21, [("x", x), ("s", s),
                                           ("z", np.zeros(np.shape(s), ml_dtypes.float8_e5m2))],
                    "float8e5m2", attrs, init=("s", "z"))
    np.testing.assert_array_equal(bits(evaluate(m8, {"x": x})[0]),
                                  bits(run_reference(m8, {"x": x})))
    dq = dequantize(want, s, zp, axis=axis, block_size=block)
    dref = run_reference(make_model("DequantizeLinear", 21, [("x", want), ("s", s), ("z", zp)],
                                    "float", attrs, init=("x", "s", "z")), {})
    np.testing.assert_array_equal(dq, dref)


def test_pieces_cover_every_element_once():
    for shape in [(10,), (3, 200_000), (200_000, 3), (2, 3, 100_000), (1, 1)]:
        seen = np.zeros(shape, np.int32)
        for idx in chunks.pieces(shape, chunk=1000):
            seen[idx] += 1
        assert (seen == 1).all()


@pytest.mark.parametrize("attr, value, want", [
    ("value_float", 0.5, [2, 4, -5]),
    ("value_floats", [0.5, 0.25, 1.0], [2, 7, -2]),
])
def test_constant_scale_from_scalar_attributes(attr, value, want):
    x = np.array([0.4, 1.6, -3.0], np.float32)
    axis = {"axis": 0} if isinstance(value, list) else {}
    z = np.int8(1) if not axis else np.array([1, 1, 1], np.int8)
    nodes = [helper.make_node("Constant", [], ["s"], **{attr: value}),
             helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], **axis)]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
                          [helper.make_tensor_value_info("q", TensorProto.INT8, [3])],
                          [numpy_helper.from_array(z, "z")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
    assert evaluate(m, {"x": x})[0].tolist() == want
