"""One finding of one rule on one node: the violation plus where it is."""

from __future__ import annotations

from dataclasses import dataclass

from ..rules.base import ERROR, INFO, WARNING, Fix

__all__ = ["ERROR", "INFO", "WARNING", "SEVERITIES", "Diagnostic", "node_frame", "split_location"]

SEVERITIES = (INFO, WARNING, ERROR)  # lowest first: the one word per severity, everywhere


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
    where: str = ""  # the location that starts ``message`` ("node 'q1' (QuantizeLinear-21 (ai.onnx))")
    # a compact view of the node for the terminal: (kind, name, text, marked) rows,
    # kind "input", "attribute" or "output"; marked: the message names it
    frame: tuple = ()

    @property
    def located(self) -> str:
        return self.where or split_location(self.message, self.node, self.graph)

    @property
    def detail(self) -> str:
        """The violation's own message, without the location that starts ``message``."""
        where = self.located
        if where and self.message.startswith(where + ": "):
            return self.message[len(where) + 2:]
        return self.message

    @property
    def title(self) -> str:
        """What the finding is on, short: 'QuantizeLinear-21 ai.onnx' for a node (the op
        and schema version, then the domain), the site itself otherwise ('opset import
        com.microsoft 1', "tensor 'w' (int4)", 'model')."""
        where = self.located
        for prefix in _node_prefixes(self.node, self.graph):
            if where.startswith(prefix) and where.endswith(")"):
                inner = where[len(prefix):-1]
                if inner.endswith(")") and " (" in inner:
                    op, _, domain = inner[:-1].rpartition(" (")
                    return f"{op} {domain}"
                return inner
        return where

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


def _node_prefixes(label: str, graph: str) -> list[str]:
    out = [f"node '{label}' ("]
    if label.startswith("#"):
        out.append(f"node {label} in {graph} (")
    return out


def split_location(message: str, label: str, graph: str) -> str:
    """The location that starts a message placed by the engine or a target
    ("node 'q1' (QuantizeLinear-21 (ai.onnx))", "model"), or "" when there is none.

    The node's label and graph are known, so a name holding ': ' does not cut it short.
    """
    for prefix in _node_prefixes(label, graph):
        if message.startswith(prefix):
            end = message.find("): ", len(prefix))
            if end >= 0:
                return message[:end + 1]
    if not label and message.startswith("model: "):
        return "model"
    return ""
