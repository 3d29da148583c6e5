"""Types and shapes from onnx shape inference, as a help to what models declare."""

from __future__ import annotations

import math

import onnx
from onnx import AttributeProto

from ..schema import dtypes
from .graphs import MAIN, bodies, nodes_of
from .safety import attribute_tensors, sparse_tensors
from .tensors import census, nbytes
from .walk import scope_types, type_of_bytes
from .weightless import without_weights

# Tensors whose data is at most this size keep it in the copy shape inference sees (the
# shape, axes, pads ... inputs some ops' inference reads); larger ones keep type and dims.
KEEP_DATA_BYTES = 4096
_DATA_ATTRIBUTES = {AttributeProto.TENSOR, AttributeProto.TENSORS, AttributeProto.SPARSE_TENSOR,
                    AttributeProto.SPARSE_TENSORS, AttributeProto.GRAPH, AttributeProto.GRAPHS}


def inferred_types(model: onnx.ModelProto, light: bytes | None = None) -> dict | None:
    """{scope path: [(name, (elem_type, shape)), ...]} from onnx shape inference, or None
    when it cannot run. ``light``: what ``inference_input`` gave, when the caller has it.
    (``run_inference`` also gives strict inference's errors; model/analysis.py reads both.)

    Inference sees a skeleton of the model (``skeleton``): every tensor keeps its
    type and dims, but external references and data above KEEP_DATA_BYTES are left
    out, since copying, serializing and parsing back inline weights would cost
    several times the model's size. Where the skeleton would differ from the model
    only by external references (``_same_as_skeleton``: no inline tensor above that size),
    the model goes as it is: the skeleton is built in Python, node by node, and on
    30,000 nodes took as long as the inference itself. An external reference gives
    inference no data either way (tests/test_hardening2_bounds.py), so the types are
    the same on both paths, whichever command asks.
    """
    return run_inference(model, light, strict=False)[0]


def run_inference(model: onnx.ModelProto, light: bytes | None = None, *,
                  strict: bool = True) -> tuple[dict | None, tuple[str, ...]]:
    """(types as ``inferred_types`` gives them, the errors of strict inference).

    ``strict``: inference runs once as onnx.checker's full_check runs it (types checked,
    every node's error gathered); a model it accepts costs that one run. Only when it
    rejects the model does a second, lenient run give the types (``inference_errors``
    tells which of the errors are the model's own)."""
    if light is None:
        light = inference_input(model)
        if light is None:
            return None, ()
    # the copy has the model's bodies: when the model has no subgraph, neither has the copy
    # (and looking for them would visit every node again)
    only_main = [b.path for b in bodies(model) if not b.is_function] == [MAIN]
    try:
        return _run(light, only_main, strict)
    finally:
        give_back(len(light))


def _run(light: bytes, only_main: bool, strict: bool) -> tuple[dict | None, tuple[str, ...]]:
    errors: tuple[str, ...] = ()
    if strict:
        try:
            return read_inferred(_infer(light, True), only_main), ()
        except onnx.shape_inference.InferenceError as e:
            errors = split_errors(str(e))
        except Exception:  # inference is a help, not a requirement
            return None, ()
    try:
        return read_inferred(_infer(light), only_main), errors
    except Exception:  # inference is a help, not a requirement
        return None, errors


GIVE_BACK_ABOVE = 2**20  # bytes of model: below, what inference frees is not worth a call
_trim = None  # glibc's malloc_trim, False where there is none


def give_back(size: int) -> None:
    """After inference of ``size`` bytes of model: hand the memory it freed back to the
    system. glibc keeps freed heap pages, and the objects a check builds next come from
    pages of their own (Python's allocator maps its own), so the process's peak was
    inference's and the check's together (1.3x the memory on 50,000 nodes); a no-op
    below GIVE_BACK_ABOVE or without glibc."""
    global _trim
    if size < GIVE_BACK_ABOVE:
        return
    if _trim is None:
        try:
            import ctypes

            _trim = ctypes.CDLL(None).malloc_trim
        except (OSError, AttributeError):
            _trim = False
    if _trim:
        _trim(0)


ERRORS_HEADER = "Inference error(s): "


def split_errors(text: str) -> tuple[str, ...]:
    """onnx's strict-mode message cut into one entry per node error: each starts with
    ``(op_type:OP`` and, when the node has a name, ``, node name: NAME``), then the error."""
    at = text.find(ERRORS_HEADER)
    body = text[at + len(ERRORS_HEADER):] if at >= 0 else text
    out, current = [], []
    for line in body.split("\n"):
        if line.startswith("(op_type:") and current:
            out.append("\n".join(current).strip())
            current = []
        current.append(line)
    if current and "\n".join(current).strip():
        out.append("\n".join(current).strip())
    return tuple(out)


def inference_input(model: onnx.ModelProto) -> bytes | None:
    """The bytes inference reads: the model as it is, or its skeleton (see
    ``inferred_types``); None when they cannot be made (a model protobuf cannot write).
    Every node keeps all it has but heavy attribute data, its metadata included."""
    return inference_bytes(model)[0]


def inference_bytes(model: onnx.ModelProto, serialized: bytes | None = None) -> tuple[bytes | None, bool]:
    """(``inference_input``'s bytes, whether they are the skeleton rather than the model).
    ``serialized``: bytes ``model`` was parsed from (the file), given when the model goes
    as it is, rather than serialized again."""
    try:
        if _same_as_skeleton(model):
            if serialized is None:
                return model.SerializeToString(), False
            # the file's bytes, or them without the weights no op's inference reads: not a
            # skeleton's, whose left-out data may be what an op reads (own_errors)
            return without_weights(model, serialized) or serialized, False
        return skeleton(model).SerializeToString(), True
    except Exception:  # inference is a help, not a requirement
        return None, False


def _infer(light: bytes, strict: bool = False) -> bytes:
    """onnx shape inference of the serialized ``light``, its result as bytes: onnx's C++
    entry point, which ``onnx.shape_inference.infer_shapes`` calls and then parses the
    result of as a whole model (the public function is the fallback). ``strict``: as
    onnx.checker's full_check runs it (check_type and strict_mode on), raising
    ``onnx.shape_inference.InferenceError`` with every node's error. Every inference
    of a command goes through here (tests count the calls)."""
    run = _c_entry()
    if run is None:
        inferred = onnx.shape_inference.infer_shapes(light, check_type=strict, strict_mode=strict,
                                                     data_prop=False)
        return inferred.SerializeToString()
    out = run(light, strict, strict, False)
    give_back(len(light))  # the C++ model's memory, before its types are read (20 MB on 50,000 nodes)
    return out


def _c_entry():
    """onnx's C++ shape inference function (None in an onnx that does not expose it as 1.23 does)."""
    return getattr(getattr(onnx.shape_inference, "C", None), "infer_shapes", None)


def read_inferred(out: bytes, only_main: bool) -> dict:
    """``scope_types`` of the serialized model inference returned. A model with no
    subgraph is read as ``_main_types`` (the main graph's value_info and outputs, each
    type as its bytes): parsing the whole model back and each TypeProto took more
    than twice as long on 30,000 nodes, and most types repeat (``type_of_bytes`` keeps them)."""
    cls = _main_types() if only_main else None
    if cls is None:
        return scope_types(onnx.load_from_string(out), only_main)
    g = cls.FromString(out).graph
    return {MAIN: [(vi.name, type_of_bytes(vi.type)) for vi in (*g.value_info, *g.output)]}


def _main_types():
    """A message class that reads a serialized ModelProto as its main graph's value_info
    and outputs only (field numbers from onnx.proto), each ValueInfoProto as its name and
    its type's bytes; every other field is kept unread. None where it cannot be built."""
    from .partial import reader

    return reader("qlin_inferred_types", (
        ("ValueInfo", (("name", 1, "string", False), ("type", 2, "bytes", False))),
        ("Graph", (("output", 12, "ValueInfo", True), ("value_info", 13, "ValueInfo", True))),
        ("Model", (("graph", 7, "Graph", False),)),
    ))


_SIZED = frozenset(dtypes.BY_PROTO)  # element types with a fixed width
_SPARSE = (AttributeProto.SPARSE_TENSOR, AttributeProto.SPARSE_TENSORS)


def keeps_data(t: onnx.TensorProto) -> bool:
    """Whether the skeleton keeps a tensor whole: inline data of at most KEEP_DATA_BYTES,
    its size read from the dims (nothing is copied to measure it)."""
    if t.data_location == onnx.TensorProto.EXTERNAL:
        return False
    if not len(t.dims):  # a scalar: at most 16 bytes
        return t.data_type in _SIZED
    need = nbytes(t)
    return need is not None and need <= KEEP_DATA_BYTES


_BITS = {proto: d.bits for proto, d in dtypes.BY_PROTO.items()}


def _same_as_skeleton(model: onnx.ModelProto) -> bool:
    """Whether the skeleton would drop nothing but external references: every tensor
    that can carry data (``safety.all_tensors``) is external or kept whole, and no
    attribute holds a sparse tensor. (``keeps_data`` of each tensor, its size read from
    a few dims at once: a large model has tens of thousands of tensors.)"""
    external, limit = onnx.TensorProto.EXTERNAL, KEEP_DATA_BYTES * 8
    found = list(bodies(model))
    for b in found:
        g = b.owner
        if not isinstance(g, onnx.GraphProto):
            continue
        c = census(g)
        doubtful = set()  # each distinct (type, dims) once: most tensors share a few
        for typed in set(c.typed):
            data_type, dims = typed
            bits = _BITS.get(data_type)
            if bits is None or len(dims) > 8 or (dims and min(dims) < 0) or math.prod(dims) * bits > limit:
                # no fixed width (never kept whole, nor is such a scalar); many dims or negative
                # ones (counted as nbytes counts them); or more than KEEP_DATA_BYTES
                doubtful.add(typed)
        if doubtful:
            outside = set(c.external)
            for i, typed in enumerate(c.typed):
                if typed in doubtful and i not in outside and not keeps_data(c.tensor(i)):
                    return False
        if not all(t.data_location == external or keeps_data(t) for t in sparse_tensors(g)):
            return False
    if not all(t.data_location == external or keeps_data(t) for t in attribute_tensors(found)):
        return False
    return not any(a.type in _SPARSE for b in bodies(model) if b.attributed and b.may_hold(*_SPARSE)
                   for node in (nodes_of(b.owner),) for i in b.attributed for a in node[i].attribute)


def _light_tensor(src: onnx.TensorProto, dst: onnx.TensorProto) -> None:
    """``dst`` = ``src`` without its data when that is external or large."""
    if keeps_data(src):
        dst.CopyFrom(src)
        return
    dst.name = src.name
    dst.data_type = src.data_type
    dst.dims.extend(src.dims)
    dst.doc_string = src.doc_string


def _light_sparse(src: onnx.SparseTensorProto, dst: onnx.SparseTensorProto) -> None:
    dst.dims.extend(src.dims)
    _light_tensor(src.values, dst.values)
    _light_tensor(src.indices, dst.indices)


def _copy_except(src, dst, skip: tuple[str, ...]) -> None:
    """Every set field of ``src`` but those named in ``skip`` (which hold data)."""
    for fd, value in src.ListFields():
        if fd.name in skip:
            continue
        if fd.is_repeated:
            getattr(dst, fd.name).extend(value)
        elif fd.type == fd.TYPE_MESSAGE:
            getattr(dst, fd.name).CopyFrom(value)
        else:
            setattr(dst, fd.name, value)


def _light_attribute(src: onnx.AttributeProto, dst: onnx.AttributeProto, todo: list) -> None:
    _copy_except(src, dst, ("t", "tensors", "sparse_tensor", "sparse_tensors", "g", "graphs"))
    if src.HasField("t"):
        _light_tensor(src.t, dst.t)
    for t in src.tensors:
        _light_tensor(t, dst.tensors.add())
    if src.HasField("sparse_tensor"):
        _light_sparse(src.sparse_tensor, dst.sparse_tensor)
    for sp in src.sparse_tensors:
        _light_sparse(sp, dst.sparse_tensors.add())
    if src.HasField("g"):
        todo.append((src.g, dst.g))
    for g in src.graphs:
        todo.append((g, dst.graphs.add()))


def _light_nodes(src_nodes, dst_nodes, todo: list) -> None:
    for node in src_nodes:
        out = dst_nodes.add()
        if not any(a.type in _DATA_ATTRIBUTES for a in node.attribute):
            out.CopyFrom(node)  # most nodes: nothing heavy inside, copied at C speed
            continue
        _copy_except(node, out, ("attribute",))
        for a in node.attribute:
            _light_attribute(a, out.attribute.add(), todo)


def _light_graphs(todo: list) -> None:
    """Copy each (source, destination) graph pair of ``todo``, and the subgraphs it
    reaches, without heavy data; an explicit stack, so nesting depth is no limit."""
    while todo:
        src, dst = todo.pop()
        _copy_except(src, dst, ("node", "initializer", "sparse_initializer"))
        for t in src.initializer:
            _light_tensor(t, dst.initializer.add())
        for sp in src.sparse_initializer:
            _light_sparse(sp, dst.sparse_initializer.add())
        _light_nodes(src.node, dst.node, todo)


def skeleton(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of ``model`` for shape inference: every graph, node, function and type,
    every tensor with its name, type and dims, but no external reference and no data
    above KEEP_DATA_BYTES. Built piece by piece: the model's weights are never copied."""
    out = onnx.ModelProto()
    _copy_except(model, out, ("graph", "training_info", "functions"))
    todo: list = []
    if model.HasField("graph"):
        todo.append((model.graph, out.graph))
    for info in model.training_info:
        dst = out.training_info.add()
        _copy_except(info, dst, ("initialization", "algorithm"))
        if info.HasField("initialization"):
            todo.append((info.initialization, dst.initialization))
        if info.HasField("algorithm"):
            todo.append((info.algorithm, dst.algorithm))
    for fn in model.functions:
        dst = out.functions.add()
        _copy_except(fn, dst, ("node",))
        _light_nodes(fn.node, dst.node, todo)
    _light_graphs(todo)
    return out
