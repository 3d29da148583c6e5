"""What a format rewrite computes against the node it replaces.

The node and its rewrite are each computed on the same inputs: random codes over the whole
range of each quantized input's type, and edge inputs (every element the type's lowest
code, its highest, the zero point), the node's constant inputs as they are. The node runs
in onnxruntime (graph optimizations off: the op as written), and, for an ai.onnx node, in
onnx.reference too; the rewrite in both. The bound is the largest difference between an
output of the node and the rewrite's, in quantization steps of the output (codes; for
QGemm's float output, steps of a_scale * b_scale * alpha), over every pair of engines: a
measurement on these inputs, not a proof for all inputs.

The cases of a batch are computed side by side: those of one structure (the same ops,
attributes, wiring, types and shapes) at once by stacked.py (onnx.reference's arithmetic on
stacked arrays, one onnxruntime session per structure), or, in onnxruntime, where a kernel
packs a constant of theirs, by baked.py (the cases side by side in one session, each reading
its constants as initializers), the others as one model of the batch (values renamed apart,
constants as initializers) per engine.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import onnx
from onnx import helper, numpy_helper

from ... import schema
from ...schema import ir
from . import baked, stacked
from .to_qdq import raw_tensor

SAMPLES = 6  # random inputs, besides the edge inputs


@dataclass
class FormatCase:
    before: list[onnx.NodeProto]  # the node (or the QDQ group) replaced; its last writes the output
    after: list[onnx.NodeProto]
    added: list[onnx.TensorProto]  # the rewrite's new initializers
    consts: dict[str, np.ndarray]  # the node's constant inputs
    inputs: dict[str, tuple[int, tuple]]  # its other inputs: element type, shape
    output_type: int  # element type of the node's output (0: unknown)
    opsets_before: dict[str, int]
    opset_after: int
    float_step: float | None = None  # QGemm's float output: the size of one step
    opsets_after: dict[str, int] | None = None  # default: ai.onnx at opset_after
    outputs: list | None = None  # (name, element type) of each output; default: the last node's
    plain: dict | None = None  # side ("before" / "after") -> its nodes as to_qdq.Plain, where kept

    def output_list(self) -> list:
        return self.outputs or [(self.before[-1].output[0], self.output_type)]


@dataclass
class Measured:
    steps: int  # the largest difference, in quantization steps of the output
    differ: int  # outputs that differ (of ``outputs``)
    outputs: int
    engines: tuple[str, ...]

    def to_json(self) -> dict:
        return {"steps": self.steps, "differ": self.differ, "outputs": self.outputs,
                "engines": list(self.engines)}

    def text(self) -> str:
        how = ", ".join(self.engines)
        if self.steps == 0:
            return f"exact on {self.outputs:,} measured outputs ({how})"
        return (f"within {self.steps} step{'s' if self.steps > 1 else ''}: {self.differ:,} of "
                f"{self.outputs:,} measured outputs differ ({how})")


class CannotMeasure(Exception):
    pass


BATCH = 512  # cases measured together (their random inputs drawn from one generator)


def measure_all(cases: list[FormatCase], seed: int = 0) -> list:
    """What each case's rewrite computes against its source (a Measured, or the
    CannotMeasure saying why), in batches of cases the same engines compute: the inputs of a
    batch are drawn together, its cases computed side by side (``_Batch``), so that a model
    of thousands of nodes costs a few sessions; a batch that cannot be measured is measured
    case by case, which names the case at fault."""
    out: list = [None] * len(cases)
    sessions: dict = {}  # onnxruntime sessions of this call, by structure
    kinds: dict[tuple, list[int]] = {}  # cases the same engines compute, batched together
    opsets = []  # each case's (source opset, opset after)
    for i, c in enumerate(cases):
        opsets.append((schema.opset_of(c.opsets_before, schema.AI_ONNX) or c.opset_after, c.opset_after))
        plain = c.plain or {}
        kinds.setdefault((_reference_reads(plain.get("before") or c.before, opsets[i][0]),
                          _reference_reads(plain.get("after") or c.after, c.opset_after)), []).append(i)
    for kind, members in kinds.items():
        for start in range(0, len(members), BATCH):
            batch = members[start:start + BATCH]
            got = None
            if len(batch) > 1:
                # cases of one kind at the same opsets: the batch's nodes read as each case's do
                reads = kind if len({opsets[i] for i in batch}) == 1 else None
                try:
                    got = _measure([cases[i] for i in batch], seed, sessions, reads)
                except CannotMeasure:
                    pass
            for j, i in enumerate(batch):
                out[i] = got[j] if got is not None else _one(cases[i], seed, sessions)
    return out


def _one(case: FormatCase, seed: int, sessions: dict):
    try:
        return _measure([case], seed, sessions)[0]
    except CannotMeasure as e:
        return e


def _measure(cases: list[FormatCase], seed: int, sessions: dict,
             reads: tuple | None = None) -> list[Measured]:
    """``reads``: whether onnx.reference reads the batch's nodes before and after, when known."""
    batch = _Batch(cases, sessions)
    feeds = _feeds(batch.inputs, np.random.default_rng(seed))
    ort = _onnxruntime()
    first = cases[0]
    runs_after = []
    if ort is not None:
        runs_after.append((f"onnxruntime {ort.__version__}", batch.computed(feeds, "after", ort)))
    if reads is None:
        source_opset = schema.opset_of(first.opsets_before, schema.AI_ONNX) or first.opset_after
        reads = (_reference_reads([n for c in cases for n in c.before], source_opset),
                 _reference_reads([n for c in cases for n in c.after], first.opset_after))
    if reads[1]:
        runs_after.append(("onnx.reference", batch.computed(feeds, "after", None)))
    # what the source computes: for ai.onnx nodes their pages, as onnx.reference computes them
    # (a runtime's kernel may differ from the page: onnxruntime's u8s8 QLinearConv saturates
    # pairs of products on CPUs without VNNI); a vendor node's is its runtime's kernel
    if reads[0]:
        truth = ("onnx.reference", batch.computed(feeds, "before", None))
    elif ort is not None:
        truth = (f"onnxruntime {ort.__version__}", batch.computed(feeds, "before", ort))
    else:
        vendor = [n.domain for c in cases for n in c.before
                  if schema.normalize_domain(n.domain) != schema.AI_ONNX]
        raise CannotMeasure("onnxruntime is not installed, and nothing else computes the "
                            f"{vendor[0] if vendor else 'source'} node to measure against")
    engines = tuple(dict.fromkeys([truth[0]] + [name for name, _ in runs_after]))
    steps, differ = _compared(cases, truth[1], [got for _, got in runs_after])
    return [Measured(steps[k], differ[k], truth[1].size(k), engines) for k in range(len(cases))]


def _compared(cases: list[FormatCase], truth: _Computed, afters: list) -> tuple[list[int], list[int]]:
    """Each case's largest difference between ``truth`` and any of ``afters`` (each a
    ``_Computed``), in steps, and the most outputs that differ under one engine; the cases
    whose outputs have the same shapes and types computed at once: those truth computed
    stacked as they were computed (``_compared_stacked``), the others case by case."""
    steps, differ = [0] * len(cases), [0] * len(cases)
    done = _compared_stacked(cases, truth, afters, steps, differ)
    if done is None:  # a shape differs: said below, at the first case where it does
        done, steps, differ = set(), [0] * len(cases), [0] * len(cases)
    groups: dict[tuple, list[int]] = {}
    for k in range(len(cases)):
        if k in done:
            continue
        for got in afters:
            for a, b in zip(truth[k], got[k], strict=True):
                if a.shape != b.shape:
                    raise CannotMeasure(f"the rewrite's output has shape {b.shape[1:]}, the node's "
                                        f"{a.shape[1:]}")
        sig = tuple((a.shape, a.dtype.str, tuple(got[k][o].dtype.str for got in afters))
                    for o, a in enumerate(truth[k]))
        groups.setdefault(sig, []).append(k)
    for group in groups.values():
        per_case = 32 * sum(a.size for a in truth[group[0]])  # int64 / float64 copies, and their difference
        for ids in _chunks(group, per_case):
            _compare(cases, ids, truth, afters, steps, differ)
    return steps, differ


def _compared_stacked(cases, truth: _Computed, afters: list, steps: list, differ: list) -> set | None:
    """``_compared`` of the cases truth computed stacked, part by part (an engine's outputs of
    the part's cases stacked alike where it computed them otherwise): the cases done, or None
    where an output's shape differs between truth and an engine."""
    done: set = set()
    for ids, want in truth.parts:
        gots = [got.part(ids) for got in afters]
        if any(g is None for g in gots):
            continue  # a case with outputs of another shape or type: compared case by case
        if any(len(g) != len(want) or any(b.shape != a.shape for a, b in zip(want, g, strict=True))
               for g in gots):
            return None
        per_case = 32 * sum(a.size for a in want) // max(len(ids), 1)
        for at in _chunks(list(range(len(ids))), per_case):
            sub = [ids[j] for j in at]
            step = np.array([cases[k].float_step or 1.0 for k in sub], np.float64)
            for got in gots:
                count = np.zeros(len(sub), np.int64)
                for a, b in zip(want, got, strict=True):
                    a, b = a[:, at], b[:, at]
                    d = _steps(a, b, step.reshape((1, -1) + (1,) * (a.ndim - 2)))
                    flat = d.swapaxes(0, 1).reshape(len(sub), -1)
                    for j, m in enumerate(flat.max(axis=1, initial=0).tolist()):
                        steps[sub[j]] = max(steps[sub[j]], int(m))
                    count += (flat > 0).sum(axis=1)
                for j, n in enumerate(count.tolist()):
                    differ[sub[j]] = max(differ[sub[j]], n)
        done.update(ids)
    return done


class _Computed:
    """Each case's outputs ([input, ...] each): those computed stacked kept as their part's
    arrays ([input, case, ...] each: ``parts``), the others case by case; ``c[k]``: case
    ``k``'s."""

    def __init__(self, count: int):
        self.each: list = [None] * count
        self.parts: list = []  # (ids, arrays)
        self.at: dict = {}  # case -> (part, position)

    def add(self, ids: list[int], arrays: list) -> None:
        arrays = [o if o.shape[0] == _ROWS else np.broadcast_to(o, (_ROWS,) + o.shape[1:]) for o in arrays]
        self.at.update((k, (len(self.parts), j)) for j, k in enumerate(ids))
        self.parts.append((ids, arrays))

    def __getitem__(self, k: int) -> list:
        if self.each[k] is None:
            p, j = self.at[k]
            self.each[k] = [o[:, j] for o in self.parts[p][1]]
        return self.each[k]

    def size(self, k: int) -> int:
        if k in self.at:
            return sum(o[:, 0].size for o in self.parts[self.at[k][0]][1])
        return sum(a.size for a in self.each[k])

    def part(self, ids: list[int]) -> list | None:
        """The outputs of the cases ``ids`` stacked as a part is ([input, case, ...] each), or None
        where their outputs differ in shape or type."""
        p = self.at.get(ids[0], (None,))[0]
        if p is not None and self.parts[p][0] == ids:
            return self.parts[p][1]
        first = [(a.shape, a.dtype) for a in self[ids[0]]]
        if any([(a.shape, a.dtype) for a in self[k]] != first for k in ids):
            return None
        return [stacked.stack([self[k][o] for k in ids], 1) for o in range(len(first))]


def _chunks(ids: list, per_case: int) -> list[list]:
    """``ids`` in runs of at most STACK_BYTES of ``per_case`` bytes each (at least one)."""
    size = max(1, STACK_BYTES // max(per_case, 1))
    return [ids[i:i + size] for i in range(0, len(ids), size)]


def _compare(cases, ids: list[int], truth: list, afters: list, steps: list, differ: list) -> None:
    """``_compared`` of the cases ``ids``, whose outputs have the same shapes and types."""
    step = np.array([cases[k].float_step or 1.0 for k in ids], np.float64)
    for got in afters:
        count = np.zeros(len(ids), np.int64)
        for o in range(len(truth[ids[0]])):
            a = stacked.stack([truth[k][o] for k in ids])
            d = _steps(a, stacked.stack([got[k][o] for k in ids]), step.reshape((-1,) + (1,) * (a.ndim - 1)))
            flat = d.reshape(len(ids), -1)
            for j, m in enumerate(flat.max(axis=1, initial=0).tolist()):
                steps[ids[j]] = max(steps[ids[j]], int(m))
            count += (flat > 0).sum(axis=1)
        for j, n in enumerate(count.tolist()):
            differ[ids[j]] = max(differ[ids[j]], n)


class _Batch:
    """The cases of one batch side by side: each case's values renamed apart (a chain's
    case reads the output of the case before it, which here is an input of its own), the
    constants shared by name where every case holds the same value there, an output per
    case. ``computed`` gives each case's outputs, [input, ...] each: the cases of one
    structure computed at once where stacked.py can (one onnxruntime session per structure,
    onnx.reference's arithmetic on stacked arrays), the others as one model."""

    def __init__(self, cases: list[FormatCase], sessions: dict):
        self.cases, self.sessions = cases, sessions  # onnxruntime sessions by structure
        self.single = len(cases) == 1
        self.shapes: dict = {}  # side -> _structures(side)
        held: dict = {}
        clash: set = set()
        for c in cases:
            for name, v in c.consts.items():
                if name in held and held[name] is not v and not _same(held[name], v):
                    clash.add(name)
                held.setdefault(name, v)
        self.fixed = (set(held) - clash) | {t.name for c in cases for t in c.added} | {""}
        self.inputs = {self.apart(x, k): v for k, c in enumerate(cases) for x, v in c.inputs.items()}
        self.opsets_after = {k: v for c in cases for k, v in (c.opsets_after or {"": c.opset_after}).items()}

    def constant(self, k: int, side: str):
        """Case ``k``'s constants on ``side`` (the rewrite's added ones after): name -> array or None."""
        c = self.cases[k]
        consts = c.consts
        added = {t.name: t for t in c.added} if side == "after" and c.added else {}

        def value(name: str):
            if name in consts:
                return np.asarray(consts[name])
            return numpy_helper.to_array(added[name]) if name in added else None
        return value

    def apart(self, name: str, k: int) -> str:
        return name if self.single or name in self.fixed else f"{name}@{k}"

    def opsets(self, side: str) -> dict:
        return self.cases[0].opsets_before if side == "before" else self.opsets_after

    def computed(self, feeds: dict, side: str, ort) -> _Computed:
        out = _Computed(len(self.cases))
        rest: list[int] = []
        for g in self._structures(side):
            got = self._stacked(g, feeds, side, ort)
            if got is None:
                rest += g.ids
                continue
            for ids, arrays in got:
                out.add(ids, arrays)
        rest.sort()
        # onnxruntime's session costs more than linearly in a model's inputs and outputs
        size = MODEL_CASES if ort else max(len(rest), 1)
        for start in range(0, len(rest), size):
            ids = rest[start:start + size]
            model, outputs = self._model(ids, side)
            ins = [self.apart(x, k) for k in ids for x in self.cases[k].inputs]
            runs = [{x: np.asarray(feeds[x][f]) for x in ins} for f in range(_ROWS)]
            got = _run_ort(ort, model, runs) if ort else _run_reference(_for_reference(model), runs)
            for k, at in zip(ids, outputs, strict=True):
                out.each[k] = [np.stack([r[i] for r in got]) for i in at]
        return out

    def _structures(self, side: str) -> list:
        """The cases by structure (``_Group``); cases without one (or all, when stacking is
        off) in a group of their own without a structure."""
        if side in self.shapes:
            return self.shapes[side]
        groups: dict = {}
        loose = _Group(None)
        for k, c in enumerate(self.cases):
            nodes, const = (c.plain or {}).get(side) or getattr(c, side), {}
            found = stacked.signature(nodes, c.inputs, self.constant(k, side), c.output_list(),
                                      const) if STACKED else None
            if found is None:
                loose.ids.append(k)
                continue
            g = groups.get(found[0])
            if g is None:
                g = groups[found[0]] = _Group(stacked.Structure.of(found[0], nodes))
            g.ids.append(k)
            g.names.append(found[1])
            g.consts.append(const)
        self.shapes[side] = list(groups.values()) + ([loose] if loose.ids else [])
        return self.shapes[side]

    def _stacked(self, g: _Group, feeds: dict, side: str, ort) -> list | None:
        """The outputs of ``g``'s cases computed at once, part by part ([(ids, [input, case,
        ...] each)]), or None where stacked.py does not compute them."""
        st = g.st
        if st is None or (not stacked.computable(st) if ort is None else len(g.ids) < stacked.SHARED_MIN):
            return None
        if ort is not None and not stacked.shareable(st):
            return self._baked(g, feeds, side, ort) if BAKED and baked.bakeable(st) else None
        if g.values is None:
            g.at = _chunks(list(range(len(g.ids))), g.bytes())
            g.values = [self._values(g, feeds, at) for at in g.at]
        out: list = []
        try:
            for at, values in zip(g.at, g.values, strict=True):
                if ort is None:
                    got = stacked.reference(st, values)
                else:
                    got = self._session(g, side, ort).run(values)
                out.append(([g.ids[j] for j in at], got))
        except Exception:  # Declined, or what the models will say again, case by case
            return None
        return out

    def _baked(self, g: _Group, feeds: dict, side: str, ort) -> list | None:
        """``_stacked`` of cases whose constants a kernel may pack (not ``shareable``): their
        runs of cases each in one session, every case's constants its own initializers
        (baked.py), or None where that session is declined."""
        imports, ir_version = _imports(self.opsets(side), self.cases[0].opset_after)
        out: list = []
        try:
            for at in baked.parts(g.st, len(g.ids)):
                consts = [g.consts[j] for j in at]
                session = baked.Baked(ort, g.st, consts, imports, ir_version, _options(ort))
                out.append(([g.ids[j] for j in at], session.run(self._values(g, feeds, at, False), _ROWS)))
        except Exception:  # Declined, or what the models will say again, case by case
            return None
        return out

    def _values(self, g: _Group, feeds: dict, at, constants: bool = True) -> list:
        """The stacked value of each input and constant slot of the cases ``at`` of ``g``
        (without ``constants``: of each input slot)."""
        values: list = [None] * len(g.st.kinds)
        for i, kind in enumerate(g.st.kinds):
            if kind[0] == "input":
                values[i] = stacked.stack([feeds[self.apart(g.names[j][i], g.ids[j])] for j in at], 1)
            elif kind[0] == "const" and constants:
                values[i] = stacked.stack([g.consts[j][i] for j in at])[None]
        return values

    def _session(self, g: _Group, side: str, ort) -> stacked.Session:
        imports, ir_version = _imports(self.opsets(side), self.cases[0].opset_after)
        key = (g.st.key, tuple(sorted(imports.items())))
        if key not in self.sessions:
            copies = min(stacked.COPIES, max(1, len(g.ids) // stacked.SHARED_MIN))
            self.sessions[key] = stacked.Session(ort, g.st, copies, _ROWS, imports, ir_version,
                                                 _options(ort, reuse=False))
        return self.sessions[key]

    def _model(self, ids: list[int], side: str) -> tuple:
        """One model of the cases ``ids`` (their ``side`` nodes), and the indices of each
        case's outputs among its outputs."""
        nodes, inputs, outputs, consts, added, at = [], {}, [], {}, [], []
        for k in ids:
            c = self.cases[k]
            nodes += [_renamed(n, lambda x, k=k: self.apart(x, k)) for n in getattr(c, side)]
            inputs.update({self.apart(x, k): v for x, v in c.inputs.items()})
            consts.update({self.apart(x, k): v for x, v in c.consts.items()})
            if side == "after":
                added += c.added
            at.append(list(range(len(outputs), len(outputs) + len(c.output_list()))))
            outputs += [(self.apart(x, k), t) for x, t in c.output_list()]
        return _model(nodes, consts, added, inputs, outputs, self.opsets(side), self.cases[0].opset_after), at


class _Group:
    """Cases of one structure (``st``; None: cases run as models), each case's value names
    by slot and its constants' arrays by slot, and the slots' stacked values once computed."""

    def __init__(self, st):
        self.st, self.ids, self.names, self.consts, self.values = st, [], [], [], None
        self.at: list = []  # the positions of the cases of each of ``values``

    def bytes(self) -> int:
        """What stacking one case may take: its inputs and constants for every input of the
        measurement, counted at 16 bytes an element (float64 results and their copies)."""
        fed = [k for k in self.st.kinds if k[0] != "made"]
        return 16 * _ROWS * sum(int(np.prod(k[2], dtype=np.int64)) for k in fed)


STACK_BYTES = 1 << 26  # what the cases stacked at once may take (measure.py and stacked.py)
MODEL_CASES = 64  # cases in one model onnxruntime runs
STACKED = True  # cases of one structure computed at once (stacked.py); off: each batch as models
BAKED = True  # cases whose constants a kernel packs in one session a run of cases (baked.py); off: as models
_ROWS = 3 + SAMPLES  # the inputs each case is measured on


def _same(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a is b or (a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes())


def _renamed(node: onnx.NodeProto, apart) -> onnx.NodeProto:
    n = onnx.NodeProto()
    n.CopyFrom(node)
    n.input[:] = [apart(x) for x in node.input]
    n.output[:] = [apart(x) for x in node.output]
    n.name = apart(node.name) if node.name else ""
    return n


def _reference_reads(nodes: list, opset: int) -> bool:
    """Whether onnx.reference computes ``nodes`` as written: ai.onnx nodes only, and it
    implements DequantizeLinear and QuantizeLinear from opset 19 only, so they are run at
    19, which computes what 10 and 13 do for 8-bit codes and float32 scales (19 adds
    types), except Softmax, whose axis 13 reads otherwise than 11."""
    if any(schema.normalize_domain(n.domain) != schema.AI_ONNX for n in nodes):
        return False
    return opset >= 13 or not any(n.op_type == "Softmax" for n in nodes)


REFERENCE_SINCE = 19  # onnx.reference implements QuantizeLinear / DequantizeLinear from 19


def _for_reference(model: onnx.ModelProto) -> onnx.ModelProto:
    m = onnx.ModelProto()
    m.CopyFrom(model)
    for o in m.opset_import:
        if schema.normalize_domain(o.domain) == schema.AI_ONNX and o.version < REFERENCE_SINCE:
            o.version = REFERENCE_SINCE
            m.ir_version = max(m.ir_version, ir.ir_for_opset(REFERENCE_SINCE))
    return m


def _steps(a: np.ndarray, b: np.ndarray, step) -> np.ndarray:
    """How far apart the outputs ``a`` and ``b`` are, element by element, in steps of the
    output (codes; ``step`` for float outputs)."""
    if a.dtype.kind in "iu":
        return np.abs(a.astype(np.int64) - b.astype(np.int64))
    return np.ceil(np.abs(a.astype(np.float64) - b.astype(np.float64)) / step - 1e-9).clip(0)


def _feeds(inputs: dict, rng) -> dict[str, np.ndarray]:
    """Each input's values, [input, ...]: every element the type's lowest code, its
    highest, its middle, then ``SAMPLES`` of random codes, drawn input by input. numpy's
    Generator draws each bounded int64 from the generator's own state, so the draws of
    consecutive inputs of one type are taken in one call: the same codes in the same order
    (tests/test_convert_formats_measure.py holds it). Consecutive inputs of one type and
    shape are parts of one array ([inputs, input, ...]; each input's values a view of it),
    filled at once."""
    blocks: list = []  # consecutive inputs of one type and shape: [(type, dtype), shape, [names]]
    for name, (elem, shape) in inputs.items():
        if not all(isinstance(d, int) and d > 0 for d in shape or ()) or shape is None:
            raise CannotMeasure(f"the shape of input '{name}' is not known")
        if blocks and blocks[-1][0][0] == elem and blocks[-1][1] == tuple(shape):
            blocks[-1][2].append(name)
            continue
        dtype = helper.tensor_dtype_to_np_dtype(elem)
        if dtype.kind not in "iu":
            raise CannotMeasure(f"input '{name}' is {dtype.name}, not a quantized integer")
        blocks.append([(elem, dtype), tuple(shape), [name]])
    out, runs = {}, []  # runs: consecutive blocks of one type, [(low, high + 1, [their arrays])]
    for (_, dtype), shape, names in blocks:
        info = np.iinfo(dtype)
        rows = np.empty((len(names), _ROWS) + shape, dtype)
        rows[:, 0], rows[:, 1], rows[:, 2] = info.min, info.max, (int(info.min) + int(info.max) + 1) // 2
        out.update(zip(names, rows, strict=True))
        bounds = (int(info.min), int(info.max) + 1)
        if not runs or runs[-1][:2] != bounds:
            runs.append((*bounds, []))
        runs[-1][2].append(rows)
    for low, high, parts in runs:
        codes = rng.integers(low, high, size=sum(r[:, 3:].size for r in parts), dtype=np.int64)
        at = 0
        for r in parts:  # (each input's samples in turn: the codes in the order they were drawn)
            part = r[:, 3:]
            part[...] = codes[at:at + part.size].reshape(part.shape)
            at += part.size
    return out


def _imports(opsets: dict, opset_after: int) -> tuple[dict, int]:
    """The opsets a model imports (ai.onnx at ``opset_after`` where ``opsets`` has none)
    and its IR version."""
    ai = schema.opset_of(opsets, schema.AI_ONNX)
    if ai is None:
        return {**opsets, schema.AI_ONNX: opset_after}, ir.ir_for_opset(opset_after)
    return dict(opsets), ir.ir_for_opset(ai)


def _model(nodes, consts: dict, added: list, inputs: dict, outputs: list, opsets: dict,
           opset_after: int) -> onnx.ModelProto:
    inits = [raw_tensor(np.asarray(v), k) for k, v in consts.items()] + list(added)
    ins = [helper.make_tensor_value_info(n, e, s) for n, (e, s) in inputs.items()]
    outs = [helper.make_tensor_value_info(name, elem, None) for name, elem in outputs]
    graph = helper.make_graph(list(nodes), "measure", ins, outs, inits)
    imports, ir_version = _imports(opsets, opset_after)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v) for d, v in imports.items()],
                             ir_version=ir_version)


def _options(ort, reuse: bool = True):
    """Graph optimizations off (the ops as written); idle worker threads wait without
    spinning (the same threads compute the same values; a measurement runs thousands of
    small sessions' runs, after each of which a spinning thread takes a core). Without
    ``reuse``, each value a run makes has a buffer of its own (where a value is kept, not
    what a kernel computes): fewer instructions a run for a stacked session's hundreds of
    small values (3% of measure_all on 3,000 QLinearMatMul), more to make a session of a
    model of many cases."""
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    opts.log_severity_level = 4
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    opts.enable_mem_reuse = reuse
    return opts


def _onnxruntime():
    try:
        import onnxruntime
    except ImportError:
        return None
    return onnxruntime


def _run_ort(ort, model: onnx.ModelProto, feeds: list[dict]) -> list[np.ndarray]:
    try:
        session = ort.InferenceSession(model.SerializeToString(), _options(ort),
                                       providers=["CPUExecutionProvider"])
        return [session.run(None, f) for f in feeds]
    except Exception as e:
        raise CannotMeasure(f"onnxruntime cannot run it: {str(e).strip().splitlines()[-1][:200]}") from None


def _run_reference(model: onnx.ModelProto, feeds: list[dict]) -> list[np.ndarray]:
    from onnx.reference import ReferenceEvaluator

    try:
        ref = ReferenceEvaluator(model)
        return [[np.asarray(x) for x in ref.run(None, f)] for f in feeds]
    except Exception as e:
        raise CannotMeasure(f"onnx.reference cannot run it: {str(e).strip()[:200]}") from None


def observed_shapes(model: onnx.ModelProto, wanted: dict[str, int],
                    base_dir: str = "") -> dict[str, tuple[tuple, int]]:
    """The shapes of main-graph values ``wanted`` ({name: element type}) as onnxruntime
    computes them running ``model`` once (inputs of the declared shapes, 1 for a dimension
    without a value): where inference leaves a vendor op's output without a shape. Empty
    when onnxruntime is not installed or cannot run the model. ``base_dir``: the model's
    folder, where onnxruntime finds its external data (the session reads the model's bytes,
    which name their data files relative to it; releases without that session option fail
    to load such a model, and the shapes stay unknown)."""
    ort = _onnxruntime()
    if ort is None or not wanted:
        return {}
    m = onnx.ModelProto()
    m.CopyFrom(model)
    del m.graph.output[:]
    names = list(wanted)
    m.graph.output.extend(helper.make_tensor_value_info(n, wanted[n], None) if wanted[n]
                          else onnx.ValueInfoProto(name=n) for n in names)
    inits = {t.name for t in m.graph.initializer}
    rng = np.random.default_rng(0)
    feeds = {}
    for vi in m.graph.input:
        if vi.name in inits:
            continue
        t = vi.type.tensor_type
        shape = [d.dim_value if d.HasField("dim_value") and d.dim_value > 0 else 1 for d in t.shape.dim]
        dtype = helper.tensor_dtype_to_np_dtype(t.elem_type)
        feeds[vi.name] = (rng.standard_normal(shape) if dtype.kind == "f" else np.zeros(shape)).astype(dtype)
    try:
        opts = ort.SessionOptions()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        opts.log_severity_level = 4
        if base_dir:
            opts.add_session_config_entry("session.model_external_initializers_file_folder_path", base_dir)
        s = ort.InferenceSession(m.SerializeToString(), opts, providers=["CPUExecutionProvider"])
        values = s.run(None, feeds)
    except Exception:
        return {}
    return {n: (tuple(int(d) for d in v.shape), helper.np_dtype_to_tensor_dtype(v.dtype))
            for n, v in zip(names, values, strict=True)}
