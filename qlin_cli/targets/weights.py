"""Where a weighted op's weight comes from: a quantized constant made float by a Cast (and
arithmetic on it) instead of a DequantizeLinear (QT502, TensorRT's "an IDequantizeLayer is
required between the weights and the linear operator").

``undequantized(body, index)`` follows input 1 of a Conv, ConvTranspose, MatMul or Gemm back
through ops that only convert, scale or reshape a constant, and says which quantized constant
it reached through a Cast without passing a DequantizeLinear, or None.
"""

from __future__ import annotations

from .. import schema
from ..schema import dtypes

WEIGHTED = frozenset({"Conv", "ConvTranspose", "MatMul", "Gemm"})
# ops a hand-written dequantization of a constant weight is made of, or that reshape it
THROUGH = frozenset({"Cast", "Sub", "Mul", "Div", "Reshape", "Transpose", "Squeeze", "Unsqueeze",
                     "Identity", "Flatten"})
QUANTIZED_KINDS = ("int", "float8", "float4")
MOST_STEPS = 6  # the longest chain followed: Cast, Sub, Mul, then a reshape or two


def undequantized(body, index: int) -> str | None:
    """"int8 constant 'w' through Cast -> Mul" where input 1 of node ``index`` (a weighted ai.onnx
    op of ``body``, an analysis' BodyView) is a quantized constant made float without a
    DequantizeLinear; None where a DequantizeLinear makes it, or it is a float constant, an
    activation, or anything not followed."""
    domain, op = body.kinds[index]
    if op not in WEIGHTED or schema.normalize_domain(domain) != schema.AI_ONNX:
        return None
    ins = body.io[index][0]
    if len(ins) < 2 or not ins[1]:
        return None
    found = _reach(body, ins[1], (), MOST_STEPS)
    if found is None:
        return None
    name, type_name, path = found
    return f"{type_name} constant '{name}' through {' -> '.join(reversed(path))}"


def _reach(body, name: str, path: tuple, steps: int):
    """(constant, its type, the ops from it to the weight, last first) where ``name`` is made
    from a quantized constant through THROUGH ops with a Cast among them; None otherwise."""
    j = body.producers.get(name)
    if j is None:
        t = _constant_type(body, name, None)
        return (name, t, path) if t is not None and "Cast" in path else None
    op = body.kinds[j][1]
    if op == "Constant":
        t = _constant_type(body, name, j)
        return (name, t, path) if t is not None and "Cast" in path else None
    if op not in THROUGH or steps == 0 or schema.normalize_domain(body.kinds[j][0]) != schema.AI_ONNX:
        return None  # a DequantizeLinear, an activation's op, or a chain too long to be a weight's
    ins = body.io[j][0]
    followed = ins[:2] if op in ("Sub", "Mul", "Div") else ins[:1]
    for x in followed:
        if x:
            found = _reach(body, x, (*path, op), steps - 1)
            if found is not None:
                return found
    return None


def _constant_type(body, name: str, constant: int | None) -> str | None:
    """The quantized element type of the initializer ``name`` or of Constant node ``constant``'s
    value, None for a float or unknown one."""
    if constant is None:
        scope = body.scope
        value = scope.find_value(name) if scope is not None else None
        proto = None if value is None else value.data_type
    else:
        attrs = body.nodes[constant].attribute
        proto = next((a.t.data_type for a in attrs if a.name == "value" and a.HasField("t")), None)
    d = None if proto is None else dtypes.BY_PROTO.get(proto)
    return d.name if d is not None and d.kind in QUANTIZED_KINDS and d.bits <= 16 else None
