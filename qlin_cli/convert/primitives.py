"""numpy semantics of the primitive ops ``--lower`` writes, for the proof.

Each follows the ONNX operator page: IEEE float32 arithmetic, Round to nearest
even, Clip with min/max inputs, Cast (only ever of in-range integral values,
the lowering clamps before it casts), IsNaN and Where. Nothing else is run here.
"""

from __future__ import annotations

import numpy as np

from ..schema import dtypes


def _cast(node, args):
    to = next(a.i for a in node.attribute if a.name == "to")
    return args[0].astype(dtypes.BY_PROTO[to].numpy)


def _clip(node, args):
    x, lo, hi = (list(args) + [None, None])[:3]
    out = x
    if lo is not None:
        out = np.where(out < lo, lo, out).astype(x.dtype)
    if hi is not None:
        out = np.where(out > hi, hi, out).astype(x.dtype)
    return out


def _binary(fn):
    def run(node, args):
        a, b = args
        with np.errstate(all="ignore"):
            return fn(a, b).astype(np.result_type(a, b))
    return run


OPS = {
    "Div": _binary(np.divide),
    "Mul": _binary(np.multiply),
    "Add": _binary(np.add),
    "Sub": _binary(np.subtract),
    "Round": lambda node, args: np.rint(args[0]),
    "Clip": _clip,
    "Cast": _cast,
    "IsNaN": lambda node, args: np.isnan(args[0]),
    "Where": lambda node, args: np.where(args[0], args[1], args[2]),
    "Identity": lambda node, args: args[0],
}


def run(node, args) -> np.ndarray:
    if node.op_type == "Constant":
        return _constant(node)
    return OPS[node.op_type](node, args)


def _constant(node) -> np.ndarray:
    from onnx import numpy_helper

    for a in node.attribute:
        if a.name == "value":
            return numpy_helper.to_array(a.t)
    raise ValueError("Constant without a value tensor")
