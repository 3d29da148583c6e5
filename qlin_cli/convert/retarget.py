"""Rewrite one Q/DQ node's facts for a target schema, or say why it cannot be.

Every version step and every domain crossing ends here: the target schema (read
from qlin_cli.schema) decides which types, granularities and attributes it has;
``retarget`` drops an attribute only where dropping it leaves the result
unchanged, turns ``output_dtype`` into an explicit zero point where the target
lacks it, and writes ``axis`` explicitly wherever the defaults differ.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import schema
from ..schema import BLOCKED, MICROSOFT, PER_TENSOR, OpSpec, dtypes
from ..schema.ops import DEFAULT_QUANT_TYPE
from .qnode import NewZeroPoint, QNode


@dataclass
class Refusal:
    reason: str
    ways_out: tuple[str, ...] = ()


def _type_ok(spec: OpSpec, key_param, type_name: str | None, source_allowed) -> str | None:
    allowed = spec.allowed(key_param)
    if type_name is None:
        # Unknown type: fine only if every type the source allows, the target allows.
        if source_allowed is not None and source_allowed <= allowed:
            return None
        return f"the type of {key_param.name} is unknown (add value_info or run shape inference)"
    if type_name not in allowed:
        return f"{type_name} {key_param.name} is not allowed by {_name(spec)}"
    return None


def _name(spec: OpSpec) -> str:
    return f"{spec.domain_name} {spec.op_type}-{spec.since}"


def check_types(q: QNode, target: OpSpec) -> list[str]:
    src = q.spec
    why: list[str] = []
    x_p, s_p = target.inputs[0], target.inputs[1]
    sx_p, ss_p = src.inputs[0], src.inputs[1]
    if q.kind == "quantize":
        pairs = [(x_p, q.x_type, src.allowed(sx_p)), (s_p, q.scale_type, src.allowed(ss_p)),
                 (target.outputs[0], q.q_type, src.quantized_types)]
    else:
        pairs = [(x_p, q.q_type, src.allowed(sx_p)), (s_p, q.scale_type, src.allowed(ss_p))]
    for param, t, source_allowed in pairs:
        r = _type_ok(target, param, t, source_allowed)
        if r:
            why.append(r)
    if q.kind == "quantize" and s_p.types == x_p.types and q.x_type != q.scale_type:
        if q.x_type is not None and q.scale_type is not None:
            why.append(f"{_name(target)} needs x and y_scale of one type (x is {q.x_type}, "
                       f"y_scale is {q.scale_type})")
    if q.kind == "dequantize":
        out_p = target.outputs[0]
        if out_p.types == s_p.types:
            if q.out_type is not None and q.scale_type is not None and q.out_type != q.scale_type:
                why.append(f"{_name(target)} outputs the scale's type {q.scale_type}, "
                           f"not {q.out_type}")
        elif q.out_type is not None and q.out_type not in target.allowed(out_p):
            why.append(f"{q.out_type} output is not allowed by {_name(target)}")
    return why


def retarget(q: QNode, target: OpSpec) -> QNode | Refusal:
    """``q`` as a node of schema ``target``, or a Refusal naming every reason."""
    why = check_types(q, target)
    gran = q.granularity
    if gran is None:
        if not (q.spec.granularities <= target.granularities) or _axis_presence_matters(q, target):
            why.append("the scale's shape is unknown, so its granularity cannot be told")
    elif gran not in target.granularities:
        why.append(f"{gran} quantization is not available in {_name(target)}")
    if why:
        return Refusal("; ".join(why))

    new = q.copy()
    new.spec = target
    attrs = q.attrs
    out: dict[str, int] = {}
    changes: list[str] = []
    crossing = target.domain != q.spec.domain

    # unknown attributes travel as they are (the checker then judges them)
    for name, value in attrs.items():
        if name not in ("axis", "saturate", "block_size", "output_dtype", "precision"):
            out[name] = value
    for name in q.refs:
        if name not in target.attributes:
            return Refusal(f"attribute {name} refers to a function attribute and "
                           f"{_name(target)} has no {name}")

    # axis
    axis = q.axis_in_force()
    if gran in (schema.PER_AXIS, BLOCKED):
        if "axis" not in target.attributes:
            return Refusal(f"{gran} quantization needs axis, which {_name(target)} lacks")
        if axis is None:
            return Refusal("per-axis scale without an axis")
        if "axis" in attrs or target.axis_default != axis or crossing:
            out["axis"] = axis
            if "axis" not in attrs:
                changes.append(f"axis={axis} written explicitly")
    elif gran == PER_TENSOR:
        if "axis" in attrs:
            if target.domain == MICROSOFT or "axis" not in target.attributes:
                changes.append("axis dropped (per-tensor)")
            else:
                out["axis"] = attrs["axis"]
    elif "axis" in attrs:  # unknown granularity, same granularities: keep as is
        if "axis" in target.attributes:
            out["axis"] = attrs["axis"]
        else:
            return Refusal("axis is set and the scale's shape is unknown")

    # saturate: only float8 outputs read it
    if "saturate" in attrs:
        if "saturate" in target.attributes:
            out["saturate"] = attrs["saturate"]
        elif q.q_type in dtypes.SATURATE_APPLIES and attrs["saturate"] != 1:
            return Refusal(f"saturate=0 on a {q.q_type} output needs {_name(target)} to have saturate")
        else:
            changes.append("saturate dropped (no effect on this type)")

    # block_size
    if "block_size" in attrs:
        if "block_size" in target.attributes:
            out["block_size"] = attrs["block_size"]
        elif attrs["block_size"] != 0:
            return Refusal(f"blocked quantization is not available in {_name(target)}")
        else:
            changes.append("block_size=0 dropped")

    # output_dtype
    od = attrs.get("output_dtype", 0)
    if od:
        if "output_dtype" in target.attributes:
            out["output_dtype"] = od
        elif q.kind == "quantize":
            if q.has_zero_point():
                changes.append("output_dtype dropped (the zero point carries the type)")
            elif q.q_type == DEFAULT_QUANT_TYPE:
                changes.append("output_dtype=uint8 dropped (the default)")
            elif q.scale_shape is None:
                return Refusal("output_dtype must become a zero point, but the scale's shape is unknown")
            else:
                new.new_zero_point = NewZeroPoint("", q.q_type, tuple(q.scale_shape))
                changes.append(f"output_dtype became an explicit {q.q_type} zero point of 0")
        else:
            if q.scale_type is not None and dtypes.name_of(od) == q.scale_type:
                changes.append("output_dtype dropped (equal to the scale's type)")
            else:
                return Refusal(f"output_dtype={dtypes.name_of(od)} differs from the scale's type "
                               f"{q.scale_type} and {_name(target)} has no output_dtype")

    # precision
    p = attrs.get("precision", 0)
    if "precision" in attrs:
        if "precision" in target.attributes:
            out["precision"] = p
        elif p == 0 or (q.scale_type is not None and dtypes.name_of(p) == q.scale_type):
            changes.append("precision dropped (equal to the scale's type: result unchanged)")
        else:
            return Refusal(f"precision={dtypes.name_of(p)} differs from the scale's type "
                           f"{q.scale_type} and {_name(target)} has no precision")

    new.attrs = out
    new.refs = {k: v for k, v in q.refs.items() if k in target.attributes}
    if crossing:
        changes.insert(0, f"{q.spec.domain_name} -> {target.domain_name}")
    new.changes = q.changes + changes
    return new


def _axis_presence_matters(q: QNode, target: OpSpec) -> bool:
    """com.microsoft reads per-tensor from an absent axis: the granularity must be known."""
    return (target.domain == MICROSOFT) != (q.spec.domain == MICROSOFT)
