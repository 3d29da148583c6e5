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
    COLS,
    DEFAULT_QUANT_TYPE,
    PER_AXIS,
    PER_TENSOR,
    ROWS,
    SCALAR,
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


def blocked_scale_shape(x_shape, axis: int, block_size: int) -> tuple:
    """The scale shape of blocked quantization: x's shape, with ceil(Di / block_size) along
    the axis (unknown dimensions stay None)."""
    return tuple(None if d is None else (-(-d // block_size) if k == axis else d)
                 for k, d in enumerate(x_shape))


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


# ---- the other families: signature and scale groups --------------------------------
ATTRIBUTE_MISSING = "attribute-missing"
ATTRIBUTE_TYPE = "attribute-type"
OUTPUT_COUNT = "output-count"
GROUP_SHAPE = "group-shape"

_ATTR_NAMES = {1: "FLOAT", 2: "INT", 3: "STRING", 4: "TENSOR", 5: "GRAPH", 6: "FLOATS", 7: "INTS",
               8: "STRINGS", 9: "SPARSE_TENSOR", 10: "SPARSE_TENSORS", 11: "TENSORS", 12: "GRAPHS",
               13: "TYPE_PROTO", 14: "TYPE_PROTOS"}


def attr_type_name(t: int) -> str:
    return _ATTR_NAMES.get(t, str(t))


def signature(facts, spec: OpSpec) -> list[Problem]:
    """Every way ``facts`` breaks the signature of a non-linear family's ``spec``:
    attributes (unknown, required and missing, of the wrong type), input and output
    counts, input types, type variables shared between inputs and outputs, declared
    output types. Unknown types are not problems. ``facts`` needs ``attr_items``,
    ``refs``, ``present``, ``in_types``, ``out_present`` and ``out_types``."""
    bound: dict[str, tuple[str, str]] = {}  # type variable -> (parameter, type), from the inputs
    return [*_attribute_problems(facts, spec), *_count_problems(facts, spec),
            *_input_type_problems(facts, spec, bound), *_output_type_problems(facts, spec, bound)]


def _attribute_problems(facts, spec: OpSpec) -> list[Problem]:
    found: list[Problem] = []
    given = {name: kind for name, kind, _ in facts.attr_items}
    for name, kind in given.items():
        if name not in spec.attributes:
            found.append(Problem(ATTRIBUTE, f"attribute '{name}' is not defined by this op", name))
        elif name not in facts.refs and kind != spec.attribute_type(name):
            want = attr_type_name(spec.attribute_type(name))
            found.append(Problem(ATTRIBUTE_TYPE, f"attribute '{name}' is of type {attr_type_name(kind)}; "
                                                 f"the op defines it as {want}", name, want))
    for name in sorted(spec.required):
        if name not in given:
            found.append(Problem(ATTRIBUTE_MISSING, f"required attribute '{name}' is missing", name))
    return found


def _count_problems(facts, spec: OpSpec) -> list[Problem]:
    found: list[Problem] = []
    n_in, variadic = len(facts.present), bool(spec.inputs) and spec.inputs[-1].variadic
    if n_in > len(spec.inputs) and not variadic:
        found.append(Problem(INPUT_COUNT, f"{n_in} inputs given; it takes {spec.min_inputs} to "
                                          f"{len(spec.inputs)}", value=str(n_in)))
    for i, p in enumerate(spec.inputs):
        if not p.optional and not (i < n_in and facts.present[i]):
            found.append(Problem(INPUT_COUNT, f"required input '{p.name}' (input {i}) is missing",
                                 p.name, index=i))
    n_out = len(facts.out_present)
    if n_out > len(spec.outputs):
        found.append(Problem(OUTPUT_COUNT, f"{n_out} outputs given; it has {len(spec.outputs)} "
                                           f"({', '.join(p.name for p in spec.outputs)})",
                             value=str(n_out)))
    for k, p in enumerate(spec.outputs):
        if not p.optional and not (k < n_out and facts.out_present[k]):
            found.append(Problem(OUTPUT_COUNT, f"required output '{p.name}' (output {k}) is missing",
                                 p.name, index=k))
    return found


def _input_type_problems(facts, spec: OpSpec, bound: dict) -> list[Problem]:
    """Input types against the schema; fills ``bound`` with the type each variable took."""
    found: list[Problem] = []
    for i, t in enumerate(facts.in_types):
        p = spec.param_at(i)
        if p is None or t is None or not facts.present[i]:
            continue
        if t not in spec.allowed(p):
            found.append(Problem(INPUT_TYPE, f"input '{p.name}' is {t}, which the op does not allow "
                                             f"(allowed: {_fmt(spec.allowed(p))})", p.name, t, i))
            continue
        if p.variadic:
            continue  # heterogeneous: each repetition has its own type
        if p.types in bound and bound[p.types][1] != t:
            other, ot = bound[p.types]
            found.append(Problem(SHARED_TYPE, f"'{other}' is {ot} but '{p.name}' is {t}; the op needs "
                                              f"them to have one type", p.name, t, i))
        bound.setdefault(p.types, (p.name, t))
    return found


def _output_type_problems(facts, spec: OpSpec, bound: dict) -> list[Problem]:
    found: list[Problem] = []
    for k, t in enumerate(facts.out_types):
        if k >= len(spec.outputs) or t is None:
            continue
        p = spec.outputs[k]
        if t not in spec.allowed(p):
            found.append(Problem(OUTPUT_TYPE, f"output '{p.name}' is declared {t}, which the op cannot "
                                              f"produce (allowed: {_fmt(spec.allowed(p))})", p.name, t))
        elif p.types in bound and bound[p.types][1] != t:
            other, ot = bound[p.types]
            found.append(Problem(OUTPUT_TYPE, f"output '{p.name}' is declared {t} but '{other}' is {ot}; "
                                              f"the op gives them one type", p.name, t))
    return found


def _dims_match(got: Shape, want: Shape) -> bool:
    return len(got) == len(want) and all(
        a is None or b is None or a == b for a, b in zip(got, want, strict=True))


def form_shape(form, tensor: Shape | None) -> Shape | None:
    """The shape a group form asks for, given the quantized tensor's shape (None: the
    tensor's shape is unknown or too short for the form)."""
    if form == SCALAR:
        return ()
    if tensor is None:
        return None
    r = len(tensor)
    if form in (ROWS, COLS):  # [..., M, 1] per row of a, [..., 1, N] per column of b
        if r < 2:
            return None
        return tuple(tensor[:-1]) + (1,) if form == ROWS else tuple(tensor[:-2]) + (1, tensor[-1])
    if any(not -r <= d < r for d in form):
        return None
    return tuple(tensor[d] for d in form)


def fits_form(shape: Shape, form, tensor: Shape | None) -> bool:
    """Whether a scale (or zero point) of ``shape`` takes the group form ``form``."""
    if form == SCALAR:
        return len(shape) == 0 or is_one_element(shape)
    want = form_shape(form, tensor)
    if want is None:  # the tensor's shape is unknown: judge the rank only
        return tensor is None and (len(shape) >= 2 if form in (ROWS, COLS) else len(shape) == len(form))
    return _dims_match(shape, want)


def group_tensor_shape(facts, group) -> Shape | None:
    """The shape of the tensor a group quantizes (None: unknown, or an output)."""
    return facts.in_shape(group.tensor) if group.tensor >= 0 else None


def group_problems(facts, spec: OpSpec) -> list[Problem]:
    """Scale and zero-point shapes of each group against the forms the group allows and
    the tensor it quantizes; the scale and zero point of a group share one shape."""
    found: list[Problem] = []
    attrs = facts.attrs
    for g, group in enumerate(spec.groups):
        forms = group.forms_for(attrs)
        if not forms:
            continue  # shapes checked by the op's own rule (MatMulNBits ...)
        tensor = group_tensor_shape(facts, group)
        shapes = {}
        for role in (SCALE, ZERO_POINT):
            i = spec.role_index(role, g)
            if i is None or not (i < len(facts.present) and facts.present[i]):
                continue
            shape = facts.in_shape(i)
            if shape is None:
                continue
            shapes[role] = (i, shape)
            if not any(fits_form(shape, f, tensor) for f in forms):
                found.append(Problem(GROUP_SHAPE, "", spec.inputs[i].name, _shape_text(shape), i))
        if len(shapes) == 2:
            (si, s), (zi, z) = shapes[SCALE], shapes[ZERO_POINT]
            one = (len(s) == 0 or is_one_element(s)) and (len(z) == 0 or is_one_element(z))
            if not one and not _dims_match(s, z):
                found.append(Problem(GROUP_SHAPE, f"scale '{spec.inputs[si].name}' has shape "
                                                  f"{_shape_text(s)} but zero point "
                                                  f"'{spec.inputs[zi].name}' has shape {_shape_text(z)}",
                                     spec.inputs[zi].name, _shape_text(z), zi))
    return found


def describe_forms(forms, tensor: Shape | None) -> str:
    """The shapes the forms allow, for messages: "[] (per tensor) or [8]"."""
    parts = []
    for f in forms:
        if f == SCALAR:
            parts.append("a scalar")
            continue
        want = form_shape(f, tensor)
        if want is not None:
            parts.append(_shape_text(want))
        elif f in (ROWS, COLS):
            parts.append("[..., M, 1]" if f == ROWS else "[..., 1, N]")
        else:
            parts.append("[" + ", ".join(f"D{d}" for d in f) + "]")
    return " or ".join(parts)


def _shape_text(shape: Shape | None) -> str:
    if shape is None:
        return "unknown"
    return "[" + ", ".join("?" if d is None else str(d) for d in shape) + "]"
