"""Many measuring cases of one structure computed at once (for measure.py).

Cases are of one structure when their nodes are the same ops with the same attributes,
wired the same way, and their inputs and constants have the same types and shapes: they
differ only in values. For those:

* onnx.reference's arithmetic for DequantizeLinear, QuantizeLinear, MatMul and
  QLinearMatMul (onnx 1.23's ``_run`` of each, with numpy 2's type promotion) is computed
  for every case and every input at once, on arrays whose first two axes are the input
  (or 1 for a constant) and the case. Each case's own dimensions are aligned on the right,
  as numpy broadcasts them for the case alone, and every operation is one numpy computes
  element by element or an int32 matrix product (exact in any order), so each element is
  what onnx.reference gives the case alone; the float MatMul, whose sums depend on the
  order of the BLAS kernel, is run case by case, with the call onnx.reference makes.
  tests/test_convert_formats_measure.py holds all of it equal to onnx.reference, bit for
  bit, on random and edge values.
* onnxruntime runs one session per structure, up to ``COPIES`` cases side by side, each on
  all its inputs at once (``Session``), the constants fed as inputs, where only ai.onnx
  DequantizeLinear and QuantizeLinear read them (with graph optimizations off, those
  kernels read scales, zero points and codes at run time whether a value is an initializer
  or an input; a kernel that packs a constant weight, as QLinearMatMul's does, never gets
  one here). tests/test_convert_formats_speed.py holds it to running the cases as models.

Anything else raises ``Declined``, and measure.py runs the cases as models, as before.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import helper

from ... import schema

COPIES = 8  # cases side by side in one onnxruntime session (each on every input row)
SHARED_MIN = 8  # fewer cases of a structure than this: one model of the batch costs less
NUMPY_2 = int(np.__version__.split(".")[0]) >= 2  # 0-d arrays promote as arrays do (NEP 50)
_INTEGER_CODES = {np.dtype(t) for t in (np.uint8, np.int8, np.uint16, np.int16)}
_DEQUANTIZED = _INTEGER_CODES | {np.dtype(np.int32)}


class Declined(Exception):
    """Not computed here: measure.py runs these cases as models."""


@dataclass
class Structure:
    key: tuple
    nodes: list  # (domain, op, attributes {name: value}, input slots (-1: none), output slots)
    protos: list  # each node's attributes as written
    kinds: list  # per slot: ("made",) | ("input", element type, shape) | ("const", dtype, shape)
    outputs: list  # (slot, element type) of each output

    @classmethod
    def of(cls, key: tuple, nodes: list) -> Structure:
        wiring, kinds, outputs = key
        body = [(schema.normalize_domain(n.domain), n.op_type,
                 {a.name: helper.get_attribute_value(a) for a in n.attribute}, ins, outs)
                for n, (_, _, _, ins, outs) in zip(nodes, wiring, strict=True)]
        return cls(key, body, [list(n.attribute) for n in nodes], list(kinds), list(outputs))


_MADE = ("made",)
_CONST_KINDS: dict = {}  # (dtype, shape) -> its slot kind, made once (equal dtypes have one .str)


def signature(nodes: list, inputs: dict, constant, outputs: list,
              values: dict | None = None) -> tuple[tuple, list[str]] | None:
    """The key of the structure of ``nodes`` (``Structure.of`` builds it) and the case's
    value names by slot; None when a value is neither an input, a constant
    (``constant(name)``: its array or None) nor made. ``values``: filled with each constant
    slot's array, by slot."""
    slots: dict[str, int] = {}
    wiring = []
    made = set()
    for n in nodes:
        ins = []
        for x in n.input:
            if not x:
                ins.append(-1)
                continue
            at = slots.get(x)
            if at is None:
                at = slots[x] = len(slots)
            ins.append(at)
        outs = []
        for o in n.output:
            at = slots.get(o)
            if at is None:
                at = slots[o] = len(slots)
            outs.append(at)
            made.add(o)
        attrs = tuple([a.SerializeToString() for a in n.attribute]) if len(n.attribute) else ()
        wiring.append((n.domain, n.op_type, attrs, tuple(ins), tuple(outs)))
    kinds: list = []
    for name in slots:
        if name in made:
            kinds.append(_MADE)
        elif name in inputs:
            elem, shape = inputs[name]
            kinds.append(("input", elem, tuple(shape or ())))
        else:
            value = constant(name)
            if value is None:
                return None
            if values is not None:
                values[len(kinds)] = value
            kinds.append(_const_kind(value))
    outs = tuple([(slots[name], elem) for name, elem in outputs if name in slots])
    if len(outs) != len(outputs):
        return None
    return (tuple(wiring), tuple(kinds), outs), list(slots)


def _const_kind(value: np.ndarray) -> tuple:
    """("const", dtype.str, shape) of a constant slot's array: the same tuple for every
    slot of that type and shape (dtype.str makes a new string each time it is read)."""
    key = (value.dtype, value.shape)
    kind = _CONST_KINDS.get(key)
    if kind is None:
        if len(_CONST_KINDS) >= 4096:  # (a model of that many kinds of constants: start again)
            _CONST_KINDS.clear()
        kind = _CONST_KINDS[key] = ("const", value.dtype.str, value.shape)
    return kind


# --- onnx.reference's arithmetic, every case at once -------------------------------------------


def reference(st: Structure, values: list) -> list[np.ndarray]:
    """The outputs onnx.reference computes, [inputs, cases, ...] each; ``values`` holds each
    input and constant slot's stacked array ([inputs or 1, cases, ...])."""
    if not NUMPY_2:  # numpy 1 promotes 0-d arrays by their value
        raise Declined("numpy 1")
    env = list(values)
    for domain, op, attrs, ins, outs in st.nodes:
        kernel = _KERNELS.get((domain, op))
        if kernel is None or len(outs) != 1 or any(i >= 0 and env[i] is None for i in ins):
            raise Declined(f"{op} is not computed here")
        args = [env[i] if i >= 0 else None for i in ins]
        env[outs[0]] = kernel(attrs, *args)
    return [env[s] for s, _ in st.outputs]


def computable(st: Structure) -> bool:
    """Whether ``reference`` computes every node of ``st``."""
    return NUMPY_2 and all((domain, op) in _KERNELS for domain, op, *_ in st.nodes)


def _rank(v: np.ndarray) -> int:
    return v.ndim - 2


def _aligned(v: np.ndarray, rank: int) -> np.ndarray:
    """``v`` with each case's dimensions padded with 1s on the left to ``rank``: how numpy
    broadcasts the case's own array against one of that rank."""
    extra = rank - _rank(v)
    return v.reshape(v.shape[:2] + (1,) * extra + v.shape[2:]) if extra > 0 else v


def _per_axis(v: np.ndarray, rank: int, axis: int) -> np.ndarray:
    """onnx.reference's reshape_input without blocks: a scalar as it is, a one-element
    vector as its element, a vector along ``axis`` of an input of ``rank``."""
    if _rank(v) == 0:
        return _aligned(v, rank)
    if _rank(v) != 1:
        raise Declined("a scale or zero point of more than one dimension")
    if v.shape[2] == 1:
        return _aligned(v.reshape(v.shape[:2]), rank)
    if not -rank <= axis < rank:
        raise Declined("axis out of range")
    dims = [1] * rank
    dims[axis] = v.shape[2]
    return v.reshape(v.shape[:2] + tuple(dims))


def _only_axis(attrs: dict) -> int:
    if set(attrs) - {"axis"}:
        raise Declined(f"attributes {sorted(attrs)}")
    return int(attrs.get("axis", 1))


def _dequantize(attrs, x, scale, zero=None):
    axis, rank = _only_axis(attrs), _rank(x)
    if x.dtype not in _DEQUANTIZED or (zero is not None and zero.dtype != x.dtype):
        raise Declined("codes of another type")
    dx = x.astype(np.float32)
    if zero is not None:
        dx = dx - _per_axis(zero, rank, axis)
    return (dx * _per_axis(scale, rank, axis)).astype(scale.dtype)


def _quantize(attrs, x, scale, zero=None):
    axis, rank = _only_axis(attrs), _rank(x)
    dtype = np.dtype(np.uint8) if zero is None else zero.dtype
    if dtype not in _INTEGER_CODES:
        raise Declined("codes of another type")
    xi = np.rint(x / _per_axis(scale, rank, axis)).astype(np.int32)
    if zero is not None:
        xi += _per_axis(zero, rank, axis)
    info = np.iinfo(dtype)
    return np.clip(xi, int(info.min), int(info.max)).astype(dtype)


def _matmul(attrs, a, b):
    """numpy's dot (both at most 2-D) or matmul, one case and input at a time, as
    onnx.reference calls it on that case's arrays (each a copy of its own, as a fresh array
    is); the results joined at the end, in one copy."""
    if attrs or a.dtype != b.dtype or min(_rank(a), _rank(b)) < 2:
        raise Declined("MatMul of other inputs")
    product = np.dot if _rank(a) <= 2 and _rank(b) <= 2 else np.matmul
    rows, cases = max(a.shape[0], b.shape[0]), a.shape[1]
    a_rows, b_rows = a.shape[0] > 1, b.shape[0] > 1  # (else one row, read by every row)
    ys: list = []
    add = ys.append
    for k in range(cases):
        ak, bk = a[:, k], b[:, k]
        wb = None
        for f in range(rows):
            x = ak[f if a_rows else 0].copy()
            if wb is None or b_rows:
                wb = bk[f if b_rows else 0].copy()
            add(product(x, wb))
    y = ys[0]  # (every case's arrays of one shape and type: so are their products)
    out = stack(ys).reshape((cases, rows) + y.shape)
    if y.dtype != a.dtype:
        out = out.astype(a.dtype)
    return np.ascontiguousarray(out.swapaxes(0, 1))


def _fits(inner: np.ndarray, outer: np.ndarray) -> bool:
    """Whether numpy adds ``inner`` into ``outer`` in place, case by case."""
    return np.broadcast_shapes(inner.shape[2:], outer.shape[2:]) == outer.shape[2:]


def _qlinear_matmul(attrs, a, a_scale, a_zero, b, b_scale, b_zero, y_scale, y_zero):
    """QLinearMatMul as onnx.reference computes it: int32 (a - a_zero_point) times
    (b - b_zero_point), times a_scale * b_scale / y_scale (float32) in float64, plus
    y_zero_point, rounded half to even and saturated."""
    if attrs or min(_rank(a), _rank(b)) < 2 or a.dtype not in _INTEGER_CODES or b.dtype not in _INTEGER_CODES:
        raise Declined("QLinearMatMul of other inputs")
    A, B = a.astype(np.int32), b.astype(np.int32)
    for v, z in ((A, a_zero), (B, b_zero)):
        if z is not None:
            if not _fits(z, v):
                raise Declined("a zero point that does not fit its input")
            v -= _aligned(z.astype(np.int32), _rank(v))
    rank = max(_rank(A), _rank(B))
    C = np.matmul(_aligned(A, rank), _aligned(B, rank))
    m_rank = max(_rank(a_scale), _rank(b_scale), _rank(y_scale))
    m = _aligned(a_scale, m_rank) * _aligned(b_scale, m_rank) / _aligned(y_scale, m_rank)
    rank = max(_rank(C), _rank(m))
    D = _aligned(C, rank) * _aligned(m, rank)
    dtype = a.dtype
    if y_zero is not None:
        if not _fits(y_zero, D):
            raise Declined("a zero point that does not fit the output")
        D += _aligned(y_zero, _rank(D))
        dtype = y_zero.dtype
    info = np.iinfo(dtype)
    return np.clip(np.rint(D), int(info.min), int(info.max)).astype(dtype)


_KERNELS = {("", "DequantizeLinear"): _dequantize, ("", "QuantizeLinear"): _quantize,
            ("", "MatMul"): _matmul, ("", "QLinearMatMul"): _qlinear_matmul}


# --- onnxruntime: one session per structure -----------------------------------------------------


def shareable(st: Structure) -> bool:
    """Whether every constant is read only by ai.onnx DequantizeLinear / QuantizeLinear
    nodes (and every node is ai.onnx): then it may be fed as an input."""
    consts = {i for i, k in enumerate(st.kinds) if k[0] == "const"}
    for domain, op, _, ins, _ in st.nodes:
        if domain != schema.AI_ONNX:
            return False
        if op not in ("DequantizeLinear", "QuantizeLinear") and consts & set(ins):
            return False
    return True


class Session:
    """One onnxruntime session of ``copies`` cases of ``st`` side by side, each on ``rows``
    inputs. Every input and constant slot is one graph input holding that slot's value of every
    copy (and row): one Split gives each copy its own value where the value has a first axis
    (the values joined along it, each part as long as one), else a Gather of one index does (the
    values stacked along a new first axis). Either is an exact copy, so the structure's nodes
    read, as tensors computed at run time, the values and shapes they read fed alone. A node
    that reads only constants (a weight's DequantizeLinear) is computed once per copy and read
    by every row, as it computes the same values for each. One run computes ``copies`` cases on
    every row, fed a handful of arrays, and gives an array per output: its parts, every copy's
    on every row, joined along their first axis by a Concat (an exact copy; parts that may be
    scalars, which Concat does not join, come out one by one)."""

    def __init__(self, ort, st: Structure, copies: int, rows: int, opsets: dict, ir_version: int,
                 session_options):
        self.st, self.copies, self.rows = st, copies, rows
        self.fed = [i for i, k in enumerate(st.kinds) if k[0] != "made"]
        per_row = {i for i, k in enumerate(st.kinds) if k[0] == "input"}
        for _, _, _, ins, outs in st.nodes:  # in order: a value made from a row's value varies by row
            if per_row.intersection(ins):
                per_row.update(outs)
        self.per_row = per_row

        def name(i: int, j: int, f: int) -> str:
            return f"v{i}_{j}_{f}" if i in per_row else f"v{i}_{j}"

        nodes, outputs = [], []
        consts: dict = {}  # the Gathers' indices and the Splits' sizes, by name
        inputs = self._fed(name, schema.opset_of(opsets, schema.AI_ONNX) or 0, nodes, consts)
        for j in range(copies):
            for (domain, op, _, ins, outs), protos in zip(st.nodes, st.protos, strict=True):
                for f in range(rows if per_row.intersection(outs) else 1):
                    n = helper.make_node(op, [name(i, j, f) if i >= 0 else "" for i in ins],
                                         [name(o, j, f) for o in outs], domain=domain)
                    n.attribute.extend(protos)
                    nodes.append(n)
        for s, elem in st.outputs:  # (each output's parts: every copy's, on every row where it varies)
            each = rows if s in per_row else 1
            outputs.append(([name(s, j, f) for j in range(copies) for f in range(each)], elem))
        imports = [helper.make_opsetid(d, v) for d, v in opsets.items()]
        self.joined = False
        # each output's parts joined in the graph, where it can (Concat is ai.onnx's: the model
        # must import it; the axis is given, which every version of Concat reads)
        if JOINED and schema.opset_of(opsets, schema.AI_ONNX) is not None:
            self.session = _session(ort, _joined_model(nodes, inputs, outputs, consts, imports, ir_version),
                                    session_options, joined=len(outputs))
            self.joined = self.session is not None
        if not self.joined:  # (a scalar output, say: no Concat joins scalars)
            parts = [helper.make_tensor_value_info(p, elem, None) for names, elem in outputs for p in names]
            graph = helper.make_graph(nodes, "measure", inputs, parts, list(consts.values()))
            model = helper.make_model(graph, opset_imports=imports, ir_version=ir_version)
            self.session = _session(ort, model, session_options)

    def _fed(self, name, opset: int, nodes: list, consts: dict) -> list:
        """The graph inputs, one a slot, and the nodes that give each copy (and row) its part
        of one (added to ``nodes``, their constants to ``consts`` by name); ``self.split``: the
        slots fed to a Split."""
        inputs, self.split = [], set()
        for i in self.fed:
            kind = self.st.kinds[i]
            elem = kind[1] if kind[0] == "input" else helper.np_dtype_to_tensor_dtype(np.dtype(kind[1]))
            parts = [name(i, j, f) for j in range(self.copies)
                     for f in range(self.rows if i in self.per_row else 1)]
            shape = tuple(kind[2])
            if opset and shape and shape[0] > 0 and len(parts) > 1:  # joined along their first axis
                joined = [len(parts) * shape[0], *shape[1:]]
                inputs.append(helper.make_tensor_value_info(f"s{i}", elem, joined))
                nodes.append(_split(f"s{i}", parts, shape[0], opset, consts))
                self.split.add(i)
                continue
            inputs.append(helper.make_tensor_value_info(f"s{i}", elem, [len(parts), *shape]))
            for m, part in enumerate(parts):
                if f"at{m}" not in consts:
                    consts[f"at{m}"] = helper.make_tensor(f"at{m}", onnx.TensorProto.INT64, [], [m])
                nodes.append(helper.make_node("Gather", [f"s{i}", f"at{m}"], [part]))
        return inputs

    def run(self, values: list) -> list[np.ndarray]:
        """The outputs, [rows, cases, ...] each, ``values`` as for ``reference`` (an input
        slot's [rows, cases, ...], a constant's [1, cases, ...])."""
        rows, copies, cases = self.rows, self.copies, values[self.fed[0]].shape[1]
        padded = -(-cases // copies) * copies
        ks = np.minimum(np.arange(padded), cases - 1)  # the last run's last case repeated
        whole = {}  # each slot's feed of every run at once: run r's is its r-th part
        for i in self.fed:
            v = values[i][:, ks]
            if i in self.per_row:  # [cases * rows, ...], case c's row f at c * rows + f
                v = np.broadcast_to(v, (rows,) + v.shape[1:]).swapaxes(0, 1)
                v, each = np.ascontiguousarray(v).reshape((padded * rows,) + v.shape[2:]), rows
            else:
                v, each = np.ascontiguousarray(v[0]), 1
            if i in self.split:  # the parts joined along their first axis, as the Split reads them
                v = v.reshape((-1,) + v.shape[2:])
                each *= self.st.kinds[i][2][0]
            whole[f"s{i}"] = (v, each)
        got: list = []
        for start in range(0, cases, copies):
            got += self.session.run(None, {name: v[start * each:(start + copies) * each]
                                           for name, (v, each) in whole.items()})
        if self.joined:
            return self._parts_of(got, cases, padded)
        out: list = []
        per_run = sum(copies * (rows if s in self.per_row else 1) for s, _ in self.st.outputs)
        at = 0
        for s, _ in self.st.outputs:  # the runs' outputs of this slot, [cases, each, ...]
            each = rows if s in self.per_row else 1
            y = stack([got[r + at + m] for r in range(0, len(got), per_run) for m in range(copies * each)])
            at += copies * each
            y = y.reshape((padded, each) + y.shape[1:])[:cases].swapaxes(0, 1)
            out.append(np.ascontiguousarray(np.broadcast_to(y, (rows,) + y.shape[1:])))
        return out

    def _parts_of(self, got: list, cases: int, padded: int) -> list[np.ndarray]:
        """``run``'s outputs from the runs' joined outputs (``got``: each run's, output by
        output): an output's parts, every copy's on every row in the order the Concat joined
        them, are as long as each other along the first axis, as the values they were computed
        from are shaped alike."""
        rows, count = self.rows, len(self.st.outputs)
        out: list = []
        for at, (s, _) in enumerate(self.st.outputs):
            each = rows if s in self.per_row else 1
            runs = got[at::count]
            n = self.copies * each  # the parts of one run
            length = runs[0].shape[0] // n if runs[0].ndim else 0
            if not length or any(r.shape[0] != length * n for r in runs):
                raise Declined("parts of other lengths")
            y = np.concatenate(runs)
            y = y.reshape((padded, each, length) + y.shape[1:])[:cases].swapaxes(0, 1)
            out.append(np.ascontiguousarray(np.broadcast_to(y, (rows,) + y.shape[1:])))
        return out


JOINED = True  # a session's outputs joined by a Concat (off: every part an output, as tests compare)


def _joined_model(nodes: list, inputs: list, outputs: list, consts: dict, imports: list,
                  ir_version: int) -> onnx.ModelProto:
    """The session's model with each output's parts (``outputs``: [(part names, element type)])
    joined along their first axis by one Concat, that output alone a graph output: one array a
    run, not one a part (a Concat copies its inputs as they are)."""
    joins = [helper.make_node("Concat", names, [f"joined{at}"], axis=0)
             for at, (names, _) in enumerate(outputs)]
    graph = helper.make_graph(nodes + joins, "measure", inputs,
                              [helper.make_tensor_value_info(f"joined{at}", elem, None)
                               for at, (_, elem) in enumerate(outputs)], list(consts.values()))
    return helper.make_model(graph, opset_imports=imports, ir_version=ir_version)


def _session(ort, model: onnx.ModelProto, session_options, joined: int = 0):
    """An onnxruntime session of ``model``; with ``joined`` (its count of joined outputs), None
    where onnxruntime does not take the model or does not know the rank of a joined output
    (its parts may be scalars, which Concat does not join)."""
    try:
        session = ort.InferenceSession(model.SerializeToString(), session_options,
                                       providers=["CPUExecutionProvider"])
    except Exception:
        if joined:
            return None
        raise
    if joined and (len(session.get_outputs()) != joined or not all(o.shape for o in session.get_outputs())):
        return None
    return session


def stack(arrays: list[np.ndarray], axis: int = 0) -> np.ndarray:
    """``np.stack(arrays, axis)``, without np.stack's new view of each array where they have
    one shape: arrays of a dimension or more along ``axis`` joined by one np.concatenate
    (np.stack's own join of those views: the same type promotion) and shaped; 0-d arrays of
    one type read into one array by np.array. Else np.stack itself."""
    if not arrays:
        return np.stack(arrays, axis)
    shape = arrays[0].shape
    if any([a.shape != shape for a in arrays]):
        return np.stack(arrays, axis)
    if axis < len(shape):
        return np.concatenate(arrays, axis).reshape(shape[:axis] + (len(arrays),) + shape[axis:])
    dtype = arrays[0].dtype
    if shape or axis or any([a.dtype != dtype for a in arrays]):
        return np.stack(arrays, axis)
    return np.array(arrays, dtype)


def _split(source: str, parts: list[str], size: int, opset: int, consts: dict) -> onnx.NodeProto:
    """A Split of ``source`` along its first axis into ``parts``, ``size`` rows each: its sizes
    an attribute where Split at ``opset`` has one (Split-2 and -11, as onnx.defs has them), else
    its second input (an initializer added to ``consts``)."""
    sizes = [size] * len(parts)
    if _sizes_attribute(opset):
        return helper.make_node("Split", [source], parts, axis=0, split=sizes)
    consts[f"{source}_sizes"] = helper.make_tensor(f"{source}_sizes", onnx.TensorProto.INT64, [len(sizes)],
                                                   sizes)
    return helper.make_node("Split", [source, f"{source}_sizes"], parts, axis=0)


@functools.cache
def _sizes_attribute(opset: int) -> bool:
    import onnx.defs

    return "split" in onnx.defs.get_schema("Split", opset).attributes
