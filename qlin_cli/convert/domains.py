"""Crossing domains: ai.onnx <-> com.microsoft <-> com.amd.quark.

The op of each kind in each domain is read from the schema table. The crossing
itself is ``retarget`` to the target domain's schema, which writes ``axis``
explicitly wherever the defaults differ: com.microsoft has no default (absent
means per-tensor), Quark's page says 1 and its kernel uses 0, so qlin writes
``axis`` on every per-axis node that crosses a domain.
"""

from __future__ import annotations

from .. import schema
from ..schema import AI_ONNX, QUARK, OpSpec
from . import adapters
from .qnode import QNode
from .retarget import Refusal, retarget

NAMES = {name: domain for domain, name in schema.DOMAIN_NAMES.items()}  # "ai.onnx" -> ""


def op_for(domain: str, kind: str) -> str:
    for spec in schema.SPECS:
        if spec.domain == domain and spec.kind == kind:
            return spec.op_type
    raise KeyError((domain, kind))


def target_spec(domain: str, kind: str, ai_opset: int) -> OpSpec | None:
    op = op_for(domain, kind)
    if domain == AI_ONNX:
        return schema.lookup(AI_ONNX, op, ai_opset)
    return schema.versions(domain, op)[-1]


def convert_node(q: QNode, to_domain: str | None, to_opset: int) -> QNode | Refusal:
    """``q`` for the target domain (None: its own) and ai.onnx opset."""
    domain = q.spec.domain if to_domain is None else to_domain
    if domain == AI_ONNX and q.spec.domain == AI_ONNX:
        return adapters.convert(q, to_opset)
    if domain == q.spec.domain:
        return q  # vendor ops have one version: nothing to do
    target = target_spec(domain, q.kind, to_opset)
    if target is None:
        return Refusal(f"ai.onnx opset {to_opset} has no {op_for(domain, q.kind)}")
    return retarget(q, target)


def ways_out(q: QNode, to_domain: str | None, to_opset: int, newest: int) -> list[str]:
    """Other targets that can express ``q``: a higher opset, another domain."""
    found: list[str] = []
    domain = q.spec.domain if to_domain is None else to_domain
    for opset in range(to_opset + 1, newest + 1):
        if domain != AI_ONNX:
            break
        if not isinstance(convert_node(q, to_domain, opset), Refusal):
            found.append(f"--to-opset {opset}")
            break
    for name, dom in NAMES.items():
        if dom != domain and dom != QUARK and not isinstance(convert_node(q, dom, to_opset), Refusal):
            found.append(f"--to-domain {name}")
    return found
