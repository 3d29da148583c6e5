"""Every ai.onnx op other than Q/DQ across opsets: hand-written adapters, generic
rules read from onnx.defs, onnx.version_converter as a proven fallback."""

from ..refusal import Refusal
from .node import Converted, convert

__all__ = ["Converted", "Refusal", "convert"]
