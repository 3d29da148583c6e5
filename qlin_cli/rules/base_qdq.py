"""The Q/DQ graph around a node, for the QDQ-format rules (QL6xx): which linear Q or DQ
produces a value, and whether two of them quantize with the same parameters."""

from __future__ import annotations

import numpy as np

from .. import schema
from ..model.graphs import node_named


def producer(view, body, name: str, family: str):
    """(index, facts) of the linear Q / DQ of ``family`` producing ``name`` in ``body``."""
    return view.of_family(body, family).get(name)


def of_family(view, body, family: str):
    """(index, facts) of every node of ``family`` in ``body``, in node order."""
    return view.of_family(body, family).values()


def fed_by(view, consumer_family: str, producer_family: str):
    """(body, index, facts, producer index, producer facts) for every node of
    ``consumer_family`` whose x is produced by a node of ``producer_family`` in its body."""
    for body in view.bodies:
        producers = view.of_family(body, producer_family)
        if not producers:
            continue
        for i, f in of_family(view, body, consumer_family):
            x = f.inputs[0] if f.inputs else ""  # present_at(0), without a call per node
            found = producers.get(x) if x else None
            if found is not None:
                yield (body, i, f, *found)


def label(f, index: int) -> str:
    """How a message names another node: 'name', or #index in its body."""
    return node_named(f.location.name, index)


def scale_of(f) -> np.ndarray | None:
    return f.value(f.scale_index) if f.present_at(f.scale_index) else None


def zero_point_of(f) -> np.ndarray | None:
    """The zero point's value (0 when absent), None when it is not known."""
    zi = f.zero_point_index
    if zi is None or not f.present_at(zi):
        return np.zeros((), np.int64)
    return f.value(zi)


def same_values(a: np.ndarray | None, b: np.ndarray | None) -> bool | None:
    """Equal values (a scalar equals a one-element tensor); None when either is unknown."""
    if a is None or b is None:
        return None
    a = np.asarray(a).astype(np.float64)
    b = np.asarray(b).astype(np.float64)
    if a.size == 1 and b.size == 1:
        return bool(a.reshape(-1)[0] == b.reshape(-1)[0] or (np.isnan(a).all() and np.isnan(b).all()))
    return a.shape == b.shape and bool(np.array_equal(a, b, equal_nan=True))


def same_input(f, g, i: int, j: int) -> bool:
    return f.present_at(i) and g.present_at(j) and f.inputs[i] == g.inputs[j]


def describe(v: np.ndarray | None) -> str:
    if v is None:
        return "unknown"
    a = np.asarray(v)
    if a.size == 1:
        x = a.reshape(-1)[0]
        return str(int(x)) if a.dtype.kind in "iu" else short_float(x)
    return f"{a.size} values"


def short_float(x) -> str:
    """The shortest text that reads back as the same value of its own float type."""
    if isinstance(x, np.floating) and x.dtype.itemsize <= 4:
        return np.format_float_positional(np.float32(x), unique=True, trim="-") if abs(float(x)) >= 1e-4 \
            or x == 0 else np.format_float_scientific(np.float32(x), unique=True, trim="-")
    return repr(float(x))


def layout(f, rank: int | None) -> tuple:
    """(granularity, axis, block size): how the parameters are laid out, the axis
    counted from the front when the rank is known."""
    g = f.granularity
    if g == schema.PER_TENSOR:
        return (g, None, 0)
    axis = f.axis
    if axis is not None and rank is not None and axis < 0:
        axis += rank
    return (g, axis, f.block_size)


def differences(q, d) -> list[str]:
    """How DequantizeLinear ``d`` dequantizes with other parameters than QuantizeLinear ``q``
    quantized with (empty: the same, or not known)."""
    if _same_tensors_and_layout(q, d):
        return []  # the usual pair: one scale and one zero point tensor, one layout
    found = []
    if not same_input(q, d, q.scale_index, d.scale_index):
        same = same_values(scale_of(q), scale_of(d))
        if same is False:
            found.append(f"scale {describe(scale_of(d))} where the quantize used "
                         f"{describe(scale_of(q))}")
    qz, dz = q.zero_point_index, d.zero_point_index
    if not same_input(q, d, qz, dz):
        same = same_values(zero_point_of(q), zero_point_of(d))
        if same is False:
            found.append(f"zero point {describe(zero_point_of(d))} where the quantize used "
                         f"{describe(zero_point_of(q))}")
    qt = q.in_type(qz) if q.present_at(qz) else q.quant_type
    dt = d.in_type(dz) if d.present_at(dz) else None
    if qt is not None and dt is not None and qt != dt:
        found.append(f"a {dt} zero point where the quantize made {qt}")
    rank = q.x_rank if q.x_rank is not None else d.x_rank  # one tensor: Q's output is DQ's input
    lq, ld = layout(q, rank), layout(d, rank)
    if None not in lq[:1] + ld[:1] and lq != ld and not _both_one(q, d):
        found.append(f"{_lay(ld)} where the quantize was {_lay(lq)}")
    return found


def _same_tensors_and_layout(q, d) -> bool:
    qi, di = q.inputs, d.inputs
    if len(qi) < 2 or len(di) < 2 or qi[1] != di[1] or (qi[2:3] or ("",)) != (di[2:3] or ("",)):
        return False
    return q.attr_items == d.attr_items or _layout_attrs(q) == _layout_attrs(d)


def _layout_attrs(f) -> tuple:
    return tuple((n, v) for n, t, v in f.attr_items if n in ("axis", "block_size"))


def _both_one(q, d) -> bool:
    return q.granularity == d.granularity == schema.PER_TENSOR


def _lay(lay) -> str:
    g, axis, block = lay
    if g == schema.PER_AXIS:
        return f"per-axis along axis {axis}"
    if g == schema.BLOCKED:
        return f"blocked along axis {axis} with block_size {block}"
    return str(g)
