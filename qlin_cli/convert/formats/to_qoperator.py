"""A QDQ group -> its QOperator node (`--to-format qoperator`), what onnxruntime's QDQ
transformer does in memory at load, written into the file: a float op of
schema/qdq_forms.py QOPERATOR_OF whose quantized inputs each come from a DequantizeLinear
and whose output goes to one QuantizeLinear only becomes the QOperator op, reading the
DequantizeLinear inputs and writing the QuantizeLinear's output. A DequantizeLinear that
feeds nothing else, and the QuantizeLinear, go. An int32 bias joins only where its
DequantizeLinear's scale is the product the QOperator op's page fixes (x_scale * w_scale,
times alpha for QGemm) and its zero point 0. ``group`` gives the fused node, or why the
group stays as it is."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import TensorProto, helper

from ... import schema
from ...schema.qdq_forms import FORMS, QOPERATOR_OF, Form, Quantized
from .to_qdq import attribute_values, plain, raw_tensor


class Unfused(Exception):
    """The group has no QOperator form: the message says why."""


@dataclass
class Graph:
    """Who writes and who reads each value of one graph (``anywhere``: how many nodes of
    the whole model read each name, subgraphs and functions included)."""

    nodes: list
    outputs: set
    anywhere: dict
    writer: dict = field(default_factory=dict)
    readers: dict = field(default_factory=dict)
    plain: list = field(default_factory=list)  # ``nodes`` as to_qdq.Plain: their fields read once

    def __post_init__(self):
        self.plain = [plain(n) for n in self.nodes]
        for i, n in enumerate(self.plain):
            for o in n.output:
                if o:
                    self.writer[o] = i
            for x in n.input:
                if x:
                    self.readers.setdefault(x, []).append(i)

    def only_reader(self, name: str, index: int) -> bool:
        return (self.readers.get(name, []) == [index] and self.anywhere.get(name) == 1
                and name not in self.outputs)


@dataclass
class Fused:
    node: onnx.NodeProto
    inits: list
    folded: list[int]  # indices of the DequantizeLinear / QuantizeLinear nodes it replaces
    group: list[int]  # every node of the group, in graph order (for measuring)


def is_op(node, op: str) -> bool:
    """Whether ``node`` is the ai.onnx op ``op``."""
    return node.op_type == op and schema.normalize_domain(node.domain) == schema.AI_ONNX


def _dq(g: Graph, name: str, what: str) -> int:
    i = g.writer.get(name)
    if i is None or not is_op(g.plain[i], "DequantizeLinear"):
        raise Unfused(f"its {what} '{name}' does not come from a DequantizeLinear")
    return i


def group(g: Graph, index: int, opset: int, const: Callable, namer: Callable,
          elem: Callable[[str], int]) -> Fused:
    """The QOperator node of the group around float op ``index`` (``elem``: a value's
    element type, 0 when unknown); Unfused when it has none."""
    node = g.plain[index]
    domain, op = QOPERATOR_OF[node.op_type]
    form = FORMS[(domain, op)]
    attrs = attribute_values(node)
    count = len(node.input) if form.concat else len(form.inputs)
    dqs = [_dq(g, node.input[j], f"input {j}") for j in range(count)]
    out = node.output[0]
    readers = g.readers.get(out, [])
    if (len(readers) != 1 or g.anywhere.get(out) != 1 or out in g.outputs
            or not is_op(g.plain[readers[0]], "QuantizeLinear")):
        raise Unfused(f"its output '{out}' does not go to one QuantizeLinear only")
    q = g.plain[readers[0]]
    _scalar(q.input[1], const, "output scale")
    inits: list = []
    slots: dict[int, str] = {}
    quantized = [Quantized(2 + 3 * j, 3 + 3 * j, 4 + 3 * j) for j in range(count)] if form.concat \
        else list(form.inputs)
    for j, (qi, di) in enumerate(zip(quantized, dqs, strict=True)):
        d = g.plain[di]
        _axis_fits(d, qi, node, attrs, const, j)
        slots[qi.value], slots[qi.scale] = d.input[0], d.input[1]
        slots[qi.zero_point] = _zero_point(d, elem(d.input[0]), namer, inits)
    folded = [di for di in dqs if g.only_reader(g.plain[di].output[0], index)]
    if form.bias is not None and len(node.input) > 2 and node.input[2]:
        bi = _dq(g, node.input[2], "bias")
        slots[form.bias] = _bias(g.plain[bi], [g.plain[d] for d in dqs[:2]], form, attrs, const)
        if g.only_reader(node.input[2], index):
            folded.append(bi)
    scale_at, zp_at = form.output
    slots[scale_at], slots[zp_at] = q.input[1], _zero_point(q, TensorProto.UINT8, namer, inits)
    inputs = [slots.get(i, "") for i in range(max(slots) + 1)]
    fused = helper.make_node(op, inputs, [q.output[0]], name=namer(f"{node.name or node.op_type}_{op}"),
                             domain=domain)
    fused.attribute.extend(_attributes(node, attrs, op, opset))
    folded.append(readers[0])
    return Fused(fused, inits, sorted(folded), sorted({*dqs, index, readers[0], *folded}))


def _scalar(name: str, const: Callable, what: str) -> np.ndarray:
    value = const(name)
    if value is None:
        raise Unfused(f"its {what} '{name}' is computed at run time")
    if np.asarray(value).size != 1:
        raise Unfused(f"its {what} '{name}' has {np.asarray(value).size} elements; the QOperator op "
                      "takes a scalar there")
    return np.asarray(value)


def _axis_fits(d, qi: Quantized, node, attrs: dict, const: Callable, j: int) -> None:
    """A per-axis DequantizeLinear joins only along the axis the QOperator op reads."""
    scale = const(d.input[1])
    if scale is None:
        raise Unfused(f"the scale '{d.input[1]}' of input {j} is computed at run time")
    if np.asarray(scale).size == 1:
        return
    axis = next((a.i for a in d.attribute if a.name == "axis"), 1)
    if any(a.name == "block_size" and a.i for a in d.attribute):
        raise Unfused(f"input {j} is quantized in blocks; the QOperator op has no blocks")
    want = {"first": (0,), "last": (-1,), "transB": ((0,) if attrs.get("transB") else (1,))}.get(qi.axis)
    x = const(d.input[0])
    rank = None if x is None else np.asarray(x).ndim
    if want is None or not (axis in want or (rank is not None and axis - rank in want)):
        raise Unfused(f"input {j} is quantized per axis {axis}, which the QOperator op does not read there")


def _zero_point(n, elem: int, namer: Callable, inits: list) -> str:
    """The node's zero point input, or where it has none a zero of ``elem`` (a
    DequantizeLinear's x type; uint8 for a QuantizeLinear, its default output type)."""
    if len(n.input) > 2 and n.input[2]:
        return n.input[2]
    if elem not in (TensorProto.UINT8, TensorProto.INT8):
        raise Unfused(f"'{n.input[0]}' has no zero point and its type is not known to be 8-bit")
    name = namer(f"{n.output[0]}_zero_point")
    inits.append(raw_tensor(np.zeros((), helper.tensor_dtype_to_np_dtype(elem)), name))
    return name


def _bias(b, dqs: list, form: Form, attrs: dict, const: Callable) -> str:
    value, scale = const(b.input[0]), const(b.input[1])
    zp = const(b.input[2]) if len(b.input) > 2 and b.input[2] else np.zeros((), np.int32)
    if value is None or np.asarray(value).dtype != np.int32 or scale is None or zp is None:
        raise Unfused("its bias is not a constant int32 DequantizeLinear")
    xs, ws = (const(d.input[1]) for d in dqs)
    want = np.asarray(xs, np.float32) * np.asarray(ws, np.float32)
    if form.bias_times_alpha:
        want = want * np.float32(attrs.get("alpha", 1.0))
    want, got = want.astype(np.float32).reshape(-1), np.asarray(scale, np.float32).reshape(-1)
    same = bool(np.all(got == want[0])) if want.size == 1 else (
        got.shape == want.shape and np.array_equal(got, want))
    if not same or np.any(np.asarray(zp) != 0):
        raise Unfused("its bias's scale is not x_scale * w_scale (times alpha), or its zero point not "
                      "0: the QOperator op fixes both")
    return b.input[0]


def _attributes(node, attrs: dict, op: str, opset: int) -> list:
    out = [a for a in node.attribute if a.name != "beta"]
    if node.op_type == "Gemm" and attrs.get("beta", 1.0) != 1.0:
        raise Unfused(f"beta={attrs['beta']}: QGemm adds its bias once (no beta)")
    if op == "QLinearSoftmax":
        out = [helper.make_attribute("axis", attrs.get("axis", -1 if opset >= 13 else 1)),
               helper.make_attribute("opset", opset)]
    return out

