"""The whole model, read once, for rules that look at more than one node.

The check engine builds a ``ModelView`` while it walks the model (one ``BodyView`` per
body, with the node facts it already read) and hands it to the model-level rules. What
only some rules need is computed on first use and kept: producer and consumer maps
per body, the values each body reads from outer scopes, where each subgraph hangs.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, field
from functools import cached_property

import onnx

from .. import schema
from .facts import NodeFacts, op_in_scope, read_facts
from .graphs import bodies, node_label, node_named, roots, subgraphs


def short_title(title: str) -> str:
    """A node's title as findings show it: 'QuantizeLinear-21 (ai.onnx)' -> 'QuantizeLinear-21 ai.onnx'."""
    if title.endswith(")") and " (" in title:
        op, _, domain = title[:-1].rpartition(" (")
        return f"{op} {domain}"
    return title


@dataclass(frozen=True)
class Site:
    """Where a finding of a model-level rule is: a node, or another part of the model
    (an opset import, a tensor). ``what`` starts the message ("node 'q1'
    (QuantizeLinear-21 (ai.onnx))", "initializer 'w' (int4)")."""

    graph: str
    label: str
    what: str
    op_type: str = ""
    domain: str = ""
    opset: int = 0
    index: int = -1  # the node's index in its body (-1: not a node); orders the findings
    title: str = ""  # what it is, short: "QuantizeLinear-21 ai.onnx" for a node ("": ``what``)


@dataclass(eq=False)
class BodyView:
    path: str
    owner: onnx.GraphProto | onnx.FunctionProto
    scope: object  # model.walk.Scope
    parent: BodyView | None
    nodes: list[onnx.NodeProto] = field(default_factory=list)
    facts: dict[int, NodeFacts] = field(default_factory=dict)
    # index -> the first facts read in the view that equal the node's (ModelView.same_as)
    same: dict[int, NodeFacts] = field(default_factory=dict)
    found_attributed: tuple[int, ...] | None = None  # graphs.Body.attributed, where known
    found_attr_types: frozenset[int] | None = None  # graphs.Body.attr_types, where known

    def may_hold(self, *types: int) -> bool:
        """Whether a node of the body may have an attribute of one of ``types``."""
        return self.found_attr_types is None or not self.found_attr_types.isdisjoint(types)

    @property
    def is_function(self) -> bool:
        return isinstance(self.owner, onnx.FunctionProto)

    # Model rules scan every node of a body, often several rules over the same fields:
    # each field is read from protobuf once, here, and kept as plain tuples.
    @cached_property
    def kinds(self) -> list[tuple[str, str]]:
        """(domain as spelled, op_type) of every node."""
        return [(n.domain, n.op_type) for n in self.nodes]

    @cached_property
    def io(self) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
        """(input names, output names) of every node (the facts' tuples where read)."""
        get = self.facts.get
        return [(f.inputs, f.outputs) if (f := get(i)) is not None else
                (tuple(n.input[:]), tuple(n.output[:])) for i, n in enumerate(self.nodes)]

    def keep(self, kinds: list, io: list) -> None:
        """``kinds`` and ``io`` as a pass over every node (the check engine's) read them."""
        self.__dict__.setdefault("kinds", kinds)
        self.__dict__.setdefault("io", io)

    def keep_walked(self, walked) -> None:
        """``io`` and ``kinds`` as inference by kind read them (model/infer_kinds.ByKind),
        before any facts: the facts then read the nodes' names and attributes from it too."""
        self.__dict__["io"], self.__dict__["kinds"] = walked.io, walked.kinds
        self.walked = walked

    walked = None  # (not a field: the ByKind ``keep_walked`` was given, else None)


    @cached_property
    def attributed(self) -> tuple[int, ...]:
        """Indices of the owner's nodes that have attributes."""
        if self.found_attributed is not None:
            return self.found_attributed
        return tuple(i for i, n in enumerate(self.owner.node) if n.attribute)

    @cached_property
    def producers(self) -> dict[str, int]:
        """Output name -> the index of the (first) node that produces it."""
        found: dict[str, int] = {}
        for i, (_, outs) in enumerate(self.io):
            for name in outs:
                if name:
                    found.setdefault(name, i)
        return found

    @cached_property
    def consumers(self) -> dict[str, list[tuple[int, int]]]:
        """Value name -> [(node index, input position)] of the nodes in this body reading it."""
        found: dict[str, list[tuple[int, int]]] = {}
        get = found.get
        for i, (ins, _) in enumerate(self.io):
            for k, name in enumerate(ins):
                if name:
                    readers = get(name)
                    if readers is None:
                        found[name] = [(i, k)]
                    else:
                        readers.append((i, k))
        return found

    @cached_property
    def defined(self) -> frozenset[str]:
        """Names the body has before its first node: graph inputs and initializers,
        function inputs."""
        if self.is_function:
            return frozenset(self.owner.input)
        g = self.owner
        scope = self.scope
        inits = (scope.initializer_names() if scope is not None and scope.owner is g
                 else [t.name for t in g.initializer])  # the scope has read them already
        return frozenset([i.name for i in g.input] + list(inits)
                         + [t.values.name for t in g.sparse_initializer])

    @cached_property
    def graph_inputs(self) -> frozenset[str]:
        return frozenset(self.owner.input) if self.is_function else frozenset(
            i.name for i in self.owner.input)


class ModelView:
    def __init__(self, model: onnx.ModelProto, base_dir: str):
        self.model = model
        self.base_dir = base_dir
        self.bodies: list[BodyView] = []
        self._by_path: dict[str, BodyView] = {}
        self._memo: dict = {}
        self._firsts: dict[NodeFacts, NodeFacts] = {}  # facts -> the first equal facts read
        self.shapes: dict[tuple, NodeFacts] = {}  # shape key -> the first facts read with it

    def same_as(self, body: BodyView, index: int, f: NodeFacts) -> NodeFacts:
        """The first facts read in this view equal to ``f``, the node's own: nodes whose facts
        are equal get one object, so that what is keyed on their value (the check's verdicts,
        the targets' sites) compares identities, one comparison of values per node in all."""
        c = body.same.get(index)
        if c is None:
            c = body.same[index] = self._firsts.setdefault(f, f)
        return c

    def shape_of(self, f: NodeFacts) -> NodeFacts:
        """The first facts read in this view with ``f``'s shape key (``NodeFacts.shape_key``:
        equal but perhaps for the constants' values), ``f`` itself when it is the first."""
        shape = self.shapes.setdefault(f.shape_key(), f)
        f.share(shape)
        return shape

    def memo(self, key, compute):
        """``compute()`` once per view: what several rules derive alike (a map of the
        linear Q outputs, say) is built once."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]

    def keep_families(self, body: BodyView, found: dict) -> None:
        """``of_family``'s map of ``body`` as a pass over its nodes in order (the check
        engine's) found it: family -> {first output name: (index, facts)} of the nodes with a
        schema, every node of the body read."""
        self._memo.setdefault(("families", body.path), found)

    def of_family(self, body: BodyView, family: str) -> dict[str, tuple[int, NodeFacts]]:
        """First output name -> (index, facts) of the body's nodes of one family, in node
        order. (Every family of the body is sorted out at the first call.)"""
        def compute():
            found: dict[str, dict[str, tuple[int, NodeFacts]]] = {}
            facts = body.facts
            for i in sorted(facts):
                f = facts[i]
                if f.spec is not None and f.outputs and f.outputs[0]:
                    found.setdefault(f.spec.family, {}).setdefault(f.outputs[0], (i, f))
            return found
        return self.memo(("families", body.path), compute).get(family, {})

    # ---- building (the engine) ---------------------------------------------------------
    def add(self, scope, owner, node: onnx.NodeProto) -> BodyView:
        body = self.body_of(scope, owner)
        body.nodes.append(node)
        return body

    def body_of(self, scope, owner) -> BodyView:
        """The body a scope's nodes go to (the engine appends to its ``nodes`` itself)."""
        body = self._by_path.get(scope.path)
        if body is None:
            parent = self._by_path.get(scope.parent.path) if scope.parent is not None else None
            body = BodyView(scope.path, owner, scope, parent)
            self._by_path[scope.path] = body
            self.bodies.append(body)
        return body

    # ---- reading (the rules) -----------------------------------------------------------
    def body(self, path: str) -> BodyView | None:
        return self._by_path.get(path)

    def graphs(self) -> list[BodyView]:
        """Every graph body (not functions), those without nodes included."""
        have = {b.path: b for b in self.bodies}
        extra = []
        for b in bodies(self.model):
            if b.is_function:
                continue
            seen = have.get(b.path)
            if seen is None:
                extra.append(BodyView(b.path, b.owner, None, None, found_attributed=b.attributed,
                                      found_attr_types=b.attr_types))
            elif seen.owner is b.owner:
                seen.found_attributed = b.attributed
                seen.found_attr_types = b.attr_types
        return [b for b in self.bodies if not b.is_function] + extra

    def facts(self, body: BodyView, index: int) -> NodeFacts | None:
        """The facts of a node of a known op (None for other ops), read as the check engine
        reads them: the op from the scope's cache, the names from ``body.io``, the attributes
        only where the node has some."""
        f = body.facts.get(index)
        if f is None:
            op = op_in_scope(body.scope, *body.kinds[index])
            if op is None:
                return None
            attributed = body.attributed  # (in order: looked up by bisection)
            at = bisect_left(attributed, index)
            f = self._read(body, index, op, at < len(attributed) and attributed[at] == index)
        return f

    def read_all(self, body: BodyView) -> None:
        """``facts`` of every node of the body not read yet, at once: a body the check did not
        walk (a converted model's), all of whose facts the targets' sites read. Each node is
        read by ``read_facts`` with its names from ``body.io`` and its op resolved once a kind
        (a copy of read_facts' loop inlined here saved 3 of 37 ms on 9,000 nodes: not worth a
        second reading of facts; tests/test_predict_speed_sites.py holds these to
        ``read_facts`` of each node alone)."""
        known, scope, attributed = body.facts, body.scope, set(body.attributed)
        ops: dict = {}  # kind -> its op_in_scope
        for index, kind in enumerate(body.kinds):
            if index in known:
                continue
            op = ops.get(kind, False)
            if op is False:
                op = ops[kind] = op_in_scope(scope, *kind)
            if op is not None:
                self._read(body, index, op, index in attributed)

    def _read(self, body: BodyView, index: int, op, attributed: bool) -> NodeFacts:
        f = body.facts[index] = read_facts(body.nodes[index], index, body.scope, self.base_dir, op,
                                           attributed, body.io[index])
        return f

    @cached_property
    def owners(self) -> dict[str, tuple[BodyView, int]]:
        """Subgraph path -> (the body holding the node that owns it, that node's index)."""
        if not self.children:  # no subgraphs: no node to look for
            return {}
        by_graph: dict[int, tuple[BodyView, int]] = {}
        for body in self.bodies:
            for i, node in enumerate(body.nodes):
                if node.attribute:
                    for _, g in subgraphs(node, i):
                        by_graph[id(g)] = (body, i)
        return {b.path: by_graph[id(b.owner)] for b in self.bodies if id(b.owner) in by_graph}

    @cached_property
    def outer_reads(self) -> dict[str, frozenset[str]]:
        """Body path -> the names its nodes (and their subgraphs, at any depth) read that it
        does not define itself: the outer-scope values it uses."""
        found: dict[str, frozenset[str]] = {}
        for body in reversed(self.bodies):  # subgraphs come after their parents in the walk
            local = set(body.defined)
            used: set[str] = set()
            for ins, outs in body.io:
                used.update(ins)
                local.update(outs)
            used.discard("")
            for child in self.children.get(body.path, ()):
                used |= found.get(child.path, frozenset())
            found[body.path] = frozenset(used - local)
        return found

    @cached_property
    def children(self) -> dict[str, list[BodyView]]:
        """Body path -> the subgraphs held by its nodes. (A training graph sees the main
        graph's names but is no node's subgraph: a root, like the main graph.)"""
        rooted = {r.path for r in roots(self.model)}
        found: dict[str, list[BodyView]] = {}
        for b in self.bodies:
            if b.parent is not None and b.path not in rooted:
                found.setdefault(b.parent.path, []).append(b)
        return found

    def node_site(self, body: BodyView, index: int) -> Site:
        node = body.nodes[index]
        f = self.facts(body, index)
        label = node_label(node, index)
        where = node_named(node.name, index, body.path)
        domain = schema.normalize_domain(node.domain)
        if f is not None:
            title, opset = f.title, f.opset or 0
        else:
            title = node.op_type if not domain else f"{node.op_type} ({schema.domain_name(domain)})"
            opset = schema.opset_of(body.scope.opsets, domain) or 0
        return Site(body.path, label, f"node {where} ({title})", node.op_type,
                    schema.domain_name(domain), opset, index, short_title(title))

    def site(self, graph: str, label: str, what: str, domain: str = "", opset: int = 0) -> Site:
        """A site that is not a node (an import, a tensor, the model)."""
        return Site(graph, label, what, "", schema.domain_name(domain) if domain else "", opset)

    def order(self, graph: str, index: int) -> tuple[int, int]:
        """Where a finding sorts: its body in walk order, then its node."""
        body = self._by_path.get(graph)
        return (self.bodies.index(body) if body is not None else len(self.bodies), index)


__all__ = ["BodyView", "ModelView", "Site", "short_title"]
