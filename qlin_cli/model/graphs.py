"""The one iterator over every body of nodes in a model.

A body is the main graph, a ``training_info`` graph (initialization or
algorithm), a model-local function, or a subgraph held by any node attribute of
kind GRAPH or GRAPHS inside any of those, at any depth. Check, convert, the
safety checks and every model-wide scan reach nodes through ``bodies``; nothing
else walks a model.

Order: each root (main graph, training graphs, functions), then its subgraphs
depth first, in attribute order. The walk keeps an explicit stack, so deeply
nested models cannot exhaust Python's recursion limit.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import onnx
from onnx import AttributeProto

MAIN = "main"


@dataclass(frozen=True)
class Body:
    path: str  # "main", "main/loop.body", "training_info[0].algorithm", "function local.F"
    owner: onnx.GraphProto | onnx.FunctionProto
    parent: str | None  # the path of the body whose names this one sees (None: a root)
    # indices of the nodes that have attributes (as ``within`` yields it; None before):
    # passes that look into attributes skip the other nodes without touching them again
    attributed: tuple[int, ...] | None = None
    # the AttributeProto types its nodes' attributes have (None: not known), so that a pass
    # looking for one kind (tensors, sparse tensors) skips a body that has none
    attr_types: frozenset[int] | None = None

    def may_hold(self, *types: int) -> bool:
        """Whether a node of the body may have an attribute of one of ``types``."""
        return self.attr_types is None or not self.attr_types.isdisjoint(types)

    @property
    def is_function(self) -> bool:
        return isinstance(self.owner, onnx.FunctionProto)


def node_label(node: onnx.NodeProto, index: int) -> str:
    """A node's name, or ``#index`` within its body for an unnamed node."""
    return label_of(node.name, index)


def label_of(name: str, index: int) -> str:
    """``node_label`` from the name and index."""
    return name if name else f"#{index}"


def node_named(name: str, index: int, graph: str | None = None) -> str:
    """How a message names a node: 'name' (quoted), or #index (``in graph`` when given,
    for a message read away from its body)."""
    if name:
        return f"'{name}'"
    return f"#{index} in {graph}" if graph else f"#{index}"


def function_path(fn: onnx.FunctionProto, domain: str | None = None) -> str:
    """'function local.F', or 'function local.F:fast' for an overload: each function its
    own (``domain``: spelled another way than the function does)."""
    d = fn.domain if domain is None else domain
    return f"function {d}.{fn.name}" + (f":{fn.overload}" if fn.overload else "")


def subgraphs(node: onnx.NodeProto, index: int,
              label: str | None = None) -> Iterator[tuple[str, onnx.GraphProto]]:
    """(name within the node, graph) of every graph attribute, GRAPHS lists included;
    ``label`` names the node (default ``node_label``)."""
    label = label or node_label(node, index)
    for a in node.attribute:
        if a.type == AttributeProto.GRAPH:
            yield f"{label}.{a.name}", a.g
        elif a.type == AttributeProto.GRAPHS:
            for i, g in enumerate(a.graphs):
                yield f"{label}.{a.name}[{i}]", g


def roots(model: onnx.ModelProto) -> list[Body]:
    """The main graph, the training graphs (which see the main graph's names) and the
    model-local functions."""
    found = [Body(MAIN, model.graph, None)]
    for i, t in enumerate(model.training_info):
        if t.HasField("initialization"):
            found.append(Body(f"training_info[{i}].initialization", t.initialization, MAIN))
        if t.HasField("algorithm"):
            found.append(Body(f"training_info[{i}].algorithm", t.algorithm, MAIN))
    found += [Body(function_path(fn), fn, None) for fn in model.functions]
    return found


# .memo: [the model being read, its bodies or None, {id(owner): (owner, its nodes),
# ("init", id(graph)): (graph, its initializers)}, whether it only answers (``changing``)]
_reading = threading.local()


@contextmanager
def reading(model: onnx.ModelProto):
    """A block in which the caller does not change ``model``: ``bodies(model)`` scans its
    nodes for subgraphs once, however many passes ask (check's safety checks, walk and
    model rules each did), and ``nodes_of`` / ``initializers_of`` read a body's nodes and
    initializers from protobuf once (each read makes a Python object per element)."""
    before = getattr(_reading, "memo", None)
    if before is not None and before[0] is model:
        yield
        return
    _reading.memo = [model, None, {}, False]
    try:
        yield
    finally:
        _reading.memo = before


@contextmanager
def changing():
    """A block that changes models (a conversion's working copy): nothing read in it is kept,
    so that an outer ``reading`` block does not hand back a body's nodes as they were before
    the change (a copy's graph read, then rewritten in place, is the same object). What the
    outer block read before (the source's bodies, nodes and initializers, which nothing
    changes) is still answered from it: a conversion's passes scanned all the source's nodes
    for subgraphs ten times otherwise (0.2 s on 100,000 nodes)."""
    before = getattr(_reading, "memo", None)
    _reading.memo = None if before is None else [*before[:3], True]
    try:
        yield
    finally:
        _reading.memo = before


def bodies(model: onnx.ModelProto) -> Iterator[Body]:
    """Every body of the model: each root, then its subgraphs depth first."""
    memo = getattr(_reading, "memo", None)
    if memo is not None and memo[0] is model and (memo[1] is not None or not memo[3]):
        if memo[1] is None:
            memo[1] = [b for root in roots(model) for b in within(root)]
        return iter(memo[1])
    return (b for root in roots(model) for b in within(root))


def nodes_of(owner) -> list[onnx.NodeProto]:
    """The nodes of a graph or function, as a list (read once inside ``reading``; do not
    change it)."""
    return _kept(owner, id(owner), "node")


def initializers_of(graph: onnx.GraphProto) -> list[onnx.TensorProto]:
    """The initializers of a graph, as a list (read once inside ``reading``; do not change
    it)."""
    return _kept(graph, ("init", id(graph)), "initializer")


def _kept(owner, key, field: str) -> list:
    return kept(owner, key, lambda: list(getattr(owner, field)))


def kept(owner, key, compute):
    """``compute()``, once per ``key`` inside ``reading`` (``owner``: the message it is
    about, which the memo keeps alive, so that its id is not another's); every time outside."""
    memo = getattr(_reading, "memo", None)
    if memo is None:
        return compute()
    found = memo[2].get(key)
    if found is None or found[0] is not owner:  # (the id of an object gone: not this one)
        if memo[3]:  # (``changing``: answered, not kept)
            return compute()
        found = memo[2][key] = (owner, compute())
    return found[1]


def within(root: Body) -> Iterator[Body]:
    """A body, then every subgraph inside it, depth first."""
    stack = [root]
    while stack:
        body = stack.pop()
        owners = []  # (index, node) of the nodes that hold a subgraph
        attributed = []
        kinds: set[int] = set()
        # the nodes as protobuf gives them one by one: an attribute list asked of a node kept
        # in ``nodes_of``'s list stays with it (9 MB on 50,000 nodes, most never read again)
        for i, node in enumerate(body.owner.node):
            if node.attribute:
                attributed.append(i)
                types = {a.type for a in node.attribute}
                kinds |= types
                if not types.isdisjoint(_GRAPH_KINDS):
                    owners.append((i, node))
        children = []
        for (i, node), label in zip(owners, _owner_labels(owners), strict=True):
            children.extend(Body(f"{body.path}/{sub}", g, body.path)
                            for sub, g in subgraphs(node, i, label))
        yield Body(body.path, body.owner, body.parent, tuple(attributed), frozenset(kinds))
        stack.extend(reversed(children))


_GRAPH_KINDS = (AttributeProto.GRAPH, AttributeProto.GRAPHS)


def _owner_labels(owners: list) -> list[str]:
    """A label per subgraph-holding node of one body, no two alike, so no two subgraphs
    share a path: a node's name (or #index); where nodes share a name, the first keeps
    it and each later one gets its index too ('if', then 'if#7'). (Paths are keys: the
    check's view, fix and the findings tell subgraphs apart by them.)"""
    labels = [node_label(node, i) for i, node in owners]
    if len(set(labels)) == len(labels):
        return labels  # the usual case
    count = Counter(labels)
    taken = {label for label in labels if count[label] == 1}
    out = []
    for (i, _), label in zip(owners, labels, strict=True):
        if count[label] > 1:
            while label in taken:  # '#index' appended until no other label has it
                label += f"#{i}"
            taken.add(label)
        out.append(label)
    return out


def all_nodes(model: onnx.ModelProto) -> Iterator[onnx.NodeProto]:
    for b in bodies(model):
        yield from b.owner.node
