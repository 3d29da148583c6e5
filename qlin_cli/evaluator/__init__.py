"""qlin's evaluator: bit-exact QuantizeLinear / DequantizeLinear, vectorized.

* ``evaluate(model, feeds)``: run a Q/DQ model (``model.py``).
* ``run_node(node, opset, inputs)``: one node, attributes from the schema table.
* ``quantize(...)`` / ``dequantize(...)``: the array-level functions.
"""

from __future__ import annotations

from .dequantize import dequantize
from .errors import EvaluationError
from .model import evaluate
from .node import run_node
from .quantize import precision_of, quantize

__all__ = ["EvaluationError", "dequantize", "evaluate", "precision_of", "quantize", "run_node"]
