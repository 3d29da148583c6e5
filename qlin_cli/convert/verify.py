"""Prove a rewrite: run the node before and after on probe inputs, bit for bit.

Probe inputs: for a quantize node, x at ties (k + 0.5 quanta), one quantum
either side, the saturation bounds and just past them, +-0.0, +-inf, NaN, the
largest finite values and random values, scaled per channel (or block) by the
node's own scales; for a dequantize node every code of the quantized type when
it has at most 16 bits, else its bounds and random codes. Scales and zero points
are the model's own when they are constants, random otherwise.

Q/DQ nodes run in qlin's evaluator (``qlin_cli.evaluator.run_node``); the
primitive ops of ``--lower`` run in ``primitives``.

Sizes are capped whatever the model declares: a probe x or a made-up scale or
zero point has at most MAX_PROBE_ELEMENTS elements, and declared shapes are
multiplied with a saturating product (no overflow, no big-integer arithmetic).
A node whose probe would be larger (a blocked node with a huge x) is refused
with the way out (--no-verify), never allocated.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import onnx

from .. import schema
from ..schema import BLOCKED, PER_AXIS, dtypes
from . import primitives
from .qnode import QNode

SEED = 20240611
BATCH = 4096
MAX_BATCHES = 24
MAX_PROBE_ELEMENTS = 2**24  # 16M elements: a 4096 x 4096 weight; a few hundred MB of probes


class ProbeTooLarge(ValueError):
    """The probe a node needs is above MAX_PROBE_ELEMENTS."""


def _count(shape) -> int:
    """Elements of ``shape`` (model/tensors.py ``element_count``: saturating, so a
    shape of huge or many dims costs nothing to size)."""
    from ..model.tensors import element_count

    return element_count(shape)


def _too_large(what: str, shape) -> ProbeTooLarge:
    from ..model.tensors import dims_text

    return ProbeTooLarge(f"{what} of shape {dims_text(shape)} is above the {MAX_PROBE_ELEMENTS}-element "
                         "probe limit; convert with --no-verify to skip the proof")


@dataclass
class Case:
    label: str
    q: QNode  # facts of the node before
    before: list[onnx.NodeProto]
    before_opsets: dict[str, int]
    after: list[onnx.NodeProto]
    after_opsets: dict[str, int]
    constants: dict[str, np.ndarray] = field(default_factory=dict)  # model values of inputs
    added: dict[str, np.ndarray] = field(default_factory=dict)  # new initializers of the rewrite
    x_shape: tuple | None = None


def run_nodes(nodes, opsets: dict[str, int], values: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    from ..evaluator import run_node

    values = dict(values)
    for node in nodes:
        args = [values[n] if n else None for n in node.input]
        dom = schema.normalize_domain(node.domain)
        if schema.is_known_op(dom, node.op_type):
            values[node.output[0]] = run_node(node, opsets[dom], args)
        else:
            values[node.output[0]] = primitives.run(node, args)
    return values


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether ``a`` and ``b`` have the same type and shape and each element the same bytes
    (``tobytes`` of each in C order equal), compared in place: as unsigned integers of the
    element's size (no NaN or signed zero read as a float), without copying either."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.itemsize not in (1, 2, 4, 8) or a.dtype.hasobject:
        return np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()
    bits = np.dtype(f"u{a.dtype.itemsize}")
    return bool(np.array_equal(a.view(bits), b.view(bits)))


# ---- probe inputs ---------------------------------------------------------------
def _random_of(type_name: str, n: int, rng) -> np.ndarray:
    d = dtypes.BY_NAME[type_name]
    if d.kind == "int":
        lo, hi = int(d.lo), int(d.hi)
        return rng.integers(lo, hi, size=n, endpoint=True, dtype=np.int64).astype(d.numpy)
    if d.bits <= 16:
        raw = rng.integers(0, 2 ** d.bits, size=n, dtype=np.uint16 if d.bits > 8 else np.uint8)
        return raw.view(d.numpy) if d.bits in (8, 16) else np.zeros(n, d.numpy)
    return rng.standard_normal(n).astype(d.numpy)


def _every_code(type_name: str) -> np.ndarray | None:
    d = dtypes.BY_NAME[type_name]
    if d.kind == "int" and d.bits <= 16:
        return np.arange(int(d.lo), int(d.hi) + 1, dtype=np.int64).astype(d.numpy)
    if d.bits == 8:
        return np.arange(256, dtype=np.uint8).view(d.numpy)
    if d.bits == 16:
        return np.arange(65536, dtype=np.uint32).astype(np.uint16).view(d.numpy)
    if d.bits < 8:  # float4/float6: ml_dtypes keeps one code per byte
        return np.arange(2 ** d.bits, dtype=np.uint8).view(d.numpy)
    return None


def _codes(type_name: str, rng) -> np.ndarray:
    codes = _every_code(type_name)
    if codes is not None:
        return codes
    d = dtypes.BY_NAME[type_name]
    edges = np.array([d.lo, d.lo + 1, -1, 0, 1, d.hi - 1, d.hi], dtype=np.int64).astype(d.numpy)
    return np.concatenate([edges, _random_of(type_name, 2000, rng)])


def _units(q: QNode, rng) -> np.ndarray:
    """x / scale values to probe (in quanta), zero point not included."""
    d = dtypes.BY_NAME.get(q.q_type or "")
    lo, hi = (float(d.lo), float(d.hi)) if d is not None and d.lo is not None else (-448.0, 448.0)
    k = np.arange(-6, 7, dtype=np.float64)
    ties = np.concatenate([k + 0.5, lo + k + 0.5, hi + k + 0.5, k + 0.25, k + 0.75])
    bounds = np.array([lo, hi, lo - 1, hi + 1, lo - 0.5, hi + 0.5, lo - 0.49, hi + 0.49,
                       lo - 1e6, hi + 1e6])
    span = max(hi - lo, 1.0)
    rand = rng.uniform(lo - span * 0.1 - 4, hi + span * 0.1 + 4, size=1500)
    wide = np.ldexp(rng.uniform(-1, 1, size=300), rng.integers(-30, 30, size=300))
    return np.concatenate([k, ties, bounds, rand, wide])


SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 3.4028235e38, -3.4028235e38,
                     1.4e-45, -1.4e-45, 1.1754944e-38, 65504.0, -65504.0, 65520.0])


def _float_x(q: QNode, scale_b: np.ndarray, zp_b: np.ndarray, flat_units: np.ndarray,
             shape: tuple, x_type: str) -> np.ndarray:
    units = np.resize(flat_units, shape)
    with np.errstate(all="ignore"):
        x = units * scale_b.astype(np.float64)
    return x.astype(dtypes.BY_NAME[x_type].numpy)


def _broadcast(value: np.ndarray, q: QNode, shape: tuple, axis: int | None) -> np.ndarray:
    """A scale or zero point spread over x's shape as the node's granularity says."""
    v = np.asarray(value)
    if v.ndim == 0 or (axis is None and v.size == 1):  # one element is per-tensor, whatever its rank
        return np.broadcast_to(v.reshape(()), shape)
    if q.granularity == BLOCKED or ("block_size" in q.attrs and q.attrs["block_size"] > 0):
        b = q.attrs["block_size"]
        return np.repeat(v, b, axis=axis).take(range(shape[axis]), axis=axis)
    view = [1] * len(shape)
    view[axis] = v.shape[0]
    return np.broadcast_to(v.reshape(view), shape)


def probe_shape(q: QNode, scale: np.ndarray, x_shape: tuple | None) -> tuple[tuple, int | None]:
    """A shape for x that fits the scale, and the normalized axis (None: per-tensor).

    The declared shape is used when it is small (at most 4 * BATCH elements) or the
    node is blocked (the scale fixes it); a blocked x above MAX_PROBE_ELEMENTS raises
    ProbeTooLarge.
    """
    declared = x_shape is not None and all(isinstance(d, int) and d > 0 for d in x_shape)
    if declared and q.granularity == BLOCKED and _count(x_shape) > MAX_PROBE_ELEMENTS:
        raise _too_large("x", x_shape)
    if declared and (q.granularity == BLOCKED or _count(x_shape) <= 4 * BATCH):
        rank = len(x_shape)
        axis = q.axis_in_force() if q.granularity in (PER_AXIS, BLOCKED) else None
        return tuple(x_shape), (None if axis is None else axis % rank)
    if q.granularity not in (PER_AXIS, BLOCKED) or np.ndim(scale) == 0:
        return (BATCH,), None
    rank = q.x_rank or max(2, (q.axis_in_force() or 0) + 1 if (q.axis_in_force() or 0) >= 0
                           else -q.axis_in_force())
    axis = q.axis_in_force() % rank
    if rank > 64:  # numpy's limit; no real model comes near it
        raise ValueError(f"x has rank {rank}")
    shape = [1] * rank
    shape[axis] = int(np.shape(scale)[0])
    other = next((i for i in range(rank - 1, -1, -1) if i != axis), None)
    if other is not None:
        shape[other] = max(1, BATCH // shape[axis])
    if _count(shape) > MAX_PROBE_ELEMENTS:
        raise _too_large("x", shape)
    return tuple(shape), axis


def _param(case: Case, index: int, type_name: str | None, shape, rng, positive=False):
    node = case.before[0]
    name = node.input[index] if index < len(node.input) else ""
    if not name:
        return name, None
    if name in case.constants:
        return name, case.constants[name]
    shape = tuple(d if isinstance(d, int) and d > 0 else 1 for d in (shape or ()))
    if len(shape) > 64 or _count(shape) > MAX_PROBE_ELEMENTS:
        raise _too_large(f"input {name!r}", shape)
    if type_name is None:
        raise ValueError(f"input {name!r} has an unknown type and no value")
    d = dtypes.BY_NAME[type_name]
    if positive:
        return name, np.abs(rng.uniform(0.001, 2.0, size=shape)).astype(d.numpy)
    return name, np.zeros(shape, d.numpy)


def feeds(case: Case) -> list[dict[str, np.ndarray]]:
    """Batches of probe inputs for the node before the rewrite."""
    q = case.q
    rng = np.random.default_rng(SEED)
    s_name, scale = _param(case, 1, q.scale_type, q.scale_shape, rng, positive=True)
    z_name, zp = _param(case, 2, q.q_type, q.scale_shape, rng)
    shape, axis = probe_shape(q, scale, case.x_shape)
    x_name = case.before[0].input[0]
    size = _count(shape)
    if q.kind == "quantize":
        x_type = q.x_type or "float"
        scale_b = _broadcast(scale.astype(np.float64) if scale.dtype.kind == "f" else
                             scale.astype(np.float32).astype(np.float64), q, shape, axis)
        zp_b = _broadcast(zp if zp is not None else np.zeros((), np.int64), q, shape, axis)
        pool = [_float_x(q, scale_b, zp_b, _units(q, rng), shape, x_type)]
        pool.append(np.resize(SPECIALS, shape).astype(dtypes.BY_NAME[x_type].numpy))
        if x_type != "int32":
            pool.append(np.resize(rng.standard_normal(size) * np.exp(rng.uniform(-20, 20, size)),
                                  shape).astype(dtypes.BY_NAME[x_type].numpy))
        batches = pool
    else:
        codes = _codes(q.q_type, rng)
        n = max(1, min(MAX_BATCHES, -(-len(codes) // size)))
        batches = [np.resize(np.roll(codes, -i * size), shape) for i in range(n)]
    out = []
    for x in batches:
        f = {x_name: x, s_name: scale}
        if z_name:
            f[z_name] = zp
        out.append(f)
    return out


def prove(case: Case) -> str | None:
    """None when before and after agree bit for bit on every probe; else what differs."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        return _prove(case)


def _prove(case: Case) -> str | None:
    outputs = [o for o in case.before[0].output if o]
    if case.q.q_type is None or (case.q.kind == "quantize" and case.q.x_type is None):
        return "the node's input types are unknown, so no probe inputs can be made"
    try:
        batches = feeds(case)
    except Exception as e:  # a scale or zero point that does not fit x (see qlin check QL4xx)
        return f"no probe inputs fit the node's scale and zero point ({str(e).splitlines()[0][:160]})"
    for batch in batches:
        try:
            before = run_nodes(case.before, case.before_opsets, batch)
        except Exception as e:  # the node itself cannot run: nothing to compare against
            return f"the original node does not evaluate ({str(e).splitlines()[0][:160]})"
        try:
            after = run_nodes(case.after, case.after_opsets, {**batch, **case.added})
        except Exception as e:
            return f"the rewritten node does not evaluate ({str(e).splitlines()[0][:160]})"
        for o in outputs:
            if not same_bits(before[o], after[o]):
                a, b = np.asarray(before[o]), np.asarray(after[o])
                if a.shape == b.shape and a.dtype == b.dtype:
                    ab = np.frombuffer(a.tobytes(), np.uint8).reshape(a.size, -1)
                    bb = np.frombuffer(b.tobytes(), np.uint8).reshape(b.size, -1)
                    bad = np.flatnonzero((ab != bb).any(axis=1))
                    first = int(bad[0]) if bad.size else 0
                    xv = batch[case.before[0].input[0]].reshape(-1)[first]
                    return (f"output differs at x={xv!r}: before {a.reshape(-1)[first]!r}, "
                            f"after {b.reshape(-1)[first]!r}")
                return f"output differs: before {a.dtype}{a.shape}, after {b.dtype}{b.shape}"
    return None
