"""The version steps of the Q/DQ ops: each step between two neighbouring versions of one op in
the schema table, in both directions, gets ``retarget`` to the neighbour's schema as its
adapter in the one registry (convert/registry.py), unless a hand-written one is registered
for it. docs/convert.md lists what each step rewrites or refuses."""

from __future__ import annotations

from .. import schema
from .qnode import QNode
from .refusal import Refusal
from .registry import adapter, path, register
from .retarget import retarget


def _to(target: schema.OpSpec):
    def to_neighbour(q: QNode) -> QNode | Refusal:
        return retarget(q, target)

    to_neighbour.__name__ = f"{target.op_type}_to_{target.since}"
    return to_neighbour


def _defaults() -> None:
    for spec in schema.SPECS:
        chain = schema.versions(spec.domain, spec.op_type)
        if spec is not chain[0]:
            continue
        for low, high in zip(chain, chain[1:], strict=False):
            register(spec.op_type, low.since, high.since, domain=spec.domain, default=True)(_to(high))
            register(spec.op_type, high.since, low.since, domain=spec.domain, default=True)(_to(low))


_defaults()


def steps(domain: str, op_type: str, from_since: int, to_since: int) -> list[tuple[int, int]]:
    """The steps of one Q/DQ op from one of its versions to another."""
    return path([s.since for s in schema.versions(domain, op_type)], from_since, to_since)


def convert(q: QNode, to_opset: int) -> QNode | Refusal:
    """A node moved to the version of its op in force at ``to_opset``, step by step."""
    spec = q.spec
    target = schema.lookup(spec.domain, spec.op_type, to_opset)
    if target is None:
        return Refusal(f"{spec.op_type} does not exist before opset "
                       f"{schema.versions(spec.domain, spec.op_type)[0].since}")
    for a, b in steps(spec.domain, spec.op_type, spec.since, target.since):
        result = adapter(spec.domain, spec.op_type, a, b)(q)
        if isinstance(result, Refusal):
            return Refusal(f"{result.reason} (step {a} -> {b})", result.ways_out)
        q = result
    return q
