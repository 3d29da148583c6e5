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
* ``to_narrow_float`` is the same arithmetic done in place on preallocated
  buffers, with the rare cases (target subnormals, NaN) fixed up only on the
  elements that need it. (A lookup table on the top 16 bits would be exact too,
  but numpy's gather is slower than these integer passes.)

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
    with np.errstate(all="ignore"):  # NaN lanes; replaced below
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
def _overflow_bits(name: str) -> int:
    """The smallest float32 magnitude pattern whose rounded code exceeds max_code."""
    layout = FLOAT_LAYOUTS[name]
    lo, hi = 0, 0x7F800000  # encode(lo) fits, encode(hi) (Inf) does not

    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _exceeds(mid, layout):
            hi = mid
        else:
            lo = mid
    return hi


def _exceeds(bits: int, layout: FloatLayout) -> bool:
    """Does |x| with this float32 pattern round past the largest finite value?"""
    m = layout.mantissa_bits
    shift = 23 - m
    k = ((layout.bias - 127) << 23) + (1 << (shift - 1)) - 1
    code = (bits + k + ((bits >> shift) & 1)) >> shift
    return code > layout.max_code


def to_narrow_float(f32: np.ndarray, name: str, saturate: bool, out: np.ndarray,
                    scratch=None) -> None:
    """Write the codes of float32 ``f32`` rounded to type ``name`` into ``out``.

    Same result as ``encode``, computed in place with few passes: ``out`` is a
    contiguous uint8 (float8/6/4) or uint16 (float16/bfloat16) array of f32's
    shape; ``scratch`` an optional ``chunks.Scratch``. The target-subnormal
    range (rare in practice) is fixed up on the selected elements only, and
    the NaN fix-up runs only when a NaN is present.
    """
    layout = FLOAT_LAYOUTS[name]
    f32 = np.ascontiguousarray(f32, dtype=np.float32).reshape(-1)
    o = out.reshape(-1)
    n = f32.size

    def buf(slot, dtype):
        if scratch is None:
            return np.empty(n, dtype)
        return scratch.get(slot, dtype, (n,))

    u = f32.view(np.uint32)
    m = layout.mantissa_bits
    sh = np.uint32(23 - m)
    emin = 1 - layout.bias
    a = buf(10, np.uint32)
    t = buf(11, np.uint32)
    np.bitwise_and(u, _ABS, out=a)
    np.right_shift(a, sh, out=t)
    np.bitwise_and(t, np.uint32(1), out=t)
    np.add(t, a, out=t)
    k = ((layout.bias - 127) << 23) + (1 << (22 - m)) - 1
    np.add(t, np.uint32(k & 0xFFFFFFFF), out=t)
    np.right_shift(t, sh, out=t)
    small = buf(12, np.bool_)
    np.less(a, np.uint32((emin + 127) << 23), out=small)
    idx = np.flatnonzero(small)
    if idx.size:
        c = np.float32(2.0 ** (emin - m + 23))
        t[idx] = (a[idx].view(np.float32) + c).view(np.uint32) - c.view(np.uint32)
    amax = a.max(initial=0)
    has_nan = bool(amax > _INF_BITS)
    if saturate or layout.inf_code is None and layout.nan_code is None:
        # codes are monotone in |x|: skip the clamp when the largest fits
        if has_nan or amax >= _overflow_bits(name):
            np.clip(t, np.uint32(0), np.uint32(layout.max_code), out=t)
    else:
        over = layout.inf_code if layout.inf_code is not None else layout.nan_code
        np.copyto(t, np.uint32(over), where=t > np.uint32(layout.max_code))
    sign = buf(13, o.dtype)
    np.right_shift(u, np.uint32(31 - layout.sign_shift), out=sign, casting="unsafe")
    np.bitwise_and(sign, o.dtype.type(1 << layout.sign_shift), out=sign)
    if has_nan:
        nan = a > _INF_BITS
        if layout.nan_code is not None:
            t[nan] = layout.nan_code
        else:  # no NaN encoding: a zero of the opposite sign (ml_dtypes' choice)
            t[nan] = 0
            sign[nan] ^= o.dtype.type(1 << layout.sign_shift)
    np.copyto(o, t, casting="unsafe")
    if layout.unsigned_zero:
        np.copyto(sign, 0, where=o == 0)
    np.bitwise_or(o, sign, out=o)


def round_to(f32: np.ndarray, name: str) -> np.ndarray:
    """float32 values rounded (IEEE, overflow to Inf) to float16 or bfloat16, as float32."""
    if name == "float16":
        return f32.astype(np.float16).astype(np.float32)
    codes = np.empty(f32.size, np.uint16)
    to_narrow_float(f32, name, False, codes)
    codes = codes.astype(np.uint32)
    return (codes << np.uint32(16)).view(np.float32).reshape(f32.shape)
