"""The ai.onnx version steps of QuantizeLinear / DequantizeLinear, one entry each.

Every step between two neighbouring versions of the schema table is registered
in both directions for both ops, keyed by (domain, op_type, from_since,
to_since). Each adapter is ``retarget`` to the neighbour's schema, so what a
step rewrites or refuses follows from the two schemas (docs/convert.md lists
it). tests/test_convert_adapters.py holds the registry against the version
history in onnx.defs.
"""

from __future__ import annotations

from collections.abc import Callable

from .. import schema
from ..schema import AI_ONNX
from .qnode import QNode
from .retarget import Refusal, retarget

Adapter = Callable[[QNode], "QNode | Refusal"]
OPS = ("QuantizeLinear", "DequantizeLinear")


def _to(op_type: str, since: int) -> Adapter:
    target = next(s for s in schema.versions(AI_ONNX, op_type) if s.since == since)

    def adapter(q: QNode) -> QNode | Refusal:
        return retarget(q, target)

    adapter.__name__ = f"{op_type}_to_{since}"
    return adapter


def _since(op_type: str) -> list[int]:
    return [s.since for s in schema.versions(AI_ONNX, op_type)]


REGISTRY: dict[tuple[str, str, int, int], Adapter] = {}
for _op in OPS:
    _v = _since(_op)
    for _low, _high in zip(_v, _v[1:], strict=False):
        REGISTRY[(AI_ONNX, _op, _low, _high)] = _to(_op, _high)
        REGISTRY[(AI_ONNX, _op, _high, _low)] = _to(_op, _low)


def path(from_since: int, to_since: int) -> list[tuple[int, int]]:
    """The steps from one version to another, through every version between
    (QuantizeLinear and DequantizeLinear change at the same opsets)."""
    versions = sorted({v for op in OPS for v in _since(op)})
    if from_since == to_since:
        return []
    i, j = versions.index(from_since), versions.index(to_since)
    walk = versions[i:j + 1] if i < j else versions[j:i + 1][::-1]
    return list(zip(walk, walk[1:], strict=False))


def convert(q: QNode, to_opset: int) -> QNode | Refusal:
    """An ai.onnx Q/DQ node moved to the version in force at ``to_opset``, step by step."""
    target = schema.lookup(AI_ONNX, q.spec.op_type, to_opset)
    if target is None:
        return Refusal(f"{q.spec.op_type} does not exist before opset "
                       f"{schema.versions(AI_ONNX, q.spec.op_type)[0].since}")
    for a, b in path(q.spec.since, target.since):
        result = REGISTRY[(AI_ONNX, q.spec.op_type, a, b)](q)
        if isinstance(result, Refusal):
            return Refusal(f"{result.reason} (step {a} -> {b})", result.ways_out)
        q = result
    return q
