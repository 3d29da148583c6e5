"""One non-Q/DQ ai.onnx node moved from one opset to another, step by step.

For each step of the op's schema history (convert/opsteps.py), in order:

1. a hand-written adapter registered for the step (convert/ops/adapters.py);
2. a type-only step: the node stays (its types are checked once, at the end);
3. a step the generic rules cross (convert/ops/generic.py): attributes and optional
   inputs added with their defaults;
4. otherwise onnx.version_converter on the node alone (convert/ops/fallback.py),
   whose rewrite must then be proven.

An op that does not exist at the target is refused naming it. Decisions that
depend only on the op, the two versions and the node's types are memoised, so a
model of a million nodes costs a dictionary look-up per repeated node.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import onnx

from ...schema.dtypes import name_of_array
from .. import opsteps
from ..refusal import Refusal, UseFallback
from ..registry import adapter, path
from . import (
    adapters,  # noqa: F401  (registers the hand-written adapters)
    fallback,
    generic,
)
from .step import OpStep
from .types import type_problems


@dataclass
class Converted:
    nodes: list[onnx.NodeProto]  # what replaces the node, in order
    changes: list[str] = field(default_factory=list)
    exact: bool = True  # False: must be proven before it is used


@functools.cache
def _diff(op: str, a: int, b: int) -> opsteps.StepDiff:
    return opsteps.diff(op, min(a, b), max(a, b))


@functools.lru_cache(maxsize=65536)
def _plain_path(op: str, s_from: int, s_to: int) -> bool:
    """Every step is type-only and has no hand-written adapter: the node stays as it is
    if its types fit."""
    return all(_diff(op, a, b).type_only and adapter("", op, a, b) is None
               for a, b in path(opsteps.history(op), s_from, s_to))


@functools.lru_cache(maxsize=65536)
def _type_check(op: str, s_from: int, s_to: int, in_types: tuple, present: tuple,
                out_types: tuple) -> tuple[str, ...]:
    target = opsteps.schema_at(op, s_to)
    source = opsteps.schema_at(op, s_from)
    return tuple(type_problems(target, list(in_types), list(present), list(out_types), source))


def since(op: str, opset: int) -> int | None:
    return opsteps.since_at(op, opset)


def convert(node: onnx.NodeProto, from_opset: int, to_opset: int, *, types: dict[str, str | None],
            elem_types: dict[str, int], const, rank, namer, ir_version: int) -> Converted | Refusal | None:
    """The replacement of ``node`` at ``to_opset`` (None: it stays as it is).

    ``types``: value name -> ONNX type name (None: unknown); ``elem_types``: the same as
    TensorProto element types; ``const(name)``: a constant input's value or None;
    ``rank(name)``: an input's rank or None.
    """
    op = node.op_type
    s_from, s_to = since(op, from_opset), since(op, to_opset)
    if s_from is None:
        return Refusal(f"onnx.defs knows no {op} at opset {from_opset}")
    if s_to is None:
        first = opsteps.history(op)[0]
        return Refusal(f"{op} does not exist at opset {to_opset} (it first appears in opset {first})")
    if s_from == s_to:
        return None
    in_types = tuple(types.get(n) for n in node.input)
    present = tuple(bool(n) for n in node.input)
    out_types = tuple(types.get(n) for n in node.output)
    if _plain_path(op, s_from, s_to):
        why = _type_check(op, s_from, s_to, in_types, present, out_types)
        return Refusal("; ".join(why)) if why else None
    work = onnx.NodeProto()
    work.CopyFrom(node)
    step = OpStep(work, op, s_from, s_from, None, const, rank, namer)
    for a, b in path(opsteps.history(op), s_from, s_to):
        step.frm, step.to, step.diff = a, b, _diff(op, a, b)
        hand = adapter("", op, a, b)
        r = hand(step) if hand is not None else None
        if isinstance(r, UseFallback) or (hand is None and not step.diff.type_only
                                          and not generic.handles(step)):
            r = fallback.convert(step, elem_types, ir_version)
        elif hand is None and not step.diff.type_only:
            r = generic.apply(step)
        if r is not None:
            return Refusal(f"{r.reason} (step {a} -> {b})")
    if step.exact:
        final_types = tuple(types.get(n) if n not in step.made else name_of_array(step.made[n])
                            for n in work.input)
        why = _type_check(op, s_from, s_to, final_types, tuple(bool(n) for n in work.input), out_types)
        if why:
            return Refusal("; ".join(why))
    if not step.changes:
        step.changes.append(f"version {s_from} -> {s_to}: nothing to rewrite")
    return Converted([*step.before, work, *step.after], step.changes, step.exact)

