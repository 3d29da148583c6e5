"""How conversion reports name nodes and ops."""

from __future__ import annotations

from ... import schema
from ...model.graphs import node_named
from ..sites import Site


def where(site: Site) -> str:
    n = site.node
    return f"{node_named(n.name, site.index)} in {site.scope.path}"


def op_label(site: Site) -> str:
    node = site.node
    version = schema.opset_of(site.scope.opsets, node.domain)
    return f"{node.op_type} ({schema.domain_name(node.domain)} {version})"
