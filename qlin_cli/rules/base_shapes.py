"""Shape helpers shared by the granularity rules (QL4xx)."""

from __future__ import annotations


def dim(shape, i):
    return None if shape is None or i >= len(shape) else shape[i]


def fmt_shape(shape) -> str:
    if shape is None:
        return "unknown"
    return "[" + ", ".join("?" if d is None else str(d) for d in shape) + "]"
