"""Where a peer (onnx.reference, onnxruntime) departs from the spec, and the
evaluator's documented decisions where the spec is silent.

Each disagreement test quotes the spec sentence, asserts qlin's result, and
asserts the peer's current result so the test notices if the peer changes.
"""

from __future__ import annotations

import warnings

import ml_dtypes
import numpy as np
import pytest
from evaluator_helpers import bits, make_model, run_ort, run_reference

from qlin_cli.evaluator import dequantize, evaluate, quantize

E4M3 = ml_dtypes.float8_e4m3fn
F8 = {
    "float8e4m3fn": ml_dtypes.float8_e4m3fn,
    "float8e4m3fnuz": ml_dtypes.float8_e4m3fnuz,
    "float8e5m2": ml_dtypes.float8_e5m2,
    "float8e5m2fnuz": ml_dtypes.float8_e5m2fnuz,
}


def q_model(version, x, scale, zp, out_type, **attrs):
    return make_model("QuantizeLinear", version, [("x", x), ("s", scale), ("z", zp)], out_type,
                      attrs, init=("s", "z"))


def codes(a):
    return bits(a).tolist()


# ---- the formula: y = saturate((x / y_scale) + y_zero_point) ------------------

FORMULA = "The quantization formula is y = saturate((x / y_scale) + y_zero_point)."


def test_float8_zero_point_is_added_peers_ignore_it():
    """Spec: "y_zero_point is usually not used for quantization to float8 and 4bit
    types, but the quantization formula remains the same for consistency"."""
    x = np.array([1.0, 2.0], np.float32)
    zp = np.array(2.0, E4M3)
    m = q_model(21, x, np.float32(1), zp, "float8e4m3fn")
    assert evaluate(m, {"x": x})[0].astype(np.float32).tolist() == [3.0, 4.0]
    assert run_reference(m, {"x": x}).astype(np.float32).tolist() == [1.0, 2.0]
    assert run_ort(m, {"x": x}).view(E4M3).astype(np.float32).tolist() == [1.0, 2.0]


def test_negative_zero_plus_zero_point_is_positive_zero():
    """-0 + 0 = +0 under the formula; onnx's own backend case
    test_quantizelinear_float4e2m1 expects +0 for x = -0.0 with a zero zero
    point. The peers skip float8 zero points and keep -0. Without a zero point
    input nothing is added and -0 stays -0."""
    x = np.array([-0.0], np.float32)
    zp = np.zeros((), E4M3)
    m = q_model(21, x, np.float32(1), zp, "float8e4m3fn")
    assert codes(evaluate(m, {"x": x})[0]) == [0x00]
    assert codes(run_reference(m, {"x": x})) == [0x80]
    assert run_ort(m, {"x": x}).view(np.uint8).tolist() == [0x80]
    assert codes(quantize(x, np.float32(1), out_type="float8e4m3fn")) == [0x80]
    f4 = quantize(x, np.float32(1), np.zeros((), ml_dtypes.float4_e2m1fn))
    assert codes(f4) == [0x0]


def test_integer_saturation_of_inf_and_huge_values():
    """Spec: "Saturation is done according to: uint8: [0, 255] ..."; +Inf and
    values past int32 saturate. onnx.reference casts x / y_scale to int32 before
    clamping (wrapping them to 0 for uint8); onnxruntime's blocked kernel (on an
    axis other than the last) and its float16 kernel do the same."""
    x = np.array([np.inf, 1e10, -np.inf, -1e10, 3e38], np.float32)
    m = q_model(21, x, np.float32(1), np.uint8(0), "uint8")
    assert evaluate(m, {"x": x})[0].tolist() == [255, 255, 0, 0, 255]
    assert run_reference(m, {"x": x}).tolist() == [0, 0, 0, 0, 0]
    assert run_ort(m, {"x": x}).tolist() == [255, 255, 0, 0, 255]  # per-tensor kernel: right
    xb = x.reshape(1, 5)
    mb = q_model(21, xb, np.ones((1, 5), np.float32), np.zeros((1, 5), np.uint8), "uint8",
                 axis=0, block_size=1)
    assert evaluate(mb, {"x": xb})[0].tolist() == [[255, 255, 0, 0, 255]]
    assert run_ort(mb, {"x": xb}).tolist() == [[0, 0, 0, 0, 0]]  # blocked, not the last axis
    xh = np.array([np.inf], np.float16)
    mh = q_model(21, xh, np.float16(1), np.uint8(0), "uint8")
    assert evaluate(mh, {"x": xh})[0].tolist() == [255]
    assert run_ort(mh, {"x": xh}).tolist() == [0]


def test_nan_to_integer_is_the_lowest_value():
    """Decision (the spec is silent on NaN for integer outputs): NaN gives the
    lowest value of the output type, whatever the zero point, as onnxruntime
    does. onnx.reference depends on int32 wrap-around (127 for int8 with a
    negative zero point)."""
    x = np.array([np.nan, -np.nan], np.float32)
    for out, zp, lo in (("uint8", np.uint8(10), 0), ("int8", np.int8(-5), -128),
                        ("int16", np.int16(3), -32768)):
        m = q_model(21, x, np.float32(1), zp, out)
        assert evaluate(m, {"x": x})[0].tolist() == [lo, lo]
        assert run_ort(m, {"x": x}).tolist() == [lo, lo]
    m = q_model(21, x, np.float32(1), np.int8(-5), "int8")
    assert run_reference(m, {"x": x}).tolist() == [127, 127]
    assert quantize(x, np.float32(1), np.array(1, ml_dtypes.int4)).astype(int).tolist() == \
        [-8, -8]


# ---- the division precision ----------------------------------------------------

PRECISION = ("The type of y_scale determines the precision of the division operation "
             "between x and y_scale, unless the precision attribute is specified.")


def test_scale_type_sets_division_precision_reference_promotes():
    """Spec (opset 23+): PRECISION. x float32, y_scale float16: the division is in
    float16, 1538 / 3 = 512.67 -> 512.5 (float16) -> 512 (ties to even).
    onnx.reference divides with numpy promotion (float32) and gets 513."""
    x = np.array([1538.0], np.float32)
    m = q_model(23, x, np.float16(3), np.int16(0), "int16")
    assert evaluate(m, {"x": x})[0].tolist() == [512]
    assert run_reference(m, {"x": x}).tolist() == [513]


def test_float16_x_and_scale_divide_in_float16_onnxruntime_uses_float32():
    """Opsets 19/21: x and y_scale share T1; "For (x / y_scale), it rounds to the
    nearest even" on the float16 quotient. onnx.reference agrees; onnxruntime's
    float16 kernel divides in float32."""
    x = np.array([1538.0], np.float16)
    m = q_model(21, x, np.float16(3), np.int16(0), "int16")
    assert evaluate(m, {"x": x})[0].tolist() == [512]
    assert run_reference(m, {"x": x}).tolist() == [512]
    assert run_ort(m, {"x": x}).tolist() == [513]


def test_int32_x_divides_in_the_scale_type_reference_uses_float64():
    """Spec: PRECISION. int32 x = 10686444 with the float32 scale 462.38644: the
    float32 quotient is exactly 23111.5, a tie, -> 23112. onnx.reference divides
    in float64 (numpy promotes int32 / float32), 23111.4993 -> 23111."""
    x = np.array([10686444], np.int32)
    s = np.float32(462.38644)
    assert float(np.float32(x[0]) / s) == 23111.5
    m = q_model(23, x, s, np.int16(0), "int16")
    assert evaluate(m, {"x": x})[0].tolist() == [23112]
    assert run_reference(m, {"x": x}).tolist() == [23111]
    m13 = q_model(13, x, s, np.int8(0), "int8")  # same rule before opset 19
    assert evaluate(m13, {"x": x})[0].tolist() == [127]


def test_precision_attribute():
    """Spec: "precision ... The precision of the division operation between x and
    y_scale. If not provided, it will be the same as the type of y_scale"."""
    x = np.array([1538.0, 1.0], np.float32)
    s = np.float32(3)
    assert quantize(x, s, np.int16(0)).tolist() == [513, 0]
    assert quantize(x, s, np.int16(0), precision="float16").tolist() == [512, 0]
    # bfloat16: 1538 -> 1536, 3 -> 3, 512 exactly
    assert quantize(np.array([1539.0], np.float32), s, np.int16(0),
                    precision="bfloat16").tolist() == [512]
    assert quantize(x, s, np.int16(0), precision="double").tolist() == [513, 0]


def test_int32_scale_rounds_the_quotient_to_an_integer():
    """Decision: an int32 y_scale (allowed from opset 19 with int32 x, 23 with
    any x) asks for an int32-precision division; qlin takes the exact quotient
    rounded to the nearest integer, ties to even (x / 0 is +-Inf, 0 / 0 NaN).
    onnx.reference divides in float64 instead, which differs for float8."""
    x = np.array([5, 7, -5, 1, 3, 0], np.int32)
    s = np.int32(2)
    assert quantize(x, s, np.int8(0)).tolist() == [2, 4, -2, 0, 2, 0]
    one = np.array([1], np.int32)
    f8 = quantize(one, np.int32(3), np.zeros((), E4M3))
    assert f8.astype(np.float32).tolist() == [0.0]
    m = q_model(23, one, np.int32(3), np.zeros((), E4M3), "float8e4m3fn")
    assert run_reference(m, {"x": one}).astype(np.float32).tolist() == [0.34375]
    assert quantize(np.array([3, -3, 0], np.int32), np.int32(0), np.int8(0)).tolist() == \
        [127, -128, -128]


def test_float8e8m0_scale():
    """Decision: a float8e8m0 scale (opset 24) is a power of two; the division is
    exact in float32, so qlin divides in float32. Code 0xFF is NaN."""
    s = np.array([2.0**-3], ml_dtypes.float8_e8m0fnu)
    x = np.array([1.0, 0.0625], np.float32)
    assert quantize(x, s.reshape(()), np.int8(0)).tolist() == [8, 0]
    nan_scale = np.array(0xFF, np.uint8).view(ml_dtypes.float8_e8m0fnu)
    assert quantize(x, nan_scale, np.int8(0)).tolist() == [-128, -128]
    y = dequantize(np.array([3], np.int8), s.reshape(()))
    assert y.dtype == np.float32 and y.tolist() == [0.375]


# ---- float8 conversion: the Cast tables -------------------------------------------

SPECIALS = np.array([0.0, -0.0, np.nan, -np.nan, np.inf, -np.inf, 1e6, -1e6], np.float32)
# rows: 0, -0, NaN, -NaN, Inf, -Inf, [x] > FLT_MAX, [x] < -FLT_MAX
SATURATE_TABLE = {
    "float8e4m3fn": [0x00, 0x80, 0x7F, 0xFF, 0x7E, 0xFE, 0x7E, 0xFE],
    "float8e4m3fnuz": [0x00, 0x00, 0x80, 0x80, 0x7F, 0xFF, 0x7F, 0xFF],
    "float8e5m2": [0x00, 0x80, 0x7E, 0xFE, 0x7B, 0xFB, 0x7B, 0xFB],
    "float8e5m2fnuz": [0x00, 0x00, 0x80, 0x80, 0x7F, 0xFF, 0x7F, 0xFF],
}
NO_SATURATE_TABLE = {
    "float8e4m3fn": [0x00, 0x80, 0x7F, 0xFF, 0x7F, 0xFF, 0x7F, 0xFF],
    "float8e4m3fnuz": [0x00, 0x00, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80],
    "float8e5m2": [0x00, 0x80, 0x7E, 0xFE, 0x7C, 0xFC, 0x7C, 0xFC],
    "float8e5m2fnuz": [0x00, 0x00, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80],
}


@pytest.mark.parametrize("out", sorted(F8))
def test_cast_tables(out):
    """The Cast operator's two tables ("saturate ... All cases are fully described
    in two tables"): Inf -> +-FLT_MAX with saturate, Inf/NaN without; -0 -> 0 for
    the fnuz types; -NaN keeps its sign where the type has one."""
    sat = quantize(SPECIALS, np.float32(1), out_type=out, saturate=True)
    nosat = quantize(SPECIALS, np.float32(1), out_type=out, saturate=False)
    assert codes(sat) == SATURATE_TABLE[out]
    assert codes(nosat) == NO_SATURATE_TABLE[out]


def test_e4m3fn_without_saturation_480_to_496_is_nan_onnxruntime_says_448():
    """Cast table, saturate=0: "[x] > FLT_MAX -> NaN", [x] being x rounded to the
    target mantissa width: 480 <= x < 496 rounds to 480 > 448, so NaN.
    onnxruntime returns 448 there (and NaN from 464 to 480)."""
    x = np.array([464.0, 470.0, 480.0, 490.0, 496.0], np.float32)
    m = q_model(21, x, np.float32(1), np.zeros((), E4M3), "float8e4m3fn", saturate=0)
    assert codes(evaluate(m, {"x": x})[0]) == [0x7E, 0x7F, 0x7F, 0x7F, 0x7F]
    assert run_ort(m, {"x": x}).view(np.uint8).tolist() == [0x7E, 0x7F, 0x7E, 0x7E, 0x7F]
    assert codes(run_reference(m, {"x": x})) == [0x7E, 0x7F, 0x7F, 0x7F, 0x7F]


def test_float8_subnormals_and_ties():
    x = np.array([2.0**-9, 2.0**-10, 3 * 2.0**-10, 2.0**-10 * 1.0001, 17.0, 18.0, 19.0],
                 np.float32)
    got = quantize(x, np.float32(1), out_type="float8e4m3fn")
    # 2^-9 smallest subnormal; 2^-10 ties to 0; 3*2^-10 ties to 2*2^-9; 17 ties to 16
    assert got.astype(np.float32).tolist() == [2.0**-9, 0.0, 2.0**-8, 2.0**-9, 16.0, 18.0, 20.0]


def test_float4_nan_follows_ml_dtypes():
    """Decision (the spec gives float4e2m1 no NaN rule): NaN becomes a zero of
    the opposite sign, as ml_dtypes (and so onnx.reference) convert it."""
    x = np.array([np.nan, -np.nan, np.inf, -np.inf, 100.0], np.float32)
    y = quantize(x, np.float32(1), out_type="float4e2m1")
    assert codes(y) == [0x8, 0x0, 0x7, 0xF, 0x7]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert codes(y) == codes(x.astype(ml_dtypes.float4_e2m1fn))


# ---- DequantizeLinear -----------------------------------------------------------

def test_dequantize_subtracts_float8_and_float4_zero_points():
    """Spec: "zero-point is usually not used in the case of float8 and 4-bit types
    quantization, but the dequantization formula remains the same for
    consistency": y = (x - x_zero_point) * x_scale. onnx.reference refuses a
    non-zero float8 zero point and ignores a float4 one."""
    x4 = np.array([0.0, 1.0], np.float32).astype(ml_dtypes.float4_e2m1fn)
    z4 = np.array(0.5, ml_dtypes.float4_e2m1fn)
    m = make_model("DequantizeLinear", 23, [("x", x4), ("s", np.float32(2)), ("z", z4)],
                   "float", {}, init=("x", "s", "z"))
    assert evaluate(m, {})[0].tolist() == [-1.0, 1.0]
    assert run_reference(m, {}).tolist() == [0.0, 2.0]
    x8 = np.array([1.0], E4M3)
    m8 = make_model("DequantizeLinear", 21, [("x", x8), ("s", np.float32(1)),
                                             ("z", np.array(1.0, E4M3))], "float", {},
                    init=("x", "s", "z"))
    assert evaluate(m8, {})[0].tolist() == [0.0]
    with pytest.raises(ValueError):
        run_reference(m8, {})


def test_dequantize_multiplies_in_the_output_type():
    """Spec (23+): "The output type also determines the precision of the
    multiplication operation." float32 product rounded once to float16 is the
    correctly rounded float16 product."""
    x = np.array([2049, -32768], np.int16)
    y = dequantize(x, np.float16(1.0))
    assert y.dtype == np.float16 and y.tolist() == [2048.0, -32768.0]
    y32 = dequantize(x, np.float16(1.0), out_type="float")
    assert y32.dtype == np.float32 and y32.tolist() == [2049.0, -32768.0]
    yb = dequantize(x, np.array(1.0, ml_dtypes.bfloat16))
    assert yb.dtype == ml_dtypes.bfloat16 and yb.astype(np.float32).tolist() == [2048, -32768]
