"""What `--to-symmetric` (passes/symmetric.py) computes against the source, tensor by tensor.

An activation tensor (QuantizeLinear -> DequantizeLinear) is measured on probe inputs in
qlin's evaluator and in onnx.reference, before and after: every code of the source's range
and two beyond each end, each shifted by a quarter and a half step (the source's rounding
ties), every rounding tie of the new grid, and random values over the range. The bound is
the largest |before - after| over every pair of engines, in steps of the source's scale
(per channel), rounded up: a measurement on those inputs, not a proof for all inputs.

Constant weights are computed whole: the new codes dequantized against the old, in qlin's
evaluator, on every weight; exact (0 steps) when every w - z fits int8.
"""

from __future__ import annotations

from functools import cache, lru_cache

import numpy as np
import onnx
from onnx import helper, numpy_helper

from ... import schema
from ...schema import dtypes
from ..formats.measure import REFERENCE_SINCE, Measured

RANDOM = 256  # random probe values per channel
_INT8 = dtypes.BY_NAME["int8"]
LOW, HIGH = int(_INT8.lo), int(_INT8.hi)  # the new codes' range (the dtype table's int8: -128, 127)


def range_of(dtype) -> tuple[int, int] | None:
    """(lowest, highest) of an 8-bit integer numpy dtype, from the dtype table; None for
    another type (what the pass moves: uint8 and int8)."""
    d = dtypes.BY_NUMPY.get(np.dtype(dtype))
    return (int(d.lo), int(d.hi)) if d is not None and d.kind == "int" and d.bits == 8 else None
ENGINES = ("qlin evaluator", "onnx.reference")


def scale_for(scale: np.ndarray, zp: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """s' = s * max((z - lo) / 128, (hi - z) / 127) per element, in the scale's type, made
    no smaller than that by rounding (so the new range holds the source's whole range)."""
    s = scale.astype(np.float64)
    z = np.broadcast_to(zp, scale.shape).astype(np.float64)
    want = s * np.maximum((z - lo) / -LOW, (hi - z) / HIGH)
    out = want.astype(scale.dtype)
    low = out.astype(np.float64) < want
    while low.any():  # (a float32 rounding down: one ulp up)
        out = np.where(low, np.nextafter(out, np.array(np.inf, out.dtype)), out)
        low = out.astype(np.float64) < want
    return out


def clip_bounds(scale: np.ndarray, zp: np.ndarray, new_scale: np.ndarray, lo: int, hi: int) -> tuple:
    """(low, high): the values the source's QuantizeLinear saturates at, s * (lo - z) and
    s * (hi - z), in the scale's type, each None where the new grid ends within half a new
    step of it (one scale). Where one is given, a guard before the new QuantizeLinear
    (``guard``) keeps that saturation, which a quantizer may rely on in place of a Relu."""
    s, z, n = float(scale.reshape(-1)[0]), int(zp.reshape(-1)[0]), float(new_scale.reshape(-1)[0])
    low, high = s * (lo - z), s * (hi - z)
    return (np.asarray(low, scale.dtype) if LOW * n < low - n / 2 else None,
            np.asarray(high, scale.dtype) if HIGH * n > high + n / 2 else None)


def guard(x: str, out: str, bounds: tuple, names: tuple[str, str]) -> list[onnx.NodeProto]:
    """The nodes that keep ``x`` within ``bounds`` (None: no bound on that side) as ``out``:
    Relu for a lower bound of 0 alone, else Max with the lower and Min with the upper bound
    (``names``: the initializers holding them). Relu is the op a quantizer folded into a
    zero point at the low end; Max and Min read their bound as an input at every opset, where
    Clip takes attributes below 11. (onnxruntime 1.27 .. 1.32's graph optimizations fail to
    load any of them before an int8 QuantizeLinear at opset 21: docs/convert.md.)"""
    low, high = bounds
    if low is not None and high is None and float(low) == 0.0:
        return [helper.make_node("Relu", [x], [out])]
    nodes, last = [], x
    if low is not None:
        nodes.append(helper.make_node("Max", [last, names[0]], [out if high is None else f"{out}_low"]))
        last = nodes[-1].output[0]
    if high is not None:
        nodes.append(helper.make_node("Min", [last, names[1]], [out]))
    return nodes


def activation_bound(scale: np.ndarray, zp: np.ndarray, new_scale: np.ndarray, opset: int) -> Measured:
    """The measured bound of a Q -> DQ tensor of one scale moved to (new_scale, int8 zero
    point 0), a Clip to the source's range before the new QuantizeLinear."""
    per_axis = False
    return _bound(scale.tobytes(), scale.dtype.str, scale.shape, zp.tobytes(), zp.dtype.str, zp.shape,
                  new_scale.tobytes(), max(opset, 13 if per_axis else 10), per_axis)


@lru_cache(maxsize=1024)  # keyed by the values: the same answer for any model
def _bound(scale_b: bytes, scale_t: str, shape: tuple, zp_b: bytes, zp_t: str, zp_shape: tuple,
           new_b: bytes, opset: int, per_axis: bool) -> Measured:
    scale = np.frombuffer(scale_b, scale_t).reshape(shape)
    zp = np.frombuffer(zp_b, zp_t).reshape(zp_shape)
    new_scale = np.frombuffer(new_b, scale_t).reshape(shape)
    x = _probe(scale, zp, new_scale)
    zero = np.zeros(zero_shape(scale, zp), np.int8)
    clip = clip_bounds(scale, zp, new_scale, *range_of(zp.dtype))
    before = [_evaluated(x, scale, zp, opset, per_axis), _referenced(x, scale, zp, opset, per_axis)]
    after = [_evaluated(x, new_scale, zero, opset, per_axis, clip),
             _referenced(x, new_scale, zero, opset, per_axis, clip)]
    step = np.abs(scale.astype(np.float64)).reshape(-1) if per_axis else abs(float(scale))
    worst = max(float(np.max(np.abs(b.astype(np.float64) - a.astype(np.float64)) / step))
                for b in before for a in after)
    differ = int(np.count_nonzero(before[0] != after[0]))
    return Measured(int(np.ceil(worst - 1e-9)), differ, int(x.size), ENGINES)


def zero_shape(scale: np.ndarray, zp: np.ndarray) -> tuple:
    """The shape of the new zero point: the old one's, or the scale's where there was none."""
    return zp.shape if zp.size == scale.size else scale.shape


def _probe(scale: np.ndarray, zp: np.ndarray, new_scale: np.ndarray) -> np.ndarray:
    """The probe inputs, one column per channel (one column per tensor)."""
    s = np.atleast_1d(scale).astype(np.float64)
    z = np.broadcast_to(np.atleast_1d(zp), s.shape).astype(np.float64)
    n = np.atleast_1d(new_scale).astype(np.float64)
    lo, hi = range_of(zp.dtype)
    codes = np.arange(lo - 2, hi + 3, dtype=np.float64)
    shifts = np.array([0.0, 0.25, 0.5, -0.25])
    old = ((codes[:, None] + shifts[None, :]).reshape(-1, 1) - z[None, :]) * s[None, :]
    ties = (np.arange(LOW - 2, HIGH + 3, dtype=np.float64)[:, None] + 0.5) * n[None, :]
    rng = np.random.default_rng(0)
    width = (hi - lo + 2) * s
    rand = (rng.random((RANDOM, s.size)) * width[None, :] + (lo - z - 1) * s[None, :])
    x = np.concatenate([old, ties, rand]).astype(scale.dtype)
    return x if scale.ndim else x.reshape(-1)


def _nodes(per_axis: bool, clip) -> list[onnx.NodeProto]:
    axis = {"axis": 1} if per_axis else {}
    guarded = clip is not None and (clip[0] is not None or clip[1] is not None)
    return (guard("x", "xc", clip, ("low", "high")) if guarded else []) + [
        helper.make_node("QuantizeLinear", ["xc" if guarded else "x", "s", "z"], ["q"], **axis),
        helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], **axis)]


def _evaluated(x, scale, zp, opset: int, per_axis: bool, clip=None) -> np.ndarray:
    from ...evaluator import run_node  # (its import only where a pass measures)

    q, dq = _nodes(per_axis, None)
    if clip is not None and clip[0] is not None:  # Max / Relu: the larger of the two
        x = np.maximum(x, clip[0])
    if clip is not None and clip[1] is not None:  # Min
        x = np.minimum(x, clip[1])
    return run_node(dq, opset, [run_node(q, opset, [x, scale, zp]), scale, zp])


def _referenced(x, scale, zp, opset: int, per_axis: bool, clip=None) -> np.ndarray:
    from onnx.reference import ReferenceEvaluator

    elem = helper.np_dtype_to_tensor_dtype(x.dtype)
    inits = [numpy_helper.from_array(np.asarray(scale), "s"), numpy_helper.from_array(np.asarray(zp), "z")]
    for name, v in zip(("low", "high"), clip or (None, None), strict=True):
        if v is not None:
            inits.append(numpy_helper.from_array(v, name))
    graph = helper.make_graph(
        _nodes(per_axis, clip), "probe", [helper.make_tensor_value_info("x", elem, list(x.shape))],
        [helper.make_tensor_value_info("y", elem, list(x.shape))], inits)
    # (run at REFERENCE_SINCE at least, as formats/measure.py runs it: the 8-bit arithmetic is
    # the same at 10 and 13)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", max(opset, REFERENCE_SINCE))])
    return ReferenceEvaluator(model).run(None, {"x": x})[0]


@cache
def _dequantize_opset(scale_type: str | None, per_axis: bool) -> int:
    """The opset whose DequantizeLinear measures the weights: 10 (13 per axis) for a float scale,
    else the first whose schema takes the scale's type (float16 and bfloat16 from 19, as
    schema/ reads onnx.defs); each computes the weights as 10 and 13 do."""
    base = 13 if per_axis else 10
    if scale_type in (None, "float"):
        return base
    since = schema.first_version(schema.AI_ONNX, "DequantizeLinear",
                                 lambda s: any(scale_type in t for t in s.types.values()))
    return max(base, since or base)


def weights_moved(w: np.ndarray, scale: np.ndarray, zp: np.ndarray, axis: int
                  ) -> tuple[np.ndarray, np.ndarray, Measured]:
    """(new scale, int8 codes, measured) of constant weights moved to zero point 0: codes
    w - z under the same scale where every one fits int8, else a scale wide enough for the
    largest |w - z| of each channel and each code rounded to it."""
    per_axis = scale.ndim == 1
    at = axis % max(w.ndim, 1)
    shape = [1] * w.ndim
    if per_axis:
        shape[at] = scale.size
    z = np.asarray(zp, np.int32).reshape(shape if per_axis else ())
    d = w.astype(np.int32) - z
    if d.min(initial=0) >= LOW and d.max(initial=0) <= HIGH:
        new_scale, codes = scale, d.astype(np.int8)
    else:
        reduce = tuple(i for i in range(w.ndim) if not (per_axis and i == at))
        far = np.abs(d).max(axis=reduce) if d.size else np.zeros(scale.shape, np.int32)
        far = np.maximum(np.asarray(far, np.float64).reshape(scale.shape), HIGH)
        new_scale = (scale.astype(np.float64) * far / HIGH).astype(scale.dtype)
        ratio = (scale.astype(np.float64) / new_scale.astype(np.float64)).reshape(shape if per_axis else ())
        codes = np.clip(np.rint(d * ratio), -HIGH, HIGH).astype(np.int8)  # (symmetric weight codes)
    dq = helper.make_node("DequantizeLinear", ["w", "s", "z"], ["y"], **({"axis": axis} if per_axis else {}))
    opset = _dequantize_opset(dtypes.name_of_array(scale), per_axis)
    from ...evaluator import run_node

    before = run_node(dq, opset, [w, scale, zp]).astype(np.float64)
    zero = np.zeros(zero_shape(scale, zp), np.int8)
    after = run_node(dq, opset, [codes, new_scale, zero]).astype(np.float64)
    step = np.abs(scale.astype(np.float64)).reshape(shape if per_axis else ())
    worst = float(np.max(np.abs(before - after) / step)) if w.size else 0.0
    m = Measured(int(np.ceil(worst - 1e-9)), int(np.count_nonzero(before != after)), int(w.size),
                 ("qlin evaluator, every weight",))
    return new_scale, codes, m
