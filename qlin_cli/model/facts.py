"""Node facts: everything check, convert, the evaluator and targets read about one node.

``read_facts`` builds one ``NodeFacts`` per node from its scope (never changed once
built): op, domain, the schema in force, input presence, resolved types and shapes, known
constant values of scale and zero point inputs, attributes, and (derived through
``qlin_cli.schema.semantics``) granularity, axis, block size and the implied
types. Rules read only facts; the converter and the evaluator build them too.

Equality and hashing cover every field that can change a verdict and none that
names the node (names, location): two nodes with equal facts get the same
findings, which is what the check engine's clean-verdict cache relies on. A field
added here is part of that key automatically.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import NamedTuple

import numpy as np
import onnx
from onnx import AttributeProto

from .. import schema
from ..schema import OpSpec, dtypes, semantics
from .graphs import label_of, node_label, node_named
from .tensors import UnsafeData, read_value

SMALL = 4096  # bytes: constants up to this size are compared by content
PLAIN_MAX_BYTES = 2**20  # larger constants are read one by one (``Const.array``)
_DEFAULT = onnx.TensorProto.DEFAULT  # a tensor's data in the file
# numpy's own integer and float element types, read from inline raw data as they are
# (``Const.plain``), little-endian
_PLAIN = {d.proto: np.dtype(d.numpy).newbyteorder("<") for d in dtypes.BY_NAME.values()
          if np.dtype(d.numpy).char in np.typecodes["AllInteger"] + "efd"}


class Location(NamedTuple):  # a tuple: built for every node, at a tuple's cost
    graph: str  # the scope path: "main", "main/loop.body", "function local.F"
    index: int  # position in its graph or function
    name: str  # the node's name ("" when unnamed)
    in_function: bool = False

    @property
    def label(self) -> str:
        """The node's name, or #index in its graph."""
        return label_of(self.name, self.index)

    @property
    def where(self) -> str:
        """How a message names the node: 'q1', or #3 in main/loop.body."""
        return node_named(self.name, self.index, self.graph)


class Const:
    """A constant input (initializer or Constant node), read on first use.

    Two constants are equal when their contents are (small tensors) or when they
    are the same tensor (large ones).
    """

    __slots__ = ("_tensor", "_base_dir", "_cache", "_typed", "_k", "_plain", "_summary")

    def __init__(self, tensor: onnx.TensorProto, base_dir: str, cache: dict, typed: tuple | None = None):
        """``typed``: the tensor's (data type, dims) where the caller has them read."""
        self._tensor, self._base_dir, self._cache, self._typed = tensor, base_dir, cache, typed
        self._plain = self._k = False  # not worked out yet: most constants are never compared
        self._summary = False  # (``summary``) not worked out yet

    def _external(self) -> bool:
        """Whether the tensor's data lies outside the file (asked where it matters only)."""
        return self._tensor.data_location == onnx.TensorProto.EXTERNAL

    @property
    def _key(self):
        """What equality and the hash read: the content of a small tensor, else its identity
        (worked out on first use)."""
        key = self._k
        if key is False:
            key = self._k = self._find_key()
        return key

    def _find_key(self) -> tuple:
        tensor = self._tensor
        raw = tensor.raw_data  # read once: each read copies the bytes out of protobuf
        if raw and len(raw) <= SMALL:
            typed = self._typed
            if typed is None:
                typed = (tensor.data_type, tuple(tensor.dims[:]))  # [:]: twice as fast
            return (typed[0], typed[1], raw)
        if not raw and tensor.ByteSize() <= SMALL:  # values in typed fields: equal without the name
            unnamed = onnx.TensorProto()
            unnamed.CopyFrom(tensor)
            unnamed.ClearField("name")
            unnamed.ClearField("doc_string")
            return ("proto", unnamed.SerializeToString(deterministic=True))
        return ("tensor", id(tensor))

    def __eq__(self, other) -> bool:
        return isinstance(other, Const) and self._key == other._key

    @property
    def content_key(self):
        """The key when it is the constant's content (it then means the same in any model),
        else None: a large or external tensor is keyed by identity, which holds within
        one model only."""
        return None if self._key[0] in ("tensor", "array") or self._external() else self._key

    def __hash__(self) -> int:
        return hash(self._key)

    def plain(self) -> tuple[np.dtype, bytes] | None:
        """(dtype, bytes) when the value ``array`` gives is exactly ``np.frombuffer`` of those
        bytes (inline raw data of a byte-aligned type, as many bytes as the dims need, no
        negative dim): what a rule reading many constants at once can read them as. None
        otherwise (ask ``array``). Worked out once; the bytes are not kept (read again when
        asked again: most constants are asked once, and 50,000 of them held 9 MB)."""
        dt = self._plain
        if dt is False:
            found = self._find_plain()
            self._plain = None if found is None else found[0]
            return found
        return None if dt is None else (dt, self._tensor.raw_data)

    @property
    def summary(self) -> tuple[bool, float, float, bool] | None:
        """(whether every value is finite and non-zero, the smallest and the largest |v| of
        its finite non-zero values ((inf, 0) when it has none), whether some value is below
        0 (-0.0 and NaN are not)) of a ``plain`` float constant with values, None for
        another; worked out by ``summarize``, with the others asked."""
        if self._summary is False:
            summarize([self])
        return self._summary

    def _find_plain(self) -> tuple[np.dtype, bytes] | None:
        t = self._tensor
        if t.data_location != _DEFAULT:  # (external, or a location onnx does not define)
            return None
        data_type, dims = self._typed if self._typed is not None else (t.data_type, t.dims[:])
        dt = _PLAIN.get(data_type)
        if dt is None:
            return None
        count = 1
        for d in dims:  # (none for a scalar, the usual scale or zero point)
            if d < 0:
                return None
            count *= d
            if count > PLAIN_MAX_BYTES:  # (also the bound on a product of many dims)
                return None
        size = count * dt.itemsize
        if not size or size > PLAIN_MAX_BYTES:
            return None
        raw = t.raw_data
        return (dt, raw) if len(raw) == size else None

    def array(self) -> np.ndarray | None:
        """The value, or None when it cannot be read safely (the engine refuses such files)."""
        key = id(self._tensor)
        if key not in self._cache:
            try:
                self._cache[key] = read_value(self._tensor, self._base_dir)
            except UnsafeData:
                self._cache[key] = None
        return self._cache[key]


def summarize(consts) -> None:
    """Work out ``Const.summary`` of each of ``consts`` (None entries skipped) not yet worked
    out, the float constants whose bytes numpy reads as they are (``plain``) looked at
    together, one array per type: what the rules reading many scales at once (QL501, QL503,
    QL504, QL505) ask, each once per constant."""
    parts: dict = {}  # dtype -> ([constants], [bytes])
    for c in consts:
        if c is None or c._summary is not False:
            continue
        p = c.plain()
        if p is None or p[0].kind != "f" or not p[1]:
            c._summary = None
            continue
        c._summary = ()  # (being worked out: a Q and its DQ share their constants)
        group = parts.setdefault(p[0], ([], []))
        group[0].append(c)
        group[1].append(p[1])
    for dt, (owners, raws) in parts.items():
        signed = np.frombuffer(b"".join(raws), dt).astype(np.float64)
        data = np.abs(signed)
        dead = ~np.isfinite(data) | (data == 0)
        sizes = np.fromiter((len(r) for r in raws), np.int64, len(raws)) // dt.itemsize
        starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
        bad = np.logical_or.reduceat(dead, starts).tolist()
        low = np.minimum.reduceat(np.where(dead, np.inf, data), starts).tolist()
        high = np.maximum.reduceat(np.where(dead, 0.0, data), starts).tolist()
        below = np.logical_or.reduceat(signed < 0, starts).tolist()
        for c, b, lo, hi, neg in zip(owners, bad, low, high, below, strict=True):
            c._summary = (not b, lo, hi, neg)


class ArrayConst(Const):
    """A value given as an array (the evaluator's inputs)."""

    __slots__ = ("_array",)

    def __init__(self, array: np.ndarray):
        self._array = array
        self._k = ("array", id(array))
        self._summary = None  # (not plain)

    def _external(self) -> bool:
        return False

    def plain(self) -> None:
        return None

    def array(self) -> np.ndarray | None:
        return self._array


def _attr_item(a: AttributeProto) -> tuple:
    if a.ref_attr_name:
        return (a.name, a.type, ("ref", a.ref_attr_name))
    if a.type == AttributeProto.INT:
        return (a.name, a.type, a.i)
    return (a.name, a.type, a.SerializeToString(deterministic=True))


_ITEMS: dict = {}  # a node's attributes as protobuf writes them -> their attr_items
_ITEMS_MAX = 65536


def _attr_items(attrs, key: tuple | None = None) -> tuple:
    """``NodeFacts.attr_items`` of a node's attributes, one tuple for every node whose
    attributes are written alike (most Q/DQ nodes of a model: 1 us less a node, and one
    tuple in memory); ``key``: the attributes as protobuf writes them, where the caller has
    them."""
    if key is None:
        key = tuple([a.SerializeToString() for a in attrs])
    found = _ITEMS.get(key)
    if found is None:
        found = tuple([_attr_item(a) for a in attrs])
        if len(_ITEMS) < _ITEMS_MAX:
            _ITEMS[key] = found
    return found


class _TypeNames(dict):
    """Element type number -> its name (None for 0, undefined), filled on first use."""

    def __missing__(self, proto: int) -> str | None:
        name = self[proto] = dtypes.name_of(proto) if proto else None
        return name


_TYPE_NAMES = _TypeNames()
UNKNOWN = (0, None)  # the (element type, shape) of a name nobody types


def _present(typed: tuple) -> tuple[bool, ...]:
    return tuple([t is not None for t in typed])


def _type_names(typed: tuple) -> tuple[str | None, ...]:
    return tuple([None if t is None else _TYPE_NAMES[t[0]] for t in typed])


class shared:
    """A property worked out once and kept as the instance's attribute, as
    functools.cached_property keeps it, and worked out once per shape of facts: facts
    that ``NodeFacts.share`` tied to the first ones read with their shape key (equal but
    for the constants' values) read its value there. Every such property reads only the
    fields of ``NodeFacts.shape_key``. (Python 3.11's cached_property also takes a lock
    on each first read: a fifth of the time these took on large models.)"""

    def __init__(self, func):
        self.func, self.__doc__ = func, func.__doc__

    def __set_name__(self, owner, name: str) -> None:
        self.name = name

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        like = obj._like
        if like is not None:  # read there each time: kept here too, it would cost 400 bytes a node
            return getattr(like, self.name)
        value = self.func(obj)
        setattr(obj, self.name, value)  # (an attribute, not ``obj.__dict__[name]``: see NodeFacts)
        return value


# Not frozen: a frozen dataclass sets each field through object.__setattr__, which made
# building the facts of every node the largest cost of `qlin check`. NodeFacts are never
# changed after read_facts builds them (nothing assigns to a field), and the hash is
# that of the compared fields, as for a frozen class, computed once.
@dataclass(eq=True)
class NodeFacts:
    op: str
    domain: str  # normalized: "" for ai.onnx
    opset: int | None  # the version the scope imports for the domain
    imported: bool  # the scope imports the domain
    spec: OpSpec | None  # the schema in force (None: qlin knows none)
    # per input / output position: (element type number, shape or None) as declared or
    # inferred, UNKNOWN where the name has no known type, None where the position is empty.
    # ``present``, ``in_types`` ... are read from these when asked for: building all five
    # tuples for every node cost a sixth of `qlin check` on large models.
    in_typed: tuple[tuple[int, tuple | None] | None, ...]
    out_typed: tuple[tuple[int, tuple | None] | None, ...]
    attr_items: tuple[tuple, ...]  # (name, AttributeProto type, int / bytes / ("ref", name))
    values: tuple[Const | None, ...]  # known constants of the scale and zero point inputs
    inputs: tuple[str, ...] = field(compare=False)
    outputs: tuple[str, ...] = field(compare=False)
    location: Location = field(compare=False)
    # Not fields: the facts ``share`` tied these to, and the hash once worked out. Each is
    # read and set as an attribute, never through ``__dict__``: Python 3.11 keeps an
    # instance's attributes without a dict object until ``__dict__`` is asked for, and then
    # makes one that stays (64 bytes a node: 5 MB on 75,000 Q/DQ nodes).
    _like = None
    _hash = None

    def __hash__(self) -> int:
        # the clean-verdict cache and the targets' site cache hash a node's facts more than
        # once; the compared fields (_COMPARED) never change after read_facts
        h = self._hash
        if h is None:
            h = self._hash = hash(tuple(getattr(self, name) for name in _COMPARED))
        return h

    def shape_key(self) -> tuple:
        """The compared fields but the constants' values: everything a rule that reads no
        value (``Rule.reads_values`` False) can decide on, so that its verdict on one node
        is its verdict on every node with this key, in this model or another (names,
        location and values are left out; nothing in it is known by identity only)."""
        return (self.op, self.domain, self.opset, self.imported, self.spec, self.in_typed,
                self.out_typed, self.attr_items)

    def share(self, like: NodeFacts) -> None:
        """Read every ``shared`` property from ``like``, facts with this shape key (where
        ``like`` is not these facts), and hold its equal tuples of types and attributes
        rather than this node's copies (9 MB on 37,500 Q/DQ nodes)."""
        if like is not self:
            self._like = like
            self.in_typed, self.out_typed, self.attr_items = like.in_typed, like.out_typed, like.attr_items

    def content_key(self) -> tuple | None:
        """What the compared fields say, with each constant as its content, when that says
        it all: a node of another model with this key has equal facts. None when a
        constant is known by identity only (large or external tensors)."""
        values = []
        for c in self.values:
            key = None if c is None else c.content_key
            if c is not None and key is None:
                return None
            values.append(key)
        return (self.op, self.domain, self.opset, self.imported, self.spec, self.in_typed,
                self.out_typed, self.attr_items, tuple(values))

    # ---- naming -----------------------------------------------------------------
    @property
    def domain_name(self) -> str:
        return schema.domain_name(self.domain)

    @property
    def title(self) -> str:
        """'QuantizeLinear-21 (ai.onnx)' when the schema is known, else the op type."""
        s = self.spec
        return f"{s.op_type}-{s.since} ({s.domain_name})" if s else self.op

    # ---- inputs -----------------------------------------------------------------
    @shared
    def present(self) -> tuple[bool, ...]:
        return _present(self.in_typed)

    @shared
    def in_types(self) -> tuple[str | None, ...]:
        return _type_names(self.in_typed)

    @shared
    def in_shapes(self) -> tuple[tuple | None, ...]:
        return tuple([None if t is None else t[1] for t in self.in_typed])

    @shared
    def out_present(self) -> tuple[bool, ...]:
        return _present(self.out_typed)

    @shared
    def out_types(self) -> tuple[str | None, ...]:
        """As declared or inferred."""
        return _type_names(self.out_typed)

    def present_at(self, i: int) -> bool:
        return i < len(self.in_typed) and self.in_typed[i] is not None

    def input_name(self, i: int) -> str:
        return self.inputs[i] if self.present_at(i) else ""

    def in_type(self, i: int) -> str | None:
        t = self.in_typed[i] if i < len(self.in_typed) else None
        return None if t is None else _TYPE_NAMES[t[0]]

    def in_shape(self, i: int) -> tuple | None:
        t = self.in_typed[i] if i < len(self.in_typed) else None
        return None if t is None else t[1]

    def in_rank(self, i: int) -> int | None:
        s = self.in_shape(i)
        return None if s is None else len(s)

    def value(self, i: int) -> np.ndarray | None:
        """The input's value when it is a known constant of a scale or zero point role."""
        c = self.values[i] if i < len(self.values) else None
        return None if c is None else c.array()

    @property
    def out_type(self) -> str | None:
        """The declared (or inferred) type of the first output."""
        t = self.out_typed[0] if self.out_typed else None
        return None if t is None else _TYPE_NAMES[t[0]]

    # ---- attributes ---------------------------------------------------------------
    @shared
    def attrs(self) -> dict[str, int]:
        """Explicit integer attributes (not references to function attributes)."""
        return {n: v for n, t, v in self.attr_items if t == AttributeProto.INT and isinstance(v, int)}

    @shared
    def attr_names(self) -> tuple[str, ...]:
        return tuple(n for n, _, _ in self.attr_items)

    @shared
    def attr_types(self) -> dict[str, int]:
        return {n: t for n, t, _ in self.attr_items}

    @shared
    def refs(self) -> tuple[str, ...]:
        """Attributes that refer to a function's attributes (their value is the caller's)."""
        return tuple(n for n, _, v in self.attr_items if isinstance(v, tuple))

    def has(self, name: str) -> bool:
        return name in self.attr_types

    def attr_int(self, name: str) -> int | None:
        """The explicit integer value, else the schema default; None for a non-integer."""
        if name in self.attr_types:
            return self.attrs.get(name)
        return self.spec.attributes.get(name) if self.spec else None

    # ---- meaning (schema.semantics) -------------------------------------------------
    @shared
    def resolved_types(self) -> tuple[str | None, ...]:
        """Input types, the unknown ones filled where the schema decides them."""
        if self.spec is None:
            return self.in_types
        return semantics.resolve_types(self.spec, self.in_types, self.present)

    @shared
    def axis(self) -> int | None:
        return semantics.axis_in_force(self.spec, self.attrs) if self.spec else None

    @shared
    def block_size(self) -> int:
        return semantics.block_size(self.spec, self.attrs) if self.spec else 0

    @shared
    def granularity(self) -> str | None:
        if self.spec is None:
            return None
        return semantics.granularity(self.spec, self.attrs, self.scale_shape)

    @shared
    def quant_type(self) -> str | None:
        if self.spec is None:
            return None
        return semantics.quantized_type(self.spec, self.attrs, self.resolved_types, self.present)

    @shared
    def implied_out_type(self) -> str | None:
        if self.spec is None:
            return None
        return semantics.implied_out_type(self.spec, self.attrs, self.in_types, self.present)

    @property
    def scale_index(self) -> int | None:
        return self.spec.role_index(schema.SCALE) if self.spec else None

    @property
    def zero_point_index(self) -> int | None:
        return self.spec.role_index(schema.ZERO_POINT) if self.spec else None

    @property
    def scale_shape(self) -> tuple | None:
        i = self.scale_index
        return None if i is None else self.in_shape(i)

    @property
    def x_rank(self) -> int | None:
        return self.in_rank(0)

    def normalized_axis(self) -> int | None:
        return semantics.normalized_axis(self.axis, self.x_rank)

    def problems(self, spec: OpSpec | None = None):
        """``schema.semantics.validate`` against ``spec`` (default: the schema in force,
        validated once however many rules ask)."""
        if spec is None or spec is self.spec:
            return self._own_problems
        return semantics.validate(self, spec)

    @shared
    def _own_problems(self) -> list:
        return [] if self.spec is None else semantics.validate(self, self.spec)


def _spec_for(domain: str, op: str, opset: int | None, imported: bool) -> OpSpec | None:
    spec = schema.lookup(domain, op, opset) if opset else None
    if spec is None and not imported:
        only = schema.versions(domain, op)
        if domain and len(only) == 1:  # a vendor op with one version: check against it
            spec = only[0]
    return spec


_CONST_ROLES = (schema.SCALE, schema.ZERO_POINT)


_COMPARED = tuple(f.name for f in fields(NodeFacts) if f.compare)


def shared_with(f) -> NodeFacts | None:
    """The facts ``NodeFacts.share`` tied ``f`` to (the first read with its shape key: what
    holds for its shape holds for ``f``), None where it was tied to none."""
    return getattr(f, "_like", None)


_tuple_new = tuple.__new__  # what __eq__ and __hash__ read


class OpInScope(NamedTuple):
    """What one (domain, op_type) as a node spells it resolves to in one scope."""

    domain: str  # normalized
    opset: int | None
    imported: bool
    spec: OpSpec | None
    const_at: tuple[int, ...]  # input positions of the scale and zero point roles
    op_type: str = ""  # as the node spells it (one string for all the nodes of the scope)


def op_in_scope(scope, domain: str, op_type: str) -> OpInScope | None:
    """The resolution of an op of a family qlin knows in ``scope`` (None for other ops),
    worked out once per scope and spelling (``scope.ops``)."""
    key = (domain, op_type)
    found = scope.ops.get(key, False)
    if found is False:
        found = None
        if schema.knows(domain, op_type):
            d = schema.normalize_domain(domain)
            opset = schema.opset_of(scope.opsets, d)
            spec = _spec_for(d, op_type, opset, opset is not None)
            at = () if spec is None else tuple(
                i for i, p in enumerate(spec.inputs) if p.role in _CONST_ROLES)
            found = OpInScope(d, opset, opset is not None, spec, at, op_type)
        scope.ops[key] = found
    return found


def read_facts(node: onnx.NodeProto, index: int, scope, base_dir: str,
               op: OpInScope | None = None, attributed: bool = True, io: tuple | None = None,
               attr_key: tuple | None = None) -> NodeFacts:
    """The facts of one node in a ``model.walk.Scope``; ``op`` is its ``op_in_scope``
    when the caller has it; ``attributed=False``: the caller knows the node has no
    attribute (protobuf makes room for the list when it is asked for it, on every node);
    ``io``: the node's (input names, output names) where the caller has read them, and
    ``attr_key`` its attributes as protobuf writes them.
    (The hot path of `qlin check`: written for speed, every field as the dataclass
    documents it.)"""
    if op is None:
        op = op_in_scope(scope, node.domain, node.op_type)
        if op is None:  # an op of no family qlin knows: no schema, no constants
            key = (node.domain, node.op_type, None)  # beside op_in_scope's (domain, op_type)
            op = scope.ops.get(key)
            if op is None:
                d = schema.normalize_domain(node.domain)
                opset = schema.opset_of(scope.opsets, d)
                op = scope.ops[key] = OpInScope(d, opset, opset is not None, None, (), node.op_type)
    if io is None:
        inputs = tuple(node.input[:])  # a slice first: twice as fast as tuple() on protobuf's list
        outputs = tuple(node.output[:])
    else:
        inputs, outputs = io
    if scope.parent is None:  # the usual scope: one dict look-up per name, no call
        types, own = scope.types, scope.own_type
        get = types.get
        found = tuple(map(get, inputs))  # every name typed (the usual node): in C
        if None in found or "" in inputs:
            found = tuple([(get(n) or own(n) or UNKNOWN) if n else None for n in inputs])
        out_found = tuple(map(get, outputs))
        if None in out_found or "" in outputs:
            out_found = tuple([(get(n) or own(n) or UNKNOWN) if n else None for n in outputs])
    else:
        find = scope.find_type
        found = tuple([(find(n) or UNKNOWN) if n else None for n in inputs])
        out_found = tuple([(find(n) or UNKNOWN) if n else None for n in outputs])
    values = [None] * len(inputs)
    consts = scope.consts
    for i in op.const_at:
        name = inputs[i] if i < len(inputs) else ""
        if name:
            c = consts.get(name)
            if c is None:
                tensor, typed = scope.find_const(name)
                if tensor is not None:
                    c = consts[name] = Const(tensor, base_dir, scope.read_cache, typed)
            values[i] = c
    items = (_ITEMS.get(attr_key) or _attr_items(node.attribute, attr_key) if attr_key is not None else
             _attr_items(attrs) if attributed and len(attrs := node.attribute) else ())
    # Positional, in the order of NodeFacts' fields (keywords cost 8% of this function);
    # tests/test_architecture.py holds every field to what it must be.
    return NodeFacts(
        op.op_type, op.domain, op.opset, op.imported, op.spec, found, out_found,
        items,  # attr_items
        tuple(values), inputs, outputs,
        _tuple_new(Location, (scope.path, index, node.name, scope.is_function)),  # Location(...) without
    )                                                                              # its Python __new__


def _proto_of(a: np.ndarray) -> int:
    """The element type number of an array (0, undefined, for a dtype ONNX has not)."""
    d = dtypes.BY_NUMPY.get(a.dtype)
    return 0 if d is None else d.proto


def array_facts(node: onnx.NodeProto, opset: int, arrays: list) -> NodeFacts:
    """The facts of one node whose inputs are given as arrays (None: absent)."""
    domain = schema.normalize_domain(node.domain)
    spec = schema.lookup(domain, node.op_type, opset)
    return NodeFacts(
        op=node.op_type, domain=domain, opset=opset, imported=True, spec=spec,
        in_typed=tuple(None if a is None else (_proto_of(a), tuple(a.shape)) for a in arrays),
        out_typed=tuple(UNKNOWN if n else None for n in node.output),
        attr_items=tuple(_attr_item(a) for a in node.attribute),
        values=tuple(None if a is None else ArrayConst(a) for a in arrays),
        inputs=tuple(node.input), outputs=tuple(node.output),
        location=Location("", 0, node.name),
    )


__all__ = ["Const", "Location", "NodeFacts", "OpInScope", "array_facts", "node_label", "op_in_scope",
           "read_facts", "shared_with", "summarize"]
