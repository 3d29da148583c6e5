"""What a node means under a schema, decided once for check, convert and the evaluator.

Every function takes the schema and the node's raw facts (explicit integer
attributes, input types, presence, the scale's shape), so the same node can be
read under the schema it claims or under a conversion target.

Decisions written here:

* A scalar scale, or a one-element 1-D scale without ``block_size``, is
  per-tensor in every domain (onnx's backend cases and every runtime read it so);
  check reports the one-element form as information (QL409).
* A domain whose ``axis`` has no default (com.microsoft) reads an absent axis as
  per-tensor; a longer 1-D scale there has no granularity at all (QL404).
* ``block_size > 0`` is blocked whatever the scale's shape (the shape rules then
  judge the scale).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from . import dtypes
from .ops import (
    AXIS_ABSENT_PER_TENSOR,
    BLOCKED,
    DEFAULT_QUANT_TYPE,
    PER_AXIS,
    PER_TENSOR,
    SCALE,
    ZERO_POINT,
    OpSpec,
)

Shape = tuple  # of int | None


def axis_in_force(spec: OpSpec, attrs: Mapping[str, int]) -> int | None:
    """The explicit axis, else the schema's default; None where an absent axis means
    per-tensor or the schema has no axis."""
    if "axis" in attrs:
        return attrs["axis"]
    if spec.axis_absent == AXIS_ABSENT_PER_TENSOR:
        return None
    return spec.attributes.get("axis")


def block_size(spec: OpSpec, attrs: Mapping[str, int]) -> int:
    return attrs.get("block_size", spec.attributes.get("block_size") or 0) or 0


def is_one_element(shape: Shape | None) -> bool:
    return shape is not None and len(shape) == 1 and shape[0] == 1


def granularity(spec: OpSpec, attrs: Mapping[str, int], scale_shape: Shape | None) -> str | None:
    """per-tensor, per-axis or blocked; None when the scale's shape is unknown or
    fits no granularity."""
    if block_size(spec, attrs) > 0:
        return BLOCKED
    absent_is_per_tensor = spec.axis_absent == AXIS_ABSENT_PER_TENSOR and "axis" not in attrs
    if scale_shape is None:
        return PER_TENSOR if absent_is_per_tensor else None
    if len(scale_shape) == 0 or is_one_element(scale_shape):
        return PER_TENSOR
    if len(scale_shape) == 1:
        return None if absent_is_per_tensor else PER_AXIS
    return None  # rank >= 2 without block_size


def normalized_axis(axis: int | None, rank: int | None) -> int | None:
    """The axis in [0, rank), or None when either is unknown or the axis is out of range."""
    if axis is None or rank is None:
        return None
    a = axis + rank if axis < 0 else axis
    return a if 0 <= a < rank else None


def resolve_types(spec: OpSpec, types: Sequence[str | None], present: Sequence[bool]) -> tuple:
    """Input types with the unknown ones filled in where the schema decides them: from
    an input bound to the same type variable, or the one type a parameter allows."""
    out = list(types) + [None] * (len(spec.inputs) - len(types))
    bound: dict[str, str] = {}
    for i, p in enumerate(spec.inputs):
        if i < len(out) and out[i] is not None:
            bound.setdefault(p.types, out[i])
    for i, p in enumerate(spec.inputs):
        if out[i] is None and (i < len(present) and present[i] or not p.optional):
            allowed = spec.allowed(p)
            out[i] = bound.get(p.types) or (next(iter(allowed)) if len(allowed) == 1 else None)
    return tuple(out)


def quantized_type(spec: OpSpec, attrs: Mapping[str, int], types: Sequence[str | None],
                   present: Sequence[bool]) -> str | None:
    """The quantized side's type: y of a quantize node (output_dtype, else the zero
    point's type, else uint8), x of a dequantize node."""
    if spec.kind == "dequantize":
        return types[0] if types else None
    od = attrs.get("output_dtype", 0) if "output_dtype" in spec.attributes else 0
    if od:
        return dtypes.name_of(od)
    zp = spec.role_index(ZERO_POINT)
    if zp is not None and zp < len(present) and present[zp]:
        return types[zp] if zp < len(types) else None
    return DEFAULT_QUANT_TYPE


def implied_out_type(spec: OpSpec, attrs: Mapping[str, int], types: Sequence[str | None],
                     present: Sequence[bool]) -> str | None:
    """The output type the schema implies: for quantize the quantized type; for
    dequantize ``output_dtype``, else the scale's type ("If output_dtype is not
    supplied then the output type is the same as x_scale"), or the one fixed type of
    versions without a choice."""
    if spec.kind == "quantize":
        return quantized_type(spec, attrs, types, present)
    od = attrs.get("output_dtype", 0) if "output_dtype" in spec.attributes else 0
    if od:
        return dtypes.name_of(od)
    out_types = spec.types[spec.outputs[0].types]
    if len(out_types) == 1:
        return next(iter(out_types))
    s = spec.role_index(SCALE)
    return types[s] if s is not None and s < len(types) else None


# ---- validation ------------------------------------------------------------------
ATTRIBUTE = "attribute"
INPUT_COUNT = "input-count"
INPUT_TYPE = "input-type"
SHARED_TYPE = "shared-type"
GRANULARITY = "granularity"
OUTPUT_TYPE = "output-type"
OUTPUT_DTYPE = "output-dtype"
PRECISION = "precision"


@dataclass(frozen=True)
class Problem:
    """One way a node breaks a schema: ``kind`` says which, ``text`` says it without
    naming the node (check, convert and the evaluator add that), ``subject`` is the
    attribute, parameter or granularity concerned and ``value`` the offending value."""

    kind: str
    text: str
    subject: str = ""
    value: str = ""
    index: int | None = None


def _fmt(types) -> str:
    return ", ".join(sorted(types))


def validate(facts, spec: OpSpec) -> list[Problem]:
    """Every way the node ``facts`` breaks ``spec``.

    ``facts`` needs ``attrs`` (explicit integer attributes), ``attr_names``,
    ``in_types``, ``present`` and ``in_shapes`` (a NodeFacts has them). Unknown
    types and shapes are not problems here.
    """
    found: list[Problem] = []
    attrs, types, present = facts.attrs, facts.in_types, facts.present
    for name in facts.attr_names:
        if name not in spec.attributes:
            found.append(Problem(ATTRIBUTE, f"attribute '{name}' is not defined by this version", name))
    n_in = len(present)
    if n_in > len(spec.inputs):
        found.append(Problem(INPUT_COUNT, f"{n_in} inputs given; it takes {spec.min_inputs} to "
                                          f"{len(spec.inputs)}", value=str(n_in)))
    for i, p in enumerate(spec.inputs):
        if not p.optional and not (i < n_in and present[i]):
            found.append(Problem(INPUT_COUNT, f"required input '{p.name}' (input {i}) is missing",
                                 p.name, index=i))
    seen: dict[str, tuple[int, str]] = {}
    for i, p in enumerate(spec.inputs):
        t = types[i] if i < len(types) else None
        if t is None:
            continue
        if t not in spec.allowed(p):
            found.append(Problem(INPUT_TYPE, f"input '{p.name}' is {t}, which this version does not "
                                             f"allow (allowed: {_fmt(spec.allowed(p))})", p.name, t, i))
        if p.types in seen and seen[p.types][1] != t:
            j, other = seen[p.types]
            found.append(Problem(SHARED_TYPE, f"'{spec.inputs[j].name}' is {other} but '{p.name}' is "
                                              f"{t}; this version needs them to have one type",
                                 p.name, t, i))
        seen.setdefault(p.types, (i, t))
    s = spec.role_index(SCALE)
    g = granularity(spec, attrs, facts.in_shapes[s] if s is not None and s < len(facts.in_shapes)
                    else None)
    if g is not None and g not in spec.granularities:
        found.append(Problem(GRANULARITY, f"{g} quantization is not available in this version", g))
    od = attrs.get("output_dtype", 0) if "output_dtype" in spec.attributes else 0
    allowed_out = spec.allowed(spec.outputs[0])
    out = implied_out_type(spec, attrs, types, present)
    if out is not None and out not in allowed_out:
        found.append(Problem(OUTPUT_TYPE, f"its output would be {out}, which this version cannot "
                                          f"produce (allowed: {_fmt(allowed_out)})", value=out))
    zp = spec.role_index(ZERO_POINT)
    if od and spec.kind == "quantize" and zp is not None and zp < n_in and present[zp]:
        zt = types[zp] if zp < len(types) else None
        if zt is not None and zt != dtypes.name_of(od):
            found.append(Problem(OUTPUT_DTYPE, f"output_dtype {dtypes.name_of(od)} differs from the "
                                               f"zero point's type {zt}", value=dtypes.name_of(od)))
    p = attrs.get("precision", 0) if "precision" in spec.attributes else 0
    if p and dtypes.name_of(p) not in dtypes.PRECISION_TYPES:
        found.append(Problem(PRECISION, f"precision {dtypes.name_of(p)} is not an arithmetic type",
                             value=dtypes.name_of(p)))
    return found
