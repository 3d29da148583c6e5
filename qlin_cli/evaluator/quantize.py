"""QuantizeLinear on arrays: ``y = saturate(round(x / scale) + zero_point)``.

One implementation for every version and domain; ``node.run_node`` maps a
node's attributes onto the keyword arguments of ``quantize``.

Arithmetic, decided from the spec text (see docs/evaluator.md and
tests/test_evaluator_spec.py):

* The division is carried out in the *precision type* P: the ``precision``
  argument when given, otherwise the scale's type ("The type of y_scale
  determines the precision of the division operation between x and y_scale,
  unless the precision attribute is specified"). Before opset 23 x and the scale
  share one type, so this rule gives the same answer there. Both operands are
  first converted to P (round to nearest even), then divided, then the quotient
  is rounded to P.
  - float16 / bfloat16: the float32 quotient of the converted operands is
    rounded to P. float32 has 24 >= 2p + 2 significand bits for p = 11 and p = 8,
    so this double rounding equals a single correctly rounded division in P.
  - float8e8m0 scales (opset 24) hold powers of two; x / 2**k is exact in
    float32 up to under/overflow, so qlin divides in float32 (e8m0 is not an
    arithmetic type).
  - int32 (an int32 scale without ``precision``): the quotient is rounded to an
    integer, ties to even. With int32 x this is exact integer arithmetic; with a
    float x the float64 quotient is rounded. x / 0 gives +-Inf (NaN for 0 / 0).
  - double (``precision`` = double): float64 division.
* Integer outputs: the quotient is rounded to an integer, ties to even, then the
  zero point is added exactly and the sum clamped to the type's range (the
  spec's "saturate"). +-Inf clamp to the bounds. NaN is not covered by the
  spec; qlin maps it to the lowest value of the type, as onnxruntime does.
* float8 / float6 / float4 / float16 / bfloat16 outputs: the zero point is
  added to the quotient in P whenever the input is present, as the formula
  says ("the quantization formula remains the same for consistency"), so
  -0 + 0 gives +0 (onnx's backend case test_quantizelinear_float4e2m1 expects
  exactly this); without a zero point input nothing is added. The sum is rounded to the
  output type on its bit pattern (``rounding``), with the Cast tables' rules for
  ``saturate``. float16/bfloat16 outputs (com.amd.quark) are not rounded to
  integers first: the page calls them floating-point quantization and its
  rounding sentence reads "rounds to the nearest even for types", i.e. to the
  output type; they always saturate to +-65504 / +-3.3895e38 (the page lists
  these ranges), Inf included.

Fast paths, each bit-identical to the plain computation:

* Division by a power of two 2**k whose reciprocal 2**-k is a float32 is done
  as a multiplication: x * 2**-k and x / 2**k are both the correctly rounded
  value of the same real number. No other scale uses the reciprocal.
* Integer outputs of up to 16 bits from a float32-carried quotient: the
  quotient is rounded by adding ``1.5 * 2**23`` plus the even part of the zero
  point (the float32 addition itself rounds to nearest even at unit precision,
  and adding an even integer keeps ties on the same side), the int32 bit
  pattern is clamped (float bit patterns are ordered like the values), the odd
  part of the zero point is added, and the low bits of the pattern are the
  two's-complement result. One float pass, one integer clamp, one narrowing.
"""

from __future__ import annotations

import numpy as np

from qlin_cli.schema import all_types
from qlin_cli.schema.dtypes import BY_NAME, FLOAT_LAYOUTS, PRECISION_TYPES
from qlin_cli.schema.ops import DEFAULT_QUANT_TYPE

from . import alloc, chunks
from .errors import EvaluationError
from .granularity import Layout
from .inputs import prepare, type_of
from .rounding import round_to, to_narrow_float

X_TYPES = all_types("quantize", "x")  # float, float16, bfloat16, int32
SCALE_TYPES = all_types("quantize", "scale")  # those and float8e8m0
Y_TYPES = all_types("quantize", "y")  # every domain's quantized output types
_MAGIC = np.float32(12582912.0)  # 1.5 * 2**23
_F32 = frozenset({"float", "float16", "bfloat16"})  # carried in float32


def precision_of(scale_type: str, precision: str | None) -> str:
    """The type the division is carried out in (see the module docstring)."""
    p = precision or scale_type
    if p == "float8e8m0":
        return "float"
    if p not in PRECISION_TYPES and p != "int32":
        raise EvaluationError(f"precision {p} is not an arithmetic type")
    return p


def _scale_in(p: str, scale: np.ndarray) -> np.ndarray:
    if p == "double":
        return scale.astype(np.float64)
    if p == "int32":
        return scale.astype(np.int64)
    s = scale.astype(np.float32)
    if p != "float" and type_of(scale, "scale") != p:
        s = round_to(s, p)
    return s


def _exact_reciprocal(s: np.ndarray) -> np.ndarray | None:
    """1 / s where every s is a power of two with a float32 reciprocal, else None.

    s = +-2**k with a normal float32 s (exponent field 1..254) has the exact
    reciprocal 2**-k (normal or subnormal), and x * 2**-k == x / 2**k for every
    x: both are the correctly rounded value of the same real number.
    """
    s = np.ascontiguousarray(s, dtype=np.float32)
    b = s.reshape(-1).view(np.uint32)
    if b.size == 0:
        return None

    def ok(v):
        e = (v >> np.uint32(23)) & np.uint32(0xFF)
        return ((v & np.uint32(0x7FFFFF)) == 0) & (e >= 1) & (e <= 254)

    if not bool(ok(b[:1])[0]) or not bool(np.all(ok(b))):
        return None
    return (np.float32(1) / s).astype(np.float32)


def quantize(x, scale, zero_point=None, *, axis: int | None = None, block_size: int = 0,
             out_type: str | None = None, saturate: bool = True,
             precision: str | None = None, granularities=None) -> np.ndarray:
    """Quantize ``x`` to ``out_type``; bit-exact QuantizeLinear.

    Arguments:
        x: float32, float16, bfloat16 or int32 array, any shape.
        scale: float32/float16/bfloat16/int32/float8e8m0 array: 0-d (or one
            element, 1-D) for per-tensor, 1-D of length ``x.shape[axis]`` for
            per-axis, rank of x with ``ceil(D / block_size)`` along ``axis`` for
            blocked.
        zero_point: None, or an array of ``out_type``'s dtype and the scale's shape.
        axis: the quantization axis, negative counts from the back. None means
            per-tensor only (a non-scalar scale is then an error).
        block_size: 0 for per-tensor/per-axis, else the block length.
        out_type: ONNX type name of y ("uint8", "int4", "float8e4m3fn", ...).
            None: the zero point's type, or "uint8" without a zero point.
        saturate: float8 outputs only: clamp overflow to the largest finite value
            (True) or use the Cast table's Inf/NaN (False).
        precision: ONNX type name the division is done in; None means the
            scale's type.
        granularities: optional set of allowed granularities (from the schema).

    Returns an array of ``out_type``'s numpy / ml_dtypes dtype (one element per
    value for sub-byte types) with x's shape. Raises EvaluationError on invalid
    types or shapes.
    """
    x, scale, x_t, s_t = prepare(x, scale, SCALE_TYPES)
    if x_t not in X_TYPES:
        raise EvaluationError(f"x of type {x_t} cannot be quantized")
    if zero_point is not None:
        zero_point = np.asarray(zero_point)
        zp_t = type_of(zero_point, "zero point")
        if out_type is not None and out_type != zp_t:
            raise EvaluationError(f"output type {out_type} differs from zero point type {zp_t}")
        out_type = zp_t
    out_type = out_type or DEFAULT_QUANT_TYPE
    if out_type not in Y_TYPES:
        raise EvaluationError(f"{out_type} is not a quantized type")
    out = BY_NAME[out_type]
    p = precision_of(s_t, precision)
    layout = Layout(x.shape, scale.shape, axis, block_size, granularities,
                    None if zero_point is None else zero_point.shape)
    s = _scale_in(p, scale)
    if zero_point is None:
        zp = np.zeros((), np.float64 if out.kind == "int" else np.float32)
    elif out.kind == "int":
        zp = zero_point.astype(np.float64)
    else:
        zp = zero_point.astype(np.float32)
    zp = _uniform(zp)
    if p == "float16" and x_t != "float16" or p == "bfloat16" and x_t != "bfloat16":
        round_x = p
    else:
        round_x = None
    recip = _exact_reciprocal(s) if p in _F32 else None
    div = recip if recip is not None else s
    mul = recip is not None
    carrier = p in _F32

    if out.kind == "int":
        return _quantize_int(x, layout, div, mul, zp, out, p, round_x, carrier)
    return _quantize_float(x, layout, div, mul, zp, out, p, round_x, carrier, saturate,
                           zero_point is not None)


# ---- per-piece helpers -------------------------------------------------------

def _uniform(a: np.ndarray) -> np.ndarray:
    """A 0-d array if every element of ``a`` is the same (bit for bit), else ``a``."""
    if a.ndim and a.size:
        first = a.reshape(-1)[:1]
        u = np.dtype(f"u{a.dtype.itemsize}")
        if np.all(a.reshape(-1).view(u) == first.view(u)):
            return first.reshape(())
    return a


def _quotient32(xp, div, mul, p, round_x, scratch, slot=0):
    """float32 quotient x / s in precision p (float32, float16 or bfloat16)."""
    # A blocked scale (rows, 1, 1) broadcasts over the piece (rows, B, 1) as is:
    # measured on 16M elements, that beats repeating it into a dense piece for
    # every block size from 2 (41 vs 53 ms) to 128 (7.7 vs 9.2 ms).
    q = scratch.get(slot, np.float32, xp.shape)
    if xp.dtype == np.float32:
        src = xp
    else:
        np.copyto(q, xp, casting="unsafe")
        src = q
    if round_x is not None:
        src = q[...] = round_to(src, round_x)
    (np.multiply if mul else np.divide)(src, div, out=q)
    if p in ("float16", "bfloat16"):
        q[...] = round_to(q, p)
    return q


def _quotient64(xp, s, p):
    """float64 quotient in precision double or int32 (integer-valued)."""
    if p == "double":
        return xp.astype(np.float64) / s
    with np.errstate(divide="ignore", invalid="ignore"):
        if xp.dtype.kind != "i":
            return np.rint(xp.astype(np.float64) / s)
        n = xp.astype(np.int64)
        d = np.broadcast_to(s, n.shape)
        zero = d == 0
        dd = np.where(zero, 1, d)
        neg = dd < 0
        n = np.where(neg, -n, n)
        dd = np.abs(dd)
        q = np.floor_divide(n, dd)
        twice = 2 * (n - q * dd)
        q += (twice > dd) | ((twice == dd) & (q % 2 == 1))
        out = q.astype(np.float64)
        if zero.any():
            out = np.where(zero, xp.astype(np.float64) / 0.0, out)
        return out


def _quantize_int(x, layout, div, mul, zp, out, p, round_x, carrier):
    lo, hi = out.lo, out.hi
    lo_b = (lo - zp)
    hi_b = (hi - zp)
    bits = out.bits
    codes = alloc.empty(x.shape, np.uint8 if bits < 8 else out.numpy)
    if carrier and bits <= 16:
        # t = q + (M + ze) rounds q to an integer (ze: the even part of the zero
        # point, so ties still go to even); bits(t) = bits(M) + ze + round(q) while
        # t is in [2**23, 2**24), and bit patterns of floats are ordered like the
        # floats outside it, so clamping the int32 pattern clamps the value.
        # Negative NaNs are negative int32 and clamp to lo; positive NaNs, found
        # by one max-reduction, are set to lo explicitly.
        zo = np.bitwise_and(zp.astype(np.int64), 1)
        ze = zp - zo
        m_eff = (_MAGIC + ze).astype(np.float32)
        mbits = int(_MAGIC.view(np.int32))
        lo_i = (mbits + lo - zo).astype(np.int32)
        hi_i = (mbits + hi - zo).astype(np.int32)
        zo_i = zo.astype(np.int32)
        add_zo = bool(np.any(zo))
        # the same zero point everywhere (the usual case): scalars broadcast fastest
        m_eff, lo_i, hi_i, zo_i = (_uniform(a) for a in (m_eff, lo_i, hi_i, zo_i))
        mask = np.uint8((1 << bits) - 1) if bits < 8 else None
        lo_code = np.array(lo, np.int64).astype(codes.dtype) if bits >= 8 else \
            np.uint8(lo & ((1 << bits) - 1))

        def kernel(xp, op, params, scratch):
            d, m_p, lo_p, hi_p, zo_p = params
            q = _quotient32(xp, d, mul, p, round_x, scratch)
            np.add(q, m_p, out=q)
            qi = q.view(np.int32)
            nan = None
            if qi.max(initial=0) > 0x7F800000:
                nan = np.isnan(q)
            np.clip(qi, lo_p, hi_p, out=qi)
            if add_zo:  # the odd part of the zero point, fused with the narrowing
                np.add(qi, zo_p, out=op, casting="unsafe")
            else:
                np.copyto(op, qi, casting="unsafe")
            if mask is not None:
                np.bitwise_and(op, mask, out=op)
            if nan is not None:
                op[nan] = lo_code

        chunks.run(layout.jobs(x, codes, div, m_eff, lo_i, hi_i, zo_i), kernel)
    else:
        def kernel(xp, op, params, scratch):  # noqa: F811
            d, lo_p, hi_p, zp_p = params
            if carrier:
                q = _quotient32(xp, d, mul, p, round_x, scratch).astype(np.float64)
            else:
                q = _quotient64(xp, d, p)
            np.rint(q, out=q)
            np.fmax(q, lo_p, out=q)
            np.fmin(q, hi_p, out=q)
            np.add(q, zp_p, out=q)
            if mask is not None:
                op[...] = q.astype(np.int64).astype(np.uint8) & mask
            else:
                np.copyto(op, q, casting="unsafe")

        mask = np.uint8((1 << bits) - 1) if bits < 8 else None
        chunks.run(layout.jobs(x, codes, div, lo_b, hi_b, zp), kernel)
    return codes.view(out.numpy) if codes.dtype != out.numpy else codes


def _quantize_float(x, layout, div, mul, zp, out, p, round_x, carrier, saturate, has_zp):
    name = out.name
    layout_f = FLOAT_LAYOUTS[name]
    if out.kind == "float":  # float16 / bfloat16 outputs always saturate (com.amd.quark)
        saturate = True
    elif out.kind == "float4":
        saturate = True
    codes = alloc.empty(x.shape, np.uint8 if layout_f.sign_shift < 8 else np.uint16)
    add_zp = has_zp

    def kernel(xp, op, params, scratch):
        d, zp_p = params
        if carrier:
            q = _quotient32(xp, d, mul, p, round_x, scratch)
            if add_zp:
                np.add(q, zp_p, out=q)
                if p in ("float16", "bfloat16"):
                    q[...] = round_to(q, p)
        else:
            q64 = _quotient64(xp, d, p)
            if add_zp:
                np.add(q64, zp_p, out=q64)
            q = q64.astype(np.float32)
        if op.flags.c_contiguous:
            to_narrow_float(q, name, saturate, op, scratch)
        else:
            tmp = scratch.get(2, op.dtype, op.shape)
            to_narrow_float(q, name, saturate, tmp, scratch)
            op[...] = tmp

    chunks.run(layout.jobs(x, codes, div, zp), kernel)
    return codes.view(out.numpy)
