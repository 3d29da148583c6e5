"""The comparison of two schemas of one op (``diff``), and the steps a conversion walks."""

from __future__ import annotations

from collections.abc import Iterator

import onnx.defs

from .index import _table, history, ops, schema_at, step_pairs
from .notes import FIRST_OPSET, SAME_MEANING, SEMANTIC_CHANGES
from .records import _OPTION, Attr, AttrChange, CountChange, Param, ParamChange, StepDiff, TypeChange

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
    in_a, in_b = _params(old, old.inputs), _params(new, new.inputs)
    out_a, out_b = _params(old, old.outputs), _params(new, new.outputs)
    at_a, at_b = _attrs(old), _attrs(new)
    attributes = tuple(AttrChange(n, at_a.get(n), at_b.get(n)) for n in sorted(set(at_a) | set(at_b))
                       if AttrChange(n, at_a.get(n), at_b.get(n)).changed)
    counts = tuple(CountChange(f, getattr(old, f), getattr(new, f))
                   for f in ("min_input", "max_input", "min_output", "max_output")
                   if getattr(old, f) != getattr(new, f))
    deprecated = (bool(old.deprecated), bool(new.deprecated)) if old.deprecated != new.deprecated \
        else None
    lo, hi = sorted((old_since, new_since))
    between = [v for v in sorted(versions) if lo < v <= hi]
    semantic = tuple(SEMANTIC_CHANGES[(op, v)] for v in between if (op, v) in SEMANTIC_CHANGES)
    same = tuple(SAME_MEANING[(op, v)] for v in between if (op, v) in SAME_MEANING)
    return StepDiff(op, old_since, new_since, _positional(in_a, in_b), _positional(out_a, out_b),
                    attributes, counts, deprecated, _type_changes(old, new, (in_a, in_b), (out_a, out_b)),
                    _regrouped(in_a + out_a, in_b + out_b, len(in_a), len(in_b)), semantic, same)


def _positional(a: list[Param], b: list[Param]) -> tuple[ParamChange, ...]:
    """The parameters that differ, position by position."""
    out = []
    for i in range(max(len(a), len(b))):
        c = ParamChange(i, a[i] if i < len(a) else None, b[i] if i < len(b) else None)
        if c.changed:
            out.append(c)
    return tuple(out)


def _type_changes(old, new, *sides) -> tuple[TypeChange, ...]:
    """Allowed types, position by position over the parameters both schemas have (and the
    constraints no parameter uses)."""
    pairs: dict[tuple[str, str], tuple[frozenset[str], frozenset[str]]] = {}
    for a_list, b_list in sides:
        for pa, pb in zip(a_list, b_list, strict=False):
            pairs.setdefault((pa.type_str, pb.type_str), (pa.types, pb.types))
    named_a = {t.type_param_str: frozenset(t.allowed_type_strs) for t in old.type_constraints}
    named_b = {t.type_param_str: frozenset(t.allowed_type_strs) for t in new.type_constraints}
    bound = {k for key in pairs for k in key}
    for name in sorted((set(named_a) & set(named_b)) - bound):
        pairs[(name, name)] = (named_a[name], named_b[name])
    return tuple(TypeChange(na if na == nb else f"{na} -> {nb}", tuple(sorted(tb - ta)),
                            tuple(sorted(ta - tb)))
                 for (na, nb), (ta, tb) in sorted(pairs.items()) if ta != tb)


def _regrouped(params_a: list[Param], params_b: list[Param], inputs_a: int,
               inputs_b: int) -> tuple[str, ...]:
    """Which parameters share one constraint, compared over the positions both schemas have
    (each side's inputs first, then its outputs)."""
    keyed_a = _keyed(params_a, inputs_a)
    keyed_b = _keyed(params_b, inputs_b)
    both = {k for k, _ in keyed_a} & {k for k, _ in keyed_b}
    share_a = frozenset(g & both for g in _sharing(keyed_a) if len(g & both) > 1)
    share_b = frozenset(g & both for g in _sharing(keyed_b) if len(g & both) > 1)
    if share_a == share_b:
        return ()
    names_a = {k: p.name for k, p in keyed_a if k in both}
    names_b = {k: p.name for k, p in keyed_b if k in both}
    return (f"shared constraints {_groups_text(share_a, names_a)} -> {_groups_text(share_b, names_b)}",)


def _keyed(params: list[Param], inputs: int) -> list[tuple[str, Param]]:
    return [(f"input {i}", p) for i, p in enumerate(params[:inputs])] + \
           [(f"output {i}", p) for i, p in enumerate(params[inputs:])]


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
