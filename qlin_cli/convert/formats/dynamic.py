"""The dynamic ops' QDQ form: what onnxruntime's ``quantize_dynamic`` writes,

    x -> DynamicQuantizeLinear -> (x_q, x_scale, x_zp)
    MatMulInteger / ConvInteger(x_q, w_q, x_zp, w_zp) -> Cast(float) -> Mul(x_scale * w_scale)

becomes DequantizeLinear(x_q, x_scale, x_zp) and DequantizeLinear(w_q, w_scale, w_zp) -> the
float MatMul / Conv, writing the Mul's output; the DynamicQuantizeLinear stays (its run-time
scale and zero point feed the DequantizeLinear). The pages: MatMulInteger / ConvInteger
accumulate "(a - a_zero_point) * (b - b_zero_point)" in int32, the Cast rounds the sum to
float once and the Mul scales it once; DequantizeLinear "y = (x - x_zero_point) * x_scale"
rounds each dequantized value to float and the float op sums rounded products. The two
compute differently by their pages, so the rewrite is measured (measure.py) in steps of
x_scale * w_scale, never called proven.

com.microsoft DynamicQuantizeLSTM has no QDQ form: it quantizes its hidden state at each
time step inside the node, where no DequantizeLinear outside an ai.onnx LSTM can stand.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper

from .measure import FormatCase
from .to_qdq import PER_AXIS_SINCE, Built, Lookups, NoForm

INTEGER_OPS = {"MatMulInteger": "MatMul", "ConvInteger": "Conv"}
# the run-time activation scale the measurement stands in for x_scale (not a power of two,
# so the float roundings of both forms show); the zero point is drawn like any code
SAMPLE_X_SCALE = np.float32(0.0123)


def lstm_refusal(node: onnx.NodeProto) -> str:
    hidden = node.output[0] if node.output else "Y"
    return (f"its hidden state ('{hidden}', H_t) is quantized at run time at each time step inside the "
            "node, and an ai.onnx LSTM reads float W, R and H: no DequantizeLinear outside it computes "
            "that; qlin leaves DynamicQuantizeLSTM as it is")


def chain(node: onnx.NodeProto, writer: dict, readers: dict, const=None) -> tuple | None:
    """(x, Cast, scale Mul, output Mul) around ``node``, x the names [x_q, x_scale, x_zp] its
    DequantizeLinear reads; None when the node is not in quantize_dynamic's pattern. x is a
    DynamicQuantizeLinear's outputs, or (with ``const``, which reads a constant) a quantized
    tensor read at a constant scale and zero point: the quantizer's Gather of a quantized
    embedding table, whose scale the scale Mul reads (the per-axis one is the weight's; else
    the first, as quantize_dynamic writes Mul(x_scale, w_scale))."""
    if not node.input or not node.output or len(node.input) < 2:
        return None
    cast = _only(readers.get(node.output[0], []), "Cast")
    to = None if cast is None else next((a for a in cast.attribute if a.name == "to"), None)
    if to is None or helper.get_attribute_value(to) != TensorProto.FLOAT or not cast.output:
        return None
    out = _only(readers.get(cast.output[0], []), "Mul")
    if out is None or len(out.input) != 2:
        return None
    other = out.input[1] if out.input[0] == cast.output[0] else out.input[0]
    scales = writer.get(other)
    if scales is None or scales.op_type != "Mul" or len(scales.input) != 2 \
            or len(readers.get(other, [])) != 1:
        return None
    dql = writer.get(node.input[0])
    if dql is not None and dql.op_type == "DynamicQuantizeLinear":
        if len(dql.output) < 3 or list(node.input[2:3]) != [dql.output[2]] \
                or dql.output[1] not in scales.input:
            return None
        return list(dql.output), cast, scales, out
    x_scale = _constant_scale(node, scales, const)
    return None if x_scale is None else ([node.input[0], x_scale, *node.input[2:3]], cast, scales, out)


def _constant_scale(node: onnx.NodeProto, scales: onnx.NodeProto, const) -> str | None:
    """The scale Mul's input that is x's scale where both it and x's zero point are constants
    of one value (the per-axis one is the weight's; else the first), else None."""
    if const is None or (len(node.input) > 2 and node.input[2] and const(node.input[2]) is None):
        return None
    values = [const(x) for x in scales.input]
    if any(v is None for v in values):
        return None
    sizes = [np.asarray(v).size for v in values]
    zero = const(node.input[2]) if len(node.input) > 2 and node.input[2] else None
    if min(sizes) != 1 or (zero is not None and np.asarray(zero).size != 1):
        return None  # x read per row: no per-tensor DequantizeLinear of it
    return scales.input[1] if sizes[0] > 1 else scales.input[0]


def _only(nodes: list, op: str):
    return nodes[0] if len(nodes) == 1 and nodes[0] is not None and nodes[0].op_type == op else None


def to_qdq(node: onnx.NodeProto, found: tuple, opset: int, look: Lookups) -> Built:
    x, _, scales, out = found
    w_scale = scales.input[1] if scales.input[0] == x[1] else scales.input[0]
    w, w_zp = node.input[1], (node.input[3] if len(node.input) > 3 else "")
    value = look.const(w_scale)
    if value is None or look.const(w) is None:
        raise NoForm(f"the weight '{w}' or its scale '{w_scale}' is computed at run time")
    kw = {}
    if np.asarray(value).size > 1:
        if opset < PER_AXIS_SINCE:
            raise NoForm(f"'{w_scale}' is per-channel, and DequantizeLinear takes per-axis scales from "
                         f"opset {PER_AXIS_SINCE}: add --to-opset {PER_AXIS_SINCE}")
        kw["axis"] = 0 if node.op_type == "ConvInteger" else np.asarray(look.const(w)).ndim - 1
    base = node.name or node.op_type
    x_f, w_f = look.namer(f"{x[0]}_dequantized"), look.namer(f"{w}_dequantized")
    nodes = [helper.make_node("DequantizeLinear", list(x), [x_f], name=look.namer(f"{base}_dq0")),
             helper.make_node("DequantizeLinear", [w, w_scale] + ([w_zp] if w_zp else []), [w_f],
                              name=look.namer(f"{base}_dq1"), **kw)]
    op = helper.make_node(INTEGER_OPS[node.op_type], [x_f, w_f], [out.output[0]],
                          name=look.namer(f"{base}_{INTEGER_OPS[node.op_type]}"))
    op.attribute.extend(node.attribute)
    nodes.append(op)
    where = ("DynamicQuantizeLinear's run-time scale and zero point" if look.const(x[1]) is None
             else f"its constant scale '{x[1]}'")
    change = (f"{node.op_type} -> 2 DequantizeLinear (x at {where}), {INTEGER_OPS[node.op_type]}; its Cast "
              "and scale Muls removed (QDQ form)")
    return Built(nodes, [], [change])


def case(node, found: tuple, built: Built, look: Lookups, before: dict, opset: int) -> FormatCase:
    """The source's MatMulInteger, Cast and Muls against the rewrite, a run-time x_scale
    fixed (SAMPLE_X_SCALE), x_q (and a run-time x_zp) drawn codes; steps of x_scale *
    min |w_scale|."""
    x, cast, scales, out = found
    x_scale = x[1]
    value = look.const(x_scale)
    consts = {x_scale: np.asarray(SAMPLE_X_SCALE if value is None else value)}
    inputs = {}
    for name in list(node.input) + list(scales.input):
        if not name or name in consts or name in inputs:
            continue
        value = look.const(name)
        if value is not None:
            consts[name] = np.asarray(value)
        else:
            t = look.find_type(name)
            inputs[name] = (0, None) if t is None else (t[0], t[1])
    w_scale = [consts[scales.input[1] if scales.input[0] == x_scale else scales.input[0]]]
    step = float(consts[x_scale]) * float(np.min(np.abs(np.asarray(w_scale[0], np.float64))))
    return FormatCase([node, cast, scales, out], built.nodes, [], consts, inputs, TensorProto.FLOAT, before,
                      opset, step)
