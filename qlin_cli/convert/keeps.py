"""Which attributes of a Q/DQ node a rewrite keeps as they are: what qnode.emit writes, and
what the targets' plan reads of a node convert would write (targets/predict.py), without
importing the rest of convert."""

from __future__ import annotations

from onnx import AttributeProto

from .. import schema

# The attributes qlin understands (any version's schema defines them); anything
# else on a Q/DQ node is kept verbatim.
KNOWN_ATTRS = frozenset(name for spec in schema.SPECS for name in spec.attributes)


def keeps(q, name: str, attr_type: int, int_value) -> bool:
    """Whether the rewrite ``q`` (a qnode.QNode, or what reads as one: its ``refs`` and
    ``attrs``) keeps an attribute of the original node as it is: a reference to a function
    attribute, an integer it leaves at its value, or an attribute qlin does not understand that
    is not an integer."""
    return (name in q.refs
            or (name in q.attrs and attr_type == AttributeProto.INT and int_value == q.attrs[name])
            or (name not in KNOWN_ATTRS and attr_type != AttributeProto.INT))
