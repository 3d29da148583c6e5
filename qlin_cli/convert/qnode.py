"""A Q/DQ node read into plain facts, and written back as a NodeProto."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import onnx
from onnx import helper

from ..model.facts import NodeFacts
from ..schema import OpSpec, semantics
from .keeps import KNOWN_ATTRS, keeps  # noqa: F401 (KNOWN_ATTRS read from here too)


@dataclass
class NewZeroPoint:
    name: str
    type_name: str
    shape: tuple


@dataclass
class QNode:
    kind: str  # "quantize" | "dequantize"
    spec: OpSpec  # the schema in force
    facts: NodeFacts  # what the node was before any rewrite
    inputs: list[str]
    outputs: list[str]
    attrs: dict[str, int]  # explicit integer attributes
    refs: dict[str, str]  # attribute name -> the function attribute it refers to
    x_type: str | None
    scale_type: str | None
    q_type: str | None  # the quantized side's type
    out_type: str | None  # dequantize: the output type
    scale_shape: tuple | None
    x_rank: int | None
    granularity: str | None
    new_zero_point: NewZeroPoint | None = None
    changes: list[str] = field(default_factory=list)

    def has_zero_point(self) -> bool:
        return (len(self.inputs) > 2 and self.inputs[2] != "") or self.new_zero_point is not None

    def axis_in_force(self) -> int | None:
        return semantics.axis_in_force(self.spec, self.attrs)

    def copy(self) -> QNode:
        return replace(
            self, inputs=list(self.inputs), outputs=list(self.outputs), attrs=dict(self.attrs),
            refs=dict(self.refs), changes=list(self.changes),
        )


def read(facts: NodeFacts) -> QNode:
    """The rewrite state of one Q/DQ node whose schema is known (``facts.spec`` is set)."""
    spec = facts.spec
    attrs = dict(facts.attrs)
    refs = {}
    for name, _, value in facts.attr_items:
        if isinstance(value, tuple):  # a reference to a function attribute
            refs[name] = value[1]
    types = facts.resolved_types
    return QNode(
        kind=spec.kind,
        spec=spec,
        facts=facts,
        inputs=list(facts.inputs),
        outputs=list(facts.outputs),
        attrs=attrs,
        refs=refs,
        x_type=types[0] if types else None,
        scale_type=facts.in_type(facts.scale_index),
        q_type=facts.quant_type,
        out_type=facts.implied_out_type,
        scale_shape=facts.scale_shape,
        x_rank=facts.x_rank,
        granularity=facts.granularity,
    )


def emit(q: QNode, original: onnx.NodeProto) -> onnx.NodeProto:
    """``original`` rewritten to ``q``: name, doc string and metadata kept."""
    node = onnx.NodeProto()
    node.CopyFrom(original)
    node.domain = q.spec.domain
    node.op_type = q.spec.op_type
    del node.input[:]
    inputs = list(q.inputs)
    while inputs and inputs[-1] == "":
        inputs.pop()
    node.input.extend(inputs)
    kept = [a for a in original.attribute if keeps(q, a.name, a.type, a.i)]
    have = {a.name for a in kept}
    for name, value in q.attrs.items():
        if name not in have:
            kept.append(helper.make_attribute(name, value))
    del node.attribute[:]
    node.attribute.extend(kept)
    return node
