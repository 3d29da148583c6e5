"""The ai.onnx schemas onnx.defs knows, indexed by op and since_version: which version is
in force at an opset, an op's history, and the steps between two versions."""

from __future__ import annotations

import functools

import onnx.defs

from ... import schema
from .notes import AI_ONNX, FIRST_OPSET


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


# The since_version of the schema in force at an opset (None: the op does not exist yet),
# asked of onnx.defs for the one op (the index of every op is built for walks of steps)
since_at = schema.ai_onnx_since

