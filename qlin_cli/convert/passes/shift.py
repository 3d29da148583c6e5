"""`--to-int8`: uint8 Q/DQ tensors become int8 with every zero point moved down by 128.

QuantizeLinear's page: "y = saturate((x / y_scale) + y_zero_point)", saturating to
[0, 255] for uint8 and to [-128, 127] for int8; DequantizeLinear: "y = (x - x_zero_point) *
x_scale". With the zero point z - 128, the int8 code of every x is the uint8 code minus 128
(the bounds move with it), and every DequantizeLinear computes the same values: the rewrite
is exact, and proven on probe inputs with qlin's evaluator (codes 128 apart, dequantized
values bit for bit). TensorRT reads int8 only and wants zero points of 0 (its docs; QT202,
QT306): a uint8 tensor with zero point 128 becomes int8 with zero point 0.

A tensor moves only as a whole: the uint8 output of an ai.onnx QuantizeLinear whose every
reader is an ai.onnx DequantizeLinear (and which is no graph output), or a uint8 constant
that only ai.onnx DequantizeLinear nodes read; its declared type moves with it.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper

from ... import schema
from ..entries import by_graph, op_label, readers_within, where
from ..formats.to_qoperator import is_op
from ..sites import constants, readers_anywhere
from ..state import Context, Entry, PassResult, Rewrite
from .unread import drop_unread


class PlanShift:
    name = "shift"
    requires = ("sites", "names")
    ensures = ("shift planned",)

    def __call__(self, ctx: Context) -> PassResult:
        result = PassResult()
        if not ctx.opts.to_int8:
            return result
        anywhere = readers_anywhere(ctx.bodies)
        mine = len(ctx.rewrites)  # this pass's rewrites start here
        for sites in by_graph(ctx.sites):
            _plan_graph(ctx, sites, anywhere)
        # the uint8 values and zero points that only shifted nodes read, and not as shifted
        drop_unread(ctx, ctx.rewrites[mine:])
        return result


def _linear(site, op: str) -> bool:
    return is_op(site.node, op)


def _plan_graph(ctx: Context, sites: list, anywhere: dict) -> None:
    """Only values every reader of which is in this graph move (a subgraph node may read
    a value of the graph around it: ``anywhere`` counts the readers of the whole model)."""
    owner = sites[0].owner
    readers = readers_within(sites, anywhere)
    outputs = {o.name for o in owner.output} | {i.name for i in owner.input}
    for s in sites:
        if (id(owner), s.index) in ctx.reformatted:
            continue
        if _linear(s, "QuantizeLinear"):
            name = s.node.output[0]
            group = readers.get(name, [])
            if name in outputs or not group or not all(_linear(r, "DequantizeLinear") for r in group):
                continue
            _shift(ctx, s, group, name, None)
    inits = {t.name for t in owner.initializer}
    for s in sites:  # uint8 constants read by DequantizeLinear only
        if _linear(s, "DequantizeLinear") and s.node.input[0] in inits and s.node.input[0] not in outputs \
                and (id(owner), s.index) not in ctx.reformatted:
            group = readers.get(s.node.input[0], [])
            if group and all(_linear(r, "DequantizeLinear") for r in group):
                _shift(ctx, None, group, s.node.input[0], constants(s, ctx.base_dir, True)(s.node.input[0]))


def _shift(ctx: Context, q, dqs: list, name: str, value) -> None:
    """Plan the move of tensor ``name`` (written by ``q``, or the constant ``value``)."""
    first = q or dqs[0]
    const = constants(first, ctx.base_dir)  # (the scales: probe values of the proof alone)
    fixed = constants(first, ctx.base_dir, True)  # (a zero point the caller may feed is not moved)
    nodes = ([q] if q else []) + dqs
    zps = []
    for s in nodes:
        zp = s.node.input[2] if len(s.node.input) > 2 else ""
        v = fixed(zp) if zp else np.zeros((), np.uint8)
        if v is None or np.asarray(v).dtype != np.uint8:
            return  # not uint8, or a zero point computed at run time
        zps.append(np.asarray(v))
    if value is not None and np.asarray(value).dtype != np.uint8:
        return
    inits: list = []
    new_value = None
    if value is not None:
        new_value = ctx.name_once((id(first.owner), name, "int8"), f"{name}_int8")
        inits.append(numpy_helper.from_array((np.asarray(value).astype(np.int16) - 128).astype(np.int8),
                                             new_value))
    planned = []
    for s, zp in zip(nodes, zps, strict=True):
        zname = ctx.name_once((id(s.owner), s.index, "int8 zero point"),
                              f"{s.node.name or s.node.op_type}_int8_zero_point")
        zinit = numpy_helper.from_array((zp.astype(np.int16) - 128).astype(np.int8), zname)
        n = onnx.NodeProto()
        n.CopyFrom(s.node)
        while len(n.input) < 3:
            n.input.append("")
        n.input[2] = zname
        if new_value is not None:
            n.input[0] = new_value
        why = _proof(s, n, [zinit] + inits, const, q is not None and s is q)
        if why is not None:
            return  # not exact on a probe: the tensor stays uint8
        planned.append((s, n, zinit))
    for k, (s, n, zinit) in enumerate(planned):
        entry = Entry(where(s), op_label(s), "converted",
                      [f"uint8 -> int8, zero point moved down by 128 ('{name}')"], verified=True)
        ctx.rewrites.append(Rewrite(s, [n], [zinit] + (inits if k == 0 else []), entry))
        ctx.reformatted.add((id(s.owner), s.index))
    if q is not None:
        ctx.retyped[(id(first.owner), name)] = TensorProto.INT8


def _proof(s, after: onnx.NodeProto, added: list, const, quantize: bool) -> str | None:
    """The node before and after on probe inputs, with qlin's evaluator: a QuantizeLinear's
    codes exactly 128 apart, a DequantizeLinear's values bit for bit."""
    from ...evaluator import EvaluationError, run_node  # (its import only where a pass proves)

    opset = schema.opset_of(s.scope.opsets, s.node.domain) or 10
    extra = {t.name: numpy_helper.to_array(t) for t in added}

    def inputs(node, x):
        return [x] + [extra.get(n, const(n)) if n else None for n in node.input[1:]]

    try:
        scale = np.asarray(const(s.node.input[1]), np.float32)
        if quantize:
            steps = np.concatenate([np.arange(-300, 301, 0.5), [1e30, -1e30, 0.0]]).astype(np.float32)
            shape = [len(steps)] + [1] * max(scale.ndim, 0)
            x = (steps.reshape(shape) * np.max(np.abs(scale))).astype(np.float32)
            if scale.ndim:
                x = np.broadcast_to(x, (len(steps), scale.size)).copy()
            a, b = run_node(s.node, opset, inputs(s.node, x)), run_node(after, opset, inputs(after, x))
            same = np.array_equal(a.astype(np.int16) - 128, b.astype(np.int16))
        else:
            codes = np.arange(256, dtype=np.uint8)
            x = codes.reshape(-1, *([1] if scale.ndim else [])) if scale.ndim else codes
            if scale.ndim:
                x = np.broadcast_to(x, (256, scale.size)).copy()
            a = run_node(s.node, opset, inputs(s.node, x))
            b = run_node(after, opset, inputs(after, (x.astype(np.int16) - 128).astype(np.int8)))
            same = a.tobytes() == b.tobytes()
    except (EvaluationError, ValueError, TypeError) as e:
        return str(e)
    return None if same else "differs on a probe"
