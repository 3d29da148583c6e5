"""What the numeric-risk rules (QL505, QL605) share: a constant's value read from the
model (not only the scale and zero point roles ``NodeFacts.values`` has), and the
integer ranges they compare with."""

from __future__ import annotations

import numpy as np

from ..model.tensors import UnsafeData, read_value
from ..schema import dtypes

INT32_MAX = 2**31 - 1
INT32_MIN = -(2**31)


def constant_tensor(view, body, name: str):
    """The TensorProto of constant ``name`` as ``body`` sees it (an initializer that no graph
    input of this or an outer body overrides, or a Constant), None when not known; its dims
    and type are read without its data."""
    if not name or name in body.graph_inputs:
        return None
    b = body.parent
    while b is not None:
        if name in b.graph_inputs:
            return None
        b = b.parent
    return body.scope.find_value(name)


def constant_array(view, body, name: str) -> np.ndarray | None:
    """The value of constant ``name`` as ``body`` sees it (``constant_tensor``), None when
    not known."""
    tensor = constant_tensor(view, body, name)
    if tensor is None:
        return None
    try:
        return read_value(tensor, view.base_dir)
    except UnsafeData:
        return None


def int_range(kind: str | None) -> tuple[int, int] | None:
    """(lowest, highest) of an integer type, None for another type."""
    d = dtypes.BY_NAME.get(kind) if kind else None
    return (int(d.lo), int(d.hi)) if d is not None and d.kind == "int" else None


def span(kind: str | None) -> int | None:
    """The largest |a - b| of two values of integer type ``kind`` (highest - lowest): what
    |x_q - x_zp| can be whatever the zero point; None for another type."""
    rng = int_range(kind)
    return None if rng is None else rng[1] - rng[0]


def farthest(kind: str | None, zero_point: int) -> int | None:
    """The largest |x_q - x_zp| a value of integer type ``kind`` can have (the end of its
    range farther from the zero point), None for another type."""
    rng = int_range(kind)
    return None if rng is None else max(zero_point - rng[0], rng[1] - zero_point)


def by_channel(a: np.ndarray, axis: int) -> np.ndarray:
    """``a`` as rows, one per index along ``axis``."""
    return np.moveaxis(a, axis, 0).reshape(a.shape[axis], -1)


def g3(x) -> str:
    """A number in three significant digits, as a message shows arithmetic."""
    return f"{float(x):.3g}"
