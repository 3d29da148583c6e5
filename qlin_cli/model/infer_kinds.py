"""Shape inference once per kind of node, where that gives what onnx's gives the whole model.

onnx infers a graph node by node, in the order the nodes are written (implementation.cc,
``ShapeInferenceImplBase::Process``). What it finds for one node follows from that node
alone: its op, domain and the version imported for it, its attributes, which inputs and
outputs it has, the types its inputs have by then, the data it is given for them (the main
graph's initializers and the outputs of earlier Constant nodes; an op of
schema.inference.SHAPE_ONLY reads none, with data propagation off as qlin runs it), and the type
an output already has (a value_info or graph output, which the inferred type is checked
against and merged into). A model of 50,000 Q/DQ nodes has a few such kinds of node, and
onnx's inference of the whole model, with the copy of the model it reads, took a quarter of
`qlin check`.

So ``by_kind`` walks the nodes in order, keeps every value's type as its TypeProto's bytes,
and asks onnx (strict, types checked: as onnx.checker's full_check) about each kind once,
on a model of that one node, its inputs typed as they are at that point and given the data
the whole inference would give them. It gives up (None: the whole model goes to onnx as
before) wherever that might differ from one whole inference, so that what it gives is
always exactly what inference gives:

* the model has fewer than KINDS_FROM nodes (onnx is quick on it), is of IR version below 4
  (initializers are not typed by themselves), has functions, subgraphs, sparse tensors or
  lists of tensors in attributes, or a node of a domain other than ai.onnx;
* a name is declared twice (value_info, input, output, initializer: onnx checks those
  against each other), a node writes a name already written or declared as an input or
  initializer, reads a name with no type at that point, or reads one of its own outputs;
* a node outside SHAPE_ONLY reads data the copy onnx reads may hold otherwise (an external
  tensor, or one larger than infer.KEEP_DATA_BYTES, which the skeleton leaves out), or has
  a tensor attribute the skeleton may leave out; a Constant writes the empty name (onnx
  keeps its value under "" and gives it to each empty input after it: Resize's scales,
  TopK's K, a Reshape's shape read so);
* onnx finds an error on a kind (the whole model then gives every node's error, named);
* an inferred type holds a dimension onnx named itself (``unk__``: its names count up over
  the whole model), or onnx gives an output no type;
* the model has more kinds than FEW_KINDS and one per NODES_PER_KIND nodes, or than
  MOST_KINDS (each is a call of onnx: a model of a kind per node would pay more than once
  for its inference).

tests/test_infer_kinds.py holds what it gives to the whole model's inference on every
fixture and quantizer output, with any number of nodes and kinds, and on models it builds.
"""

from __future__ import annotations

from typing import NamedTuple

import onnx
from onnx import AttributeProto

from ..schema import AI_ONNX, normalize_domain
from ..schema.inference import SHAPE_ONLY
from .graphs import MAIN, bodies, nodes_of
from .infer import keeps_data
from .tensors import census
from .weightless import type_bytes

# attributes the skeleton copy (infer.skeleton) may change otherwise than a tensor's data
_HEAVY = (AttributeProto.TENSORS, AttributeProto.SPARSE_TENSOR, AttributeProto.SPARSE_TENSORS)
_GENERATED = b"unk__"  # the prefix of the dimension names onnx's inference makes up


# below this many nodes onnx's inference of the whole model is cheap: it goes as it is
KINDS_FROM = 1024
# at most one kind per this many nodes (and FEW_KINDS more), and MOST_KINDS in all: a model
# of many kinds goes whole (a kind costs onnx about 50 us, more with data)
NODES_PER_KIND = 16
FEW_KINDS = 64
MOST_KINDS = 512


class ByKind(NamedTuple):
    """What ``by_kind`` gives. (Where it gives one, the model is of IR 4 or later, and each
    name of the graph's inputs, initializers, value_info and outputs is not empty and is
    declared once: the walk gives up otherwise.)"""

    types: list[tuple[str, bytes]]  # (name, type bytes) of the value_info then the outputs
    io: list[tuple[tuple[str, ...], tuple[str, ...]]]  # each node's (inputs, outputs), as read
    kinds: list[tuple[str, str]]  # each node's (domain as spelled, op_type), one tuple for equal ones
    attrs: dict[int, tuple[bytes, ...]]  # node index -> its attributes as protobuf writes them
    # the nodes that read a name of the value_info or graph outputs before any node wrote it
    # (the only reads of a name not yet defined that the walk lets through: see ``in_order``)
    early: list[int]
    unwritten: set[str]  # the names of the value_info and graph outputs no node wrote


class _GiveUp(Exception):
    """This model goes to onnx whole."""


def by_kind(model: onnx.ModelProto, *, fits: bool = False) -> ByKind | None:
    """(name, type bytes) of the main graph's value_info then outputs, as onnx's inference
    of the whole model writes them (what infer.read_inferred reads), asking onnx once per
    kind of node, with what the walk read of each node (``ByKind``: its names, kind and
    attributes, which the check would read again otherwise); None where the model must go
    to onnx whole (see the module's text). ``fits``: the caller found ``fits_by_kind``."""
    if not (fits or fits_by_kind(model)):
        return None
    try:
        return _Walk(model).run()
    except _GiveUp:
        return None
    except Exception:  # (as the whole inference: a help, not a requirement; it then runs)
        return None


def in_order(walked: ByKind | None) -> bool:
    """Whether a graph ``by_kind`` walked (``walked``: what it gave, None where it gave up)
    is in single static assignment and in order: no name written twice, or over an input or
    initializer (the walk gives up on those), and every name a node reads defined before it,
    as an input, an initializer or an earlier node's output (the walk gives up on a name
    with no type at that point; a name typed by a value_info or graph output alone is
    noted in ``early``). The rules on those (QL003, QL004, QL108) then have nothing to find."""
    return walked is not None and not walked.early


def fits_by_kind(model: onnx.ModelProto) -> bool:
    """Whether ``by_kind`` may try the model (what it can tell before the walk)."""
    if model.ir_version < 4 or len(model.functions) or not model.HasField("graph"):
        return False
    g = model.graph
    if len(g.sparse_initializer) or len(g.node) < KINDS_FROM:
        return False
    found = list(bodies(model))
    return [b.path for b in found] == [MAIN] and not found[0].may_hold(*_HEAVY)


class _Walk:
    """One pass over the main graph's nodes (``run``)."""

    def __init__(self, model: onnx.ModelProto):
        self.model = model
        self.kinds: dict = {}  # kind -> the types of its outputs (bytes per position)
        self.most = min(MOST_KINDS, FEW_KINDS + len(model.graph.node) // NODES_PER_KIND)
        self.opsets = [o.SerializeToString() for o in model.opset_import]
        self.data = _Data(census(model.graph))

    def run(self) -> ByKind:
        g = self.model.graph
        types, untyped, infos, outputs, inputs = _declared(g)  # types: onnx's value_types_by_name
        c = census(g)
        names = c.names
        fixed = set(names)  # names no node may write: the initializers, and the inputs
        # (onnx checks an initializer against an input's type; two of one name, or none)
        if "" in fixed or len(fixed) != len(names) or not fixed.isdisjoint(types):
            raise _GiveUp
        if not fixed.isdisjoint(untyped):
            raise _GiveUp
        # the value_info's and outputs' typed names: of the names nodes write (none of ``fixed``,
        # none twice, or the walk gives up), the ones that had a type before the walk
        declared = {n for n in (*infos, *outputs) if n in types}
        once = {typed: type_bytes(*typed) for typed in set(c.typed)}  # most initializers share a few
        types.update(zip(names, map(once.__getitem__, c.typed), strict=True))
        fixed.update(inputs)
        types[""] = _ABSENT
        read = ByKind([], [], [], {}, [], set(infos).union(outputs))
        new = self._nodes(g, types, fixed, read, declared)
        get = types.get
        read.types.extend((name, get(name, b"")) for name in (*infos, *new, *outputs))
        return read

    def _nodes(self, g, types: dict, fixed: set, read: ByKind, declared: set) -> list[str]:
        """Every node's outputs typed into ``types`` (what it read of the node into ``read``);
        returns the names onnx adds to the value_info (those not of ``declared``, the only
        ones a node writes that had a type before), in order. (A name written twice, or one of
        ``fixed``, gives up: that is looked for once at the end, the types written before then
        being thrown away with the rest.)"""
        get, kinds, update, add = types.get, self.kinds, types.update, read.io.append
        add_kind, one, attr_keys = read.kinds.append, {}, read.attrs
        pending = read.unwritten  # the declared names no node has written yet
        attributed = set(next(iter(bodies(self.model))).attributed)
        for index, node in enumerate(nodes_of(g)):
            ins, outs = tuple(node.input[:]), tuple(node.output[:])
            in_types = tuple(map(get, ins))
            if None in in_types:
                raise _GiveUp  # (a name with no type yet: onnx infers without it)
            if pending:
                if not pending.isdisjoint(ins):
                    read.early.append(index)
                pending.difference_update(outs)
            had = tuple(map(get, outs))
            op, domain = node.op_type, node.domain
            kind = one.setdefault((domain, op), (domain, op))
            add_kind(kind)
            datas = () if op in SHAPE_ONLY else tuple(map(self.data.key, ins))
            attrs = ()
            if index in attributed:
                attrs = attr_keys[index] = tuple([a.SerializeToString() for a in node.attribute])
            key = (kind, in_types, had, datas, attrs)
            found = kinds.get(key)
            if found is None:
                found = kinds[key] = self._ask(node, ins, outs, in_types, had, datas)
            if op == "Constant":
                self.data.constant(node, outs)
            if len(outs) == 1 and outs[0]:  # (the usual node)
                types[outs[0]] = found[0]
            else:
                update((n, t) for n, t in zip(outs, found, strict=True) if n)
            add((ins, outs))
        names = [n for _, outs in read.io for n in outs if n]
        if len(set(names)) != len(names) or not fixed.isdisjoint(names):
            raise _GiveUp
        return [n for n in names if n not in declared] if declared else names

    def _ask(self, node, ins: tuple, outs: tuple, in_types: tuple, had: tuple, datas: tuple) -> tuple:
        """The types onnx infers for one kind of node (``had``: its outputs' types before;
        ``datas``: the data of its inputs, where an op outside SHAPE_ONLY may read it), from
        a model of the node alone."""
        if normalize_domain(node.domain) != AI_ONNX or len(self.kinds) >= self.most:
            raise _GiveUp
        if any(a.type == AttributeProto.TENSOR and not _light_tensor(node, a) for a in node.attribute):
            raise _GiveUp
        if not set(ins).isdisjoint(n for n in outs if n):
            raise _GiveUp
        found = infer_alone(node, in_types, self.opsets, self.model.ir_version, had, datas)
        if found is None:
            raise _GiveUp
        return found


def infer_alone(node: onnx.NodeProto, in_types: tuple, opsets: list[bytes], ir_version: int,
                had: tuple = (), datas: tuple = ()) -> tuple[bytes, ...] | None:
    """The types onnx's strict inference (types checked, as full_check) gives the outputs of
    ``node`` as a model of that node alone, at ``opsets`` (each OperatorSetIdProto as its
    bytes) and ``ir_version``: each as its TypeProto's bytes (b"" for an empty output name).
    ``in_types``: each input's type as bytes (anything for an empty name); ``had``: each
    output's type before, which onnx checks the inferred one against and merges it into (None:
    none); ``datas``: each input's data onnx is given, a tensor's bytes without its name (None:
    none). None where onnx finds an error, names a dimension itself (``unk__``) or gives an
    output no type."""
    m = onnx.ModelProto()
    m.ir_version = ir_version
    for o in opsets:
        m.opset_import.add().MergeFromString(o)
    g = m.graph
    g.name = "kind"
    g.node.add().MergeFromString(node.SerializeToString())
    ins, outs = node.input, node.output
    seen = set()
    for name, t, data in zip(ins, in_types, datas or (None,) * len(ins), strict=True):
        if name and name not in seen:
            seen.add(name)
            _value(g.input.add(), name, t)
            if data is not None:  # (an initializer too: onnx reads its values, its type is the input's)
                tensor = g.initializer.add()
                tensor.MergeFromString(data)
                tensor.name = name
    for name, t in zip(outs, had or (None,) * len(outs), strict=True):
        if name and t is not None and name not in seen:
            seen.add(name)
            _value(g.value_info.add(), name, t)
    try:
        out = _infer_one(m.SerializeToString())
    except _GiveUp:
        return None
    found = {vi.name: vi.type.SerializeToString() for vi in onnx.ModelProto.FromString(out).graph.value_info}
    result = []
    for name in outs:
        t = found.get(name) if name else b""
        if t is None or _GENERATED in t:
            return None
        result.append(t)
    return tuple(result)


_ABSENT = b"\x00absent"  # the "type" of an empty input name: no input at that position
_UNREADABLE = b"\x00unreadable"  # data the whole inference may not be given as it is here


class _Data:
    """The values onnx's inference holds by name (``input_data_by_name``): the main graph's
    initializers, and the outputs of the Constant nodes walked so far. ``key`` gives one as
    the bytes of its tensor without its name (what a node of an op outside SHAPE_ONLY is
    keyed and asked with), None for a name without data. A tensor onnx may be given
    otherwise than it is here gives up: one outside the file (an external reference), or
    with more data than the copy inference reads when the model has larger tensors keeps
    (infer.keeps_data: the skeleton leaves it out)."""

    def __init__(self, c):
        self.c = c
        self.index: dict | None = None  # initializer name -> position, made on first use
        self.known: dict = {}  # name -> content bytes or _UNREADABLE

    def key(self, name: str) -> bytes | None:
        found = self.known.get(name)
        if found is None:
            if self.index is None:
                self.index = {n: i for i, n in enumerate(self.c.names)}
            i = self.index.get(name)
            if i is None:
                return None
            found = self.known[name] = _content(self.c.tensor(i))
        if found is _UNREADABLE:
            raise _GiveUp
        return found

    def constant(self, node, outs: tuple) -> None:
        """Note the value a Constant node gives its output, as onnx's inference notes it
        (implementation.cc, ``ProcessConstant``): attribute ``value``'s tensor; an attribute
        of another name by its type, an int or ints as int64, a float or floats as float (a
        scalar for one, a 1-D tensor for a list); the last such attribute holds."""
        if len(outs) != 1:
            return
        if not outs[0]:  # onnx keeps its value under the name "" all the same, and gives it to
            raise _GiveUp  # every empty input after it (an op may read one it does not have)
        found = None
        for a in node.attribute:
            if a.name == "value":
                if a.type == AttributeProto.TENSOR:
                    found = _content(a.t)
                elif a.type == AttributeProto.SPARSE_TENSOR:
                    found = _UNREADABLE
            elif a.type in _LISTED:
                elem, field, one = _LISTED[a.type]
                t = onnx.TensorProto(data_type=elem)
                values = [getattr(a, field)] if one else list(getattr(a, field))
                getattr(t, "int64_data" if elem == onnx.TensorProto.INT64 else "float_data").extend(values)
                if not one:
                    t.dims.append(len(values))
                found = t.SerializeToString()
        if found is not None:
            self.known[outs[0]] = found


# attribute type -> (the element type onnx gives its value, the attribute's field, one value)
_LISTED = {
    AttributeProto.INT: (onnx.TensorProto.INT64, "i", True),
    AttributeProto.INTS: (onnx.TensorProto.INT64, "ints", False),
    AttributeProto.FLOAT: (onnx.TensorProto.FLOAT, "f", True),
    AttributeProto.FLOATS: (onnx.TensorProto.FLOAT, "floats", False),
}


def _content(t: onnx.TensorProto) -> bytes:
    """A tensor's bytes without its name, or _UNREADABLE (see ``_Data``)."""
    if not keeps_data(t):
        return _UNREADABLE
    c = onnx.TensorProto()
    c.CopyFrom(t)
    c.ClearField("name")
    c.ClearField("doc_string")
    return c.SerializeToString()


def _light_tensor(node, a) -> bool:
    """Whether a TENSOR attribute reaches inference as it is: a Constant's (its inference reads
    the type and dims, which the skeleton keeps; its data is ``_Data``'s), or a tensor the
    skeleton keeps whole."""
    return node.op_type == "Constant" or keeps_data(a.t)


def _declared(g) -> tuple[dict, set, list, list, list]:
    """(name -> type bytes of each typed value_info, input and output; the names declared
    without a type; the value_info's names, the outputs', the inputs', each in order). Gives
    up where a name is declared twice."""
    types: dict[str, bytes] = {}
    untyped: set[str] = set()
    lists: list[list[str]] = [[], [], []]
    for names, infos in zip(lists, (g.value_info, g.output, g.input), strict=True):
        for vi in infos:
            name = vi.name
            if not name or name in types or name in untyped:
                raise _GiveUp
            if vi.HasField("type"):
                types[name] = vi.type.SerializeToString()
            else:
                untyped.add(name)
            names.append(name)
    return types, untyped, *lists


def _value(vi, name: str, t: bytes) -> None:
    vi.name = name
    vi.type.MergeFromString(t)


def _infer_one(data: bytes) -> bytes:
    """onnx's strict inference of a model of one node (its C++ entry point, as infer._infer
    calls it; not one of a command's inferences of a model, which tests count there)."""
    run = getattr(getattr(onnx.shape_inference, "C", None), "infer_shapes", None)
    try:
        if run is None:
            return onnx.shape_inference.infer_shapes(
                data, check_type=True, strict_mode=True, data_prop=False).SerializeToString()
        return run(data, True, True, False)
    except Exception:
        raise _GiveUp from None
