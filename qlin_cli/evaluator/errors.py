"""The one exception the evaluator raises for inputs it cannot evaluate."""

from __future__ import annotations


class EvaluationError(ValueError):
    """Invalid node, attribute, type or shape given to the evaluator."""
