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

    @property
    def is_function(self) -> bool:
        return isinstance(self.owner, onnx.FunctionProto)


def node_label(node: onnx.NodeProto, index: int) -> str:
    """A node's name, or ``#index`` within its body for an unnamed node."""
    return node.name if node.name else f"#{index}"


def function_path(fn: onnx.FunctionProto) -> str:
    return f"function {fn.domain}.{fn.name}"


def subgraphs(node: onnx.NodeProto, index: int) -> Iterator[tuple[str, onnx.GraphProto]]:
    """(name within the node, graph) of every graph attribute, GRAPHS lists included."""
    label = node_label(node, index)
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


_reading = threading.local()  # .memo: (the model being read, its bodies or None)


@contextmanager
def reading(model: onnx.ModelProto):
    """A block in which the caller does not change ``model``: ``bodies(model)`` scans its
    nodes for subgraphs once, however many passes ask (check's safety checks, walk and
    model rules each did)."""
    before = getattr(_reading, "memo", None)
    if before is not None and before[0] is model:
        yield
        return
    _reading.memo = (model, None)
    try:
        yield
    finally:
        _reading.memo = before


def bodies(model: onnx.ModelProto) -> Iterator[Body]:
    """Every body of the model: each root, then its subgraphs depth first."""
    memo = getattr(_reading, "memo", None)
    if memo is not None and memo[0] is model:
        if memo[1] is None:
            memo = _reading.memo = (model, [b for root in roots(model) for b in within(root)])
        return iter(memo[1])
    return (b for root in roots(model) for b in within(root))


def within(root: Body) -> Iterator[Body]:
    """A body, then every subgraph inside it, depth first."""
    stack = [root]
    while stack:
        body = stack.pop()
        children = []
        attributed = []
        for i, node in enumerate(body.owner.node):
            if node.attribute:
                attributed.append(i)
                children.extend(Body(f"{body.path}/{sub}", g, body.path)
                                for sub, g in subgraphs(node, i))
        yield Body(body.path, body.owner, body.parent, tuple(attributed))
        stack.extend(reversed(children))


def all_nodes(model: onnx.ModelProto) -> Iterator[onnx.NodeProto]:
    for b in bodies(model):
        yield from b.owner.node
