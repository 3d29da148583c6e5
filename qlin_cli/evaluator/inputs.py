"""Input normalisation shared by quantize and dequantize."""

from __future__ import annotations

import numpy as np

from qlin_cli.schema.dtypes import name_of_array

from .errors import EvaluationError


def type_of(a: np.ndarray, what: str) -> str:
    """The ONNX type name of an array's dtype; EvaluationError if qlin has none for it."""
    name = name_of_array(a)
    if name is None:
        raise EvaluationError(f"{what} has unsupported dtype {a.dtype}")
    return name


def prepare(x, scale, scale_types: frozenset[str]) -> tuple[np.ndarray, np.ndarray, str, str]:
    """x as a C-contiguous array and the scale as an array, with their type names;
    EvaluationError when the scale's type is not one of ``scale_types``."""
    x = np.asarray(x)
    if not x.flags.c_contiguous:
        x = x.copy(order="C")
    scale = np.asarray(scale)
    x_t = type_of(x, "x")
    s_t = type_of(scale, "scale")
    if s_t not in scale_types:
        raise EvaluationError(f"scale of type {s_t} is not allowed")
    return x, scale, x_t, s_t
