"""One finding of one rule on one node: the violation plus where it is."""

from __future__ import annotations

from dataclasses import dataclass

from ..rules.base import ERROR, INFO, WARNING, Fix

__all__ = ["ERROR", "INFO", "WARNING", "Diagnostic"]


@dataclass(frozen=True)
class Diagnostic:
    code: str
    severity: str
    message: str  # "node 'q1' (QuantizeLinear-21 (ai.onnx)): <the violation's message>"
    node: str
    op_type: str
    domain: str
    opset: int
    graph: str
    fix: Fix | None = None

    def to_json(self) -> dict:
        return {
            "code": self.code, "severity": self.severity, "message": self.message,
            "node": self.node, "op_type": self.op_type, "domain": self.domain,
            "opset": self.opset, "graph": self.graph,
            "fix": None if self.fix is None else {
                "title": self.fix.title, "safe": self.fix.safe,
                "edits": [e.describe() for e in self.fix.edits],
            },
        }
