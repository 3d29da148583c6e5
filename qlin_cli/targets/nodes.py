"""What the target profiles read of a node, phrased once over ``model.facts.NodeFacts``.

Every helper takes the node's facts and answers from the schema in force (types the
schema decides, the granularity, the axis), so the profiles never restate a schema fact.
"""

from __future__ import annotations

import numpy as np
import onnx

from .. import schema
from ..model.facts import ArrayConst
from ..model.tensors import MAX_VALUE_BYTES
from ..schema import dtypes, semantics

QUANTIZE, DEQUANTIZE = "quantize", "dequantize"


def is_linear(f) -> bool:
    """A QuantizeLinear / DequantizeLinear of any domain qlin knows."""
    return schema.is_linear(f.spec)


def kind(f) -> str | None:
    """ "quantize" or "dequantize" for linear Q/DQ nodes, else None."""
    return f.spec.kind if is_linear(f) else None


def x_type(f) -> str | None:
    return f.resolved_types[0] if f.resolved_types else None


def scale_type(f) -> str | None:
    i = f.scale_index
    if i is None:
        return None
    t = f.resolved_types[i] if i < len(f.resolved_types) else None
    if t is None and f.spec is not None:  # a fixed scale type (float before opset 19)
        allowed = f.spec.allowed(f.spec.inputs[i])
        if len(allowed) == 1:
            t = next(iter(allowed))
    return t


def precision_type(f) -> str | None:
    """The type a QuantizeLinear's ``precision`` attribute names, None when it is absent or 0
    (then the scale's type sets the division's, as the page says)."""
    p = f.attrs.get("precision", 0) if f.has("precision") else 0
    return dtypes.name_of(p) if p else None


def quant_type(f) -> str | None:
    """The quantized type: y of a quantize, x of a dequantize."""
    return f.quant_type


def out_type(f) -> str | None:
    """The output's type as declared, else as the schema implies it."""
    return f.out_type or f.implied_out_type


def float_type(f) -> str | None:
    """The float side: x of a quantize, y of a dequantize."""
    return x_type(f) if kind(f) == QUANTIZE else out_type(f)


def has_zero_point(f) -> bool:
    i = f.zero_point_index
    return i is not None and f.present_at(i)


def scale_values(f) -> np.ndarray | None:
    """The scale's values as float64 when it is a known constant."""
    i = f.scale_index
    v = None if i is None else f.value(i)
    return None if v is None else np.asarray(v).astype(np.float64).reshape(-1)


class ValueRead(BaseException):
    """A check read a part of a site that site_classes hides from it (its args: the name of
    the summary asked, where one was). A BaseException, so that no ``except Exception`` in a
    check takes it for the check's own failure."""


def negative_scale(f) -> bool | None:
    """Whether some value of the scale is negative; None where the scale is not a known
    constant. A summary: worked out once per node's facts, and site_classes splits a class
    of nodes by it instead of reading each node's scale."""
    return _summary(f, "negative_scale", scale_values, lambda s: bool((s < 0).any()), _plain_negative)


def _plain_negative(f) -> bool | None:
    """``negative_scale`` of a scale stored as float bytes that numpy reads as they are
    (``Const.plain``): the last part of its ``Const.summary`` (a value below 0: -0.0 and NaN
    are not), which the check's scale rules have worked out for every such scale (the
    constant keeps it: nothing is kept on the node); None where the scale is not such a
    constant (then its values are read as usual)."""
    i = f.scale_index
    c = f.values[i] if i is not None and i < len(f.values) else None
    found = None if c is None else c.summary
    return None if not found else found[3]



def odd_zero_point(f) -> bool | None:
    """Whether some value of the zero point is odd (an absent one is 0); None where it is not
    a known constant. A summary, as ``negative_scale``."""
    return _summary(f, "odd_zero_point", zero_point_values, lambda zp: bool((zp % 2 != 0).any()))


def _summary(f, name: str, values, test, quick=None) -> bool | None:
    """``test`` of the node's ``values`` (None where they are not known), kept on the facts; a
    hidden value (site_classes) raises ValueRead naming the summary asked. ``quick(f)``: the
    same answer without reading the values as an array, or None where it cannot tell."""
    slot = summary_slot(name)
    found = getattr(f, slot, _UNKNOWN)  # (an attribute: see NodeFacts._like)
    if found is _UNKNOWN:
        try:
            found = None if quick is None else quick(f)
            if found is not None:  # (read off what the constant keeps: not kept on the node too,
                return found  # where an attribute past its first ones costs 400 bytes)
            v = values(f)
            found = None if v is None else test(v)
        except ValueRead:
            raise ValueRead(name) from None
        setattr(f, slot, found)
    return found


_UNKNOWN = object()


def summary_slot(name: str) -> str:
    """Where a node's facts keep a summary once worked out."""
    return "_summary_" + name


# what a check may read of a hidden value (site_classes): name -> the summary of a node's facts
SUMMARIES = {"negative_scale": negative_scale, "odd_zero_point": odd_zero_point}


def zero_point_values(f) -> np.ndarray | None:
    """The zero point's values as float64 when known; zeros when the input is absent."""
    i = f.zero_point_index
    if i is None or not f.present_at(i):
        return np.zeros(1)
    v = f.value(i)
    return None if v is None else np.asarray(v).astype(np.float64).reshape(-1)


def zero_point_is_zero(f, find_value=None) -> bool:
    """Whether every value of the zero point ``zero_point_values`` gives is 0 (an absent one
    is). With ``find_value`` (the scope's: name -> its constant tensor), an integer zero point
    stored inline (raw bytes or ``int32_data``) is answered from what it stores (``_zero_bytes``),
    without reading it as an array."""
    i = f.zero_point_index
    if find_value is not None and i is not None and i < len(f.values) and f.present_at(i):
        c = f.values[i]
        told = None if c is None or isinstance(c, ArrayConst) else _zero_bytes(find_value(f.inputs[i]))
        if told is not None:
            return told
    zp = zero_point_values(f)
    return zp is not None and not zp.any()


def _zero_bytes(t) -> bool | None:
    """Whether the integer tensor ``t``'s values are all 0, from its inline raw bytes or its
    ``int32_data`` as onnx's ``numpy_helper.to_array`` reads them (each entry's low bits);
    None where they do not tell (another type or storage, a segment, no values, a size that
    is not the dims', a padding nibble, a tensor too large for ``read_value`` to read)."""
    if t is None or t.data_location != onnx.TensorProto.DEFAULT or t.HasField("segment"):
        return None
    d = dtypes.BY_PROTO.get(t.data_type)
    if d is None or d.kind != "int" or d.bits not in (4, 8, 16, 32, 64):
        return None
    count = 1
    for n in t.dims:
        if n < 0:
            return None
        count *= n
    need = (count * d.bits + 7) // 8
    if need > MAX_VALUE_BYTES or not count:
        return None
    if t.HasField("raw_data"):
        raw = t.raw_data
        if len(raw) != need:
            return None
        nonzero = bool(raw.strip(b"\0"))
    else:
        if d.bits == 64 or d.proto == onnx.TensorProto.UINT32:  # (int64_data / uint64_data)
            return None
        data = t.int32_data
        if len(data) != (need if d.bits == 4 else count):
            return None
        mask = (1 << max(d.bits, 8)) - 1  # (a 4-bit pair is a byte)
        nonzero = any(data) and any(v & mask for v in data)
    if not nonzero:
        return True
    return False if d.bits > 4 or count % 2 == 0 else None  # (an odd count of nibbles: a padding one)


def x_shape(f) -> tuple | None:
    return f.in_shape(0)


def element_count(shape: tuple | None) -> int | None:
    if shape is None or any(d is None for d in shape):
        return None
    n = 1
    for d in shape:
        n *= d
    return n


def blocked_dim(f) -> int | None:
    """The size of the blocked dimension (None: not blocked or unknown)."""
    if f.granularity != schema.BLOCKED:
        return None
    shape = x_shape(f)
    axis = f.normalized_axis()
    if shape is None or axis is None:
        return None
    return shape[axis]


def blocked_scale_misfit(f, broadcast: bool = False) -> str | None:
    """How a blocked node's scale shape differs from what a kernel reads: x's shape with
    ceil(Di / block_size) on the axis (``broadcast``: a scale dimension of 1 off the axis is
    read as repeated). None when it fits or a shape is unknown."""
    xs, ss, axis, b = x_shape(f), f.scale_shape, f.normalized_axis(), f.block_size
    if f.granularity != schema.BLOCKED or xs is None or ss is None or axis is None or b <= 0:
        return None
    if len(xs) != len(ss):
        return f"the scale has rank {len(ss)}, x {len(xs)}"
    for j, (want, s) in enumerate(zip(semantics.blocked_scale_shape(xs, axis, b), ss, strict=True)):
        if want is None or s is None:
            continue
        if s != want and not (broadcast and j != axis and s == 1):
            return f"the scale has {s} along axis {j}, where the kernel reads {want}"
    return None


def is_integer(type_name: str | None) -> bool:
    d = dtypes.BY_NAME.get(type_name or "")
    return d is not None and d.kind == "int"


def is_float8(type_name: str | None) -> bool:
    return type_name in dtypes.SATURATE_APPLIES


def bits(type_name: str | None) -> int | None:
    d = dtypes.BY_NAME.get(type_name or "")
    return None if d is None else d.bits


def fmt(types) -> str:
    return ", ".join(sorted(types))
