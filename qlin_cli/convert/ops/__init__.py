"""Every ai.onnx op other than Q/DQ across opsets: hand-written adapters, generic
rules read from onnx.defs, onnx.version_converter as a proven fallback."""

from .node import Converted, convert
from .step import Refusal

__all__ = ["Converted", "Refusal", "convert"]
