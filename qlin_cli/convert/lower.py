"""``--lower``: a Q/DQ node no target op can express, as primitive ai.onnx ops.

quantize:   y = Cast(Where(IsNaN(c), lo, c)),  c = Clip(Round(x / S) + Z, lo, hi)
dequantize: y = (Cast(x, float) - Z) * S
S and Z are the node's scale and zero point expanded to constants that broadcast
against x (per-axis: a shape with C along the axis; blocked: every block's value
repeated). NaN goes to the type's lowest value, as qlin's evaluator and
onnxruntime do. Only float32 x, scales and outputs and integer types of at most
16 bits are lowered (their codes and bounds are exact in float32); every
lowering is then proved bit for bit by ``verify`` before it is kept.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import onnx
from onnx import TensorProto, defs, helper, numpy_helper

from ..schema import BLOCKED, PER_AXIS, PER_TENSOR, dtypes
from .qnode import QNode
from .refusal import Refusal


@dataclass
class Lowered:
    nodes: list[onnx.NodeProto]  # Constant nodes first, then the computation
    inits: list[onnx.TensorProto]  # the same constants, as initializers
    added: dict
    summary: str


def _schema_has_type(op: str, opset: int, constraint: str, type_name: str) -> bool:
    try:
        s = defs.get_schema(op, opset, "")
    except Exception:  # the op does not exist at this opset
        return False
    for tc in s.type_constraints:
        if tc.type_param_str == constraint:
            return f"tensor({type_name})" in tc.allowed_type_strs
    return False


def static_reason(q: QNode, opset: int) -> str | None:
    """Why this node cannot be lowered at ``opset`` (None: it can be tried)."""
    d = dtypes.BY_NAME.get(q.q_type or "")
    if d is None or d.kind != "int" or d.bits > 16:
        return f"only integer types of at most 16 bits are lowered, not {q.q_type}"
    if q.scale_type != "float":
        return "only float scales are lowered"
    if q.attrs.get("precision", 0) not in (0, TensorProto.FLOAT):
        return "precision other than float is not lowered"
    if q.kind == "quantize":
        if q.x_type != "float":
            return "only float x is lowered"
        if not _schema_has_type("Round", opset, "T", "float"):
            return f"Round does not exist at opset {opset}"
        if not _schema_has_type("Cast", opset, "T2", q.q_type):
            return f"Cast to {q.q_type} does not exist at opset {opset}"
    else:
        if q.out_type not in (None, "float"):
            return "only float outputs are lowered"
        if not _schema_has_type("Cast", opset, "T1", q.q_type):
            return f"Cast from {q.q_type} does not exist at opset {opset}"
    if q.granularity is None:
        return "the scale's shape is unknown"
    if q.granularity == PER_AXIS and q.x_rank is None:
        return "x's rank is unknown"
    if q.granularity in (PER_AXIS, BLOCKED):
        axis, rank = q.axis_in_force(), q.x_rank
        if axis is None:
            return "the node has no axis for its per-axis or blocked scale"
        if rank is not None and not -rank <= axis < rank:
            return f"axis {axis} is outside x's rank {rank}"
    if q.granularity == BLOCKED and (q.facts.in_shape(0) is None or
                                     any(not isinstance(v, int) or v <= 0 for v in q.facts.in_shape(0))):
        return "x's shape is not static"
    return None


def can_lower(q: QNode, opts) -> bool:
    return static_reason(q, opts.to_opset) is None and q.facts.value(q.facts.scale_index) is not None


MAX_EXPANDED = 1 << 24  # values of a blocked scale expanded to x's size (64 MiB of float32)


def _expand(value: np.ndarray, q: QNode) -> np.ndarray:
    v = np.asarray(value)
    if q.granularity == PER_TENSOR or v.ndim == 0:
        return v.reshape(())
    rank = q.x_rank
    axis = q.axis_in_force() % rank
    if q.granularity == PER_AXIS:
        shape = [1] * rank
        shape[axis] = v.shape[0]
        return v.reshape(shape)
    dim = q.facts.in_shape(0)[axis]
    expanded = v.size // max(v.shape[axis], 1) * dim
    if expanded > MAX_EXPANDED:
        raise ValueError(f"a blocked scale expanded for lowering would hold {expanded} values "
                         f"(at most {MAX_EXPANDED} are written)")
    return np.repeat(v, q.attrs["block_size"], axis=axis).take(range(dim), axis=axis)


def lower(q: QNode, node, opts, namer, values: dict) -> Lowered | Refusal:
    why = static_reason(q, opts.to_opset)
    if why:
        return Refusal(why)
    s_name = node.input[1]
    z_name = node.input[2] if q.facts.present_at(2) else ""
    if s_name not in values or (z_name and z_name not in values):
        return Refusal("the scale and zero point must be constants")
    made = _Made(node.name or node.output[0], namer)
    try:
        S = made.const("scale", _expand(values[s_name], q).astype(np.float32))
        Z = made.const("zero_point", _expand(values[z_name], q).astype(np.float32)) if z_name else ""
    except (ValueError, IndexError, TypeError) as e:  # a scale that does not fit x (qlin check QL4xx)
        return Refusal(f"the scale or zero point does not fit x ({str(e).splitlines()[0][:120]})")
    if q.kind == "quantize":
        ops = _quantize_ops(made, node.input[0], node.output[0], S, Z, dtypes.BY_NAME[q.q_type])
        summary = "lowered to Div, Round, Add, Clip, IsNaN, Where, Cast"
    else:
        ops = _dequantize_ops(made, node.input[0], node.output[0], S, Z)
        summary = "lowered to Cast, Sub, Mul"
    last = ops[-1]
    last.name = node.name
    last.doc_string = node.doc_string
    last.metadata_props.extend(node.metadata_props)
    for i, n in enumerate(ops[:-1]):
        n.name = namer(f"{made.base}_lowered_{i}")
    constants = []
    for t in made.consts:
        value = onnx.TensorProto()
        value.CopyFrom(t)
        value.name = ""
        constants.append(helper.make_node("Constant", [], [t.name], value=value))
    return Lowered(constants + ops, made.consts, {}, summary)


class _Made:
    """The names and constants one lowering adds, each name new in the model."""

    def __init__(self, base: str, namer):
        self.base, self.namer = base, namer
        self.consts: list[onnx.TensorProto] = []

    def const(self, tag: str, arr) -> str:
        name = self.namer(f"{self.base}_{tag}")
        self.consts.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def tmp(self, tag: str) -> str:
        return self.namer(f"{self.base}_{tag}")


def _quantize_ops(made: _Made, x: str, y: str, S: str, Z: str, d) -> list[onnx.NodeProto]:
    """y = Cast(Where(IsNaN(c), lo, c)), c = Clip(Round(x / S) + Z, lo, hi)."""
    lo = made.const("lo", np.float32(d.lo))
    hi = made.const("hi", np.float32(d.hi))
    div, rnd = made.tmp("div"), made.tmp("round")
    ops = [helper.make_node("Div", [x, S], [div]), helper.make_node("Round", [div], [rnd])]
    cur = rnd
    if Z:
        add = made.tmp("add")
        ops.append(helper.make_node("Add", [rnd, Z], [add]))
        cur = add
    clip, nan, safe = made.tmp("clip"), made.tmp("isnan"), made.tmp("safe")
    return ops + [helper.make_node("Clip", [cur, lo, hi], [clip]),
                  helper.make_node("IsNaN", [clip], [nan]),
                  helper.make_node("Where", [nan, lo, clip], [safe]),
                  helper.make_node("Cast", [safe], [y], to=d.proto)]


def _dequantize_ops(made: _Made, x: str, y: str, S: str, Z: str) -> list[onnx.NodeProto]:
    """y = (Cast(x) - Z) * S."""
    xf = made.tmp("float")
    ops = [helper.make_node("Cast", [x], [xf], to=TensorProto.FLOAT)]
    cur = xf
    if Z:
        sub = made.tmp("sub")
        ops.append(helper.make_node("Sub", [xf, Z], [sub]))
        cur = sub
    return ops + [helper.make_node("Mul", [cur, S], [y])]
