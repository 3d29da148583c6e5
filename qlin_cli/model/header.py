"""A model's header: every field of a ModelProto but its graph (the IR version, opset
imports, producer, metadata, functions ...). A conversion that rewrites no node changes its
model's header alone; such a result is that header and the source's graph, which is not
copied (on 100,000 nodes the copy was 86 MB and 0.07 s) until someone asks for the whole
model (convert/state.py ``Result.whole``), and is written from the source's graph
(``serialized``)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import onnx

_GRAPH = "graph"


def header_of(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of ``model`` without its graph."""
    head = onnx.ModelProto()
    _put_fields(head, model)
    return head


def put_header(model: onnx.ModelProto, head: onnx.ModelProto) -> None:
    """Replace every field of ``model`` but its graph with ``head``'s (fields ``head`` does not
    set are cleared); the graph is left as it is."""
    for fd in model.DESCRIPTOR.fields:
        if fd.name != _GRAPH:
            model.ClearField(fd.name)
    _put_fields(model, head)


def _put_fields(model: onnx.ModelProto, source: onnx.ModelProto) -> None:
    for fd, value in source.ListFields():
        if fd.name == _GRAPH:
            continue
        if hasattr(value, "extend"):  # a repeated field (of messages or of plain values)
            getattr(model, fd.name).extend(value)
        elif fd.message_type is not None:
            getattr(model, fd.name).CopyFrom(value)
        else:
            setattr(model, fd.name, value)


@contextmanager
def header_kept(model: onnx.ModelProto) -> Iterator[None]:
    """A block in which ``model``'s header may change: it gets its own back after, even on an
    error (its graph is not looked at)."""
    own = header_of(model)
    try:
        yield
    finally:
        put_header(model, own)


def serialized(head: onnx.ModelProto, graph_from: onnx.ModelProto) -> bytes:
    """The bytes of the model whose header is ``head`` and whose graph is ``graph_from``'s,
    byte for byte what serializing such a model would give (protobuf writes a message's
    fields in the order of their numbers, whichever object holds them): ``graph_from`` wears
    ``head`` while it is serialized (``header_kept``)."""
    with header_kept(graph_from):
        put_header(graph_from, head)
        return graph_from.SerializeToString()


def whole(head: onnx.ModelProto, graph_from: onnx.ModelProto) -> onnx.ModelProto:
    """The model whose header is ``head`` and whose graph is a copy of ``graph_from``'s: a
    copy of ``graph_from`` wearing ``head``, so that the fields protobuf does not know (a
    newer onnx's), which a header does not carry, are ``graph_from``'s, as a copy's are."""
    made = onnx.ModelProto()
    made.CopyFrom(graph_from)
    put_header(made, head)
    return made
