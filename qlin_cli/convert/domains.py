"""Crossing domains: ai.onnx <-> com.microsoft <-> com.amd.quark.

The op of each kind in each domain is read from the schema table. The crossing
itself is ``retarget`` to the target domain's schema, which writes ``axis``
explicitly wherever the defaults differ (a domain whose absent axis means
per-tensor, a vendor whose kernel disagrees with its page), so qlin writes
``axis`` on every per-axis node that crosses a domain.
"""

from __future__ import annotations

from .. import schema
from . import adapters
from .qnode import QNode
from .refusal import Refusal
from .retarget import retarget


def convert_node(q: QNode, to_domain: str | None, to_opset: int) -> QNode | Refusal:
    """``q`` for the target domain (None: its own) and ai.onnx opset."""
    domain = q.spec.domain if to_domain is None else to_domain
    if domain == q.spec.domain:
        return adapters.convert(q, to_opset)
    target = schema.spec_for(domain, q.kind, to_opset)
    if target is None:
        return Refusal(f"ai.onnx opset {to_opset} has no {schema.op_for(domain, q.kind)}")
    return retarget(q, target)


def _suggested(domain: str) -> bool:
    """Domains offered as a way out: those whose runtime reads the node as documented."""
    return all(s.kernel_axis_default is None for s in schema.SPECS if s.domain == domain)


def ways_out(q: QNode, to_domain: str | None, to_opset: int, newest: int) -> list[str]:
    """Other targets that can express ``q``: a higher opset, another domain."""
    found: list[str] = []
    domain = q.spec.domain if to_domain is None else to_domain
    if domain == schema.AI_ONNX:
        for opset in range(to_opset + 1, newest + 1):
            if not isinstance(convert_node(q, to_domain, opset), Refusal):
                found.append(f"--to-opset {opset}")
                break
    for dom, name in schema.DOMAIN_NAMES.items():
        if dom != domain and _suggested(dom) and not isinstance(convert_node(q, dom, to_opset), Refusal):
            found.append(f"--to-domain {name}")
    return found
