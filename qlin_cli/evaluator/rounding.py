"""Round float32 values to narrow floating types on their bit patterns.

Every conversion here is round-to-nearest, ties-to-even, done with integer
arithmetic on the float32 bit patterns instead of a per-element cast:

* ``encode`` handles any layout in ``dtypes.FLOAT_LAYOUTS`` (float8, float6,
  float4, float16, bfloat16). The normal range rounds the float32 mantissa at
  bit ``23 - m`` (adding ``half - 1`` plus the kept lowest bit, then shifting,
  which carries into the exponent exactly as rounding must) and re-biases the
  exponent. The target's subnormal range rounds with one float32 addition of
  ``C = 2**(emin - m + 23)``: the ulp of C is the target's smallest subnormal, so
  the addition itself rounds to nearest even and ``bits(|x| + C) - bits(C)`` is
  the code.
* For types with at most 6 mantissa bits the rounding bit is bit 17 or higher,
  so the result depends only on the top 16 bits of the float32 pattern and on
  whether any of the low 16 bits is set ("sticky"). ``to_narrow_float`` looks
  the result up in a 2**17-entry table built once by ``encode``, which is exact
  by construction and about twice as fast as the arithmetic.

Special values follow the ONNX Cast tables for float8 (quoted in
tests/test_evaluator_spec.py): with ``saturate`` every overflow and +-Inf gives
the largest finite value of the same sign; without it, overflow gives Inf
(e5m2) or NaN (the others; "-NaN" keeps the sign for e4m3fn, the fnuz types have
a single unsigned NaN and no -0). NaN stays NaN with its sign. The float4 and
float6 types have no Inf or NaN and always saturate; the spec does not say what
NaN becomes, and qlin follows ml_dtypes (and therefore onnx.reference): NaN
becomes a zero whose sign is the opposite of the NaN's sign bit.
"""

from __future__ import annotations

import functools

import numpy as np

from qlin_cli.schema.dtypes import FLOAT_LAYOUTS, FloatLayout

_ABS = np.uint32(0x7FFFFFFF)
_INF_BITS = np.uint32(0x7F800000)


def _code_dtype(layout: FloatLayout) -> np.dtype:
    return np.dtype(np.uint8 if layout.sign_shift < 8 else np.uint16)


def encode(f32: np.ndarray, layout: FloatLayout, saturate: bool) -> np.ndarray:
    """Codes (uint8 or uint16) of float32 values rounded to ``layout``."""
    u = np.ascontiguousarray(f32, dtype=np.float32).view(np.uint32)
    m = layout.mantissa_bits
    shift = 23 - m
    emin = 1 - layout.bias
    a = u & _ABS
    # normal range of the target
    k = ((layout.bias - 127) << 23) + (1 << (shift - 1)) - 1
    code = a + np.uint32(k & 0xFFFFFFFF)
    code += (a >> np.uint32(shift)) & np.uint32(1)
    code >>= np.uint32(shift)
    # subnormal range of the target: one float32 addition rounds to the quantum
    c = np.float32(2.0 ** (emin - m + 23))
    sub = (a.view(np.float32) + c).view(np.uint32) - c.view(np.uint32)
    small = a < np.uint32((emin + 127) << 23)
    code = np.where(small, sub, code)
    nan = a > _INF_BITS
    over = code > layout.max_code
    if saturate or layout.inf_code is None and layout.nan_code is None:
        code = np.minimum(code, np.uint32(layout.max_code))
    elif layout.inf_code is not None:
        code = np.where(over, np.uint32(layout.inf_code), code)
    else:
        code = np.where(over, np.uint32(layout.nan_code), code)
    sign = (u >> np.uint32(31)) << np.uint32(layout.sign_shift)
    if layout.nan_code is not None:
        code = np.where(nan, np.uint32(layout.nan_code), code)
    else:
        # no NaN encoding: a zero of the opposite sign (ml_dtypes' choice)
        code = np.where(nan, np.uint32(0), code)
        sign = np.where(nan, sign ^ np.uint32(1 << layout.sign_shift), sign)
    if layout.unsigned_zero:
        sign = np.where(code == 0, np.uint32(0), sign)
    return (code | sign).astype(_code_dtype(layout))


@functools.cache
def sticky_table(name: str, saturate: bool) -> np.ndarray:
    """Result codes indexed by ``(bits >> 16) << 1 | (bits & 0xFFFF != 0)``."""
    layout = FLOAT_LAYOUTS[name]
    assert layout.mantissa_bits <= 6
    key = np.arange(1 << 17, dtype=np.uint32)
    bits = ((key >> np.uint32(1)) << np.uint32(16)) | (key & np.uint32(1))
    table = encode(bits.view(np.float32), layout, saturate)
    table.flags.writeable = False
    return table


def to_narrow_float(f32: np.ndarray, name: str, saturate: bool, out: np.ndarray,
                    scratch: np.ndarray | None = None) -> None:
    """Write the codes of float32 ``f32`` rounded to type ``name`` into ``out``.

    ``out`` is a uint8 (float8/6/4) or uint16 (float16/bfloat16) array of the
    same shape; ``scratch`` an optional uint32 buffer of at least ``f32.size``.
    """
    layout = FLOAT_LAYOUTS[name]
    if layout.mantissa_bits > 6:
        out[...] = encode(f32, layout, saturate).reshape(out.shape)
        return
    table = sticky_table(name, saturate)
    u = f32.view(np.uint32)
    if scratch is None:
        scratch = np.empty(u.size, np.uint32)
    hi = scratch[: u.size].reshape(u.shape)
    lo = np.bitwise_and(u, np.uint32(0xFFFF))
    np.add(lo, np.uint32(0xFFFF), out=lo)
    np.right_shift(lo, np.uint32(16), out=lo)
    np.right_shift(u, np.uint32(15), out=hi)
    np.bitwise_and(hi, np.uint32(0x1FFFE), out=hi)
    np.bitwise_or(hi, lo, out=hi)
    np.take(table, hi, out=out)


def round_to(f32: np.ndarray, name: str) -> np.ndarray:
    """float32 values rounded (IEEE, overflow to Inf) to float16 or bfloat16, as float32."""
    if name == "float16":
        return f32.astype(np.float16).astype(np.float32)
    layout = FLOAT_LAYOUTS[name]
    codes = encode(f32, layout, saturate=False).astype(np.uint32)
    return (codes << np.uint32(16)).view(np.float32).reshape(f32.shape)
