"""The proofs of the n-bits weight rewrites of nbits.py (MatMulNBits -> blocked DequantizeLinear
+ MatMul, and back), and of gather_block.py's, whose case is an ``NBitsCase`` too.

What a proof says: the weights the MatMulNBits page computes, (code - zero point) * scale per
block, are bit for bit what qlin's evaluator's DequantizeLinear computes of the tables (the
bit-exact evaluator every Q/DQ rewrite is proven with, convert/verify.py). Each table is read
as onnx reads an initializer, so how the codes were packed and stored is proven too. One
``NBitsCase`` is one rewrite: the page's weights, the DequantizeLinear and the initializers
it reads.

How: ``prove_all`` proves many cases at once. Cases whose DequantizeLinear has the same
attributes and tables of the same types and shapes run side by side: their tables joined
along an axis the blocks do not run along, through one DequantizeLinear. That node computes
each element from that element's own code, scale and zero point, so each case's slice of the
output is what it computes on that case alone. When the whole output is the page's weights of
all the cases, no case needs its own comparison; otherwise each case is compared on its own
slice, so each verdict and message is the case's own. Cases that cannot be stacked are proven
one at a time (``NBitsCase.prove``).

Reading tables from their bytes (``raw_source``, ``from_bytes``, ``read_codes``) lives in
nbits.py, which reads back what it writes with the same steps: this module imports nbits.py,
never the other way.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import onnx
from onnx import helper

from ..verify import same_bits
from .nbits import INLINE, dequantized, from_bytes, opset_for, raw_source
from .to_qdq import read_raw


class NBitsCase:
    """What proves a MatMulNBits rewrite: the page's dequantized weights against qlin's
    evaluator's DequantizeLinear-21 (the bit-exact evaluator every Q/DQ rewrite is proven with,
    convert/verify.py) of the initializers written, each read as onnx reads an initializer."""

    def __init__(self, w: dict, dq: onnx.NodeProto, inits: list[onnx.TensorProto], read: dict | None = None):
        self.w, self.dq, self.inits = w, dq, inits
        self.read = read or {}  # what numpy_helper.to_array gave of some of ``inits``, by name

    def want(self) -> np.ndarray:
        """The values the DequantizeLinear must compute: the page's weights, [K, N]."""
        return dequantized(self.w).T

    def prove(self) -> str | None:
        tensors = {t.name: t for t in self.inits}
        try:
            inputs = [None if not x else self.read[x] if x in self.read else read_raw(tensors[x])
                      for x in self.dq.input]
            got = _dequantized(self.dq, opset_for(self.w["bits"]), inputs)
        except Exception as e:  # an evaluator that cannot run it proves nothing
            return f"qlin's evaluator cannot run the DequantizeLinear: {str(e).strip()[:200]}"
        return self.compare(got)

    def compare(self, got: np.ndarray) -> str | None:
        """None when the evaluator's values ``got`` are the page's bit for bit, else where not."""
        got = np.ascontiguousarray(got)
        want = np.ascontiguousarray(self.want())
        if got.shape != want.shape or got.dtype != want.dtype:
            return f"qlin's evaluator gives {got.dtype} {got.shape}, the page {want.dtype} {want.shape}"
        if got.tobytes() != want.tobytes():
            at = np.unravel_index(int(np.argmax(got.view(np.uint8) != want.view(np.uint8)) // got.itemsize),
                                  got.shape)
            return f"weight {tuple(int(i) for i in at)}: {got[at]!r} where the page gives {want[at]!r}"
        return None


def _dequantized(dq: onnx.NodeProto, opset: int, inputs: list) -> np.ndarray:
    """What qlin's evaluator computes of the DequantizeLinear ``dq`` at ``opset`` on ``inputs``."""
    from ...evaluator import run_node

    return np.asarray(run_node(dq, opset, inputs))


STACK_BYTES = 1 << 26  # what the tables of one stacked run may take (their float32 values)


def prove_all(cases: list[NBitsCase]) -> list[str | None]:
    """Each case's ``prove()``. Cases whose blocked DequantizeLinear nodes have the same
    attributes and tables of the same types and shapes are run side by side (``_stacked``): their
    written tables, each read as onnx reads an initializer, joined along an axis the blocks do
    not run along, through one DequantizeLinear per structure. The node computes each element
    from that element's code, scale and zero point alone, so each case's part of the output is
    what the node computes on the case's tables alone. The others are proven case by case."""
    out: list[str | None] = [None] * len(cases)
    by_opset: dict[int, list[int]] = {}
    for i, case in enumerate(cases):
        by_opset.setdefault(opset_for(case.w["bits"]), []).append(i)
    for opset, idx in by_opset.items():
        for i in _stacked(cases, idx, opset, out):
            out[i] = cases[i].prove()
    return out


def _stacked(cases: list[NBitsCase], idx: list[int], opset: int, out: list) -> list[int]:
    """Prove the cases ``idx`` that ``_sources`` reads, side by side, into ``out``; the others
    (and those of a structure the evaluator cannot run stacked) are returned, in order."""
    groups, rest = _grouped(cases, idx)
    for key, members in groups.items():
        per_case = 4 * math.prod(key[2][0][2])
        size = max(1, STACK_BYTES // max(per_case, 1))
        for start in range(0, len(members), size):
            part = members[start:start + size]
            try:
                whole = _run_joined(key, _joined(key, [sources for _, sources in part]), opset)
            except Exception:  # proven case by case, each naming what failed
                rest += [i for i, _ in part]
                continue
            if _all_equal([cases[i] for i, _ in part], whole):
                continue  # every case's part is the page's weights: each proof would say None
            for (i, _), value in zip(part, np.split(whole, len(part), axis=_along(key)), strict=True):
                out[i] = cases[i].compare(value)
    return sorted(rest)


LIKES = 4  # the structures ``_grouped`` holds cases to before reading them one by one


def _grouped(cases: list[NBitsCase], idx: list[int]) -> tuple[dict, list[int]]:
    """({structure: [(i, sources)]}, the others) of the cases ``idx``, as ``_sources`` of each
    gives them: a case is first held to the structures found so far (``_like``), and read on
    its own (``_sources``) only when it has none of them."""
    groups: dict[tuple, list] = {}
    rest: list[int] = []
    likes: list[_Like] = []
    for i in idx:
        case = cases[i]
        for like in likes:
            sources = _like(case, like)
            if sources is not None:
                groups[like.key].append((i, sources))
                break
        else:
            got = _sources(case)
            if got is None:
                rest.append(i)
                continue
            if got[0] not in groups and len(likes) < LIKES:
                likes.append(_like_of(case, got))
            groups.setdefault(got[0], []).append((i, got[1]))
    return groups, rest


def _like_of(case: NBitsCase, got: tuple) -> _Like:
    """The structure ``got`` (``_sources(case)``) as ``_like`` holds other cases to it."""
    return _Like(got[0], list(case.dq.attribute), tuple(
        (elem, type(v) is bytes, dtype, list(dims), len(v) if type(v) is bytes else 0)
        for (elem, dtype, dims), v in zip(got[0][2], got[1], strict=True)))


class _Like(NamedTuple):
    """A structure ``_sources`` gave a case, as ``_like`` holds another case to it."""

    key: tuple  # the structure
    attributes: list  # the case's DequantizeLinear's attributes
    # each input: (element type, read from bytes, numpy type, dims as a list, the bytes' length)
    inputs: tuple


def _like(case: NBitsCase, like: _Like) -> list | None:
    """``_sources(case)[1]`` when ``_sources`` would give ``case`` the structure ``like.key``:
    its DequantizeLinear's attributes equal (message by message), its ``inits`` its inputs in
    order under names of their own, and each input a table of the same element type, kind
    (``case.read``'s array or a tensor's inline raw bytes) and type and dims; None for any other
    case (``_sources`` then reads it)."""
    dq = case.dq
    if dq.attribute != like.attributes:
        return None
    names, inits = dq.input[:], case.inits
    if (len(names) != len(like.inputs) or len(inits) != len(names) or [t.name for t in inits] != names
            or len(set(names)) != len(names)):
        return None
    read, out = case.read, []
    for x, t, (elem, raw, dtype, dims, size) in zip(names, inits, like.inputs, strict=True):
        value = read.get(x) if read else None
        if t.data_type != elem or raw != (value is None):
            return None
        if raw:
            if (t.dims != dims or not t.HasField("raw_data") or t.HasField("segment")
                    or t.data_location != INLINE):
                return None
            value = t.raw_data
            if len(value) != size:
                return None
        elif value.dtype != dtype or list(value.shape) != dims:
            return None
        out.append(value)
    return out


def _all_equal(cases: list[NBitsCase], whole: np.ndarray) -> bool:
    """Whether ``whole`` (the cases' outputs side by side, ``_run_stacked``) is, bit for bit,
    the page's weights of MatMulNBits cases (``want``: [K, N]) side by side: the page's formula
    computed on their codes, scales and zero points stacked along N, element by element as for
    each alone. False for anything else, which is then compared case by case."""
    if any(type(c) is not NBitsCase for c in cases):
        return False
    first = cases[0].w
    keys = ("codes", "scales", "zero")

    def layout(w: dict) -> tuple:
        return (w["K"], w["block_size"], w["codes"].shape, w["codes"].dtype, w["scales"].shape,
                w["scales"].dtype, w["zero"].shape, w["zero"].dtype)

    want = layout(first)  # (one tuple a case, compared at once: not a generator a case)
    if any(layout(c.w) != want for c in cases):
        return False
    stacked = dict(first, **{k: np.concatenate([c.w[k] for c in cases]) for k in keys})
    return same_bits(np.asarray(whole).T, dequantized(stacked))


def _along(key: tuple) -> int:
    """The axis ``_run_stacked`` joins the tables of the structure ``key`` along: the last
    axis the blocks do not run along."""
    axis, rank = key[0], len(key[2][0][2])
    return rank - 1 if axis != rank - 1 else rank - 2



def _tables(case: NBitsCase) -> tuple[tuple, list] | None:
    """(structure, [codes, scale, zero point]) of a case whose DequantizeLinear is blocked and
    reads only tensors of the case (``inits``) of one rank of at least 2, each read as onnx
    reads an initializer; None for any other (``_sources``, each table read on its own)."""
    got = _sources(case)
    if got is None:
        return None
    key, sources = got
    return key, _joined(key, [sources])


def _sources(case: NBitsCase) -> tuple[tuple, list] | None:
    """(structure, what each input of the case's DequantizeLinear reads) of a case ``_tables``
    takes, else None. Each input is an array (``case.read``'s, or the tensor read here by
    read_raw) or, for a tensor holding inline raw_data of the size its type and dims take (a
    plain numeric type, or 4 bits), those bytes: ``_joined`` reads them, the tensors of one
    input of a stack at once, as read_raw and to_array read each."""
    dq = case.dq
    axis, block = 1, None
    for a in dq.attribute:
        if a.name == "block_size":
            block = a.i
        elif a.name == "axis":
            axis = a.i
        else:
            return None
    names = dq.input[:]
    if block is None or block <= 0 or not 2 <= len(names) <= 3:
        return None
    tensors = _in_order(case.inits, names)
    if tensors is None:
        return None
    read, sources, parts = case.read, [], []
    for x, t in zip(names, tensors, strict=True):
        value = read.get(x) if read else None
        if value is None:
            value = raw_source(t)
        if value is None:
            try:
                value = read_raw(t)
            except Exception:  # the evaluator's own reading will say why
                return None
        sources.append(value)
        raw = type(value) is tuple
        parts.append((t.data_type, *value[1:]) if raw else (t.data_type, value.dtype, value.shape))
    rank = len(parts[0][2])
    if rank < 2 or any(len(p[2]) != rank for p in parts) or not -rank <= axis < rank:
        return None
    return (axis % rank, block, tuple(parts)), [v[0] if type(v) is tuple else v for v in sources]


def _in_order(inits: list, names: list) -> list | None:
    """The tensor of ``inits`` each of ``names`` is (the last of that name, as a dict of
    them by name takes it); None when one is not there."""
    if len(inits) == len(names) and len(set(names)) == len(names):
        if all(t.name == x for t, x in zip(inits, names, strict=True)):
            return list(inits)
    by_name = {t.name: t for t in inits}
    if any(x not in by_name for x in names):
        return None
    return [by_name[x] for x in names]



def _joined(key: tuple, sources: list[list]) -> list[np.ndarray]:
    """Each input of the DequantizeLinear of ``key`` (``_sources``) of several cases
    (``sources``, a case each), their tables joined along ``_along(key)``; the bytes of the
    tables of one input read together (``from_bytes``)."""
    along = _along(key)
    out = []
    for j, (_, dtype, dims) in enumerate(key[2]):
        values = [s[j] for s in sources]
        if all(type(v) is bytes for v in values):
            joined = list(dims)
            joined[along] *= len(values)
            out.append(np.moveaxis(from_bytes(values, dtype, dims), 0, along).reshape(joined))
        else:
            out.append(np.concatenate([from_bytes([v], dtype, dims)[0] if type(v) is bytes else v
                                       for v in values], axis=along))
    return out



def _run_stacked(key: tuple, parts: list[list[np.ndarray]], opset: int) -> np.ndarray:
    """The output of the DequantizeLinear of ``key`` (``_tables``), run once on the cases'
    tables joined along ``_along(key)``: each case's output side by side along it."""
    along = _along(key)
    return _run_joined(key, [np.concatenate([p[j] for p in parts], axis=along) for j in range(len(key[2]))],
                       opset)


def _run_joined(key: tuple, inputs: list[np.ndarray], opset: int) -> np.ndarray:
    """The output of the DequantizeLinear of ``key`` on ``inputs`` (the cases' tables joined)."""
    axis, block_size, kinds = key
    names = ["x", "scale", "zero_point"][:len(kinds)]
    node = helper.make_node("DequantizeLinear", names, ["y"], axis=axis, block_size=block_size)
    return _dequantized(node, opset, inputs)
