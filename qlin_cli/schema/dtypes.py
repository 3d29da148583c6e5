"""Facts about the element types qlin reads and writes.

Every table is keyed by the ONNX type name as `onnx.defs` spells it inside
`tensor(...)` (``"float"``, ``"int4"``, ``"float8e4m3fn"`` ...). Rules, the
converter and the evaluator look types up here and nowhere else.
"""

from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np
from onnx import TensorProto


@dataclass(frozen=True)
class DType:
    name: str  # ONNX spelling, e.g. "float8e4m3fn"
    proto: int  # TensorProto.DataType value
    numpy: np.dtype  # one element per value (sub-byte types unpacked)
    bits: int
    # "int"; "float8" (the four saturate-governed float8s); "float4" (float4e2m1
    # and the float6s: no Inf/NaN, conversion always saturates); "float";
    # "float8e8m0" (scales only)
    kind: str
    lo: int | float | None = None  # saturation range, integers and wide floats
    hi: int | float | None = None


def _d(name, proto, npdt, bits, kind, lo=None, hi=None):
    return DType(name, proto, np.dtype(npdt), bits, kind, lo, hi)


_ALL = [
    _d("float", TensorProto.FLOAT, np.float32, 32, "float"),
    _d("double", TensorProto.DOUBLE, np.float64, 64, "float"),
    _d("float16", TensorProto.FLOAT16, np.float16, 16, "float", -65504.0, 65504.0),
    _d("bfloat16", TensorProto.BFLOAT16, ml_dtypes.bfloat16, 16, "float",
       -3.3895313892515355e38, 3.3895313892515355e38),
    _d("int2", TensorProto.INT2, ml_dtypes.int2, 2, "int", -2, 1),
    _d("uint2", TensorProto.UINT2, ml_dtypes.uint2, 2, "int", 0, 3),
    _d("int4", TensorProto.INT4, ml_dtypes.int4, 4, "int", -8, 7),
    _d("uint4", TensorProto.UINT4, ml_dtypes.uint4, 4, "int", 0, 15),
    _d("int8", TensorProto.INT8, np.int8, 8, "int", -128, 127),
    _d("uint8", TensorProto.UINT8, np.uint8, 8, "int", 0, 255),
    _d("int16", TensorProto.INT16, np.int16, 16, "int", -32768, 32767),
    _d("uint16", TensorProto.UINT16, np.uint16, 16, "int", 0, 65535),
    _d("int32", TensorProto.INT32, np.int32, 32, "int", -(2**31), 2**31 - 1),
    _d("uint32", TensorProto.UINT32, np.uint32, 32, "int", 0, 2**32 - 1),
    _d("int64", TensorProto.INT64, np.int64, 64, "int", -(2**63), 2**63 - 1),
    _d("float8e4m3fn", TensorProto.FLOAT8E4M3FN, ml_dtypes.float8_e4m3fn, 8, "float8"),
    _d("float8e4m3fnuz", TensorProto.FLOAT8E4M3FNUZ, ml_dtypes.float8_e4m3fnuz, 8, "float8"),
    _d("float8e5m2", TensorProto.FLOAT8E5M2, ml_dtypes.float8_e5m2, 8, "float8"),
    _d("float8e5m2fnuz", TensorProto.FLOAT8E5M2FNUZ, ml_dtypes.float8_e5m2fnuz, 8, "float8"),
    _d("float4e2m1", TensorProto.FLOAT4E2M1, ml_dtypes.float4_e2m1fn, 4, "float4"),
    _d("float6e2m3", TensorProto.FLOAT6E2M3, ml_dtypes.float6_e2m3fn, 6, "float4"),
    _d("float6e3m2", TensorProto.FLOAT6E3M2, ml_dtypes.float6_e3m2fn, 6, "float4"),
    _d("float8e8m0", TensorProto.FLOAT8E8M0, ml_dtypes.float8_e8m0fnu, 8, "float8e8m0"),
]

BY_NAME: dict[str, DType] = {d.name: d for d in _ALL}
BY_PROTO: dict[int, DType] = {d.proto: d for d in _ALL}

# Output types whose conversion the `saturate` attribute governs (the spec's
# "float 8 quantization" list). float4e2m1 has no Inf/NaN, so it always saturates.
SATURATE_APPLIES = frozenset({"float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz"})

# Types in which the division x / y_scale can be carried out (`precision`).
# Decision: the `precision` attribute names an arithmetic type, so it must be a
# floating type wide enough to hold a quotient; integer and 8-bit or smaller
# float types cannot hold x / y_scale and are refused by rule QL301.
PRECISION_TYPES = frozenset({"float", "float16", "bfloat16", "double"})


def name_of(proto: int) -> str:
    """ONNX type name for a TensorProto data type, or ``"type <n>"`` if unknown."""
    d = BY_PROTO.get(proto)
    if d is not None:
        return d.name
    try:
        return TensorProto.DataType.Name(proto).lower()
    except ValueError:
        return f"type {proto}"


def is_low_precision_float(name: str) -> bool:
    """float8, float6 and float4 outputs: zero points are not used for these."""
    d = BY_NAME.get(name)
    return d is not None and d.kind in ("float8", "float4")


@dataclass(frozen=True)
class FloatLayout:
    """Bit layout of a floating type narrower than float32 (for bit-pattern rounding).

    Codes are unsigned integers: sign bit on top, then exponent, then mantissa.
    """

    name: str
    exponent_bits: int
    mantissa_bits: int
    bias: int
    max_code: int  # positive largest finite value
    nan_code: int | None  # positive NaN (None: the type has no NaN)
    inf_code: int | None  # positive infinity (None: the type has no Inf)
    unsigned_zero: bool = False  # "fnuz": no -0; the sign-bit-only code is the NaN

    @property
    def sign_shift(self) -> int:
        return self.exponent_bits + self.mantissa_bits


def _fl(name, e, m, bias, max_code, nan=None, inf=None, fnuz=False):
    return FloatLayout(name, e, m, bias, max_code, nan, inf, fnuz)


# Largest finite values: e4m3fn 448, e4m3fnuz 240, e5m2 and e5m2fnuz 57344,
# float4e2m1 6, float6e2m3 7.5, float6e3m2 28, float16 65504.
FLOAT_LAYOUTS: dict[str, FloatLayout] = {f.name: f for f in (
    _fl("float8e4m3fn", 4, 3, 7, 0x7E, nan=0x7F),
    _fl("float8e4m3fnuz", 4, 3, 8, 0x7F, nan=0x80, fnuz=True),
    _fl("float8e5m2", 5, 2, 15, 0x7B, nan=0x7E, inf=0x7C),
    _fl("float8e5m2fnuz", 5, 2, 16, 0x7F, nan=0x80, fnuz=True),
    _fl("float4e2m1", 2, 1, 1, 0x7),
    _fl("float6e2m3", 2, 3, 1, 0x1F),
    _fl("float6e3m2", 3, 2, 3, 0x1F),
    _fl("float16", 5, 10, 15, 0x7BFF, nan=0x7E00, inf=0x7C00),
    _fl("bfloat16", 8, 7, 127, 0x7F7F, nan=0x7FC0, inf=0x7F80),
)}

BY_NUMPY: dict[np.dtype, DType] = {d.numpy: d for d in _ALL}


def name_of_array(a: np.ndarray) -> str | None:
    """ONNX type name of a numpy / ml_dtypes array, or None if qlin does not know it."""
    d = BY_NUMPY.get(a.dtype)
    return d.name if d is not None else None
