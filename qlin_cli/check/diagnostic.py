"""A finding as the check reports it (``Diagnostic``, the one ``Finding`` type), and the
compact view of its node shown on a terminal."""

from __future__ import annotations

from functools import lru_cache

from ..finding import Finding
from ..severity import ERROR, INFO, WARNING

__all__ = ["ERROR", "INFO", "WARNING", "SEVERITIES", "Diagnostic", "node_frame"]

SEVERITIES = (INFO, WARNING, ERROR)  # lowest first: the one word per severity, everywhere

Diagnostic = Finding  # the name the check and the reports have always used


MAX_FRAME_ROWS = 12


def node_frame(facts, message: str) -> tuple:
    """The node's inputs (type and shape), attributes and outputs, each marked when the
    message names it (an input by its quoted name, an attribute by its name)."""
    rows = []
    typed = facts.in_typed
    for i, name in enumerate(facts.inputs):
        if name:
            rows.append(("input", name, _typed_text(typed[i] if i < len(typed) else None),
                         f"'{name}'" in message))
    for name, _, value in facts.attr_items:
        text = str(value) if isinstance(value, int) else (
            f"@{value[1]}" if isinstance(value, tuple) else "...")
        rows.append(("attribute", name, text, _named(name).search(message) is not None))
    for i, name in enumerate(facts.outputs):
        if name:
            t = facts.out_types[i] if i < len(facts.out_types) else None
            rows.append(("output", name, t or "?", f"'{name}'" in message))
    return tuple(rows[:MAX_FRAME_ROWS])


@lru_cache(maxsize=4096)
def _typed_text(typed) -> str:
    """'float [1, 3]' of an input's (element type, shape); '?' for what is unknown."""
    from ..model.tensors import dims_text
    from ..schema import dtypes

    t, s = typed if typed is not None else (0, None)
    shape = "?" if s is None else dims_text(["?" if d is None else d for d in s])
    return f"{(dtypes.name_of(t) if t else None) or '?'} {shape}"


@lru_cache(maxsize=4096)
def _named(name: str):
    """A pattern finding ``name`` as a word of its own (not quoted: a quoted name is a value's)."""
    import re

    return re.compile(rf"(?<![\w']){re.escape(name)}(?![\w'])")
