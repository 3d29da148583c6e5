"""How conversion reports name nodes and ops."""

from __future__ import annotations

from ... import schema
from ...finding import Finding
from ...model.graphs import label_of, node_named
from ..codes import get as code_of
from ..sites import Site


def where(site: Site) -> str:
    n = site.node
    return f"{node_named(n.name, site.index)} in {site.scope.path}"


def op_label(site: Site) -> str:
    node = site.node
    version = schema.opset_of(site.scope.opsets, node.domain)
    return f"{node.op_type} ({schema.domain_name(node.domain)} {version})"


def refused(site: Site, code: str, reason: str, ways_out=()) -> Finding:
    """The refusal of ``code`` (convert/codes/) of the node at ``site``: ``reason`` says why,
    ``ways_out`` the options that get past it (each tried on the node)."""
    node = site.node
    return Finding(
        code, code_of(code).severity, reason, label_of(node.name, site.index), node.op_type,
        schema.domain_name(node.domain), schema.opset_of(site.scope.opsets, node.domain) or 0,
        site.scope.path, where=where(site), title=op_label(site), ways_out=tuple(ways_out))
