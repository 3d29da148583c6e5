"""Shape helpers shared by the granularity rules (QL4xx)."""

from __future__ import annotations


def one_element_vector(n) -> bool:
    """The scale is a 1-D tensor of length 1, which runtimes treat as a scalar."""
    return n.in_shape(1) == (1,)


def dim(shape, i):
    return None if shape is None or i >= len(shape) else shape[i]


def fmt_shape(shape) -> str:
    if shape is None:
        return "unknown"
    return "[" + ", ".join("?" if d is None else str(d) for d in shape) + "]"
