"""Reach every node: the main graph, If/Loop/Scan subgraphs at any depth, and
model-local functions, each with the opset imports and the values in its scope.

The walk uses an explicit stack, so a deeply nested model cannot exhaust
Python's recursion limit.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import islice

import onnx
from onnx import AttributeProto, helper

from ..schema import normalize_domain
from .graphs import MAIN, Body, bodies, function_path, nodes_of, within
from .specialize import (
    body_types,
    call_signature,
    describe,
    formal_types,
    function_key,
    needs_inference,
)
from .tensors import census

Owner = "onnx.GraphProto | onnx.FunctionProto"

Shape = tuple  # of int | None


@dataclass
class Scope:
    path: str  # "main", "main/loop_1.body", "function local.Foo"
    opsets: dict[str, int]
    parent: Scope | None = None
    values: dict[str, onnx.TensorProto] = field(default_factory=dict)
    # name -> (elem_type, shape): initializers and constants first, then what the scope
    # declares and what inference adds, each kept only where it says more (``_better``).
    # A graph scope enters its initializers' types as the census read them; any other
    # tensor's is entered when first needed (``own_type``).
    types: dict[str, tuple[int, Shape | None]] = field(default_factory=dict)
    # name -> (elem_type, dims) of the initializer ``values`` holds under that name, as the
    # census read it (not for a Constant that took the name)
    own_typed: dict[str, tuple[int, Shape]] = field(default_factory=dict)
    is_function: bool = False
    read_cache: dict = field(default_factory=dict)  # id(tensor) -> value read by a rule
    ops: dict = field(default_factory=dict)  # (domain, op_type) -> model.facts.op_in_scope's answer
    consts: dict = field(default_factory=dict)  # name -> the model.facts.Const read_facts made
    owner: object = None  # the GraphProto a graph scope reads (None for a function's)
    initializers: int = 0  # how many distinct initializer names begin ``values``

    def initializer_names(self) -> Iterator[str]:
        """The names of the graph's initializers: the first entries of ``values``, which
        ``graph_scope`` enters before any Constant (a Constant of an initializer's name
        keeps that entry's place)."""
        return islice(self.values, self.initializers)

    def own_type(self, name: str) -> tuple[int, Shape | None] | None:
        """The type this scope itself gives ``name`` (not its parents): the one in ``types``,
        else that of the initializer or constant so named, entered now."""
        t = self.types.get(name)
        if t is None:
            tensor = self.values.get(name)
            if tensor is not None:
                t = self.types[name] = (tensor.data_type, tuple(tensor.dims[:]))
        return t

    def declare(self, name: str, t: tuple[int, Shape | None] | None) -> None:
        """Add a declared or inferred (elem_type, shape) of ``name`` (``_shape_of`` of its
        TypeProto), unless what is known is complete."""
        have = self.own_type(name)
        if have is not None and have[0] != 0 and have[1] is not None and None not in have[1]:
            return
        best = _better(have, t)
        if best is not None:
            self.types[name] = best

    def declare_infos(self, infos) -> None:
        """``declare`` every ValueInfoProto of ``infos``."""
        for vi in infos:
            self.declare(vi.name, _shape_of(vi.type))

    def find_const(self, name: str) -> tuple[onnx.TensorProto | None, tuple | None]:
        """(``find_value``'s tensor, its (elem_type, dims) when an initializer's census has them)."""
        s = self
        while s is not None:
            v = s.values.get(name)
            if v is not None:
                return v, s.own_typed.get(name)
            s = s.parent
        return None, None

    def find_value(self, name: str) -> onnx.TensorProto | None:
        s = self
        while s is not None:
            v = s.values.get(name)
            if v is not None:
                return v
            s = s.parent
        return None

    def find_type(self, name: str) -> tuple[int, Shape | None] | None:
        s = self
        while s is not None:
            t = s.types.get(name) or s.own_type(name)
            if t is not None:
                return t
            s = s.parent
        return None


def _better(old, new):
    """Keep the more informative of two (elem_type, shape) declarations."""
    if new is None:
        return old
    if old is None or old[0] == 0 or (old[1] is None and new[1] is not None):
        return new
    return old


_PARSED: dict[bytes, tuple | None] = {}  # serialized TypeProto -> (elem_type, shape)


def _shape_of(tp: onnx.TypeProto) -> tuple[int, Shape | None] | None:
    """(elem_type, dims) of a tensor type; None for other types."""
    return type_of_bytes(tp.SerializeToString())


def type_of_bytes(data: bytes) -> tuple[int, Shape | None] | None:
    """``_shape_of`` of a serialized TypeProto. Most value_infos of a model repeat a few
    types, so parsed results are kept by their bytes."""
    if data in _PARSED:
        return _PARSED[data]
    found = _parse_type(onnx.TypeProto.FromString(data))
    if len(_PARSED) < 65536:
        _PARSED[data] = found
    return found


def _parse_type(tp: onnx.TypeProto) -> tuple[int, Shape | None] | None:
    if not tp.HasField("tensor_type"):
        return None
    tt = tp.tensor_type
    if not tt.HasField("shape"):
        return (tt.elem_type, None)
    dims = tuple(d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim)
    return (tt.elem_type, dims)


def constant_tensor(node: onnx.NodeProto) -> onnx.TensorProto | None:
    """The value a Constant node produces, as a TensorProto (None if not a plain value)."""
    for a in node.attribute:
        if a.name == "value" and a.type == AttributeProto.TENSOR:
            return a.t
        if a.name == "value_float" and a.type == AttributeProto.FLOAT:
            return helper.make_tensor("", onnx.TensorProto.FLOAT, [], [a.f])
        if a.name == "value_floats" and a.type == AttributeProto.FLOATS:
            return helper.make_tensor("", onnx.TensorProto.FLOAT, [len(a.floats)], list(a.floats))
        if a.name == "value_int" and a.type == AttributeProto.INT:
            return helper.make_tensor("", onnx.TensorProto.INT64, [], [a.i])
        if a.name == "value_ints" and a.type == AttributeProto.INTS:
            return helper.make_tensor("", onnx.TensorProto.INT64, [len(a.ints)], list(a.ints))
    return None


def _fill(scope: Scope, nodes) -> None:
    for node in nodes:
        if node.op_type == "Constant" and normalize_domain(node.domain) == "" and node.output:
            t = constant_tensor(node)
            if t is not None:
                name = node.output[0]
                scope.own_type(name)  # enter an initializer's type first: it wins
                scope.values[name] = t
                scope.own_typed.pop(name, None)
                scope.types.setdefault(name, (t.data_type, tuple(t.dims)))


def graph_scope(
    graph: onnx.GraphProto, path: str, opsets, parent: Scope | None, extra: dict | None = None,
    attributed: tuple[int, ...] | None = None,
) -> Scope:
    """The scope of a graph body; ``extra``: inference's types (``scope_types``);
    ``attributed``: the indices of its nodes that have attributes, where known (only they
    can be Constants that give a value)."""
    scope = Scope(path, opsets, parent, owner=graph)
    c = census(graph)
    values = scope.values
    values.update(zip(c.names, c.tensors, strict=True))
    scope.initializers = len(values)
    # each initializer's type as the census read it (what ``own_type`` would enter)
    scope.own_typed.update(zip(c.names, c.typed, strict=True))
    scope.types.update(scope.own_typed)
    nodes = nodes_of(graph)
    _fill(scope, nodes if attributed is None else [nodes[i] for i in attributed])
    scope.declare_infos(graph.input)
    scope.declare_infos(graph.value_info)
    scope.declare_infos(graph.output)
    if extra:  # shape inference's results, after what the model declares
        types = scope.types
        for name, t in extra.get(path, ()):
            if t is not None and name not in types and name not in values:
                types[name] = t  # the usual case, and what declare() would do
            else:
                scope.declare(name, t)
    return scope


def function_scope(fn: onnx.FunctionProto, path: str | None = None, types: dict | None = None) -> Scope:
    """The scope of a function body; ``types`` are those its call site gives
    (model/specialize.py), after what the body itself declares."""
    opsets = {o.domain: o.version for o in fn.opset_import}
    scope = Scope(path or function_path(fn), opsets, None, is_function=True)
    _fill(scope, fn.node)
    scope.declare_infos(getattr(fn, "value_info", ()))
    for name, found in (types or {}).items():
        for tp in found:
            scope.declare(name, _shape_of(tp))
    return scope


def walk_bodies(
    model: onnx.ModelProto, extra_types: dict | None = None
) -> Iterator[tuple[Scope, Owner, list[onnx.NodeProto]]]:
    """Yield (scope, owner, its nodes as a list) for every body (``graphs.bodies``: main
    graph, training graphs, functions, subgraphs). The owner is the GraphProto or
    FunctionProto that holds the nodes; a node's index in the list is its index there.

    A model-local function's body comes once per distinct signature of its calls
    (model/specialize.py), typed as that call types it; a body nobody calls comes
    once, untyped. Its nodes then come more than once, with different scopes.

    ``extra_types`` maps a scope path to the (name, type) pairs shape inference found
    (``scope_types``); they fill what the model itself does not declare.

    A caller that loops over the nodes itself (the check engine) saves a generator
    step per node; ``walk_owned`` gives them one by one.
    """
    walk = _Walk(model)
    yield from walk.graphs(extra_types)
    yield from walk.functions()


class _Walk:
    """The state of one ``walk_bodies``: each body's scope, and the signatures of the calls
    of each model-local function met so far."""

    def __init__(self, model: onnx.ModelProto):
        self.model = model
        self.local = {function_key(fn.domain, fn.name, fn.overload): fn for fn in model.functions}
        self.calls: dict[tuple, dict] = {key: {} for key in self.local}  # key -> {signature: None}
        self.scopes: dict[str, Scope] = {}
        self._grown: set[tuple] = set()  # functions whose calls gained a signature (``functions``)

    def graphs(self, extra_types: dict | None):
        """The graphs: main and training graphs, with their subgraphs."""
        opsets = {o.domain: o.version for o in self.model.opset_import}
        for body in bodies(self.model):
            if body.is_function:
                break  # the functions' roots come last: ``functions`` walks them per call signature
            parent = self.scopes.get(body.parent) if body.parent else None
            scope = graph_scope(body.owner, body.path, parent.opsets if parent else opsets,
                                parent, extra_types, body.attributed)
            yield self._entered(scope, body)

    def functions(self):
        """Each function's body once per call signature (a call met inside one gives its
        callee another signature to read), or once untyped when nobody calls it."""
        done: set = set()
        inferred = {key for key, fn in self.local.items() if needs_inference(fn, self.local)}
        order = {key: i for i, key in enumerate(self.local)}
        pending = deque(self.local)
        waiting = set(pending)
        while pending:
            key = pending.popleft()
            waiting.discard(key)
            calls = self.calls[key]
            sigs = [s for s in calls if (key, s) not in done] or (
                [None] if (key, None) not in done and not calls else [])
            for sig in sigs:
                done.add((key, sig))
                self._grown.clear()  # the callees given a new signature while this body is read
                yield from self._function(key, sig, key in inferred)
                for k in sorted(self._grown - waiting, key=order.__getitem__):
                    pending.append(k)
                    waiting.add(k)

    def _function(self, key: tuple, sig, inferred: bool):
        fn = self.local[key]
        path = function_path(fn)
        if sig is not None and len(self.calls[key]) > 1:
            path += f" [{describe(sig)}]"
        if sig is None:
            types = None
        else:
            types = body_types(self.model, fn, sig) if inferred else formal_types(fn, sig)
        for body in within(Body(path, fn, None)):
            if body.is_function:
                scope = function_scope(fn, path, types)
            else:
                parent = self.scopes[body.parent]
                scope = graph_scope(body.owner, body.path, parent.opsets, parent, None, body.attributed)
            yield self._entered(scope, body)

    def _entered(self, scope: Scope, body: Body):
        """(scope, owner, nodes) of a body, its scope kept and its calls noted."""
        self.scopes[body.path] = scope
        nodes = nodes_of(body.owner)
        if self.local:
            for node in nodes:
                key = function_key(node.domain, node.op_type, node.overload)
                if key in self.local:
                    sig = call_signature(self.local[key], node, scope)
                    if sig not in self.calls[key]:
                        self.calls[key][sig] = None
                        self._grown.add(key)
        return scope, body.owner, nodes


def walk_owned(
    model: onnx.ModelProto, extra_types: dict | None = None
) -> Iterator[tuple[Scope, Owner, int, onnx.NodeProto]]:
    """Yield (scope, owner, index in the owner, node) for every node of every body, in
    the order and with the scopes of ``walk_bodies``."""
    for scope, owner, nodes in walk_bodies(model, extra_types):
        for i, node in enumerate(nodes):
            yield scope, owner, i, node


def walk(
    model: onnx.ModelProto, extra_types: dict | None = None
) -> Iterator[tuple[Scope, int, onnx.NodeProto]]:
    """Yield (scope, index in its graph, node) for every node, as walk_owned does."""
    for scope, _, index, node in walk_owned(model, extra_types):
        yield scope, index, node


def graph_paths(model: onnx.ModelProto) -> Iterator[tuple[str, onnx.GraphProto]]:
    """(scope path, graph) for every graph body, named as walk() names them."""
    for b in bodies(model):
        if not b.is_function:
            yield b.path, b.owner


def scope_types(model: onnx.ModelProto, only_main: bool = False) -> dict[str, list]:
    """{scope path: [(name, (elem_type, shape) or None), ...]}: the types of every graph's
    value_info and outputs (of the main graph alone with ``only_main``), as
    ``Scope.declare`` takes them."""
    graphs = [(MAIN, model.graph)] if only_main else graph_paths(model)
    return {path: [(vi.name, _shape_of(vi.type)) for vi in (*g.value_info, *g.output)]
            for path, g in graphs}
