"""A Q/DQ node read into plain facts, and written back as a NodeProto."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import onnx
from onnx import AttributeProto, helper

from .. import schema
from ..check.node import NodeView
from ..schema import OpSpec

# The attributes qlin understands (any version's schema defines them); anything
# else on a Q/DQ node is kept verbatim.
KNOWN_ATTRS = frozenset(name for spec in schema.SPECS for name in spec.attributes)


@dataclass
class NewZeroPoint:
    name: str
    type_name: str
    shape: tuple


@dataclass
class QNode:
    kind: str  # "quantize" | "dequantize"
    spec: OpSpec  # the schema in force
    inputs: list[str]
    outputs: list[str]
    attrs: dict[str, int]  # explicit integer attributes
    refs: dict[str, AttributeProto]  # attributes that refer to a function's attributes
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
        return self.attrs.get("axis", self.spec.axis_default)

    def copy(self) -> QNode:
        return replace(
            self, inputs=list(self.inputs), outputs=list(self.outputs), attrs=dict(self.attrs),
            refs=dict(self.refs), changes=list(self.changes),
        )


def read(view: NodeView) -> QNode:
    """The facts of one Q/DQ node whose schema is known (``view.spec`` is set)."""
    spec = view.spec
    node = view.node
    attrs: dict[str, int] = {}
    refs: dict[str, AttributeProto] = {}
    for a in node.attribute:
        if a.ref_attr_name:
            refs[a.name] = a
        elif a.type == AttributeProto.INT:
            attrs[a.name] = a.i
    x_type = view.in_type(0)
    scale_type = view.in_type(1)
    q_type = view.quant_type
    if spec.kind == "dequantize" and x_type is None and view.present(2):
        x_type = q_type = view.in_type(2)  # x and the zero point share one type
    if spec.kind == "quantize" and x_type is None:
        # what the schema ties x to: the scale's type, or the only type it allows
        x_param, s_param = spec.inputs[0], spec.inputs[1]
        if x_param.types == s_param.types:
            x_type = scale_type
        elif len(spec.allowed(x_param)) == 1:
            x_type = next(iter(spec.allowed(x_param)))
    out_type = view.implied_out_type
    return QNode(
        kind=spec.kind,
        spec=spec,
        inputs=list(node.input),
        outputs=list(node.output),
        attrs=attrs,
        refs=refs,
        x_type=x_type,
        scale_type=scale_type,
        q_type=q_type,
        out_type=out_type,
        scale_shape=view.in_shape(1),
        x_rank=view.x_rank,
        granularity=_granularity(view, attrs),
    )


def _granularity(view: NodeView, attrs: dict[str, int]) -> str | None:
    # com.microsoft reads per-tensor from an absent axis, whatever the shapes say
    if view.spec.domain == schema.MICROSOFT and "axis" not in attrs and view.granularity is None:
        return schema.PER_TENSOR
    return view.granularity


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
    kept = []
    for a in original.attribute:
        if a.name in q.refs:
            kept.append(a)
        elif a.name in q.attrs and a.type == AttributeProto.INT and a.i == q.attrs[a.name]:
            kept.append(a)
        elif a.name not in KNOWN_ATTRS and a.type != AttributeProto.INT:
            kept.append(a)
    have = {a.name for a in kept}
    for name, value in q.attrs.items():
        if name not in have:
            kept.append(helper.make_attribute(name, value))
    del node.attribute[:]
    node.attribute.extend(kept)
    return node
