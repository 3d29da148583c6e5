"""onnx's backend node cases of QuantizeLinear and DequantizeLinear, made by importing only
their two modules of onnx.backend.test.case.node (collect_testcases() imports every op's
module, and its pooling cases alone take 10 s to compute)."""

from __future__ import annotations

import functools
import importlib
import warnings

MODULES = ("quantizelinear", "dequantizelinear")


@functools.cache
def cases() -> tuple:
    """Every case the two modules export, each once."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from onnx.backend.test.case import node

        for name in MODULES:
            importlib.import_module(f"{node.__name__}.{name}")
    seen, out = set(), []
    for c in node._NodeTestCases:
        if c.name not in seen and c.name.split("_")[1] in MODULES:
            seen.add(c.name)
            out.append(c)
    return tuple(out)
