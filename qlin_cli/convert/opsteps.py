"""What changes in each version step of every ai.onnx op, read from onnx.defs.

A *step* is the move between two neighbouring versions (``since_version``) of
one op's schema. qlin converts between opset 10 and the newest opset onnx.defs
knows, so the steps that matter are those whose newer version lies above 10;
the older side is the version in force at opset 10 (it may be older than 10).

``diff`` compares two schemas of an op and sorts what differs into:

* **structural**: inputs or outputs (position, name, single/optional/variadic,
  homogeneity, minimum arity), the schema's input/output counts, attributes
  (name, type, required, default compared by its serialized value), or the
  deprecation flag. A node crossing such a step needs an adapter, or a refusal
  that says why.
* **types**: the allowed type lists. Formal inputs and outputs are bound to
  their types by position, so a constraint renamed ``T`` -> ``T1`` with the same
  types is no change; a literal type (``tensor(int64)``) counts as a constraint
  with one type. Which parameters share one constraint (of more than one type)
  is compared too: a split or merge is reported in ``regrouped``. A node crosses
  a type step unchanged when its actual types are allowed by the target schema,
  constraint sharing included.
* **meaning**: nothing in a schema's signature records what the op computes.
  Doc text and function bodies are not compared (their wording changes all the
  time without a change of meaning), so steps whose meaning changed with the
  signature left alone are listed by hand in ``SEMANTIC_CHANGES``. Steps whose
  schemas are the same for a node in every respect are listed, with the reason
  the version exists, in ``SAME_MEANING``.

A step is *type-only* when it is not structural, not in ``SEMANTIC_CHANGES``,
and either some type list changed or it is in ``SAME_MEANING``. A step that is
none of structural, semantic or type-only is *unclassified*: nothing visible
changed and nobody has said why the version exists (the tests fail on it).

Only ``onnx.defs`` is used; nothing here runs a model.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass

import onnx.defs

from ..model.propagate import REDUCE

FIRST_OPSET = 10
AI_ONNX = ""

# --------------------------------------------------------------------------------------------
# Hand-written: steps whose meaning changed although the signature did not (or not only).
# Key: (op, the since_version that brought the change). Evidence for each is in the comment
# above it: the op's doc and attribute text in onnx.defs (old vs new schema), the onnx pull
# request that created the version (named by number), and the adapter onnx.version_converter
# registers for the step (convert.h in onnx).
# --------------------------------------------------------------------------------------------
_NEG_AXIS = ("negative values accepted in {what} (counted from the back); going below 11 needs "
             "them made non-negative from the input rank")
# The ops whose `axis` attribute, and those whose `axes` attribute, accept negative values
# from version 11 (onnx #2281, below). TopK's axis too: see its own entry.
NEG_AXIS_OPS = ("ArgMax", "ArgMin", "Compress", "Concat", "Flatten", "Hardmax", "LogSoftmax",
                "Softmax", "Split")
NEG_AXES_OPS = (*sorted(REDUCE), "Squeeze", "Unsqueeze")

SEMANTIC_CHANGES: dict[tuple[str, int], str] = {
    # onnx #2281 "Supporting negative axes for all existing onnx ops" created these version-11
    # schemas; each new attribute/input text adds "Negative value means counting dimensions
    # from the back. Accepted range is [-r, r-1]". version_converter registers only
    # CompatibleAdapter for 10<->11, i.e. it does not rewrite a negative axis going down.
    **{(op, 11): _NEG_AXIS.format(what="axis") for op in NEG_AXIS_OPS},
    **{(op, 11): _NEG_AXIS.format(what="axes") for op in NEG_AXES_OPS},
    ("Scan", 11): _NEG_AXIS.format(what="scan_input_axes/scan_output_axes"),
    # TopK-11 was created by #2126 (largest/sorted attributes, visible in the signature) and
    # then given the same negative-axis sentence by #2281.
    ("TopK", 11): _NEG_AXIS.format(what="axis"),
    # Slice-11 (#2281): the axes input gains the negative-axis sentence; the doc also defines
    # INT_MIN ends for backward slicing. axes is an input, so going down needs it constant.
    ("Slice", 11): "negative values accepted in the axes input; going below 11 needs a constant "
                   "axes made non-negative from the input rank",
    # Gather-11 came from #2260 "Support for negative indices in Gather, GatherElements,
    # ScatterElements, OneHot": indices text changes from "within bounds" to "[-s, s-1]".
    ("Gather", 11): "negative indices accepted (counted from the end of the axis); Gather-1 "
                    "required indices in [0, s-1]",
    # OneHot-11 (#2281 with #2260): indices range goes from [0, depth) to [-depth, depth-1] and
    # the axis attribute accepts negative values.
    ("OneHot", 11): "negative indices ([-depth, depth-1]) and negative axis accepted; at 9 "
                    "negative indices gave an all-off_value row",
    # If-11 from #2345 "Relax IF's shape inference rule": the outputs text changes from "must
    # be of the same shape and same data type" to "same data type ... may produce different
    # shapes".
    ("If", 11): "then/else branches may yield outputs of different shapes; at 1 they had to "
                "match",
    # Softmax/LogSoftmax/Hardmax-13 from #2879 "Update softmax family ops behavior to align
    # with other frameworks": the doc changes from coercing the input to 2-D at `axis`
    # (normalising over all trailing dimensions) to normalising along the single dimension
    # `axis`; the default axis also moves from 1 to -1 (visible in the attributes too).
    # version_converter has dedicated adapters (Softmax_12_13 / Softmax_13_12) both ways.
    ("Softmax", 13): "axis now names the one dimension to normalise over (was: coerce to 2-D "
                     "at axis and normalise over all trailing dimensions together)",
    ("LogSoftmax", 13): "axis now names the one dimension to normalise over (was: coerce to "
                        "2-D at axis and normalise over all trailing dimensions together)",
    ("Hardmax", 13): "axis now names the one dimension to take the max over (was: coerce to "
                     "2-D at axis and take it over all trailing dimensions together)",
    # Resize-13: the coordinate_transformation_mode text drops "tf_half_pixel_for_nn" (the
    # roi/scales inputs also become optional, which the signature shows).
    ("Resize", 13): "coordinate_transformation_mode 'tf_half_pixel_for_nn' removed",
    # Resize-19 from #4862 "Add Resize-19: half_pixel_symmetric": a new allowed value of an
    # existing attribute; version_converter registers CompatibleAdapter 18<->19, so it keeps
    # the value going down.
    ("Resize", 19): "coordinate_transformation_mode gains 'half_pixel_symmetric'; going down "
                    "a node using it must be refused",
    # Pad-19 from #4793 "Pad-19: Add 'wrap' mode": mode text lists `wrap` as a fourth mode.
    ("Pad", 19): "mode gains 'wrap'; going down a node using it must be refused",
    # ScatterElements/ScatterND-18 from #4411: the reduction text adds max and min ("(Opset 18
    # change): Adds max/min to the set of allowed reduction ops"). version_converter's
    # Scatter_18_17 adapter refuses those values.
    ("ScatterElements", 18): "reduction gains 'max' and 'min'; going down a node using them "
                             "must be refused",
    ("ScatterND", 18): "reduction gains 'max' and 'min'; going down a node using them must be "
                       "refused",
    # GroupNormalization-21 (#5758): version 18 is flagged deprecated because its scale and
    # bias were per group; at 21 they are per channel (C). version_converter's
    # GroupNormalization_20_21 adapter expands scale/bias, and no 21->20 adapter exists.
    ("GroupNormalization", 21): "scale and bias are per channel (C); at 18 they were per group",
    # GridSample-20 (#5010): mode values renamed bilinear->linear, bicubic->cubic and N-D input
    # accepted; version_converter's GridSample_19_20 adapter renames the mode.
    ("GridSample", 20): "mode values renamed (bilinear->linear, bicubic->cubic, default follows) "
                        "and N-D inputs accepted",
    # RoiAlign-16 (#3762): the new coordinate_transformation_mode defaults to 'half_pixel'
    # while version 10 behaved as 'output_half_pixel'; version_converter's 15->16 adapter sets
    # the attribute to 'output_half_pixel' going up, and there is no adapter down.
    ("RoiAlign", 16): "new coordinate_transformation_mode defaults to 'half_pixel'; version 10 "
                      "behaved as 'output_half_pixel'",
    # Mod-28: the doc changes from "If fmod is 0, T is constrained to integer data types" to
    # "If fmod is 0, the output is A - floor(A / B) * B" with floating-point special cases: a
    # floating-point Mod with fmod=0 is valid only from 28.
    ("Mod", 28): "fmod=0 accepted for floating-point inputs (floor modulo); below 28 fmod=0 "
                 "required integer types",
    # BitShift-28: adds signed types with an arithmetic right shift, and defines the result for
    # shift amounts that are negative or >= the bit width (the version-11 doc leaves them
    # undefined).
    ("BitShift", 28): "shift amounts < 0 or >= the bit width now defined (0, or -1 for a right "
                      "shift of a negative value); signed types added with arithmetic right shift",
}

# --------------------------------------------------------------------------------------------
# Hand-written: steps where the two schemas agree in every respect a node can see (same
# signature, same type lists, same meaning). Each entry says why the version exists.
# --------------------------------------------------------------------------------------------
_STRIDES = ("defaults of strides (and dilations) documented as 1 (onnx #2291); the "
            "converter's 10<->11 adapter is CompatibleAdapter")

SAME_MEANING: dict[tuple[str, int], str] = {
    # onnx #2291 "Updated docs for strides and dilations attributes": its message says the
    # versions were bumped only because the defaults were now written down.
    **{(op, 11): _STRIDES for op in (
        "AveragePool", "Conv", "ConvTranspose", "LpPool", "MaxPool", "MaxUnpool")},
    # onnx #2348 "Bump NMS version for avoiding regression in existing models": version 11 only
    # adds output shape inference; schema and text are otherwise unchanged.
    ("NonMaxSuppression", 11): "output shape inference added (onnx #2348); same op otherwise",
    # onnx #3059 "Advance NLL loss to opset 13": the function body is re-expressed with opset-13
    # ops; the schema's signature, types and doc (up to formatting) are unchanged.
    ("NegativeLogLikelihoodLoss", 13): "function body moved to opset-13 ops (onnx #3059); same "
                                       "op otherwise",
    # DepthToSpace-28: signature, types and all text identical to 13; the new schema only adds
    # a context-dependent function body (has_context_dependent_function False -> True).
    ("DepthToSpace", 28): "a function body added; same op otherwise",
}


@functools.cache
def _table() -> dict[str, dict[int, onnx.defs.OpSchema]]:
    table: dict[str, dict[int, onnx.defs.OpSchema]] = {}
    for s in onnx.defs.get_all_schemas_with_history():
        if s.domain == AI_ONNX:
            table.setdefault(s.name, {})[s.since_version] = s
    return table


def newest_opset() -> int:
    return onnx.defs.onnx_opset_version()


def ops() -> list[str]:
    """Every ai.onnx op onnx.defs knows, sorted by name."""
    return sorted(_table())


def history(op: str) -> list[int]:
    """The since_versions of an ai.onnx op, oldest first ([] for an op onnx.defs does not know)."""
    return sorted(_table().get(op, ()))


def schema_at(op: str, opset: int) -> onnx.defs.OpSchema | None:
    """The schema in force at an opset (the highest since_version <= opset), or None when the
    op does not exist yet at that opset (or onnx.defs does not know it)."""
    versions = _table().get(op, {})
    found = [v for v in versions if v <= opset]
    return versions[max(found)] if found else None


def step_pairs(op: str, first: int = FIRST_OPSET, last: int | None = None) -> list[tuple[int, int]]:
    """The (older, newer) since_version pairs of one op's steps within opsets first..last: the
    older side is in force at ``first`` or later, the newer one is at most ``last``."""
    last = newest_opset() if last is None else last
    v = history(op)
    return [(a, b) for a, b in zip(v, v[1:], strict=False) if first < b <= last]


# ---------------------------------------------------------------------------- diff records ---

_OPTION = {"Single": "single", "Optional": "optional", "Variadic": "variadic"}


@dataclass(frozen=True)
class Param:
    """One formal input or output of a schema."""

    name: str
    option: str  # single / optional / variadic
    type_str: str  # a constraint name (T) or a literal type (tensor(int64))
    types: frozenset[str]  # what type_str allows
    homogeneous: bool
    min_arity: int

    def describe(self) -> str:
        extra = "" if self.option == "single" else f" ({self.option})"
        return f"{self.name}{extra}"


def _changed(old, new, fields: tuple[str, ...]) -> tuple[str, ...]:
    """What differs between two sides of a step: added, removed, or the fields that differ."""
    if old is None:
        return ("added",)
    if new is None:
        return ("removed",)
    return tuple(f for f in fields if getattr(old, f) != getattr(new, f))


@dataclass(frozen=True)
class ParamChange:
    """An input or output position whose formal parameter differs (or exists on one side only)."""

    index: int
    old: Param | None
    new: Param | None

    @property
    def changed(self) -> tuple[str, ...]:
        return _changed(self.old, self.new, ("name", "option", "homogeneous", "min_arity"))


@dataclass(frozen=True)
class Attr:
    name: str
    type: str  # INT, FLOAT, STRING, INTS, ...
    required: bool
    default: bytes | None  # serialized AttributeProto of the default, None when there is none
    default_text: str  # the default for people ("" when there is none)


@dataclass(frozen=True)
class AttrChange:
    name: str
    old: Attr | None
    new: Attr | None

    @property
    def changed(self) -> tuple[str, ...]:
        return _changed(self.old, self.new, ("type", "required", "default"))


@dataclass(frozen=True)
class TypeChange:
    """Allowed types gained and lost by one constraint (``T``, or ``T -> T1`` when the
    parameters bound to it use another name on the other side)."""

    constraint: str
    added: tuple[str, ...]
    removed: tuple[str, ...]


@dataclass(frozen=True)
class CountChange:
    field: str  # min_input, max_input, min_output, max_output
    old: int
    new: int


@dataclass(frozen=True)
class StepDiff:
    """What differs between the schema of ``op`` at ``old_since`` and at ``new_since``."""

    op: str
    old_since: int
    new_since: int
    inputs: tuple[ParamChange, ...] = ()
    outputs: tuple[ParamChange, ...] = ()
    attributes: tuple[AttrChange, ...] = ()
    counts: tuple[CountChange, ...] = ()
    deprecated: tuple[bool, bool] | None = None  # (old, new) when the flag differs
    types: tuple[TypeChange, ...] = ()
    regrouped: tuple[str, ...] = ()  # parameters whose constraint sharing changed
    semantic: tuple[str, ...] = ()  # SEMANTIC_CHANGES notes for versions in between
    same_meaning: tuple[str, ...] = ()  # SAME_MEANING notes for versions in between

    @property
    def structural(self) -> bool:
        return bool(self.inputs or self.outputs or self.attributes or self.counts
                    or self.deprecated)

    @property
    def type_only(self) -> bool:
        """True when only allowed type lists (or constraint sharing) differ, or when the step is
        a reviewed no-change: a node stays as it is if its types are allowed at the target."""
        return (not self.structural and not self.semantic
                and bool(self.types or self.regrouped or self.same_meaning))

    @property
    def kind(self) -> str:
        if self.structural:
            return "structural"
        if self.semantic:
            return "semantic"
        if self.type_only:
            return "type-only"
        return "unclassified"

    def structure_text(self) -> str:
        """The structural differences in one line ('' when there are none)."""
        parts: list[str] = []
        for label, changes in (("input", self.inputs), ("output", self.outputs)):
            for c in changes:
                if c.old is None:
                    parts.append(f"{label} {c.index} {c.new.describe()} added")
                elif c.new is None:
                    parts.append(f"{label} {c.index} {c.old.describe()} removed")
                else:
                    bits = []
                    if "name" in c.changed:
                        bits.append(f"renamed {c.old.name} -> {c.new.name}")
                    if "option" in c.changed:
                        bits.append(f"{c.old.option} -> {c.new.option}")
                    if "homogeneous" in c.changed:
                        bits.append("homogeneous" if c.new.homogeneous else "heterogeneous")
                    if "min_arity" in c.changed:
                        bits.append(f"min arity {c.old.min_arity} -> {c.new.min_arity}")
                    parts.append(f"{label} {c.index} {c.new.name}: " + ", ".join(bits))
        for a in self.attributes:
            if a.old is None:
                what = "required" if a.new.required else (
                    f"default {a.new.default_text}" if a.new.default is not None else "optional")
                parts.append(f"attribute {a.name} added ({what})")
            elif a.new is None:
                parts.append(f"attribute {a.name} removed")
            else:
                bits = []
                if "type" in a.changed:
                    bits.append(f"type {a.old.type} -> {a.new.type}")
                if "required" in a.changed:
                    bits.append("now required" if a.new.required else "now optional")
                if "default" in a.changed:
                    bits.append(f"default {a.old.default_text or 'none'} -> "
                                f"{a.new.default_text or 'none'}")
                parts.append(f"attribute {a.name}: " + ", ".join(bits))
        if self.deprecated:
            parts.append("deprecated" if self.deprecated[1] else "no longer deprecated")
        if not (self.inputs or self.outputs) and self.counts:
            parts.append(", ".join(f"{c.field} {c.old} -> {c.new}" for c in self.counts))
        return "; ".join(parts)

    def types_text(self) -> str:
        bits = []
        for t in self.types:
            change = " ".join([*(f"+{_short(x)}" for x in t.added),
                               *(f"-{_short(x)}" for x in t.removed)])
            bits.append(f"{t.constraint}: {change}" if change else f"{t.constraint} renamed")
        bits.extend(self.regrouped)
        return "; ".join(bits)

    def summary(self) -> str:
        """What changed, in one line."""
        parts = []
        if self.structural:
            parts.append(self.structure_text())
        parts.extend(self.semantic)
        if not parts:
            if self.types or self.regrouped:
                parts.append("types " + self.types_text())
            parts.extend(self.same_meaning)
        return "; ".join(parts) if parts else "nothing visible changed (unclassified)"


def _short(type_str: str) -> str:
    """tensor(float) -> float; seq(tensor(int8)) -> seq(int8)."""
    return re.sub(r"tensor\(([^()]*)\)", r"\1", type_str)


# ---------------------------------------------------------------------------- comparison ----

def _params(schema: onnx.defs.OpSchema, formal) -> list[Param]:
    cons = {t.type_param_str: frozenset(t.allowed_type_strs) for t in schema.type_constraints}
    return [Param(p.name, _OPTION[p.option.name], p.type_str,
                  cons.get(p.type_str, frozenset([p.type_str])), bool(p.is_homogeneous),
                  int(p.min_arity)) for p in formal]


def _value_text(a) -> str:
    """The value an AttributeProto carries, written briefly."""
    t = a.type
    if t == a.INT:
        return str(a.i)
    if t == a.FLOAT:
        text = f"{a.f:.7g}"  # float32 precision; keeps 0.2 from printing as 0.20000000298
        return text if any(c in text for c in ".ena") else f"{text}.0"
    if t == a.STRING:
        return repr(a.s.decode("utf-8", "replace"))
    if t == a.INTS:
        return str(list(a.ints))
    if t == a.FLOATS:
        return str(list(a.floats))
    if t == a.STRINGS:
        return str([s.decode("utf-8", "replace") for s in a.strings])
    return f"<{a.type}>"


def _attrs(schema: onnx.defs.OpSchema) -> dict[str, Attr]:
    out = {}
    for name, a in schema.attributes.items():
        dv = a.default_value
        has_default = dv.ByteSize() > 0 and dv.type != 0
        out[name] = Attr(name, a.type.name, bool(a.required),
                         dv.SerializeToString(deterministic=True) if has_default else None,
                         _value_text(dv) if has_default else "")
    return out


def _sharing(params: list[tuple[str, Param]]) -> frozenset[frozenset[str]]:
    """The groups of parameters (by position key) bound to one named constraint, groups of two
    or more only. A literal type (tensor(int64)) binds nothing."""
    groups: dict[str, set[str]] = {}
    for key, p in params:
        if not _literal(p.type_str):
            groups.setdefault(p.type_str, set()).add(key)
    return frozenset(frozenset(g) for g in groups.values() if len(g) > 1)


def _groups_text(groups: frozenset[frozenset[str]], names: dict[str, str]) -> str:
    order = list(names)
    ordered = sorted((sorted(g, key=order.index) for g in groups), key=lambda g: order.index(g[0]))
    return " ".join("[" + " ".join(names[k] for k in g) + "]" for g in ordered) or "none"


def _literal(type_str: str) -> bool:
    return "(" in type_str


def diff(op: str, old_since: int, new_since: int) -> StepDiff:
    """What differs going from the schema of ``op`` at ``old_since`` to the one at ``new_since``
    (either may be the larger; they need not be neighbours)."""
    versions = _table().get(op)
    if not versions or old_since not in versions or new_since not in versions:
        raise KeyError(f"onnx.defs has no ai.onnx {op} at since_version {old_since} and "
                       f"{new_since} (versions: {history(op)})")
    old, new = versions[old_since], versions[new_since]

    def positional(a: list[Param], b: list[Param]) -> tuple[ParamChange, ...]:
        out = []
        for i in range(max(len(a), len(b))):
            pa = a[i] if i < len(a) else None
            pb = b[i] if i < len(b) else None
            c = ParamChange(i, pa, pb)
            if c.changed:
                out.append(c)
        return tuple(out)

    in_a, in_b = _params(old, old.inputs), _params(new, new.inputs)
    out_a, out_b = _params(old, old.outputs), _params(new, new.outputs)
    inputs, outputs = positional(in_a, in_b), positional(out_a, out_b)

    at_a, at_b = _attrs(old), _attrs(new)
    attributes = tuple(AttrChange(n, at_a.get(n), at_b.get(n)) for n in sorted(set(at_a) | set(at_b))
                       if AttrChange(n, at_a.get(n), at_b.get(n)).changed)

    counts = tuple(CountChange(f, getattr(old, f), getattr(new, f))
                   for f in ("min_input", "max_input", "min_output", "max_output")
                   if getattr(old, f) != getattr(new, f))
    deprecated = (bool(old.deprecated), bool(new.deprecated)) if old.deprecated != new.deprecated \
        else None

    # allowed types, position by position over the parameters both sides have
    pairs: dict[tuple[str, str], tuple[frozenset[str], frozenset[str]]] = {}
    for a_list, b_list in ((in_a, in_b), (out_a, out_b)):
        for pa, pb in zip(a_list, b_list, strict=False):
            key = (pa.type_str, pb.type_str)
            pairs.setdefault(key, (pa.types, pb.types))
    named_a = {t.type_param_str: frozenset(t.allowed_type_strs) for t in old.type_constraints}
    named_b = {t.type_param_str: frozenset(t.allowed_type_strs) for t in new.type_constraints}
    bound = {k for key in pairs for k in key}
    for name in sorted((set(named_a) & set(named_b)) - bound):  # constraints no parameter uses
        pairs[(name, name)] = (named_a[name], named_b[name])
    types = []
    for (na, nb), (ta, tb) in sorted(pairs.items()):
        if ta != tb:
            types.append(TypeChange(na if na == nb else f"{na} -> {nb}",
                                    tuple(sorted(tb - ta)), tuple(sorted(ta - tb))))

    keyed_a = [(f"input {i}", p) for i, p in enumerate(in_a)] + \
              [(f"output {i}", p) for i, p in enumerate(out_a)]
    keyed_b = [(f"input {i}", p) for i, p in enumerate(in_b)] + \
              [(f"output {i}", p) for i, p in enumerate(out_b)]
    both = {k for k, _ in keyed_a} & {k for k, _ in keyed_b}
    share_a = frozenset(g & both for g in _sharing(keyed_a) if len(g & both) > 1)
    share_b = frozenset(g & both for g in _sharing(keyed_b) if len(g & both) > 1)
    regrouped: tuple[str, ...] = ()
    if share_a != share_b:  # compared over the positions both schemas have
        names_a = {k: p.name for k, p in keyed_a if k in both}
        names_b = {k: p.name for k, p in keyed_b if k in both}
        regrouped = (f"shared constraints {_groups_text(share_a, names_a)} -> "
                     f"{_groups_text(share_b, names_b)}",)

    lo, hi = sorted((old_since, new_since))
    between = [v for v in sorted(versions) if lo < v <= hi]
    semantic = tuple(SEMANTIC_CHANGES[(op, v)] for v in between if (op, v) in SEMANTIC_CHANGES)
    same = tuple(SAME_MEANING[(op, v)] for v in between if (op, v) in SAME_MEANING)

    return StepDiff(op, old_since, new_since, inputs, outputs, attributes, counts, deprecated,
                    tuple(types), regrouped, semantic, same)


def all_steps(first: int = FIRST_OPSET, last: int | None = None) -> Iterator[tuple[str, int, int, StepDiff]]:
    """Every step of every ai.onnx op within opsets first..last, upward, ops sorted by name."""
    for op in ops():
        for a, b in step_pairs(op, first, last):
            yield op, a, b, diff(op, a, b)


def steps(from_opset: int, to_opset: int) -> Iterator[tuple[str, int, int, StepDiff]]:
    """The steps a model walks going from one opset to another, for every op whose in-force
    schema differs between the two: one (op, from_since, to_since, diff) per neighbouring pair,
    in walking order (downward when to_opset < from_opset). Ops that do not exist at one of the
    two opsets have no step; check them with ``schema_at``."""
    lo, hi = sorted((from_opset, to_opset))
    for op in ops():
        a, b = schema_at(op, from_opset), schema_at(op, to_opset)
        if a is None or b is None or a.since_version == b.since_version:
            continue
        walk = [v for v in history(op) if schema_at(op, lo).since_version <= v <= hi]
        if to_opset < from_opset:
            walk.reverse()
        for x, y in zip(walk, walk[1:], strict=False):
            yield op, x, y, diff(op, x, y)


def formal_inputs(schema: onnx.defs.OpSchema) -> list[Param]:
    return _params(schema, schema.inputs)


def formal_outputs(schema: onnx.defs.OpSchema) -> list[Param]:
    return _params(schema, schema.outputs)


def since_at(op: str, opset: int) -> int | None:
    """The since_version of the schema in force at ``opset`` (None: the op does not exist yet)."""
    s = schema_at(op, opset)
    return None if s is None else s.since_version


def path(op: str, from_since: int, to_since: int) -> list[tuple[int, int]]:
    """The neighbouring steps from one since_version of an op to another, in walking order."""
    versions = history(op)
    i, j = versions.index(from_since), versions.index(to_since)
    walk = versions[i:j + 1] if i <= j else versions[j:i + 1][::-1]
    return list(zip(walk, walk[1:], strict=False))
