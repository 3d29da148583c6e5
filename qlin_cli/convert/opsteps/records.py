"""What one step changes, as records: parameters, attributes, types, counts, and the
``StepDiff`` that holds them and says how the step is classified and shown."""

from __future__ import annotations

import re
from dataclasses import dataclass

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
