"""Rewrite one Q/DQ node's facts for a target schema, or say why it cannot be.

Every version step and every domain crossing ends here. The target schema (read
from qlin_cli.schema) decides which types, granularities and attributes it has.
Types are judged by ``schema.semantics.validate`` plus what only a rewrite needs
(an unknown type must be allowed whatever it is; the quantized and output types
must stay what they were). Each attribute then has its own policy, registered in
``POLICIES`` by name: keep it, drop it where dropping leaves the result unchanged,
turn it into something the target has (``output_dtype`` -> an explicit zero point),
or refuse. ``axis`` is written explicitly wherever the defaults differ.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .. import schema
from ..schema import BLOCKED, DEFAULT_QUANT_TYPE, PER_AXIS, PER_TENSOR, OpSpec, dtypes, semantics
from .keeps import KNOWN_ATTRS
from .qnode import NewZeroPoint, QNode
from .refusal import Refusal


def _name(spec: OpSpec) -> str:
    return f"{spec.domain_name} {spec.op_type}-{spec.since}"


def _unknown(spec: OpSpec, param, source_allowed) -> str | None:
    """An unknown type is fine only if every type the source allows, the target allows."""
    if source_allowed is not None and source_allowed <= spec.allowed(param):
        return None
    return f"the type of {param.name} is unknown (add value_info or run shape inference)"


def check_types(q: QNode, target: OpSpec) -> list[str]:
    src = q.spec
    why = [f"{p.value} {p.subject} is not allowed by {_name(target)}" for p in q.facts.problems(target)
           if p.kind == semantics.INPUT_TYPE and p.index is not None and p.index < 2]
    x_p, s_p = target.inputs[0], target.inputs[1]
    known = [q.x_type if q.kind == "quantize" else q.q_type, q.scale_type]
    for i, (param, t) in enumerate(zip((x_p, s_p), known, strict=True)):
        if t is None:
            r = _unknown(target, param, src.allowed(src.inputs[i]))
            if r:
                why.append(r)
        elif q.facts.in_type(i) is None and t not in target.allowed(param):
            why.append(f"{t} {param.name} is not allowed by {_name(target)}")
    if q.kind == "quantize":
        if q.q_type is None:
            r = _unknown(target, target.outputs[0], src.quantized_types)
            if r:
                why.append(r)
        elif q.q_type not in target.quantized_types:
            why.append(f"{q.q_type} y is not allowed by {_name(target)}")
        if s_p.types == x_p.types and None not in (q.x_type, q.scale_type) and q.x_type != q.scale_type:
            why.append(f"{_name(target)} needs x and y_scale of one type (x is {q.x_type}, "
                       f"y_scale is {q.scale_type})")
    else:
        out_p = target.outputs[0]
        if out_p.types == s_p.types:
            if q.out_type is not None and q.scale_type is not None and q.out_type != q.scale_type:
                why.append(f"{_name(target)} outputs the scale's type {q.scale_type}, not {q.out_type}")
        elif q.out_type is not None and q.out_type not in target.allowed(out_p):
            why.append(f"{q.out_type} output is not allowed by {_name(target)}")
    return why


# ---- per-attribute policies ---------------------------------------------------------
@dataclass
class Step:
    """What one retarget is building: the source node, the target, the new attributes."""

    q: QNode
    target: OpSpec
    new: QNode
    out: dict[str, int]
    changes: list[str]

    @property
    def crossing(self) -> bool:
        return self.target.domain != self.q.spec.domain


Policy = Callable[[Step], "Refusal | None"]
POLICIES: dict[str, Policy] = {}


def policy(name: str):
    """Register the policy for one attribute (one per name; a later one replaces it)."""
    def register(fn: Policy) -> Policy:
        POLICIES[name] = fn
        return fn
    return register


@policy("axis")
def _axis(st: Step) -> Refusal | None:
    q, target, attrs = st.q, st.target, st.q.attrs
    gran = q.granularity
    if gran in (PER_AXIS, BLOCKED):
        if "axis" not in target.attributes:
            return Refusal(f"{gran} quantization needs axis, which {_name(target)} lacks")
        axis = q.axis_in_force()
        if axis is None:
            return Refusal("per-axis scale without an axis")
        if "axis" in attrs or semantics.axis_in_force(target, {}) != axis or st.crossing:
            st.out["axis"] = axis
            if "axis" not in attrs:
                st.changes.append(f"axis={axis} written explicitly")
    elif gran == PER_TENSOR:
        if "axis" in attrs:
            if target.axis_absent == schema.AXIS_ABSENT_PER_TENSOR or "axis" not in target.attributes:
                st.changes.append("axis dropped (per-tensor)")
            else:
                st.out["axis"] = attrs["axis"]
    elif "axis" in attrs:  # unknown granularity, same granularities: keep as is
        if "axis" not in target.attributes:
            return Refusal("axis is set and the scale's shape is unknown")
        st.out["axis"] = attrs["axis"]
    return None


@policy("saturate")
def _saturate(st: Step) -> Refusal | None:
    attrs = st.q.attrs
    if "saturate" not in attrs:
        return None
    if "saturate" in st.target.attributes:
        st.out["saturate"] = attrs["saturate"]
    elif st.q.q_type in dtypes.SATURATE_APPLIES and attrs["saturate"] != 1:
        return Refusal(f"saturate=0 on a {st.q.q_type} output needs {_name(st.target)} to have saturate")
    else:
        st.changes.append("saturate dropped (no effect on this type)")
    return None


@policy("block_size")
def _block_size(st: Step) -> Refusal | None:
    attrs = st.q.attrs
    if "block_size" not in attrs:
        return None
    if "block_size" in st.target.attributes:
        st.out["block_size"] = attrs["block_size"]
    elif attrs["block_size"] != 0:
        return Refusal(f"blocked quantization is not available in {_name(st.target)}")
    else:
        st.changes.append("block_size=0 dropped")
    return None


@policy("output_dtype")
def _output_dtype(st: Step) -> Refusal | None:
    q, target = st.q, st.target
    od = q.attrs.get("output_dtype", 0)
    if not od:
        return None
    if "output_dtype" in target.attributes:
        st.out["output_dtype"] = od
    elif q.kind == "quantize":
        if q.has_zero_point():
            st.changes.append("output_dtype dropped (the zero point carries the type)")
        elif q.q_type == DEFAULT_QUANT_TYPE:
            st.changes.append(f"output_dtype={DEFAULT_QUANT_TYPE} dropped (the default)")
        elif q.scale_shape is None:
            return Refusal("output_dtype must become a zero point, but the scale's shape is unknown")
        else:
            st.new.new_zero_point = NewZeroPoint("", q.q_type, tuple(q.scale_shape))
            st.changes.append(f"output_dtype became an explicit {q.q_type} zero point of 0")
    elif q.scale_type is not None and dtypes.name_of(od) == q.scale_type:
        st.changes.append("output_dtype dropped (equal to the scale's type)")
    else:
        return Refusal(f"output_dtype={dtypes.name_of(od)} differs from the scale's type "
                       f"{q.scale_type} and {_name(target)} has no output_dtype")
    return None


@policy("precision")
def _precision(st: Step) -> Refusal | None:
    q = st.q
    if "precision" not in q.attrs:
        return None
    p = q.attrs["precision"]
    if "precision" in st.target.attributes:
        st.out["precision"] = p
    elif p == 0 or (q.scale_type is not None and dtypes.name_of(p) == q.scale_type):
        st.changes.append("precision dropped (equal to the scale's type: result unchanged)")
    else:
        return Refusal(f"precision={dtypes.name_of(p)} differs from the scale's type "
                       f"{q.scale_type} and {_name(st.target)} has no precision")
    return None


def retarget(q: QNode, target: OpSpec) -> QNode | Refusal:
    """``q`` as a node of schema ``target``, or a Refusal naming every reason."""
    why = check_types(q, target)
    gran = q.granularity
    if gran is None:
        if not (q.spec.granularities <= target.granularities) or (
                (target.axis_absent == schema.AXIS_ABSENT_PER_TENSOR)
                != (q.spec.axis_absent == schema.AXIS_ABSENT_PER_TENSOR)):
            why.append("the scale's shape is unknown, so its granularity cannot be told")
    elif gran not in target.granularities:
        why.append(f"{gran} quantization is not available in {_name(target)}")
    if why:
        return Refusal("; ".join(why))
    for name in q.refs:
        if name not in target.attributes:
            return Refusal(f"attribute {name} refers to a function attribute and "
                           f"{_name(target)} has no {name}")
    new = q.copy()
    new.spec = target
    # attributes qlin does not know travel as they are (the checker then judges them)
    st = Step(q, target, new, {k: v for k, v in q.attrs.items() if k not in KNOWN_ATTRS}, [])
    for rule in POLICIES.values():  # in registration order: the order changes are reported in
        refused = rule(st)
        if refused is not None:
            return refused
    new.attrs = st.out
    new.refs = {k: v for k, v in q.refs.items() if k in target.attributes}
    if st.crossing:
        st.changes.insert(0, f"{q.spec.domain_name} -> {target.domain_name}")
    new.changes = q.changes + st.changes
    return new

