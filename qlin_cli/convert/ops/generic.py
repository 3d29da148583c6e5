"""Steps a node crosses without a hand-written adapter, read from the step's diff.

Handled here, in either direction:

* type lists only: the node stays; its types are checked at the end of the walk;
* an attribute added with a default: going up nothing changes (absent means the
  default, which onnx keeps equal to the old behaviour); going down the attribute
  must be absent or at its default, and is then dropped;
* an optional input or output added at the end (or a required one made optional):
  going up nothing changes; going down it must not be used.

Anything else (attributes removed or retyped, inputs that change role, meaning
changes) returns None: the caller uses a hand-written adapter or the fallback.
"""

from __future__ import annotations

from onnx import AttributeProto, helper

from ..refusal import Refusal
from .step import OpStep


def _default_value(attr) -> object:
    a = AttributeProto()
    a.ParseFromString(attr.default)
    return helper.get_attribute_value(a)


def handles(step: OpStep, *, meaning_handled: bool = False) -> bool:
    """The step's diff is only what this module crosses (``meaning_handled``: a hand
    adapter has dealt with the step's meaning change)."""
    d = step.diff
    if d is None or d.deprecated or (d.semantic and not meaning_handled):
        return False
    for a in d.attributes:
        if not (a.old is None and a.new is not None and not a.new.required):
            return False
    for c in (*d.inputs, *d.outputs):
        added = c.old is None and c.new is not None and c.new.option in ("optional", "variadic")
        relaxed = (c.old is not None and c.new is not None and set(c.changed) <= {"option", "name"}
                   and c.old.option == "single" and c.new.option == "optional")
        if not (added or relaxed):
            return False
    return True


def apply(step: OpStep) -> Refusal | None:
    """Cross the step as the module docstring says (``handles(step)`` is true)."""
    if step.up:
        return None
    d = step.diff
    for a in d.attributes:
        value = step.attr(a.name)
        if value is None:
            continue
        if a.new.default is not None and value == _default_value(a.new):
            step.drop_attr(a.name)
            step.changes.append(f"{a.name} dropped (its default)")
            continue
        return Refusal(f"attribute {a.name}={value!r} exists only from opset {d.new_since}")
    for c in d.inputs:
        if c.old is None and step.input(c.index):
            return Refusal(f"input {c.index} ({c.new.name}) exists only from opset {d.new_since}")
        if c.old is not None and not step.input(c.index):
            return Refusal(f"input {c.index} ({c.new.name}) is optional only from opset {d.new_since}")
    for c in d.outputs:
        if c.old is None and c.index < len(step.node.output) and step.node.output[c.index]:
            return Refusal(f"output {c.index} ({c.new.name}) exists only from opset {d.new_since}")
    return None
