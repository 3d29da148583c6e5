"""How conversion reports name nodes and ops."""

from __future__ import annotations

from ... import schema
from ..sites import Site


def where(site: Site) -> str:
    n = site.node
    label = f"'{n.name}'" if n.name else f"#{site.index}"
    return f"{label} in {site.scope.path}"


def op_label(site: Site) -> str:
    node = site.node
    version = schema.opset_of(site.scope.opsets, node.domain)
    return f"{node.op_type} ({schema.domain_name(node.domain)} {version})"
