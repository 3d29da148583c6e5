"""One finding of one rule on one node: the violation plus where it is."""

from __future__ import annotations

from dataclasses import dataclass

from ..rules.base import ERROR, INFO, WARNING, Fix

__all__ = ["ERROR", "INFO", "WARNING", "SEVERITIES", "Diagnostic", "node_frame"]

SEVERITIES = (INFO, WARNING, ERROR)  # lowest first: the one word per severity, everywhere


@dataclass(frozen=True)
class Diagnostic:
    """One finding, of a rule or a target: what is wrong (``detail``) and where (the other
    fields), kept apart and composed only when rendered (``message``)."""

    code: str
    severity: str
    detail: str  # the violation's own message, without the location
    node: str  # the node's label (name or #index); "" when the finding is not on a node
    op_type: str
    domain: str
    opset: int
    graph: str
    fix: Fix | None = None
    where: str = ""  # how a message names the place: "node 'q1' (QuantizeLinear-21 (ai.onnx))", "model"
    title: str = ""  # what it is on, short: "QuantizeLinear-21 ai.onnx", "opset import com.microsoft 1"
    # a compact view of the node for the terminal: (kind, name, text, marked) rows,
    # kind "input", "attribute" or "output"; marked: the message names it
    frame: tuple = ()

    @property
    def message(self) -> str:
        """The finding in one line, its place first, for formats without columns."""
        return f"{self.where}: {self.detail}" if self.where else self.detail

    def to_json(self) -> dict:
        """One finding in the JSON contract, version 2: ``message`` without the location."""
        return {
            "code": self.code, "severity": self.severity, "message": self.detail,
            "title": self.title, "node": self.node, "op_type": self.op_type,
            "domain": self.domain, "opset": self.opset, "graph": self.graph,
            "fix": None if self.fix is None else {
                "title": self.fix.title, "safe": self.fix.safe,
                "edits": [e.describe() for e in self.fix.edits],
            },
        }


MAX_FRAME_ROWS = 12


def node_frame(facts, message: str) -> tuple:
    """The node's inputs (type and shape), attributes and outputs, each marked when the
    message names it (an input by its quoted name, an attribute by its name)."""
    import re

    from ..model.tensors import dims_text

    def typed(t, s) -> str:
        return f"{t or '?'} {'?' if s is None else dims_text(['?' if d is None else d for d in s])}"

    rows = []
    for i, name in enumerate(facts.inputs):
        if name:
            t = facts.in_types[i] if i < len(facts.in_types) else None
            s = facts.in_shapes[i] if i < len(facts.in_shapes) else None
            rows.append(("input", name, typed(t, s), f"'{name}'" in message))
    for name, _, value in facts.attr_items:
        text = str(value) if isinstance(value, int) else (
            f"@{value[1]}" if isinstance(value, tuple) else "...")
        rows.append(("attribute", name, text,
                     re.search(rf"(?<![\w']){re.escape(name)}(?![\w'])", message) is not None))
    for i, name in enumerate(facts.outputs):
        if name:
            t = facts.out_types[i] if i < len(facts.out_types) else None
            rows.append(("output", name, t or "?", f"'{name}'" in message))
    return tuple(rows[:MAX_FRAME_ROWS])
