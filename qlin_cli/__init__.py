"""qlin: lint, convert and evaluate QuantizeLinear/DequantizeLinear in ONNX models."""

from __future__ import annotations


def __getattr__(name: str):
    # Lazy: `qlin --help` must not import numpy-heavy modules.
    if name == "evaluate":
        from .evaluator import evaluate

        return evaluate
    raise AttributeError(f"module 'qlin_cli' has no attribute {name!r}")
