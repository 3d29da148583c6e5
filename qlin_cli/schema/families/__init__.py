"""The schema tables of the op families beyond QuantizeLinear / DequantizeLinear, one
module per family. Each module says where its facts come from; tests/test_schema.py
holds every ai.onnx entry against ``onnx.defs`` and every com.microsoft entry against
onnxruntime's registered schemas."""

from __future__ import annotations

from . import block_float, dynamic, integer, n_bits, qlinear

SPECS = qlinear.SPECS + integer.SPECS + dynamic.SPECS + n_bits.SPECS + block_float.SPECS

__all__ = ["SPECS"]
