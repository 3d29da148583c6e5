"""The ai.onnx version steps of QuantizeLinear / DequantizeLinear, one entry each.

Every step between two neighbouring versions is registered in both directions
for both ops, keyed by (domain, op_type, from_since, to_since). Each adapter is
``retarget`` to the neighbour's schema; the table says what the step changes, so
the report and docs/convert.md can say it too. tests/test_convert_adapters.py
holds the registry against the version history in onnx.defs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .. import schema
from ..schema import AI_ONNX
from .qnode import QNode
from .retarget import Refusal, retarget

Adapter = Callable[[QNode], "QNode | Refusal"]


@dataclass(frozen=True)
class Step:
    low: int
    high: int
    up: str  # what going up changes
    down: str  # what going down checks or rewrites


STEPS: tuple[Step, ...] = (
    Step(10, 13, "nothing to rewrite (axis appears, default 1)",
         "per-axis refused; axis dropped on per-tensor nodes"),
    Step(13, 19, "nothing to rewrite (saturate appears; float16/bfloat16 become possible)",
         "float8, float16/bfloat16 x or scale refused; saturate dropped where it has no effect"),
    Step(19, 21, "nothing to rewrite (blocked, 16-bit and 4-bit types appear)",
         "blocked, int16/uint16/int4/uint4 refused; output_dtype becomes an explicit zero point"),
    Step(21, 23, "nothing to rewrite (precision, float4e2m1; scale type may differ from x)",
         "precision stripped only when equal to the scale's type; float4e2m1 refused"),
    Step(23, 24, "nothing to rewrite (float8e8m0 scales appear)", "float8e8m0 scales refused"),
    Step(24, 25, "nothing to rewrite (int2/uint2 appear)", "int2/uint2 refused"),
    Step(25, 28, "nothing to rewrite (float6 types appear)", "float6e2m3/float6e3m2 refused"),
)

OPS = ("QuantizeLinear", "DequantizeLinear")


def _to(op_type: str, since: int) -> Adapter:
    target = next(s for s in schema.versions(AI_ONNX, op_type) if s.since == since)

    def adapter(q: QNode) -> QNode | Refusal:
        return retarget(q, target)

    adapter.__name__ = f"{op_type}_to_{since}"
    return adapter


REGISTRY: dict[tuple[str, str, int, int], Adapter] = {}
for _op in OPS:
    for _s in STEPS:
        REGISTRY[(AI_ONNX, _op, _s.low, _s.high)] = _to(_op, _s.high)
        REGISTRY[(AI_ONNX, _op, _s.high, _s.low)] = _to(_op, _s.low)


def path(from_since: int, to_since: int) -> list[tuple[int, int]]:
    """The steps from one version to another, through every version between."""
    versions = sorted({s.low for s in STEPS} | {s.high for s in STEPS})
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
