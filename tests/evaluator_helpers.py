"""Helpers the evaluator's differential tests share: models, oracles, strategies."""

from __future__ import annotations

import os
import warnings

import ml_dtypes
import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from onnx import helper, numpy_helper

from qlin_cli import schema
from qlin_cli.schema.dtypes import BY_NAME

# make test: 50 examples per test, derandomized (the same 50 every run: about 0.7 s a test
# against 2.6 s at 200); `make fuzz` runs 5,000 of them random
EXAMPLES = int(os.environ.get("QLIN_FUZZ_EXAMPLES", "50"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=EXAMPLES <= 200,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

Q_VERSIONS = [10, 13, 19, 21, 23, 24, 25, 28]
DQ_VERSIONS = [10, 13, 19, 21, 23, 24, 25, 28]


def bits(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    return a.view(np.dtype(f"u{a.dtype.itemsize}"))


def is_nan(a: np.ndarray) -> np.ndarray:
    if a.dtype.kind in "iu" or BY_NAME_NP.get(a.dtype, "int").startswith(("int", "uint")):
        return np.zeros(a.shape, bool)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.isnan(a.astype(np.float32))


BY_NAME_NP = {d.numpy: d.name for d in BY_NAME.values()}


def assert_same_bits(got: np.ndarray, want: np.ndarray, mask=None, msg=""):
    """Equal bit patterns, every NaN equal to every NaN; ``mask`` selects elements."""
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape
    same = bits(got) == bits(want)
    same |= is_nan(got) & is_nan(want)
    if mask is not None:
        same |= ~mask
    if not same.all():
        i = np.argwhere(~same)[:5]
        raise AssertionError(f"{msg}: differ at {i.tolist()}: got "
                             f"{[got[tuple(j)] for j in i]} want {[want[tuple(j)] for j in i]}")


def make_model(op, opset, inputs, out_type, attrs, init=()):
    """inputs: list of (name, array); the ones named in ``init`` become initializers."""
    vis, inits, names = [], [], []
    for name, arr in inputs:
        names.append(name if arr is not None else "")
        if arr is None:
            continue
        if name in init:
            inits.append(numpy_helper.from_array(arr, name))
        else:
            vis.append(helper.make_tensor_value_info(
                name, BY_NAME[BY_NAME_NP[arr.dtype]].proto, arr.shape))
    while names and names[-1] == "":
        names.pop()
    node = helper.make_node(op, names, ["y"], **attrs)
    graph = helper.make_graph([node], "g", vis, [helper.make_tensor_value_info(
        "y", BY_NAME[out_type].proto, None)], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 13 if opset >= 25 else 10
    return m


def run_reference(model, feeds):
    from onnx.reference import ReferenceEvaluator

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return ReferenceEvaluator(model).run(None, feeds)[0]


# ---- strategies --------------------------------------------------------------

@st.composite
def granularity(draw, x_rank_min, grans):
    kind = draw(st.sampled_from(sorted(grans)))
    if kind == schema.PER_TENSOR:
        shape = tuple(draw(st.lists(st.integers(1, 5), min_size=1, max_size=3)))
        return kind, shape, None, 0, ()
    rank = draw(st.integers(max(1, x_rank_min), 3))
    shape = tuple(draw(st.lists(st.integers(1, 6), min_size=rank, max_size=rank)))
    axis = draw(st.integers(-rank, rank - 1))
    ax = axis % rank
    if kind == schema.PER_AXIS:
        return kind, shape, axis, 0, (shape[ax],)
    block = draw(st.integers(1, 4))
    sshape = tuple(-(-d // block) if k == ax else d for k, d in enumerate(shape))
    return kind, shape, axis, block, sshape


SCALES = [1.0, 2.0, 0.5, 0.25, 4.0, 0.125, 3.0, 0.1, 0.7, 1.5, 1e-3, 2.0**-10, 2.0**12, 37.0]


def quotient_units(lo, hi, fmax):
    """Edge values of x / scale for an output range [lo, hi] (or +-fmax)."""
    vals = [0.0, -0.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.5, 1e-3, -1e-3, 0.49999997, 0.50000006,
            np.inf, -np.inf, np.nan, 1e30, -1e30, 3e38, -3e38, 1e-40]
    for b in (lo, hi):
        vals += [b, b + 0.5, b - 0.5, b + 1, b - 1, b + 0.49, b - 0.51]
    if fmax:
        ulp = fmax / 8
        vals += [fmax, -fmax, fmax + ulp / 4, fmax + ulp / 2, fmax + ulp, fmax * 1.1, -fmax * 2,
                 2.0**-7, 2.0**-9, 2.0**-10, 3 * 2.0**-11, 2.0**-16, 2.0**-17, 2.0**-15 * 1.5,
                 0.0625, 0.09375, 448 + 16, 240 + 8, 57344 + 4096, 6.5, 5.0, 7.75, 30.0]
    return vals


def float_max(name):
    d = BY_NAME[name]
    if d.kind in ("float8", "float4"):
        return float(ml_dtypes.finfo(d.numpy).max)
    if d.kind == "float":
        return float(d.hi)
    return None


def run_ort(model, feeds):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(model.SerializeToString(), so,
                                providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)[0]
