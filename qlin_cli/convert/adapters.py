"""Version steps of the Q/DQ ops, one adapter each, keyed by (domain, op, from, to).

Every step between two neighbouring versions of one op in the schema table is
registered in both directions. The default adapter is ``retarget`` to the
neighbour's schema, so what a step rewrites or refuses follows from the two
schemas (docs/convert.md lists it). A hand-written adapter registers with
``@register(domain, op, from_since, to_since)`` and replaces the default.
tests/test_convert_adapters.py holds the registry against onnx.defs.
"""

from __future__ import annotations

from collections.abc import Callable

from .. import schema
from .qnode import QNode
from .retarget import Refusal, retarget

Adapter = Callable[[QNode], "QNode | Refusal"]
REGISTRY: dict[tuple[str, str, int, int], Adapter] = {}


def register(domain: str, op_type: str, from_since: int, to_since: int):
    """Register a hand-written adapter for one step (it replaces the default)."""
    def add(fn: Adapter) -> Adapter:
        REGISTRY[(schema.normalize_domain(domain), op_type, from_since, to_since)] = fn
        return fn
    return add


def _to(target: schema.OpSpec) -> Adapter:
    def adapter(q: QNode) -> QNode | Refusal:
        return retarget(q, target)

    adapter.__name__ = f"{target.op_type}_to_{target.since}"
    return adapter


def _defaults() -> None:
    for spec in schema.SPECS:
        chain = schema.versions(spec.domain, spec.op_type)
        if spec is not chain[0]:
            continue
        for low, high in zip(chain, chain[1:], strict=False):
            REGISTRY.setdefault((spec.domain, spec.op_type, low.since, high.since), _to(high))
            REGISTRY.setdefault((spec.domain, spec.op_type, high.since, low.since), _to(low))


_defaults()


def path(domain: str, op_type: str, from_since: int, to_since: int) -> list[tuple[int, int]]:
    """The steps of one op from one of its versions to another, through each version between."""
    versions = [s.since for s in schema.versions(domain, op_type)]
    if from_since == to_since:
        return []
    i, j = versions.index(from_since), versions.index(to_since)
    walk = versions[i:j + 1] if i < j else versions[j:i + 1][::-1]
    return list(zip(walk, walk[1:], strict=False))


def convert(q: QNode, to_opset: int) -> QNode | Refusal:
    """A node moved to the version of its op in force at ``to_opset``, step by step."""
    spec = q.spec
    target = schema.lookup(spec.domain, spec.op_type, to_opset)
    if target is None:
        return Refusal(f"{spec.op_type} does not exist before opset "
                       f"{schema.versions(spec.domain, spec.op_type)[0].since}")
    for a, b in path(spec.domain, spec.op_type, spec.since, target.since):
        result = REGISTRY[(spec.domain, spec.op_type, a, b)](q)
        if isinstance(result, Refusal):
            return Refusal(f"{result.reason} (step {a} -> {b})", result.ways_out)
        q = result
    return q
