"""DequantizeLinear on arrays: ``y = (x - zero_point) * scale``.

Arithmetic (decided from the spec text, see docs/evaluator.md):

* ``x - zero_point`` is exact for every integer type (int64 for int32/uint32
  x) and computed in float32 for float x (float8/float6/float4/float16/
  bfloat16; exact unless the two values are more than 24 bits apart). A zero
  point is subtracted for every type, float8 and float4 included, as the
  formula says; onnx.reference refuses a non-zero float8 zero point.
* The difference is converted to float32 (exact for all types of 16 bits or
  fewer; int32 x beyond 2**24 rounds, as in onnx.reference and onnxruntime),
  multiplied by the scale in float32 and rounded once to the output type. "The
  output type also determines the precision of the multiplication": for
  float16 and bfloat16 outputs the float32 product rounded to the output type
  is the correctly rounded product (24 >= 2p + 2), so this is that precision.
* The output type is ``out_type`` when given, else the scale's type; a
  float8e8m0 scale (not an output type) gives float32.

Per-tensor float8 / float6 / float4 / float16 / bfloat16 inputs are
dequantized by table: every possible code is dequantized once by the same
arithmetic and the result looked up (ml_dtypes' element casts are slow).
"""

from __future__ import annotations

import functools

import numpy as np

from qlin_cli.schema import PER_TENSOR, all_types
from qlin_cli.schema.dtypes import BY_NAME

from . import alloc, chunks
from .errors import EvaluationError
from .granularity import Layout
from .inputs import prepare, type_of

OUT_TYPES = all_types("dequantize", "y")  # float, float16, bfloat16
SCALE_TYPES = all_types("dequantize", "scale")  # those and float8e8m0
_LUT_MIN = 4096  # below this many elements compute directly


def dequantize(x, scale, zero_point=None, *, axis: int | None = None, block_size: int = 0,
               out_type: str | None = None, granularities=None) -> np.ndarray:
    """Dequantize ``x``; bit-exact DequantizeLinear.

    Arguments:
        x: array of a quantized type (int2..int32, uint2..uint32, float8,
            float6, float4, float16, bfloat16), any shape.
        scale: float32/float16/bfloat16/float8e8m0 array shaped as for
            ``quantize`` (0-d or one element, 1-D per-axis, or blocked).
        zero_point: None, or an array of x's dtype and the scale's shape.
        axis, block_size, granularities: as for ``quantize``.
        out_type: "float", "float16" or "bfloat16"; None means the scale's
            type (float32 for a float8e8m0 scale).

    Returns an array of x's shape and the output dtype. Raises EvaluationError
    on invalid types or shapes.
    """
    x, scale, x_t, s_t = prepare(x, scale, SCALE_TYPES)
    x_d = BY_NAME[x_t]
    if x_d.kind == "float8e8m0" or x_t in ("float", "double", "int64"):
        raise EvaluationError(f"x of type {x_t} is not a quantized type")
    if zero_point is not None:
        zero_point = np.asarray(zero_point)
        zp_t = type_of(zero_point, "zero point")
        if zp_t != x_t:
            raise EvaluationError(f"zero point type {zp_t} differs from x type {x_t}")
    if out_type is None:
        out_type = "float" if s_t == "float8e8m0" else s_t
    if out_type not in OUT_TYPES:
        raise EvaluationError(f"{out_type} is not a dequantized output type")
    out_dt = BY_NAME[out_type].numpy
    layout = Layout(x.shape, scale.shape, axis, block_size, granularities,
                    None if zero_point is None else zero_point.shape)
    s = scale.astype(np.float32)
    wide = x_t in ("int32", "uint32")
    if zero_point is None:
        zp = np.zeros(scale.shape, np.int64 if wide else np.float32)
    else:
        zp = zero_point.astype(np.int64 if wide else np.float32)
    y = alloc.empty(x.shape, out_dt)

    n_codes = 1 << (8 * x.dtype.itemsize)
    # numpy casts integers to float32 faster than a gather; ml_dtypes' float8 /
    # float4 / float6 casts are about 20x slower, so those go through the table
    if layout.kind == PER_TENSOR and x_d.kind != "int" and x.dtype.itemsize <= 2 \
            and x.size >= max(_LUT_MIN, 4 * n_codes):
        code_t = np.uint8 if x.dtype.itemsize == 1 else np.uint16
        codes = np.arange(n_codes, dtype=np.uint32).astype(code_t)
        table = np.empty(codes.shape, out_dt)
        _direct(codes.view(x.dtype), table, s.reshape(()), zp.reshape(()), wide)
        flat = x.view(code_t).reshape(-1)
        out = y.reshape(-1)

        def lut(xp, op, params, scratch):
            np.take(table, xp, out=op, mode="clip")

        chunks.run([(flat, out)], lut)
        return y

    def kernel(xp, op, params, scratch):
        sp, zpp = params
        _direct(xp, op, sp, zpp, wide, scratch)

    chunks.run(layout.jobs(x, y, s, zp), kernel)
    return y


_NARROW_FLOATS = frozenset(d.numpy for d in BY_NAME.values() if d.kind in ("float8", "float4"))


@functools.cache
def _decode_table(dtype: np.dtype) -> np.ndarray:
    """float32 value of every byte code of a one-byte ml_dtypes float type."""
    return np.arange(256, dtype=np.uint8).view(dtype).astype(np.float32)


def _direct(xp, op, sp, zpp, wide, scratch=None):
    if wide:
        d = (xp.astype(np.int64) - zpp).astype(np.float32)
    else:
        d = scratch.get(0, np.float32, xp.shape) if scratch is not None else np.empty(
            xp.shape, np.float32)
        if xp.dtype in _NARROW_FLOATS:
            # float8 / float6 / float4: decode by table (ml_dtypes' cast is slow)
            np.take(_decode_table(xp.dtype), xp.view(np.uint8), out=d, mode="clip")
        else:
            np.copyto(d, xp, casting="unsafe")
        if np.ndim(zpp) == 0 and zpp == 0:
            pass
        elif np.any(zpp != 0):
            np.subtract(d, zpp, out=d)
    if op.dtype == np.float32:
        np.multiply(d, sp, out=op)
    else:
        np.multiply(d, sp, out=d)
        np.copyto(op, d, casting="unsafe")
