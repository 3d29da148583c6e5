"""One QOperator node -> its QDQ form: a DequantizeLinear per quantized input (and one for
an int32 bias, at the product of the input scales), the float op, a QuantizeLinear at the
output's scale and zero point. ``to_qdq`` gives the nodes and new initializers, or the
reason the target opset has no QDQ form of the node."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from ... import schema
from ...schema.qdq_forms import Form, Quantized

# the first DequantizeLinear with ``axis`` (per-axis scales), as schema/ reads onnx.defs
PER_AXIS_SINCE = schema.first_version(schema.AI_ONNX, "DequantizeLinear", lambda s: "axis" in s.attributes)
# Softmax-13 normalizes along ``axis``; 1 and 11 flatten to 2-D there (the same step the
# Softmax adapter of convert/ops/adapters.py crosses)
SOFTMAX_PER_AXIS_SINCE = 13


_RAW_TYPES = {np.dtype(t): helper.np_dtype_to_tensor_dtype(np.dtype(t))
              for t in (np.float32, np.float16, np.uint8, np.int8, np.uint16, np.int16, np.int32)}


def raw_tensor(array: np.ndarray, name: str) -> onnx.TensorProto:
    """``numpy_helper.from_array(array, name)``, built without its per-call look-ups for the
    plain numeric types (_RAW_TYPES): the same message (its dims, name, type and little-endian
    raw_data; tests/test_formats_speed_tensors.py holds the two equal)."""
    elem = _RAW_TYPES.get(array.dtype)
    if elem is None or sys.byteorder != "little" or not name:
        return numpy_helper.from_array(array, name)
    t = onnx.TensorProto()
    t.dims.extend(array.shape)
    t.name = name
    t.data_type = elem
    t.raw_data = array.tobytes()
    return t


_READ_TYPES = {elem: dtype for dtype, elem in _RAW_TYPES.items()}


def read_raw(t: onnx.TensorProto) -> np.ndarray:
    """``numpy_helper.to_array(t)``, read without its per-call look-ups where ``t`` holds its
    values in raw_data and is of a plain numeric type (_RAW_TYPES) on a little-endian machine:
    to_array's own step there (the bytes as that type, shaped as dims; read-only, as its);
    any other tensor through to_array itself (tests/test_formats_speed_tensors.py)."""
    dtype = _READ_TYPES.get(t.data_type)
    if (dtype is None or sys.byteorder != "little" or not t.HasField("raw_data") or t.HasField("segment")
            or t.data_location == TensorProto.EXTERNAL):
        return numpy_helper.to_array(t)
    return np.frombuffer(t.raw_data, dtype=dtype).reshape(t.dims)


_INT = onnx.AttributeProto.INT


def attribute_values(node) -> dict:
    """{name: helper.get_attribute_value(a)} of the node's attributes, an integer one read
    directly (most of the attributes the format conversions read: the same value)."""
    return {a.name: a.i if a.type == _INT else helper.get_attribute_value(a) for a in node.attribute}


class Plain(NamedTuple):
    """A node's fields as Python values, read once (a NodeProto's attribute reads make new
    Python objects each time): what ``to_qdq`` and the measurement's structures read of it."""

    op_type: str
    input: tuple
    output: tuple
    name: str
    domain: str
    attribute: tuple  # its AttributeProto messages


def plain(node: onnx.NodeProto) -> Plain:
    return Plain(node.op_type, tuple(node.input), tuple(node.output), node.name, node.domain,
                 tuple(node.attribute))


@dataclass
class Built:
    nodes: list[onnx.NodeProto]
    inits: list[onnx.TensorProto]
    changes: list[str]
    plain: list[Plain] = field(default_factory=list)  # ``nodes`` as Plain, where the builder keeps them


@functools.lru_cache(maxsize=1024)
def _attributes(items: tuple) -> tuple:
    return tuple(helper.make_attribute(key, value) for key, value in items)


def made_node(op: str, inputs: list, outputs: list, name: str, domain: str | None = None,
              **ints: int) -> onnx.NodeProto:
    """``helper.make_node(op, inputs, outputs, name=name, domain=domain, **ints)`` for integer
    attributes, its fields set here as make_node sets them (a domain of None left unset, "" set)
    and each (name, value) attribute made once: the same message (make_node adds them sorted by
    name; tests/test_formats_speed_tensors.py holds the two equal)."""
    node = _NodeProto()
    node.op_type = op
    node.input.extend(inputs)
    node.output.extend(outputs)
    if name:
        node.name = name
    if domain is not None:
        node.domain = domain
    if not ints:  # (most nodes written: nothing to sort)
        return node
    items = tuple(sorted((key, value) for key, value in ints.items() if value is not None))
    if items:  # (make_node leaves out an attribute whose value is None)
        node.attribute.extend(_attributes(items))
    return node


_NodeProto = onnx.NodeProto


def _made(nodes: list, twins: list, op: str, inputs: list, outputs: list, name: str, **kw) -> None:
    """``helper.make_node(op, inputs, outputs, name=name, **kw)`` added to ``nodes``, and its
    Plain to ``twins``."""
    node = made_node(op, inputs, outputs, name, **kw)
    nodes.append(node)
    twins.append(Plain(op, tuple(inputs), tuple(outputs), name, "", tuple(node.attribute) if kw else ()))


class NoForm(Exception):
    """The node has no QDQ form at the target opset: the message says why."""


@dataclass
class Lookups:
    const: Callable[[str], np.ndarray | None]  # a constant's value (None: not a constant)
    find_type: Callable[[str], tuple | None]  # (element type, shape or None), or None
    namer: Callable[[str], str]


def to_qdq(node: onnx.NodeProto | Plain, form: Form, opset: int, look: Lookups) -> Built:
    """The QDQ form of ``node`` (or its ``plain``) at ai.onnx ``opset``; NoForm when there is none."""
    attrs = {a.name: a for a in node.attribute}
    for name in form.must_be_zero:
        if name in attrs and helper.get_attribute_value(attrs[name]) != 0:
            raise NoForm(f"{name}={helper.get_attribute_value(attrs[name])}: {form.float_op} reads "
                         f"channels first; there is no DequantizeLinear -> {form.float_op} form of it")
    base = node.name or node.op_type
    nodes: list[onnx.NodeProto] = []
    twins: list[Plain] = []
    inits: list[onnx.TensorProto] = []
    floats = []
    for i, q in enumerate(_quantized(node, form)):
        floats.append(_dequantize(node, q, attrs, opset, look, f"{base}_dq{i}", (nodes, twins)))
    if form.bias is not None and len(node.input) > form.bias and node.input[form.bias]:
        floats.append(_bias(node, form, attrs, opset, look, base, (nodes, twins), inits))
    float_attrs = [a for a in node.attribute if a.name not in form.drop]
    if form.float_op == "Softmax":
        float_attrs = _softmax_axis(node, attrs, opset, look)
    scale_at, zp_at = form.output
    quantized_out = len(node.input) > scale_at and node.input[scale_at]
    computed = look.namer(f"{node.output[0]}_float") if quantized_out else node.output[0]
    name = look.namer(f"{base}_{form.float_op}")
    op = helper.make_node(form.float_op, floats, [computed], name=name)
    op.attribute.extend(float_attrs)
    nodes.append(op)
    twins.append(Plain(form.float_op, tuple(floats), (computed,), name, "", tuple(float_attrs)))
    if quantized_out:
        _quantize(node, scale_at, zp_at, computed, look, base, inits, (nodes, twins))
    n_dq = sum(1 for n in twins if n.op_type == "DequantizeLinear")
    change = (f"{node.op_type} -> {n_dq} DequantizeLinear, {form.float_op}"
              + (", QuantizeLinear" if quantized_out else "") + " (QDQ form)")
    return Built(nodes, inits, [change], twins)


def _quantized(node: onnx.NodeProto, form: Form) -> list[Quantized]:
    if not form.concat:
        return list(form.inputs)
    return [Quantized(i, i + 1, i + 2) for i in range(2, len(node.input), 3)]


def _scale_size(name: str, look: Lookups) -> tuple[int, int] | None:
    """(number of elements, rank) of a scale, None when unknown."""
    value = look.const(name)
    if value is not None:
        return int(np.asarray(value).size), np.asarray(value).ndim
    t = look.find_type(name)
    if t is None or t[1] is None or not all(isinstance(d, int) for d in t[1]):
        return None
    return int(np.prod(t[1], dtype=np.int64)), len(t[1])


def _axis(q: Quantized, node: onnx.NodeProto, attrs: dict, look: Lookups) -> int:
    if q.axis == "first":
        return 0
    if q.axis == "transB":
        return 0 if attrs.get("transB") and helper.get_attribute_value(attrs["transB"]) else 1
    if q.axis == "last":
        t = look.find_type(node.input[q.value])
        if t is None or t[1] is None:
            raise NoForm(f"the rank of '{node.input[q.value]}' is unknown: its per-column scale "
                         "needs an axis")
        return len(t[1]) - 1
    raise NoForm(f"'{node.input[q.scale]}' holds more than one scale, which {node.op_type} reads as "
                 "a scalar")


def _dequantize(node, q: Quantized, attrs, opset: int, look: Lookups, name: str, into: tuple) -> str:
    x, scale = node.input[q.value], node.input[q.scale]
    zp = node.input[q.zero_point] if len(node.input) > q.zero_point else ""
    size = _scale_size(scale, look)
    if size is None:
        raise NoForm(f"the shape of scale '{scale}' is unknown")
    kw = {}
    if size[0] > 1:
        if size[1] != 1:
            raise NoForm(f"scale '{scale}' is a {size[1]}-D tensor; DequantizeLinear takes a scalar "
                         "or a 1-D scale")
        if opset < PER_AXIS_SINCE:
            raise NoForm(f"'{scale}' is per-channel, and DequantizeLinear takes per-axis scales from "
                         f"opset {PER_AXIS_SINCE}: add --to-opset {PER_AXIS_SINCE}")
        kw["axis"] = _axis(q, node, attrs, look)
    _float32_scale(scale, look, opset)
    out = look.namer(f"{x}_dequantized")
    _made(*into, "DequantizeLinear", [x, scale] + ([zp] if zp else []), [out], look.namer(name), **kw)
    return out


def _float32_scale(scale: str, look: Lookups, opset: int) -> None:
    t = look.find_type(scale)
    if t is not None and t[0] not in (0, TensorProto.FLOAT):
        raise NoForm(f"scale '{scale}' is {helper.tensor_dtype_to_np_dtype(t[0]).name}; qlin writes "
                     "the QDQ form of float32 scales only")


def _bias(node, form: Form, attrs, opset: int, look: Lookups, base: str, into: tuple, inits: list) -> str:
    """The int32 bias dequantized at the product of the two input scales (times alpha)."""
    bias = node.input[form.bias]
    a, b = (look.const(node.input[q.scale]) for q in form.inputs[:2])
    if a is None or b is None:
        raise NoForm(f"the bias '{bias}' is dequantized at the product of two scales, and one of them "
                     "is computed at run time")
    product = np.asarray(a, np.float32) * np.asarray(b, np.float32)
    if form.bias_times_alpha and "alpha" in attrs:
        product = product * np.float32(helper.get_attribute_value(attrs["alpha"]))
    product = product.astype(np.float32).reshape(-1 if product.size > 1 else ())
    kw = {}
    if product.size > 1:
        if opset < PER_AXIS_SINCE:
            raise NoForm(f"the bias '{bias}' has per-channel scales, and DequantizeLinear takes them from "
                         f"opset {PER_AXIS_SINCE}: add --to-opset {PER_AXIS_SINCE}")
        kw["axis"] = 0
    scale_name = look.namer(f"{bias}_scale")
    inits.append(raw_tensor(product, scale_name))
    out = look.namer(f"{bias}_dequantized")
    _made(*into, "DequantizeLinear", [bias, scale_name], [out], look.namer(f"{base}_dq_bias"), **kw)
    return out


def _softmax_axis(node, attrs: dict, opset: int, look: Lookups) -> list:
    """Softmax's axis, written out (Softmax-1/11 default to 1, QLinearSoftmax to -1); a node
    whose ``opset`` reads the axis otherwise than Softmax at ``opset`` has no form unless the
    axis is the last (where flattening to 2-D and normalizing along it agree)."""
    axis = helper.get_attribute_value(attrs["axis"]) if "axis" in attrs else -1
    own = helper.get_attribute_value(attrs["opset"]) if "opset" in attrs else opset
    if (own >= SOFTMAX_PER_AXIS_SINCE) != (opset >= SOFTMAX_PER_AXIS_SINCE):
        t = look.find_type(node.input[0])
        rank = None if t is None or t[1] is None else len(t[1])
        if not (axis == -1 or (rank is not None and axis == rank - 1)):
            raise NoForm(f"its opset={own} reads axis {axis} as Softmax-{own} does, which Softmax at "
                         f"opset {opset} reads otherwise")
    return [helper.make_attribute("axis", axis)]


def _quantize(node, scale_at: int, zp_at: int, computed: str, look: Lookups, base: str, inits: list,
              into: tuple) -> None:
    scale = node.input[scale_at]
    size = _scale_size(scale, look)
    if size is None or size[0] != 1:
        raise NoForm(f"the output scale '{scale}' is not known to be a scalar")
    zp = node.input[zp_at] if len(node.input) > zp_at else ""
    if not zp:  # QuantizeLinear without a zero point writes uint8: the node's own type, explicitly
        t = look.find_type(node.output[0])
        if t is None or t[0] == 0:
            raise NoForm("the output has no zero point and its type is unknown")
        zp = look.namer(f"{node.output[0]}_zero_point")
        inits.append(raw_tensor(np.zeros((), helper.tensor_dtype_to_np_dtype(t[0])), zp))
    _made(*into, "QuantizeLinear", [computed, scale, zp], [node.output[0]], look.namer(f"{base}_q"))
