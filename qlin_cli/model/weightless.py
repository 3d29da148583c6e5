"""The bytes shape inference reads, without the weights no op's inference reads.

onnx's shape inference parses the model it is given into C++ messages, infers, and
serializes the result back: every byte of inline weights is copied four times (in, the
C++ model, out, and the Python bytes of the result). On a 50,000-node model with 13 MB of
weights that was 37 MB of the check's peak memory and 10% of the inference's time.

Which data inference reads: an op's inference reads an input's values only where they
decide an output's shape (Reshape's shape, Slice's starts, Pad's pads, a Reduce's axes,
TopK's k ...), each a 1-D tensor or a scalar by its operator page; and only of the ops
listed in ``SHAPE_ONLY`` is it known that they read none. So a tensor goes without its
data when it has two or more dims, lies in the file (not external, nothing to leave out)
and every node that reads it, in any graph, is of an op of that list. A model with
model-local functions keeps everything (a function body reads its caller's names under
other names). Where a node of another op reads a weight, that weight keeps its data.

Such a tensor may go further: as a graph input of its element type and dims, not an
initializer at all (``_movable``), in a model of IR version 4 or later. onnx's inference
types an initializer exactly so (an input's type, its dims as dim values: implementation.cc,
``ProcessInitializer``) and keeps a pointer to its data for the ops that ask for values,
none of SHAPE_ONLY; parsing 62,500 tensors and building each one's type was a fifth of the
inference of a 50,000-node model. This holds with data propagation off, as every inference
qlin runs has it (model/infer.py ``_infer``): with it on, onnx's propagation reads the values
of small Add, Mul and Gather inputs (a shape computed from constants), which a tensor moved so
would no longer give it. tests/test_weightless.py holds the types and the strict
errors to those of the whole model on every fixture and quantizer output.
"""

from __future__ import annotations

from collections import Counter

import onnx

from ..schema import AI_ONNX, normalize_domain
from ..schema.inference import SHAPE_ONLY
from .graphs import all_nodes
from .tensors import census, element_count

# below this many bytes of such weights, the model goes as it is (nothing worth a pass)...
WORTH_BYTES = 2**20
# ... unless it has this many initializers that may go as typed inputs (``_movable``): onnx's
# inference of a 50,000-node model took 0.39 s with its 62,500 initializers, 0.32 s with them
# as inputs (the tensors' parse and their type's construction in C++, one by one)
MOVE_AT_LEAST = 1024


def without_weights(model: onnx.ModelProto, data: bytes) -> bytes | None:
    """``data`` (``model`` serialized) with the main graph's weights that no op's inference
    reads left out (see the module's text): each as a typed graph input where it may stand
    so (``_movable``), else without its raw data; None when there are not WORTH_BYTES of
    such data nor MOVE_AT_LEAST such tensors, or the bytes cannot be read so. ``model`` is
    read, not changed."""
    if len(model.functions) or not model.HasField("graph"):
        return None
    c = census(model.graph)
    outside = set(c.external)
    sizes = {typed: _bytes(*typed) for typed in set(c.typed)}
    wanted = [i for i, typed in enumerate(c.typed) if sizes[typed] and i not in outside]
    worth = sum(sizes[c.typed[i]] for i in wanted) >= WORTH_BYTES
    moving = model.ir_version >= 4 and len(c.typed) - len(outside) >= MOVE_AT_LEAST  # (may be)
    if not moving and not worth:
        return None
    read = set()  # names some node of another op reads
    for node in all_nodes(model):
        if node.op_type not in SHAPE_ONLY:
            read.update(node.input)
        else:
            domain = node.domain
            if domain and normalize_domain(domain) != AI_ONNX:  # ("": ai.onnx, without a call)
                read.update(node.input)
    cls = _reader()
    if cls is None:
        return None
    try:
        light = cls.FromString(data)
        graph = light.graph
        tensors = graph.initializer
        if len(tensors) != len(c.typed):
            return None
        names = [t.name for t in tensors]
        moved = _movable(model.graph, c, names, read) if moving else []
        if len(moved) < MOVE_AT_LEAST:
            if not worth:
                return None  # (nothing worth a pass after all: the model goes as it is)
            moved = []
        for i in wanted:
            t = tensors[i]
            if t.name not in read:
                t.ClearField("raw_data")
        if moved:
            _as_inputs(graph, c.typed, names, moved)
        return light.SerializeToString()
    except Exception:  # inference is a help: the model goes as it is
        return None


def _movable(graph: onnx.GraphProto, c, names: list[str], read: set) -> list[int]:
    """The initializers inference may read as graph inputs of their type and shape: onnx's
    inference types an initializer of an IR 4 or later model (not also an input) as
    exactly that (its dims as dim values) and reads its data only where an op's inference
    asks for an input's values, which no op of SHAPE_ONLY does (with data propagation off:
    see the module's text). Left as they are: a tensor
    outside the file, one another op reads, one whose name is also a graph input, output,
    value_info or another initializer (onnx checks those against each other), and one of
    a type or dims the tensor check refuses (the initializer's own errors stay onnx's)."""
    outside = set(c.external)
    declared = {v.name for v in (*graph.input, *graph.output, *graph.value_info)}
    declared.update(sp.values.name for sp in graph.sparse_initializer)
    if len(set(names)) != len(names):
        declared.update(n for n, k in Counter(names).items() if k > 1)
    fit = {typed: _BITS.get(typed[0]) is not None and all(d >= 0 for d in typed[1]) for typed in set(c.typed)}
    return [i for i, (name, typed) in enumerate(zip(names, c.typed, strict=True))
            if fit[typed] and name and name not in read and name not in declared and i not in outside]


def _as_inputs(graph, typed: list, names: list[str], moved: list[int]) -> None:
    """Move the initializers ``moved`` (indices) of the reader's ``graph`` to its inputs, each
    as a ValueInfoProto of its element type and dims, written here as protobuf writes it;
    the other initializers stay, in order."""
    tensors = graph.initializer
    kept = [tensors[i].SerializeToString() for i in sorted(set(range(len(tensors))).difference(moved))]
    del tensors[:]
    for b in kept:
        tensors.add().MergeFromString(b)
    tails = {t: _field(2, type_bytes(*t)) for t in {typed[i] for i in moved}}  # the type, once per type
    inputs = []
    for i in moved:
        name = names[i].encode()
        # field 1, the name: for most names its key and one byte of length, without a call
        field = _SHORT[len(name)] + name if len(name) < 0x80 else _field(1, name)
        inputs.append(field + tails[typed[i]])
    graph.input.extend(inputs)


_SHORT = [bytes((1 << 3 | 2, n)) for n in range(0x80)]  # the key and length of a name of n < 128 bytes


def type_bytes(data_type: int, dims: tuple) -> bytes:
    """A TypeProto of a tensor of ``data_type`` and ``dims`` (a scalar: a shape of no dims)."""
    t = onnx.TypeProto()
    t.tensor_type.elem_type = data_type
    shape = t.tensor_type.shape
    shape.SetInParent()
    for d in dims:
        shape.dim.add().dim_value = d
    return t.SerializeToString()


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field: its key, the payload's length as a varint, the payload."""
    n = len(payload)
    head = bytearray((number << 3 | 2,))
    while n >= 0x80:
        head.append(n & 0x7F | 0x80)
        n >>= 7
    head.append(n)
    return bytes(head) + payload


def _bytes(data_type: int, dims: tuple) -> int:
    """The bytes of a tensor of two or more non-negative dims of a type of whole bytes,
    else 0 (a tensor that keeps its data)."""
    bits = _BITS.get(data_type)
    if bits is None or bits % 8 or len(dims) < 2 or min(dims) < 0:
        return 0
    return element_count(dims) * bits // 8  # (saturating: dims a hostile file gives stay cheap)


def _reader():
    """A message class that reads a serialized ModelProto as its main graph's initializers,
    each as its name and raw data (field numbers from onnx.proto); every other field is
    kept as the bytes it was and written back so."""
    from .partial import reader

    return reader("qlin_weightless", (
        ("Tensor", (("name", 8, "string", False), ("raw_data", 9, "bytes", False))),
        ("Graph", (("initializer", 5, "Tensor", True), ("input", 11, "bytes", True))),
        ("Model", (("graph", 7, "Graph", False),)),
    ))


def _bits() -> dict[int, int]:
    from ..schema import dtypes

    return {proto: d.bits for proto, d in dtypes.BY_PROTO.items()}


_BITS = _bits()
