"""Shorthands the family tables share."""

from __future__ import annotations

from ..ops import (
    OTHER,
    SCALE,
    ZERO_POINT,
    OpSpec,
    Param,
    X,
    Y,
)

INT8S = frozenset({"int8", "uint8"})
FLOAT = frozenset({"float"})
INT32 = frozenset({"int32"})
FLOAT8S = frozenset({"float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz"})


def q(name: str, types: str, group: int, optional: bool = False) -> Param:
    """A quantized tensor of a group."""
    return Param(name, types, optional, X, group)


def s(name: str, types: str, group: int, optional: bool = False) -> Param:
    return Param(name, types, optional, SCALE, group)


def z(name: str, types: str, group: int, optional: bool = False) -> Param:
    return Param(name, types, optional, ZERO_POINT, group)


def out(name: str, types: str, group: int = 0, optional: bool = False, role: str = Y) -> Param:
    return Param(name, types, optional, role, group)


def other(name: str, types: str, optional: bool = False, role: str = OTHER,
          variadic: bool = False) -> Param:
    return Param(name, types, optional, role, 0, variadic)


def spec(domain, op, since, family, inputs, outputs, types, attributes=None, **kw) -> OpSpec:
    """An entry of a non-linear family: no granularities of its own (groups say it)."""
    return OpSpec(domain, op, since, family, tuple(inputs), tuple(outputs), dict(types),
                  dict(attributes or {}), frozenset(), family=family, **kw)
