"""Schema facts, looked up by (domain, op_type, opset), and the domain facts around them.

``ops.py`` holds the QuantizeLinear / DequantizeLinear table (``SPECS``) and the
types every table uses; ``families/`` the tables of the other op families
(``FAMILY_SPECS``); ``ALL_SPECS`` is both. This module answers lookups (which schema
is in force, which op a domain uses for a family, which opset a scope imports for a
domain); ``semantics.py`` derives what a node means from its schema (granularity,
axis, types) and validates a node against a schema.

``SPECS``, ``is_known_op`` and ``all_types`` speak of the linear Q/DQ ops only (what
the converter and the evaluator act on); ``lookup``, ``versions`` and ``knows`` of
every family.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache

from .families import SPECS as FAMILY_SPECS
from .ops import (
    AI_ONNX,
    AXIS_ABSENT_PER_TENSOR,
    BIAS,
    BLOCK_FLOAT,
    BLOCKED,
    DEFAULT_QUANT_TYPE,
    DOMAIN_ALIASES,
    DOMAIN_NAMES,
    DYNAMIC_QUANTIZE,
    INTEGER,
    LINEAR_DEQUANTIZE,
    LINEAR_QUANTIZE,
    MICROSOFT,
    N_BITS,
    OTHER,
    PER_AXIS,
    PER_TENSOR,
    QLINEAR,
    QUARK,
    SCALE,
    SPECS,
    ZERO_POINT,
    Group,
    OpSpec,
    Param,
    X,
)

ALL_SPECS: tuple[OpSpec, ...] = SPECS + FAMILY_SPECS

_INDEX: dict[tuple[str, str], list[OpSpec]] = {}
for _s in ALL_SPECS:
    _INDEX.setdefault((_s.domain, _s.op_type), []).append(_s)
for _v in _INDEX.values():
    _v.sort(key=lambda s: s.since)


def normalize_domain(domain: str) -> str:
    """The domain as the table keys it: "" for ai.onnx however it is spelled."""
    return DOMAIN_ALIASES.get(domain, domain)


def domain_name(domain: str) -> str:
    """How messages name a domain: "ai.onnx", "com.microsoft" ..."""
    d = normalize_domain(domain)
    return DOMAIN_NAMES.get(d, d)


def domain_from_name(name: str) -> str | None:
    """The table's key for a domain named by a user (None: qlin knows no such domain)."""
    d = normalize_domain(name)
    return d if d in DOMAIN_NAMES else None


_SPELLINGS: dict[str, tuple[str, ...]] = {}  # normalized domain -> its other spellings
for _alias, _d in DOMAIN_ALIASES.items():
    _SPELLINGS[_d] = _SPELLINGS.get(_d, ()) + (_alias,)


def opset_of(opsets: Mapping[str, int], domain: str) -> int | None:
    """The version an opset_import map gives a domain (either spelling of ai.onnx; the
    first entry of either spelling when a map has both)."""
    d = normalize_domain(domain)
    for other in _SPELLINGS.get(d, ()):
        if other in opsets:
            break
    else:  # the usual case: one spelling, one look-up
        return opsets.get(d)
    for key, version in opsets.items():
        if normalize_domain(key) == d:
            return version
    return None


def vendor_domains() -> list[str]:
    return [d for d in DOMAIN_NAMES if d != AI_ONNX]


def domain_version(domain: str) -> int:
    """The newest opset version qlin knows for a domain (what to import it at)."""
    d = normalize_domain(domain)
    return max(s.since for s in SPECS if s.domain == d)


LINEAR = frozenset({LINEAR_QUANTIZE, LINEAR_DEQUANTIZE})
# Every family other than linear Q/DQ: what the rules of those families declare.
OTHER_FAMILIES = frozenset({QLINEAR, INTEGER, DYNAMIC_QUANTIZE, N_BITS, BLOCK_FLOAT})
FAMILIES = LINEAR | OTHER_FAMILIES

_LINEAR_OPS = frozenset((s.domain, s.op_type) for s in SPECS)


def is_known_op(domain: str, op_type: str) -> bool:
    """A QuantizeLinear / DequantizeLinear of a domain qlin knows (the ops convert and the
    evaluator act on)."""
    return (normalize_domain(domain), op_type) in _LINEAR_OPS


def knows(domain: str, op_type: str) -> bool:
    """An op of any family qlin has a schema for (what `qlin check` reads facts of)."""
    return (normalize_domain(domain), op_type) in _INDEX


def is_linear(spec: OpSpec | None) -> bool:
    """A QuantizeLinear / DequantizeLinear of any domain: what the evaluator runs and
    the converter retargets."""
    return spec is not None and spec.family in LINEAR


def versions(domain: str, op_type: str) -> list[OpSpec]:
    """Every version of one op, oldest first (empty if qlin does not know it)."""
    return list(_INDEX.get((normalize_domain(domain), op_type), ()))


_LOOKED_UP: dict[tuple, OpSpec | None] = {}


def lookup(domain: str, op_type: str, opset: int) -> OpSpec | None:
    """The schema in force: the highest version <= the imported opset."""
    key = (domain, op_type, opset)
    if key in _LOOKED_UP:
        return _LOOKED_UP[key]
    found = None
    for spec in _INDEX.get((normalize_domain(domain), op_type), ()):
        if spec.since <= opset:
            found = spec
    if len(_LOOKED_UP) < 4096:  # the table never changes; a hostile model cannot grow this much
        _LOOKED_UP[key] = found
    return found


def op_for(domain: str, kind: str) -> str:
    """The linear op a domain uses for a kind ("quantize" / "dequantize")."""
    for spec in SPECS:
        if spec.domain == normalize_domain(domain) and spec.kind == kind and is_linear(spec):
            return spec.op_type
    raise KeyError((domain, kind))


def spec_for(domain: str, kind: str, ai_opset: int) -> OpSpec | None:
    """The schema a node of ``kind`` gets in ``domain`` when the model imports ai.onnx
    at ``ai_opset`` (vendor domains: their newest version)."""
    op = op_for(domain, kind)
    d = normalize_domain(domain)
    if d == AI_ONNX:
        return lookup(AI_ONNX, op, ai_opset)
    return versions(d, op)[-1]


def first_version(domain: str, op_type: str, pred) -> int | None:
    """The first version of an op in a domain whose schema satisfies ``pred``."""
    for spec in versions(domain, op_type):
        if pred(spec):
            return spec.since
    return None


@cache
def ai_onnx_since(op_type: str, opset: int) -> int | None:
    """The since_version of the ai.onnx schema of ``op_type`` in force at ``opset``, as
    onnx.defs has it (for any ai.onnx op, not only the ones of SPECS), None where the op does
    not exist yet at that opset; asked of onnx.defs for the one op, once per (op, opset)."""
    import onnx.defs

    try:
        return onnx.defs.get_schema(op_type, opset, "").since_version
    except onnx.defs.SchemaError:
        return None


def oldest_opset() -> int:
    """The first ai.onnx opset with a QuantizeLinear (the lowest target qlin converts to)."""
    return min(s.since for s in SPECS if s.domain == AI_ONNX)


def all_types(kind: str, role: str) -> frozenset[str]:
    """Every type any version or domain allows for one role ("x", "scale",
    "zero_point" or "y") of a quantize or dequantize op."""
    found: set[str] = set()
    for spec in SPECS:
        if spec.kind == kind:
            if not is_linear(spec):
                continue
            params = spec.outputs if role == "y" else [p for p in spec.inputs if p.role == role]
            for p in params:
                found |= spec.allowed(p)
    return frozenset(found)


__all__ = [
    "AI_ONNX", "ALL_SPECS", "AXIS_ABSENT_PER_TENSOR", "BIAS", "BLOCKED", "BLOCK_FLOAT",
    "DEFAULT_QUANT_TYPE", "DOMAIN_NAMES", "DYNAMIC_QUANTIZE", "FAMILIES", "FAMILY_SPECS", "INTEGER",
    "LINEAR", "LINEAR_DEQUANTIZE", "LINEAR_QUANTIZE", "MICROSOFT", "N_BITS", "OTHER",
    "OTHER_FAMILIES", "PER_AXIS", "PER_TENSOR", "QLINEAR", "QUARK", "SCALE", "SPECS", "X", "ZERO_POINT",
    "Group", "OpSpec", "Param", "ai_onnx_since", "all_types", "domain_from_name", "domain_name",
    "domain_version",
    "first_version", "is_known_op", "is_linear", "knows", "lookup", "normalize_domain",
    "oldest_opset", "op_for", "opset_of", "spec_for", "vendor_domains", "versions",
]
