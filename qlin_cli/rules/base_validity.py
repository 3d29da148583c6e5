"""What the model-validity rules (QL0xx) share: the names each graph defines, how onnx's
own element checks are called on one node or tensor, and how their messages are cut.

The QL0xx rules report what onnx.checker.check_model(full_check=True) rejects, each at
its place and all of them in one run (the checker stops at the first). Where an element
check of onnx's is exact and cheap (a node against its schema, a small tensor), the rule
calls it on that element alone and places its message; the checks across a graph (SSA,
definition before use, outputs produced, unique names) are made here, on the analysis.
"""

from __future__ import annotations

import functools
from collections import Counter
from itertools import chain

import onnx
from onnx import AttributeProto, checker

from .. import schema
from ..model.infer_kinds import in_order

_GRAPH_KINDS = (AttributeProto.GRAPH, AttributeProto.GRAPHS)


_INT = (-2**31, 2**31 - 1)  # what onnx's context holds; a version outside is QL001's


@functools.lru_cache(maxsize=256)
def context(ir_version: int, opsets: tuple[tuple[str, int], ...]):
    """onnx's CheckerContext for one scope (its IR version and opset imports; a version
    that does not fit onnx's int is left out: QL001 reports it)."""
    ctx = checker.C.CheckerContext()
    ctx.ir_version = min(max(ir_version, 0), _INT[1])
    ctx.opset_imports = {d: v for d, v in opsets if _INT[0] <= v <= _INT[1]}
    return ctx


_LEXICAL = checker.C.LexicalScopeContext()


def check_node(node: onnx.NodeProto, ir_version: int, opsets: dict) -> str | None:
    """onnx's check of one node (attributes well formed, the op known at the imported
    version, not deprecated, the schema's arity and attributes), or None when it passes.
    Subgraphs are checked as bodies of their own: here each stands as an empty graph."""
    if any(a.type in _GRAPH_KINDS for a in node.attribute):
        node = _without_subgraphs(node)
    try:
        checker.check_node(node, context(ir_version, tuple(sorted(opsets.items()))), _LEXICAL)
    except checker.ValidationError as e:
        return message(e)
    return None


def _without_subgraphs(node: onnx.NodeProto) -> onnx.NodeProto:
    stub = onnx.NodeProto()
    stub.CopyFrom(node)
    for a in stub.attribute:
        if a.type == AttributeProto.GRAPH:
            a.g.Clear()
            a.g.name = "subgraph"
        elif a.type == AttributeProto.GRAPHS:
            for g in a.graphs:
                g.Clear()
                g.name = "subgraph"
    return stub


def check_tensor(tensor: onnx.TensorProto, ir_version: int) -> str | None:
    """onnx's check of one tensor (a data type, one value field, its size), or None."""
    return _problem(checker.check_tensor, tensor, ir_version)


def check_sparse(sparse: onnx.SparseTensorProto, ir_version: int) -> str | None:
    return _problem(checker.check_sparse_tensor, sparse, ir_version)


def _problem(check, proto, ir_version: int) -> str | None:
    """What onnx's ``check`` of ``proto`` says is wrong, or None."""
    try:
        check(proto, context(ir_version, (("", 1),)))
    except checker.ValidationError as e:
        return message(e)
    return None


def all_valid(tensors, ir_version: int) -> bool:
    """Whether onnx finds nothing wrong with any of ``tensors`` (inline ones), in one call:
    they stand as the initializers of an otherwise empty graph. A tensor-by-tensor look is
    needed only when this says no (most models pass, at one call instead of thousands)."""
    stub = onnx.GraphProto(name="initializers")
    stub.initializer.extend(tensors)
    try:
        checker.check_graph(stub, context(max(ir_version, 4), (("", 1),)), _LEXICAL)
    except checker.ValidationError:
        return False
    return True


def message(e: Exception) -> str:
    """onnx's message without the context lines it appends."""
    text = str(e).split("==> Context:")[0].strip()
    return " ".join(text.split())


def outer_names(view, body) -> frozenset[str]:
    """The names a body sees from the scopes around it (its parents' inputs, initializers
    and node outputs, up to the main graph); a function sees none."""
    def compute():
        names: set[str] = set()
        parent = body.parent
        while parent is not None:
            names |= defined_in(view, parent)
            parent = parent.parent
        return frozenset(names)
    return view.memo(("outer names", body.path), compute)


def defined_in(view, body) -> frozenset[str]:
    """Every name a body defines: graph inputs, initializers, node outputs (a function's
    inputs and node outputs)."""
    def compute():
        names = set(body.defined)
        names.update(chain.from_iterable([outs for _, outs in body.io]))  # at C speed, not per node
        names.discard("")
        return frozenset(names)
    return view.memo(("defined in", body.path), compute)


def visible_outer(view, body) -> frozenset[str]:
    """The outer names a subgraph may not shadow: those its owner node sees (the enclosing
    graph's inputs, initializers and the outputs of the nodes before the owner, and so on
    outward). The owner's own outputs and later nodes' are not among them, as onnx.checker
    has it; a training graph sees the whole main graph."""
    def compute():
        owned = view.owners.get(body.path)
        if owned is None:
            return outer_names(view, body)
        parent, k = owned
        names = set(parent.defined)
        for _, outs in parent.io[:k]:
            names.update(outs)
        names.discard("")
        return frozenset(names) | visible_outer(view, parent)
    return view.memo(("visible outer", body.path), compute)


def produced(view, body) -> dict[str, int]:
    """How many nodes of a body produce each name."""
    def compute():
        counts = Counter(chain.from_iterable([outs for _, outs in body.io]))  # counted in C
        counts.pop("", None)
        return dict(counts)
    return view.memo(("produced", body.path), compute)


def redefinitions(view, body) -> frozenset[str]:
    """The names in a body that break single static assignment (see ``redefined``); for
    a body in SSA form, none (one pass, then nothing per node)."""
    if in_order(body.walked):  # the walk of inference by kind found none (infer_kinds.in_order)
        return frozenset()
    counts = produced(view, body)
    twice = {name for name, n in counts.items() if n > 1}
    return frozenset(twice | (counts.keys() & (body.defined | visible_outer(view, body))))


def undefined(view, body) -> frozenset[str]:
    """The names a body's nodes read that nothing in its scope defines."""
    if in_order(body.walked):  # the walk of inference by kind read every name after its definition
        return frozenset()

    def compute():
        used = set(chain.from_iterable([ins for ins, _ in body.io]))  # at C speed, not per node
        used.discard("")
        # ``defined_in`` without making it: a set of every name of a large graph stays in
        # memory (8 MB on 100,000 nodes) where ``produced`` is kept anyway
        used.difference_update(body.defined, produced(view, body).keys(), outer_names(view, body))
        return frozenset(used)
    return view.memo(("undefined", body.path), compute)


def is_defined(view, body, name: str) -> bool:
    """Whether ``name`` is in ``defined_in(view, body)``, asked without making that set."""
    return bool(name) and (name in body.defined or name in produced(view, body))


def redefined(view, body, outs) -> list[tuple[str, str]]:
    """(name, how) of each output of a node that breaks single static assignment: another
    node produces it too, it is a graph input or initializer (function input), or a name
    of an outer graph. The same for every producer, whatever the node order."""
    counts, own, outer = produced(view, body), body.defined, visible_outer(view, body)
    found = []
    for name in outs:
        if not name:
            continue
        if name in own:
            found.append((name, "is also an input or initializer of its graph"))
        elif counts.get(name, 0) > 1:
            found.append((name, f"is produced by {counts[name]} nodes of its graph"))
        elif name in outer:
            found.append((name, "is a name of an outer graph: subgraphs may not shadow it"))
    return found


def scope_opsets(body) -> dict:
    """The opset imports a body's nodes are checked against, spelled as the model spells
    them (onnx's check takes "" and "ai.onnx" for the default domain)."""
    return dict(body.scope.opsets) if body.scope is not None else {}


def is_known(domain: str, op_type: str) -> bool:
    """An op qlin has a schema for: the QL1xx-QL4xx rules judge its nodes."""
    return schema.knows(domain, op_type)
