"""How conversion entries and refusals name nodes and ops, and the sites the passes read a
graph at a time (every pass and formats/ use them: a module of convert/, not of passes/,
so that formats/ reads it without importing the passes)."""

from __future__ import annotations

from .. import schema
from ..finding import Finding
from ..model.graphs import label_of, node_named
from .codes import get as code_of
from .sites import Site
from .state import Entry


def where(site: Site) -> str:
    n = site.node
    return f"{node_named(n.name, site.index)} in {site.scope.path}"


def op_label(site: Site, labels: dict | None = None) -> str:
    """How a report names the node's op: "QuantizeLinear (ai.onnx 21)". ``labels``: the
    labels worked out, by (scope, domain, op type), read and filled here (the scopes live as
    long as the sites: their ids are their own)."""
    node = site.node
    kind = (id(site.scope), node.domain, node.op_type)
    found = None if labels is None else labels.get(kind)
    if found is None:
        version = schema.opset_of(site.scope.opsets, node.domain)
        found = f"{node.op_type} ({schema.domain_name(node.domain)} {version})"
        if labels is not None:
            labels[kind] = found
    return found


def located(e: Entry, site: Site, ops: dict) -> Entry:
    """``e``, made from ``site`` (its ``where`` and ``op_label``), with the node's fields
    ``locate`` would give it, which then passes it over; ``ops``: (id(scope), domain, op type)
    -> (domain name, opset), kept across the nodes of one conversion."""
    n, scope = site.node, site.scope
    kind = (id(scope), n.domain, n.op_type)
    op = ops.get(kind)
    if op is None:  # the scopes live as long as the sites: their ids are their own
        op = ops[kind] = (kind[2], schema.domain_name(n.domain), schema.opset_of(scope.opsets, n.domain) or 0)
    # (the op type's text, its domain name and opset, one object each for every node of the kind)
    e.node, e.graph, e.op_type, e.domain, e.opset = label_of(n.name, site.index), scope.path, *op
    return e


def entry_of(site: Site, action: str, changes: list[str], known: dict, **kw) -> Entry:
    """``Entry(where(site), op_label(site), action, changes, **kw)``, made ``located``: ``locate``
    then passes it over, where a conversion whose every entry is made so walks no site for
    them. ``known``: the op labels and node fields worked out, kept across one pass's entries."""
    labels, ops = known.setdefault("labels", {}), known.setdefault("ops", {})
    return located(Entry(where(site), op_label(site, labels), action, changes, **kw), site, ops)


def locate(entries: list[Entry], sites: list[Site]) -> None:
    """Give each of ``entries`` its node as fields (``Entry.node``, ``graph``, ``op_type``,
    ``domain``, ``opset``): an entry names its node by ``where`` and ``op_label`` of its site,
    so the site is found by those two (nodes that share both share every field). Entries made
    ``located`` already are passed over (every node kept as it is: no walk of the sites)."""
    entries = [e for e in entries if not e.op_type]
    wanted = {(e.where, e.op) for e in entries}
    places = {e.where for e in entries}  # a site elsewhere is passed over without its op label
    fields: dict[tuple[str, str], tuple] = {}
    ops: dict[tuple, tuple] = {}  # (id(scope), domain, op type) -> (op_label, domain name, opset)
    for site in sites if wanted else ():
        at = where(site)
        if at not in places:
            continue
        n = site.node
        kind = (id(site.scope), n.domain, n.op_type)
        op = ops.get(kind)
        if op is None:  # the scopes live as long as the sites: their ids are their own
            opset = schema.opset_of(site.scope.opsets, n.domain) or 0
            op = ops[kind] = (op_label(site), schema.domain_name(n.domain), opset)
        key = (at, op[0])
        if key in wanted and key not in fields:
            fields[key] = (label_of(n.name, site.index), site.scope.path, n.op_type, op[1], op[2])
    for e in entries:
        if (e.where, e.op) in fields:
            e.node, e.graph, e.op_type, e.domain, e.opset = fields[(e.where, e.op)]


def refused(site: Site, code: str, reason: str, ways_out=()) -> Finding:
    """The refusal of ``code`` (convert/codes/) of the node at ``site``: ``reason`` says why,
    ``ways_out`` the options that get past it (each tried on the node)."""
    node = site.node
    return Finding(
        code, code_of(code).severity, reason, label_of(node.name, site.index), node.op_type,
        schema.domain_name(node.domain), schema.opset_of(site.scope.opsets, node.domain) or 0,
        site.scope.path, where=where(site), title=op_label(site), ways_out=tuple(ways_out))


def by_graph(sites: list[Site]) -> list[list[Site]]:
    """The sites of each graph (functions left out), in walk order: what the passes that
    move a tensor as a whole (shift, symmetric) look at one graph at a time."""
    found: dict[int, list[Site]] = {}
    for site in sites:
        if not site.in_function:
            found.setdefault(id(site.owner), []).append(site)
    return list(found.values())


def readers_within(sites: list[Site], anywhere: dict[str, int]) -> dict[str, list[Site]]:
    """name -> the sites of one graph that read it, for the names no node elsewhere reads
    (a subgraph node may read a value of the graph around it: ``anywhere`` counts the
    readers of the whole model, ``sites.readers_anywhere``)."""
    readers: dict[str, list[Site]] = {}
    for s in sites:
        for x in s.node.input:
            readers.setdefault(x, []).append(s)
    return {x: got for x, got in readers.items() if len(got) == anywhere.get(x)}

