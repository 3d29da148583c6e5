"""Every node with its scope and its owner (the graph or function holding it)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import chain

import onnx

from ..model.tensors import read_value
from ..model.walk import Scope, graph_paths, walk_owned


@dataclass(slots=True)  # one a node: 100,000 of them for a model that size
class Site:
    scope: Scope
    owner: onnx.GraphProto | onnx.FunctionProto
    index: int
    node: onnx.NodeProto

    @property
    def in_function(self) -> bool:
        return isinstance(self.owner, onnx.FunctionProto)


def constants(site: Site, base_dir: str, fixed: bool = False):
    """``const(name)``: the value of a constant ``name`` seen from ``site``'s scope (None
    when it is not one), each read once. A subgraph's formal input hides a value of that name
    around it (IR.md: a subgraph "MAY refer to names introduced in outer graphs"; its input
    is the value it is given). With ``fixed`` (for a rewrite that computes new values from
    it), an initializer its graph also declares as an input is not one either: IR.md, "When
    an initializer has the same name as a graph input, it specifies a default value for that
    input", which "a runtime MAY allow a caller to" override (``_lookup``: "overridable")."""
    cache: dict[str, object] = {}

    def const(name: str):
        if name not in cache:
            kind, t = _lookup(site.scope, name) if name else (None, None)
            if kind == "input" or (kind == "overridable" and fixed):
                t = None
            cache[name] = None if t is None else read_value(t, base_dir)
        return cache[name]

    return const


def constant_tensor(scope: Scope, name: str, fixed: bool = False) -> onnx.TensorProto | None:
    """The tensor of constant ``name`` seen from ``scope``, as ``constants`` reads it (None
    where a subgraph's input hides it, or with ``fixed`` where it is a default)."""
    kind, t = _lookup(scope, name) if name else (None, None)
    return None if kind == "input" or (kind == "overridable" and fixed) else t


_INPUTS = ("graph inputs",)  # a scope's read_cache key of its graph's input names


def _lookup(scope: Scope, name: str) -> tuple[str | None, onnx.TensorProto | None]:
    """(what ``name`` is seen from ``scope``, its tensor): ("constant", tensor) for an
    initializer or a Constant's output, ("overridable", tensor) for an initializer its graph also
    lists as an input, ("input", None) where a graph's input of that name is found first (a
    subgraph's formal input hides an outer value), (None, None) where nothing holds it. Each
    graph's input names are read once, kept in its scope's read_cache."""
    s = scope
    while s is not None:
        t = s.values.get(name)
        owner = s.owner
        listed = False
        if isinstance(owner, onnx.GraphProto):
            names = s.read_cache.get(_INPUTS)
            if names is None:
                names = s.read_cache[_INPUTS] = frozenset(v.name for v in owner.input)
            listed = name in names
        if t is not None:
            return ("overridable" if listed else "constant"), t
        if listed:
            return "input", None
        s = s.parent
    return None, None


def sites(model: onnx.ModelProto, extra: dict | None = None) -> Iterator[Site]:
    """Every node with its scope and owner, in walk order (no recursion)."""
    for scope, owner, index, node in walk_owned(model, extra):
        yield Site(scope, owner, index, node)


def all_names(model: onnx.ModelProto, bodies=None) -> set[str]:
    """Every value and node name anywhere in the model, to make new names unique. ``bodies``:
    the model's analysed bodies (model/view.py ``BodyView``), whose nodes' names are read
    from the tuples the analysis keeps (every node of the walk is in one of them)."""
    names: set[str] = set()
    if bodies is not None:
        for body in bodies:
            for ins, outs in body.io:
                names.update(ins)
                names.update(outs)
            names.update([n.name for n in body.nodes])
    else:
        for site in sites(model):
            names.update(site.node.input)
            names.update(site.node.output)
            names.add(site.node.name)
    for _, g in graph_paths(model):
        names.update(t.name for t in g.initializer)
        names.update(v.name for v in list(g.input) + list(g.output) + list(g.value_info))
    for fn in model.functions:
        names.update(fn.input)
        names.update(fn.output)
    return names


def readers_anywhere(bodies: list) -> dict[str, int]:
    """How many node inputs, in every graph and function of a model, read each name (a node
    of a subgraph may read a value of the graph around it), counted from the model's analysed
    bodies (model/view.py ``BodyView``: every node of the walk is in one, its names read
    once: ``Context.bodies``)."""
    count: Counter = Counter()
    for body in bodies:
        count.update(chain.from_iterable([ins for ins, _ in body.io]))
    return dict(count)


class Namer:
    """New names, unique in the model: ``taken``, the names in use, or a function that
    finds them, called on the first name asked (most conversions make none)."""

    def __init__(self, taken: set[str] | Callable[[], set[str]]):
        self._taken = taken

    @property
    def taken(self) -> set[str]:
        if callable(self._taken):
            self._taken = self._taken()
        return self._taken

    def __call__(self, base: str) -> str:
        return _unique(self.taken, base)

    def names(self, bases: list[str]) -> list[str]:
        """``[self(base) for base in bases]``, the set of names taken read once."""
        taken = self.taken
        return [_unique(taken, base) for base in bases]


def _unique(taken: set[str], base: str) -> str:
    """``base`` where it is not taken, else the first of base_1, base_2 ... not taken; then
    taken."""
    name, i = base, 0
    while name in taken:
        i += 1
        name = f"{base}_{i}"
    taken.add(name)
    return name
