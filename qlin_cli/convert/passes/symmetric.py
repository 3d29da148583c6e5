"""`--to-symmetric`: every asymmetric 8-bit Q/DQ tensor becomes int8 with zero point 0.

TensorRT reads int8 only and wants zero points of 0 ("The zero_point must only contain
zero-valued coefficients if set": QT202, QT306); onnxruntime's quantizer writes uint8
activations with a zero point fitted to each tensor's range. `--to-int8` moves such a
tensor to int8 exactly (zero point z - 128), which is enough only where z was 128.

The pages fix what each side computes. QuantizeLinear: "y = saturate((x / y_scale) +
y_zero_point)"; DequantizeLinear: "y = (x - x_zero_point) * x_scale". A tensor with scale
s and zero point z holds s * (q - z) for q in [lo, hi] (its type's range). With zero point
0 and int8 codes it holds s' * q for q in [-128, 127]; the smallest s' that loses none of
the source's range (no new saturation) is

    s' = s * max((z - lo) / 128, (hi - z) / 127)

per scale element (per channel where the tensor is per-axis). The codes round on a grid
s' / s times as wide, so the values differ: by at most (s + s') / 2 within the range, about
1 to 1.5 steps of s. This is not a rewrite the spec makes exact, and it is never called
proven: each tensor is measured (qlin's evaluator and onnx.reference, on every code
boundary and rounding tie of both grids, the ends of the range and random values, ``_probe``),
the bound in steps of the source's scale goes into the report and the JSON, and the
tensor is written only within ``--tolerance`` (QC403 otherwise).

Constant weights read by DequantizeLinear nodes only move too: codes w - z and zero point
0, the same scale, when every w - z fits int8 (exact, proven on every weight); otherwise
a scale wide enough for the largest |w - z| and each code rounded, measured on every weight.

A tensor moves as a whole: the output of an ai.onnx QuantizeLinear of one scale whose every
reader is an ai.onnx DequantizeLinear with the same scale and zero point, or an op that only
passes its codes on (``PASS_ON``: MaxPool, Reshape, Flatten ...) whose readers are such
nodes in turn (none a graph output); or a constant that only such DequantizeLinear nodes read.
Blocked tensors, zero points computed at run time and other types are left as they are.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import ml_dtypes
import numpy as np
import onnx
from onnx import TensorProto, numpy_helper

from ... import schema
from ..entries import by_graph, op_label, readers_within, refused, where
from ..formats.to_qoperator import is_op
from ..sites import constants, readers_anywhere
from ..state import Context, Entry, PassResult, Rewrite
from .symmetric_measure import (
    activation_bound,
    clip_bounds,
    guard,
    range_of,
    scale_for,
    weights_moved,
    zero_shape,
)
from .unread import drop_unread

# ops whose output codes are some of their input's codes, moved or picked (MaxPool the largest:
# the new codes keep the order of the old): int8 codes in give the new codes of the same values
# out. MaxPool reads int8 and uint8 from ai.onnx 12 on, as it must to read the source's.
PASS_ON = frozenset({"MaxPool", "Reshape", "Flatten", "Transpose", "Squeeze", "Unsqueeze", "Identity",
                     "Slice", "Split", "Gather", "Expand", "Tile", "DepthToSpace", "SpaceToDepth"})
# (and Resize when it picks the nearest code, Pad: ``_passes_on``)


class PlanSymmetric:
    name = "symmetric"
    requires = ("sites", "names", "shift planned")
    ensures = ("symmetric planned",)

    def __call__(self, ctx: Context) -> PassResult:
        result = PassResult()
        if not ctx.opts.to_symmetric:
            return result
        anywhere = readers_anywhere(ctx.bodies)
        mine = len(ctx.rewrites)  # this pass's rewrites start here
        for sites in by_graph(ctx.sites):
            _plan_graph(ctx, sites, anywhere, result)
        # the old scales, zero points and weights that only moved nodes read, and not as moved
        drop_unread(ctx, ctx.rewrites[mine:])
        return result


def _plan_graph(ctx: Context, sites: list, anywhere: dict, result: PassResult) -> None:
    owner = sites[0].owner
    readers = readers_within(sites, anywhere)
    outside = {o.name for o in owner.output} | {i.name for i in owner.input}
    inits = {t.name for t in owner.initializer}
    seen: set = set()  # the constants looked at
    for s in sites:
        if (id(owner), s.index) in ctx.reformatted:
            continue
        if is_op(s.node, "QuantizeLinear"):
            name, value = s.node.output[0], None
        elif s.node.input and s.node.input[0] in inits and s.node.input[0] not in seen and (
                is_op(s.node, "DequantizeLinear") or s.node.op_type in PASS_ON):
            name = s.node.input[0]  # a constant: weights, or a table a Gather reads
            seen.add(name)
            value = constants(s, ctx.base_dir, True)(name)
            if value is None:
                continue  # a default the caller may feed
        else:
            continue
        found = _family(name, readers, outside, True)
        if found is None or any((id(owner), r.index) in ctx.reformatted for r in found[0]):
            continue
        group, through = found
        moved = _move(ctx, s if value is None else None, group, name, value, result, through)
        if moved:
            for r in through:  # their codes are a selection of the QuantizeLinear's: now int8
                for o in r.node.output:
                    if o:
                        ctx.retyped[(id(owner), o)] = TensorProto.INT8


def _family(name: str, readers: dict, outside: set, follow: bool) -> tuple[list, list] | None:
    """(the DequantizeLinear nodes that read the codes of ``name``, the nodes between that
    pass them on: ``PASS_ON``, where ``follow``), None when another node reads them, or
    when they leave the graph."""
    dqs, through, todo = [], [], [name]
    while todo:
        value = todo.pop()
        group = readers.get(value)
        if value in outside or not group:
            return None
        for r in group:
            n = r.node
            if is_op(n, "DequantizeLinear") and n.input[0] == value and value not in n.input[1:]:
                dqs.append(r)
            elif follow and _passes_on(n) and n.input[0] == value and value not in n.input[1:]:
                through.append(r)
                todo += [o for o in n.output if o]
            else:
                return None
    return (dqs, through) if dqs else None


def _passes_on(n) -> bool:
    """Whether an op passes codes on (``PASS_ON``; a Resize that picks the nearest; a Pad,
    whose constant pad value ``_move`` holds to the zero point). MaxPool's Indices output is
    left out: a tie the new codes make may pick another index."""
    if not _ai_onnx(n):
        return False
    attrs = {a.name: a for a in n.attribute}
    mode = attrs["mode"].s if "mode" in attrs else None
    if n.op_type == "Resize":
        return mode in (None, b"nearest")
    if n.op_type == "Pad":
        return mode not in (None, b"constant") or (len(n.input) > 2 and bool(n.input[2]))
    return n.op_type in PASS_ON and not (n.op_type == "MaxPool" and len(n.output) > 1)


def _pad_value(n) -> bool:
    """A Pad in constant mode whose pad value is an input."""
    mode = next((a.s for a in n.attribute if a.name == "mode"), b"constant")
    return n.op_type == "Pad" and mode == b"constant" and len(n.input) > 2 and bool(n.input[2])


def _ai_onnx(node) -> bool:
    return schema.normalize_domain(node.domain) == schema.AI_ONNX


def _params(site, const, absent: np.dtype) -> tuple | None:
    """(scale, zero point, axis) of a Q/DQ node as constants (an absent zero point: 0 of type
    ``absent``), None when not all known, the tensor is blocked, or its type is not 8-bit."""
    node = site.node
    attrs = {a.name: a for a in node.attribute}
    if "block_size" in attrs and attrs["block_size"].i:
        return None
    scale = const(node.input[1]) if len(node.input) > 1 and node.input[1] else None
    zp_name = node.input[2] if len(node.input) > 2 else ""
    zp = const(zp_name) if zp_name else np.zeros((), absent)
    if scale is None or zp is None or range_of(np.asarray(zp).dtype) is None:
        return None
    if "output_dtype" in attrs and not zp_name and attrs["output_dtype"].i not in (0, TensorProto.UINT8):
        return None  # no zero point: the type is the attribute's
    scale = np.asarray(scale)
    if scale.dtype.kind != "f":
        return None
    return scale, np.asarray(zp), attrs["axis"].i if "axis" in attrs else 1


def _same(a: tuple, b: tuple) -> bool:
    return (a[0].dtype == b[0].dtype and np.array_equal(a[0], b[0]) and a[1].dtype == b[1].dtype
            and np.array_equal(a[1], b[1]) and (a[0].ndim == 0 or a[2] == b[2]))


def _move(ctx: Context, q, dqs: list, name: str, value, result: PassResult, through: list) -> list:
    """Plan the move of tensor ``name`` (written by ``q``, or the constant ``value``; its codes
    passed on by ``through`` to some of ``dqs``); the sites planned."""
    nodes = ([q] if q else []) + dqs
    const = constants(nodes[0], ctx.base_dir, True)  # (a default the caller may feed is not moved)
    params = _checked(nodes, value, through, const)
    if params is None:
        return []
    scale, zp, axis = params
    plan = _planned(ctx, name, value, q, scale, zp, axis)
    m = plan.measured
    if m.steps > ctx.opts.tolerance:
        result.refusals.append(refused(nodes[0], "QC403", (
            f"requantizing '{name}' with zero point 0 differs by up to {m.steps} step"
            f"{'s' if m.steps > 1 else ''} of its scale on {m.differ:,} of {m.outputs:,} measured "
            f"values ({', '.join(m.engines)}); --tolerance {m.steps} allows it")))
        return []
    plan.scale_name = scale_name_of(ctx, name, scale, plan.new_scale, nodes[0])
    plan.zname = ctx.namer(f"{name}_zero_point_0")
    plan.inits.append(numpy_helper.from_array(np.zeros(zero_shape(scale, zp), np.int8), plan.zname))
    if plan.scale_name != nodes[0].node.input[1]:
        plan.inits.append(numpy_helper.from_array(plan.new_scale, plan.scale_name))
    bounds = clip_bounds(scale, zp, plan.new_scale, *range_of(zp.dtype))
    for k, site in enumerate(nodes):
        _rewrite(ctx, site, plan, name, bounds if site is q else None, k == 0)
    moved = [r for r in through if _rewrite_through(ctx, r, plan, name)]
    if q is not None:
        ctx.retyped[(id(q.owner), name)] = TensorProto.INT8
    return nodes + moved


def _checked(nodes: list, value, through: list, const) -> tuple | None:
    """(scale, zero point, axis) the nodes share, None when the tensor cannot move: not 8-bit,
    symmetric int8 already, per-axis activations (no one guard keeps their saturation), a
    scale with an element not finite or zero (no range to keep: QL501's error, which
    `qlin check` reports and which stops the conversion) or too large to widen in its type, or
    a Pad whose pad value is not the zero point (the value 0, which moves with it)."""
    if value is not None and range_of(np.asarray(value).dtype) is None:
        return None  # (an int32 bias, say)
    absent = np.dtype(np.uint8) if value is None else np.asarray(value).dtype  # a missing zero point's type
    params = [_params(s, const, absent) for s in nodes]
    if any(p is None for p in params) or not all(_same(params[0], p) for p in params[1:]):
        return None
    scale, zp, _ = params[0]
    if (zp.dtype == np.int8 and not zp.any()) or (value is None and scale.size != 1):
        return None
    if not (np.all(np.isfinite(scale)) and np.all(np.asarray(scale) != 0)):
        return None
    if not np.all(np.abs(scale.astype(np.float64)) * 256 < float(ml_dtypes.finfo(scale.dtype).max)):
        return None  # (a scale that cannot widen in its type: the new one, at most ~2x, would overflow)
    for r in through:
        v = const(r.node.input[2]) if _pad_value(r.node) else zp
        if v is None or np.asarray(v).dtype != zp.dtype or not np.array_equal(np.asarray(v).reshape(-1),
                                                                                zp.reshape(-1)[:1]):
            return None
    return params[0]


@dataclass
class _Plan:
    new_scale: np.ndarray
    measured: object  # formats.measure.Measured
    verified: bool  # exact (weights that fit int8): proven on every weight
    change: str
    new_value: str | None  # the constant's new codes
    inits: list = field(default_factory=list)
    scale_name: str = ""
    zname: str = ""


def _planned(ctx: Context, name: str, value, q, scale, zp, axis: int) -> _Plan:
    lo, hi = range_of(zp.dtype)
    if value is None:
        new_scale = scale_for(scale, zp, lo, hi)
        change = (f"{zp.dtype} zero point {_zero_points(zp)} -> int8 zero point 0, scale x"
                  f"{_ratio(scale, new_scale)} ('{name}')")
        return _Plan(new_scale, activation_bound(scale, zp, new_scale, _opset(q)), False, change, None)
    new_scale, codes, measured = weights_moved(np.asarray(value), scale, zp, axis)
    verified = measured.steps == 0
    change = (f"{zp.dtype} weights with zero point {_zero_points(zp)} -> int8 codes with zero point 0"
              + ("" if verified else f", scale x{_ratio(scale, new_scale)}") + f" ('{name}')")
    plan = _Plan(new_scale, measured, verified, change, ctx.namer(f"{name}_symmetric"))
    plan.inits.append(numpy_helper.from_array(codes, plan.new_value))
    return plan


def _rewrite(ctx: Context, site, plan: _Plan, name: str, bounds, first: bool) -> None:
    """A Q/DQ node of the tensor with the new scale and zero point (a QuantizeLinear: guarded
    within ``bounds``); ``first`` carries the new initializers."""
    n = onnx.NodeProto()
    n.CopyFrom(site.node)
    while len(n.input) < 3:
        n.input.append("")
    n.input[1], n.input[2] = plan.scale_name, plan.zname
    if plan.new_value is not None and n.input[0] == name:
        n.input[0] = plan.new_value
    kept = [a for a in n.attribute if a.name != "output_dtype"]  # the zero point gives the type
    del n.attribute[:]
    n.attribute.extend(kept)
    added = list(plan.inits) if first else []
    before = _guard_before(ctx, site, n, bounds, added) if bounds is not None else []
    m = plan.measured
    notes = [plan.change, f"measured: {m.text()}" if plan.verified else f"measured, not proven: {m.text()}"]
    if before:
        notes.append(f"{' and '.join(b.op_type for b in before)} before it keeps the source's saturation")
    entry = Entry(where(site), op_label(site), "converted", notes, verified=plan.verified,
                  measured=None if plan.verified else m)
    ctx.rewrites.append(Rewrite(site, before + [n], added, entry))
    ctx.reformatted.add((id(site.owner), site.index))


def _rewrite_through(ctx: Context, r, plan: _Plan, name: str) -> bool:
    """A node between reading the constant itself (then the new codes) or padding with the
    zero point (then the new one); False for the others, left as they are."""
    direct, pads = plan.new_value is not None and r.node.input[0] == name, _pad_value(r.node)
    if not (direct or pads):
        return False
    n = onnx.NodeProto()
    n.CopyFrom(r.node)
    if direct:
        n.input[0] = plan.new_value
    if pads:
        n.input[2] = plan.zname
    why = (f"reads the int8 codes of '{name}' ('{plan.new_value}')" if direct else
           f"pads with the new zero point of '{name}' ('{plan.zname}')")
    ctx.rewrites.append(Rewrite(r, [n], [], Entry(where(r), op_label(r), "converted", [why],
                                                  verified=plan.verified)))
    ctx.reformatted.add((id(r.owner), r.index))
    return True


def _guard_before(ctx: Context, site, q: onnx.NodeProto, bounds: tuple, added: list) -> list:
    """The guard (symmetric_measure.guard) of the QuantizeLinear ``q``'s input to ``bounds``,
    ``q`` then reading it; nothing where neither bound is needed."""
    if bounds[0] is None and bounds[1] is None:
        return []
    x = q.input[0]
    out = ctx.namer(f"{x}_in_range")
    names = (ctx.namer(f"{x}_low"), ctx.namer(f"{x}_high"))
    nodes = guard(x, out, bounds, names)
    for name, value in zip(names, bounds, strict=True):
        if value is not None and any(name in n.input for n in nodes):
            added.append(numpy_helper.from_array(value, name))
    for k, n in enumerate(nodes):
        n.name = ctx.namer(f"{q.name or 'QuantizeLinear'}_range_{n.op_type.lower()}")
        if n.output[0] != out:
            n.output[0] = ctx.namer(n.output[0])
            nodes[k + 1].input[0] = n.output[0]
    q.input[0] = out
    return nodes


def scale_name_of(ctx: Context, name: str, scale, new_scale, site) -> str:
    """The scale's own name when it keeps its values (weights that fit int8), else a new one."""
    if new_scale.dtype == scale.dtype and np.array_equal(new_scale, scale):
        return site.node.input[1]
    return ctx.namer(f"{name}_scale_symmetric")


def _opset(site) -> int:
    return schema.opset_of(site.scope.opsets, site.node.domain) or 10


def _zero_points(zp: np.ndarray) -> str:
    flat = zp.reshape(-1)
    return str(int(flat[0])) if flat.size == 1 else f"{int(flat.min())}..{int(flat.max())}"


def _ratio(scale, new_scale) -> str:
    r = np.asarray(new_scale, np.float64).reshape(-1) / np.asarray(scale, np.float64).reshape(-1)
    lo, hi = float(r.min()), float(r.max())
    return f"{lo:.3g}" if math.isclose(lo, hi, rel_tol=1e-3) else f"{lo:.3g}..{hi:.3g}"


__all__ = ["PlanSymmetric"]
