"""Differential test: qlin's evaluator against onnx.reference, bit for bit.

Hypothesis draws an op version, output (or input) type, x and scale types,
granularity (per-tensor, per-axis with positive or negative axis, blocked with
or without a remainder block), ``saturate``, ``precision`` and values full of
edge cases: ties at k + 0.5, -0, values on and just past every saturation bound,
+-Inf, NaN, float8 subnormals, huge values.

Where onnx.reference departs from the spec (tests/test_evaluator_spec.py names
each case and quotes the spec) the comparison is arranged so the spec decides:

* the division precision: onnx.reference divides with numpy promotion, so it
  is given x already converted to the precision type P, which is the spec's
  first step ("The type of y_scale determines the precision of the division");
* integer outputs where x / scale is NaN, infinite or beyond int32 are checked
  against the spec's saturation instead (onnx.reference casts them to int32
  first, which wraps);
* float8 outputs with a zero point: onnx.reference ignores the zero point, so
  zero points are zero here and its -0 is read as +0 (-0 + 0 = +0);
* int32 scales (P = int32, a qlin decision) are left to the spec tests;
* DequantizeLinear: onnx.reference ignores float8 and float4 zero points, so
  they are zero here.

Examples: ``QLIN_FUZZ_EXAMPLES`` (default 50 per test, derandomized; ``make fuzz`` runs 5000).
"""

from __future__ import annotations

import numpy as np
import pytest
from evaluator_helpers import (
    BY_NAME_NP,
    DQ_VERSIONS,
    Q_VERSIONS,
    SCALES,
    SETTINGS,
    assert_same_bits,
    bits,
    float_max,
    granularity,
    make_model,
    quotient_units,
    run_reference,
)
from hypothesis import given
from hypothesis import strategies as st
from onnx import TensorProto

from qlin_cli import schema
from qlin_cli.evaluator import evaluate
from qlin_cli.schema.dtypes import BY_NAME

pytestmark = pytest.mark.fuzz


@st.composite
def quantize_case(draw):
    version = draw(st.sampled_from(Q_VERSIONS))
    spec = schema.lookup("", "QuantizeLinear", version)
    out_type = draw(st.sampled_from(sorted(spec.quantized_types)))
    x_types = sorted(spec.types["T1"] - {"int32"} if draw(st.booleans()) else spec.types["T1"])
    x_type = draw(st.sampled_from(x_types))
    if version < 19:
        s_type = "float"
    elif version < 23:
        s_type = x_type if x_type != "int32" else "float"
        if x_type == "int32":
            x_type = "float"  # int32 x shares T1 with an int32 scale: a qlin decision
    else:
        s_type = draw(st.sampled_from(sorted(spec.types["T2"] - {"int32"})))
    precision = None
    if version >= 23 and draw(st.booleans()):
        precision = draw(st.sampled_from(["float", "float16", "bfloat16", "double"]))
    kind, shape, axis, block, sshape = draw(granularity(1, spec.granularities))
    d_out = BY_NAME[out_type]
    n_s = int(np.prod(sshape)) if sshape else 1
    svals = draw(st.lists(st.sampled_from(SCALES), min_size=n_s, max_size=n_s))
    scale = np.array(svals, np.float64).reshape(sshape)
    if s_type == "float8e8m0":
        scale = np.exp2(np.round(np.log2(scale)))
    scale = scale.astype(BY_NAME[s_type].numpy)
    zp = None
    use_zp = draw(st.booleans()) or version < 21
    if use_zp:
        if d_out.kind == "int":
            zvals = draw(st.lists(st.integers(d_out.lo, d_out.hi), min_size=n_s, max_size=n_s))
            zp = np.array(zvals, np.int64).reshape(sshape).astype(d_out.numpy)
        elif d_out.kind == "float4":
            zvals = draw(st.lists(st.sampled_from([0.0, 0.5, -1.0, 2.0]), min_size=n_s,
                                  max_size=n_s))
            zp = np.array(zvals, np.float32).reshape(sshape).astype(d_out.numpy)
        else:
            zp = np.zeros(sshape, d_out.numpy)
    # values, in quotient units, times the element's scale
    lo, hi = (d_out.lo, d_out.hi) if d_out.kind == "int" else (0, 0)
    pool = quotient_units(lo, hi, float_max(out_type))
    n = int(np.prod(shape))
    units = draw(st.lists(st.one_of(st.sampled_from(pool),
                                    st.floats(-300, 300, width=32),
                                    st.integers(-70000, 70000).map(lambda k: k + 0.5)),
                          min_size=n, max_size=n))
    from qlin_cli.evaluator.granularity import Layout

    lay = Layout(shape, sshape, axis, block)
    s_full = lay.expand(scale.astype(np.float32).astype(np.float64)) if sshape else \
        scale.astype(np.float64)
    with np.errstate(all="ignore"):
        x = (np.array(units, np.float64).reshape(shape) * s_full)
        if x_type == "int32":
            x = np.nan_to_num(np.clip(np.round(x), -2**31, 2**31 - 1)).astype(np.int32)
        else:
            x = x.astype(np.float32).astype(BY_NAME[x_type].numpy)
    attrs = {}
    if axis is not None and version >= 13:
        attrs["axis"] = axis
    if block:
        attrs["block_size"] = block
    if version >= 19 and draw(st.booleans()):
        attrs["saturate"] = draw(st.integers(0, 1))
    if zp is None:
        attrs["output_dtype"] = d_out.proto
    if precision:
        attrs["precision"] = BY_NAME[precision].proto
    return version, x, scale, zp, attrs, out_type, precision


@given(quantize_case())
@SETTINGS
def test_quantize_matches_reference(case):
    version, x, scale, zp, attrs, out_type, precision = case
    m = make_model("QuantizeLinear", version, [("x", x), ("s", scale), ("z", zp)], out_type,
                   attrs, init=("s", "z"))
    got = evaluate(m, {"x": x})[0]
    # the spec's first step: both operands in the precision type P
    p = precision or BY_NAME_NP[scale.dtype]
    if p == "float8e8m0":
        p = "float"
    with np.errstate(all="ignore"):
        x_p = x if p == "double" else x.astype(BY_NAME[p].numpy)
    if version < 23 and x_p.dtype != x.dtype:
        return  # x must keep T1 = scale type there; covered by the spec tests
    m_ref = make_model("QuantizeLinear", version, [("x", x_p), ("s", scale), ("z", zp)],
                       out_type, attrs, init=("s", "z"))
    want = run_reference(m_ref, {"x": x_p})
    d_out = BY_NAME[out_type]
    mask = None
    if d_out.kind == "int":
        # onnx.reference casts x / scale to int32 before clamping, which wraps
        # for NaN, +-Inf and |q| >= 2**31; the spec saturates: check those here
        with np.errstate(all="ignore"):
            q = _quotient(x_p, scale, attrs, p)
        bad = ~np.isfinite(q) | (np.abs(q) >= 2.0**31)
        mask = ~bad
        expect = np.where(np.isnan(q), d_out.lo, np.where(q > 0, d_out.hi, d_out.lo))
        np.testing.assert_array_equal(got.astype(np.int64)[bad], expect[bad])
    elif zp is not None and d_out.kind == "float8":
        # -0 + 0 = +0: onnx.reference skips the zero point for float8
        want = want.copy()
        with np.errstate(all="ignore"):
            q = _quotient(x_p, scale, attrs, p)
        neg0 = (q == 0) & np.signbit(q)
        if out_type in ("float8e4m3fn", "float8e5m2"):
            bits(want)[neg0] = 0
    assert_same_bits(got, want, mask, f"v{version} {x.dtype}->{out_type} {attrs}")


def _quotient(x_p, scale, attrs, p):
    """x / scale in P, full size (test oracle for the saturation check)."""
    from qlin_cli.evaluator.granularity import Layout

    axis = attrs.get("axis", 1)
    lay = Layout(x_p.shape, scale.shape, axis if scale.ndim else None,
                 attrs.get("block_size", 0))
    if p == "double":
        return x_p.astype(np.float64) / lay.expand(scale.astype(np.float64))
    s = lay.expand(scale.astype(BY_NAME[p].numpy))
    return (x_p / s).astype(np.float64)


@st.composite
def dequantize_case(draw):
    version = draw(st.sampled_from(DQ_VERSIONS))
    spec = schema.lookup("", "DequantizeLinear", version)
    x_type = draw(st.sampled_from(sorted(spec.quantized_types)))
    s_types = sorted(spec.types["T2"])
    s_type = draw(st.sampled_from(s_types))
    out_type = None
    if "T3" in spec.types and (s_type == "float8e8m0" or draw(st.booleans())):
        out_type = draw(st.sampled_from(sorted(spec.types["T3"])))
    kind, shape, axis, block, sshape = draw(granularity(1, spec.granularities))
    n_s = int(np.prod(sshape)) if sshape else 1
    svals = draw(st.lists(st.sampled_from(SCALES + [65504.0, 1e-8, 3e38]), min_size=n_s,
                          max_size=n_s))
    scale = np.array(svals, np.float64).reshape(sshape)
    if s_type == "float8e8m0":
        scale = np.exp2(np.round(np.log2(scale)))
    with np.errstate(all="ignore"):
        scale = scale.astype(np.float32).astype(BY_NAME[s_type].numpy)
    d_x = BY_NAME[x_type]
    n = int(np.prod(shape))
    if d_x.kind == "int":
        lo, hi = int(d_x.lo), int(d_x.hi)
        edge = [lo, hi, 0, 1, -1, lo + 1, hi - 1] if lo < 0 else [lo, hi, 0, 1, hi - 1]
        vals = draw(st.lists(st.one_of(st.sampled_from(edge), st.integers(lo, hi)),
                             min_size=n, max_size=n))
        x = np.array(vals, np.int64).reshape(shape).astype(d_x.numpy)
        zp = None
        if x_type != "int32" and draw(st.booleans()):
            zv = draw(st.lists(st.integers(lo, hi), min_size=n_s, max_size=n_s))
            zp = np.array(zv, np.int64).reshape(sshape).astype(d_x.numpy)
    else:
        codes = draw(st.lists(st.integers(0, (1 << d_x.bits) - 1), min_size=n, max_size=n))
        x = np.array(codes, np.uint8).reshape(shape).view(d_x.numpy)
        zp = None
        if draw(st.booleans()):
            # onnx.reference ignores float8 and float4 zero points in
            # DequantizeLinear; non-zero ones are in test_evaluator_spec.py
            zp = np.zeros(sshape, d_x.numpy)
    attrs = {}
    if axis is not None and version >= 13:
        attrs["axis"] = axis
    if block:
        attrs["block_size"] = block
    if out_type:
        attrs["output_dtype"] = BY_NAME[out_type].proto
    return version, x, scale, zp, attrs, out_type or BY_NAME_NP[scale.dtype]


@given(dequantize_case())
@SETTINGS
def test_dequantize_matches_reference(case):
    version, x, scale, zp, attrs, out_type = case
    m = make_model("DequantizeLinear", version, [("x", x), ("s", scale), ("z", zp)], out_type,
                   attrs, init=("x", "s", "z"))
    got = evaluate(m, {})[0]
    # onnx.reference implements DequantizeLinear from version 19 only; 10 and 13
    # compute the same thing for their types
    m_ref = m if version >= 19 else make_model(
        "DequantizeLinear", 19, [("x", x), ("s", scale), ("z", zp)], out_type, attrs,
        init=("x", "s", "z"))
    want = run_reference(m_ref, {})
    assert_same_bits(got, want, None, f"v{version} {x.dtype}->{out_type} {attrs}")


def test_reference_model_builder_roundtrip():
    x = np.array([0.5, 1.5, -2.5], np.float32)
    m = make_model("QuantizeLinear", 21, [("x", x), ("s", np.float32(1)), ("z", np.int8(0))],
                   "int8", {}, init=("s", "z"))
    np.testing.assert_array_equal(evaluate(m, {"x": x})[0], [0, 2, -2])
    assert TensorProto.INT8 == BY_NAME["int8"].proto
