"""Schema facts, looked up by (domain, op_type, opset)."""

from __future__ import annotations

from .ops import (
    AI_ONNX,
    BLOCKED,
    DOMAIN_NAMES,
    MICROSOFT,
    PER_AXIS,
    PER_TENSOR,
    QUARK,
    SPECS,
    OpSpec,
    Param,
)

_INDEX: dict[tuple[str, str], list[OpSpec]] = {}
for _s in SPECS:
    _INDEX.setdefault((_s.domain, _s.op_type), []).append(_s)
for _v in _INDEX.values():
    _v.sort(key=lambda s: s.since)


def normalize_domain(domain: str) -> str:
    return "" if domain in ("", "ai.onnx") else domain


def is_known_op(domain: str, op_type: str) -> bool:
    return (normalize_domain(domain), op_type) in _INDEX


def versions(domain: str, op_type: str) -> list[OpSpec]:
    """Every version of one op, oldest first (empty if qlin does not know it)."""
    return list(_INDEX.get((normalize_domain(domain), op_type), ()))


def lookup(domain: str, op_type: str, opset: int) -> OpSpec | None:
    """The schema in force: the highest version <= the imported opset."""
    found = None
    for spec in _INDEX.get((normalize_domain(domain), op_type), ()):
        if spec.since <= opset:
            found = spec
    return found


_ROLES = {"x": 0, "scale": 1, "zero_point": 2}


def all_types(kind: str, role: str) -> frozenset[str]:
    """Every type any version or domain allows for one role ("x", "scale",
    "zero_point" or "y") of a quantize or dequantize op."""
    found: set[str] = set()
    for spec in SPECS:
        if spec.kind == kind:
            param = spec.outputs[0] if role == "y" else spec.inputs[_ROLES[role]]
            found |= spec.allowed(param)
    return frozenset(found)


__all__ = [
    "AI_ONNX", "BLOCKED", "DOMAIN_NAMES", "MICROSOFT", "PER_AXIS", "PER_TENSOR", "QUARK",
    "SPECS", "OpSpec", "Param", "all_types", "is_known_op", "lookup", "normalize_domain",
    "versions",
]
