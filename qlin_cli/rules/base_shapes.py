"""Shape helpers shared by the granularity rules (QL4xx)."""

from __future__ import annotations


def dim(shape, i):
    return None if shape is None or i >= len(shape) else shape[i]


def fmt_shape(shape, keep: int = 8) -> str:
    """A shape for a message: ``[2, ?, 3]``; past ``keep`` dims, the first ones and the count."""
    if shape is None:
        return "unknown"
    dims = ["?" if d is None else str(d) for d in shape]
    if len(dims) > keep:
        return "[" + ", ".join(dims[:keep]) + f", ... ({len(dims)} dims)]"
    return "[" + ", ".join(dims) + "]"
