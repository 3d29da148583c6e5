"""A finding as the check reports it (``Diagnostic``, the one ``Finding`` type), and the
compact view of its node shown on a terminal."""

from __future__ import annotations

from ..finding import Finding
from ..rules.base import ERROR, INFO, WARNING

__all__ = ["ERROR", "INFO", "WARNING", "SEVERITIES", "Diagnostic", "node_frame"]

SEVERITIES = (INFO, WARNING, ERROR)  # lowest first: the one word per severity, everywhere

Diagnostic = Finding  # the name the check and the reports have always used


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
