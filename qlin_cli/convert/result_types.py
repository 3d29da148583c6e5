"""Inference's types of a format conversion's result, worked out from the source's analysis
and one inference of each distinct node the passes wrote, instead of an inference of the
whole result (issue 35: "its result re-analysed only where it changed").

onnx's inference of a node reads the types of its inputs and its attributes; for the ops of
schema/inference.py's ``SHAPE_ONLY`` nothing else (no input's values). A node the passes left
as it was reads what it read in the source, so inference gives it the source's types; a node
they wrote is inferred alone, once per distinct (op, attributes, input types), as a model of
that one node (model/infer_kinds.py ``infer_alone``, which the source's inference by kind
asks too). An initializer the passes dropped (nothing reads it any more) changes no node's
type: the result's initializers are the source's that stay, then the rewrites' own.
``result_types`` gives what ``Analysis.inferred`` holds for the result (the same list, in
inference's order: the types of the main graph's node outputs, node by node, then its
outputs), or None wherever that reasoning does not cover the result, which is then inferred
whole as before: a body other than the main graph, declared value_info, a written node of
another op or of an input whose shape is not fully known, an untouched node that would read
another type than in the source, a value left untyped, a source inference that met an error,
a node of another domain than ai.onnx, except a written one of an op onnx.defs does not
define (com.microsoft MatMulNBits, QLinearAdd ...): inference leaves its outputs untyped,
and lists a graph output it makes as declared. tests/test_convert_result_types.py holds the
list equal to the whole inference's on the fixtures, the quantizer corpus and the bench models.
"""

from __future__ import annotations

import functools

import onnx
from onnx import helper

from .. import schema
from ..model.graphs import MAIN
from ..model.infer_kinds import infer_alone
from ..model.walk import type_of_bytes
from ..model.weightless import type_bytes
from ..schema.inference import SHAPE_ONLY
from .formats.to_qdq import Plain, plain


def result_types(source, model: onnx.ModelProto, made: dict | None) -> dict | None:
    """``Analysis.inferred`` of ``model``, the result of converting ``source`` (its analysis)
    whose main graph's nodes at the indices of ``made`` are those the passes wrote (each with
    its to_qdq.Plain twin, read instead of the node, or None: ``Result.made``); None where
    only an inference of the whole result says it."""
    if made is None or not _covered(source, model):
        return None
    graph = model.graph
    src = source.inferred[MAIN]
    outputs = len(source.model.graph.output)
    if len(graph.output) != outputs or len(src) < outputs:
        return None
    src_values = dict(src[:len(src) - outputs])
    src_outputs = dict(src[len(src) - outputs:])
    known = _declared(source, graph)
    if known is None:
        return None
    inferred = _Inferred(model)
    entries, producer = [], {}
    declared = [(vi.name, type_of_bytes(vi.type.SerializeToString())) for vi in graph.value_info]
    # inference types these where they are declared: in the value_info, in the graph's outputs
    ends = {vi.name for vi in graph.output} | {name for name, _ in declared}
    if len(ends) != len(graph.output) + len(declared):
        return None
    nodes = graph.node
    for index in range(len(nodes)):
        twin = made.get(index, _NOT_WRITTEN)
        if twin is not _NOT_WRITTEN:
            twin = twin or plain(nodes[index])
            outs = twin.output
            found = inferred.outputs(twin, known)
            if found is None:
                return None
        else:
            node = nodes[index]
            if node.domain and schema.normalize_domain(node.domain) != schema.AI_ONNX:
                return None  # (a vendor node the source's inference typed: left to the whole one)
            outs = tuple(node.output)
            if not _reads_as_before(node, known, producer, made, src_values, src_outputs):
                return None
            found = [src_values.get(o, src_outputs.get(o)) if o else None for o in outs]
            if any(o and (t is None or not t[0] or t[1] is None) for o, t in zip(outs, found, strict=True)):
                return None  # a value inference leaves untyped: propagation would look at it
        for name, t in zip(outs, found, strict=True):
            if name:
                producer[name] = index
                known[name] = t
                if name not in ends and t is not None:  # (None: a vendor op's, left untyped)
                    entries.append((name, t))
    head = _declared_values(declared, known, producer, made, src_values)
    tail = _outputs(graph, known, producer, made, src_outputs)
    return None if head is None or tail is None else {MAIN: head + entries + tail}


def _covered(source, model: onnx.ModelProto) -> bool:
    """Whether the reasoning covers the pair: both of one main graph only, the result of
    ai.onnx alone at the source's version, the source inferred whole."""
    if source.inferred is None or source.inference_errors or set(source.inferred) != {MAIN}:
        return False
    if model.functions or source.model.functions:
        return False
    now = schema.opset_of({o.domain: o.version for o in model.opset_import}, schema.AI_ONNX)
    was = schema.opset_of({o.domain: o.version for o in source.model.opset_import}, schema.AI_ONNX)
    # (another domain's nodes: only written ones of ops inference leaves untyped, _Inferred)
    if now is None or now != was:
        return False
    # (the source's inference typed its main graph alone: it has no subgraph; a written node of
    # SHAPE_ONLY holds none, and every other node of the result is the source's)
    return True


def _declared(source, graph: onnx.GraphProto) -> dict | None:
    """name -> (element type, dims) of the main graph's initializers and inputs, as inference
    starts from them (the source's initializers as its scope read them, then those the
    rewrites added after them); None where a name is both (an input an initializer defaults)."""
    body = source.bodies[0] if source.bodies else None
    before = len(source.model.graph.initializer)
    known = None
    if body is not None and body.path == MAIN and body.scope is not None \
            and len(body.scope.own_typed) == before:
        known = _kept_and_added(body.scope.own_typed, before, graph.initializer)
    if known is None:
        known = {t.name: (t.data_type, tuple(t.dims)) for t in graph.initializer}
    for vi in graph.input:
        if vi.name in known:
            return None
        known[vi.name] = type_of_bytes(vi.type.SerializeToString())
    return known


def _kept_and_added(own: dict, before: int, inits) -> dict | None:
    """``_declared``'s initializers, from ``own`` (the source's ``before`` initializers, as its
    scope read them) and the result's ``inits``: the source's that stay, in their order (the
    apply pass drops those nothing reads any more), then the rewrites' own, under names no
    initializer of the source has (apply.py would drop a new one of a dropped one's name too);
    None where the list is not so."""
    added = []
    for t in reversed(inits):  # the rewrites' initializers, from the end back to the source's
        name = t.name
        if name in own:
            break
        added.append((name, (t.data_type, tuple(t.dims))))
    kept = len(inits) - len(added)
    if kept == before:  # (no name of the source's gone: they all stay, in their order)
        known = dict(own)
    else:
        names = [t.name for t in inits[:kept]]
        if kept > before or not all(n in own for n in names):
            return None
        known = {n: own[n] for n in names}
    added.reverse()
    known.update(added)
    return known


def _reads_as_before(node, known: dict, producer: dict, made: dict, src_values: dict,
                     src_outputs: dict) -> bool:
    """Whether an untouched node reads inputs of the types it read in the source: each value a
    written node makes has the type the source's inference gave it, and each other value is
    made by an untouched node, or is an initializer or an input."""
    for x in node.input:
        if not x:
            continue
        at = producer.get(x)
        if at is None:
            if x not in known:  # made by no node: the source's maker is gone
                return False
        elif at in made and known.get(x) != src_values.get(x, src_outputs.get(x)):
            return False
    return True


def _complete(t) -> bool:
    return t is not None and bool(t[0]) and t[1] is not None and None not in t[1]


def _declared_values(declared: list, known: dict, producer: dict, made: dict,
                     src_values: dict) -> list | None:
    """The value_info's entries as inference gives them, in their order: a value no node makes
    as declared, one an untouched node makes as the source's inference gave it, one a written
    node makes as declared where that is complete and the node's (inference merges what it
    finds into the declared type; any other is left to it); None where neither holds."""
    head = []
    for name, t in declared:
        at = producer.get(name)
        if at is None:
            head.append((name, t))
        elif at in made:
            if not _complete(t) or t != known.get(name):
                return None
            head.append((name, t))
        elif name in src_values:
            head.append((name, src_values[name]))
        else:
            return None
    return head


def _outputs(graph, known: dict, producer: dict, made: dict, src_outputs: dict) -> list | None:
    """The graph outputs' entries as inference gives them: the source's, or the declared
    type of one a written node makes where that type is complete and the node's (inference
    might refine any other); None where neither holds."""
    tail = []
    for vi in graph.output:
        if producer.get(vi.name) in made:
            declared = type_of_bytes(vi.type.SerializeToString())
            t = known.get(vi.name)
            if not _complete(declared) or (t is not None and declared != t):
                return None
            tail.append((vi.name, declared))  # (t None: a vendor op's output, kept as declared)
        elif vi.name in src_outputs:
            tail.append((vi.name, src_outputs[vi.name]))
        else:
            return None
    return tail


_EMPTY = ()  # an input left out
_NOT_WRITTEN = object()  # a node the passes did not write
_NOT_YET = object()  # a kind not inferred yet


def _static(t) -> bool:
    """Whether an input's type is fully known (or the input left out)."""
    return t is _EMPTY or _complete(t)


class _Inferred:
    """The output types of written nodes, inferred once per distinct op, attributes and input
    types, as a model of that one node at the result's imports and IR version."""

    def __init__(self, model: onnx.ModelProto):
        self.opsets = [o.SerializeToString() for o in model.opset_import]
        self.ir_version = model.ir_version
        self.found: dict[tuple, list | None] = {}

    def outputs(self, node: Plain, known: dict) -> list | None:
        """The types of ``node``'s outputs (each None where inference leaves it untyped), or None
        where it is not covered."""
        op, domain, outs = node.op_type, node.domain, node.output
        if domain and schema.normalize_domain(domain) != schema.AI_ONNX:
            return [None] * len(outs) if _untyped(domain, op) else None
        if op not in SHAPE_ONLY:
            return None
        types = tuple([known.get(x) if x else _EMPTY for x in node.input])
        attrs = node.attribute
        key = (op, tuple([a.SerializeToString() for a in attrs]) if len(attrs) else (), types, len(outs))
        found = self.found.get(key, _NOT_YET)
        if found is _NOT_YET:
            found = self.found[key] = self._infer(node, types) if all(map(_static, types)) else None
        if found is None or all(outs):
            return found
        return [t if name else None for name, t in zip(outs, found, strict=True)]

    def _infer(self, node: Plain, types: tuple) -> list | None:
        ins = [f"i{k}" if t is not _EMPTY else "" for k, t in enumerate(types)]
        outs = [f"o{k}" for k in range(len(node.output))]
        alone = helper.make_node(node.op_type, ins, outs)
        alone.attribute.extend(node.attribute)
        got = infer_alone(alone, tuple([b"" if t is _EMPTY else type_bytes(*t) for t in types]),
                          self.opsets, self.ir_version)
        if got is None:  # an error the whole inference would meet as well: it says what follows
            return None
        found = [type_of_bytes(t) for t in got]
        if any(t is None or not t[0] or t[1] is None for t in found):
            return None
        return found


@functools.cache
def _untyped(domain: str, op: str) -> bool:
    """Whether inference leaves every output of a node of ``op`` in ``domain`` (not ai.onnx)
    untyped: onnx.defs has no schema of it, and it is none of the vendor Q/DQ ops that stand as
    their ai.onnx twins while the analysis infers (model/analysis.py vendor_twins)."""
    import onnx.defs

    return not onnx.defs.has(op, domain) and not schema.is_known_op(schema.normalize_domain(domain), op)
