"""Every node with its scope and its owner (the graph or function holding it)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import onnx

from ..model.walk import Scope, function_scope, graph_scope, subgraphs


@dataclass
class Site:
    scope: Scope
    owner: onnx.GraphProto | onnx.FunctionProto
    index: int
    node: onnx.NodeProto

    @property
    def in_function(self) -> bool:
        return isinstance(self.owner, onnx.FunctionProto)


def sites(model: onnx.ModelProto, extra: dict | None = None) -> Iterator[Site]:
    """Main graph and its subgraphs, then each function and its subgraphs (no recursion)."""
    opsets = {o.domain: o.version for o in model.opset_import}
    roots: list = [(model.graph, graph_scope(model.graph, "main", opsets, None, extra))]
    roots += [(fn, function_scope(fn)) for fn in model.functions]
    for owner, scope in roots:
        stack = [(owner, scope)]
        while stack:
            own, sc = stack.pop()
            pending = []
            for i, node in enumerate(own.node):
                yield Site(sc, own, i, node)
                for sub_path, g in subgraphs(node, i):
                    path = f"{sc.path}/{sub_path}"
                    pending.append((g, graph_scope(g, path, sc.opsets, sc, extra)))
            stack.extend(reversed(pending))


def all_names(model: onnx.ModelProto) -> set[str]:
    """Every value and node name anywhere in the model, to make new names unique."""
    names: set[str] = set()
    for site in sites(model):
        names.update(site.node.input)
        names.update(site.node.output)
        names.add(site.node.name)
    stack = [model.graph]
    while stack:
        g = stack.pop()
        names.update(t.name for t in g.initializer)
        names.update(v.name for v in list(g.input) + list(g.output) + list(g.value_info))
        for n in g.node:
            stack.extend(sg for _, sg in subgraphs(n, 0))
    for fn in model.functions:
        names.update(fn.input)
        names.update(fn.output)
    return names


class Namer:
    def __init__(self, taken: set[str]):
        self.taken = taken

    def __call__(self, base: str) -> str:
        name, i = base, 0
        while name in self.taken:
            i += 1
            name = f"{base}_{i}"
        self.taken.add(name)
        return name
