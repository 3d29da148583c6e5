import numpy as np

from .. import schema
from .base import WARNING, ModelRule, Violation
from .base_numeric import INT32_MAX, INT32_MIN, by_channel, constant_array, farthest, g3
from .base_qdq import producer, scale_of, zero_point_of
from .ql603_bias_scale import biased_ops


class BiasOverflow(ModelRule):
    """
    ## What it checks
    For every Conv, ConvTranspose or Gemm (ai.onnx; a Gemm with alpha and beta 1)
    whose input and weight come from DequantizeLinear nodes and whose bias (input 2)
    is a constant:

    * a float bias: that bias / (input scale x weight scale), the int32 value an
      integer kernel adds it as, stays within int32 (|value| <= 2^31-1), per output
      channel for per-channel weights;
    * an int32 bias DequantizeLinear: that no quantized value sits at the int32
      limits (2147483647 or -2147483648, the trace of a bias clipped when it was
      quantized), and that the bias plus the largest sum the output channel's
      products can reach (K x max |x_q - x_zp| x max |w_q - w_zp|, K the weights
      per output channel) stays within int32 wherever those products alone do.

    ## Why is this bad?
    "Bias must be quantized using scale = x_scale * w_scale and zero_point = 0"
    (QLinearConv): an integer kernel adds the bias to its int32 accumulator at
    that scale. With a tiny weight scale the quotient leaves int32 and the bias is
    clipped to the int32 limits, "which significantly decreases accuracy"
    (onnxruntime PR 22020, which since onnxruntime 1.20 raises the weight scale
    instead; PR 25278 did the same for the QOperator format after ">51% accuracy
    loss in some models"). A bias near the limits leaves the accumulator no room:
    the sum wraps or saturates in the kernel.

    ## Example
    ```
    DequantizeLinear(x_q, 0.01) -> x;  DequantizeLinear(w_q, 1e-06) -> w
    Conv(x, w, bias = [32000.0])   # 32000 / (0.01 * 1e-06) = 3.2e12 > 2^31-1
    ```

    ## Fix
    Raise the weight scale so that max |bias| / (input scale x weight scale) fits in
    int32, that is weight scale >= max |bias| / (input scale x (2^31-1)), and
    quantize the weights and the bias again (what onnxruntime's quantizer does
    since 1.20 unless QDQDisableWeightAdjustForInt32Bias is set).
    """

    code = "QL605"
    name = "bias-overflow"
    severity = WARNING
    summary = "A Conv/Gemm bias that leaves int32 at scale input scale x weight scale."

    def check_model(self, view):
        for body, i, node, fx, fw in biased_ops(view):
            dq_bias = producer(view, body, node.input[2], schema.LINEAR_DEQUANTIZE)
            if dq_bias is None:
                message = _float_bias(view, body, node, fx, fw)
                at = i
            else:
                message = _int32_bias(view, body, node, fx, fw, dq_bias[1])
                at = dq_bias[0]
            if message:
                yield Violation(message, at=view.node_site(body, at))


def _attr(node, name: str, default: int) -> int:
    return next((a.i for a in node.attribute if a.name == name), default)


def _channel_axis(node) -> int:
    """The weight's axis of output channels: 0 for Conv and Gemm with transB, 1 otherwise."""
    if node.op_type == "Conv":
        return 0
    if node.op_type == "Gemm":
        return 0 if _attr(node, "transB", 0) else 1
    return 1


def _float_bias(view, body, node, fx, fw):
    bias = constant_array(view, body, node.input[2])
    sx, sw = scale_of(fx), scale_of(fw)
    if bias is None or bias.dtype.kind != "f" or sx is None or sw is None or sx.size != 1 or bias.size == 0:
        return None
    b = bias.astype(np.float64).reshape(-1)
    w = sw.astype(np.float64).reshape(-1)
    if w.size not in (1, b.size):
        return None
    x = float(sx.reshape(-1)[0])
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.abs(b / (x * w))
    over = np.isfinite(q) & (q > INT32_MAX)
    if not over.any():
        return None
    c = int(np.argmax(q * over))
    wc = float(w[c] if w.size > 1 else w[0])
    at = f" at index {c}" if b.size > 1 else ""
    more = int(over.sum()) - 1
    extra = f" (and {more} more)" if more else ""
    return (f"its float bias '{node.input[2]}'{at}{extra}, quantized at input scale x weight scale as an "
            f"integer kernel adds it, leaves int32: bias {g3(b[c])} / ({g3(x)} * {g3(wc)}) = "
            f"{g3(b[c] / (x * wc))} "
            f"> 2^31-1 and is clipped; raise the weight scale to at least |bias| / ({g3(x)} * (2^31-1)) = "
            f"{g3(abs(b[c]) / (x * INT32_MAX))} and quantize the weights again")


def _int32_bias(view, body, node, fx, fw, fb):
    if fb.in_type(0) != "int32" or not fb.present_at(0):
        return None
    bias = constant_array(view, body, fb.inputs[0])
    if bias is None or bias.size == 0 or bias.dtype.kind not in "iu":
        return None
    b = bias.astype(np.int64).reshape(-1)
    name = node.input[2]
    clipped = (b >= INT32_MAX) | (b <= INT32_MIN)
    if clipped.any():
        c = int(np.argmax(clipped))
        more = int(clipped.sum()) - 1
        extra = f" (and {more} more)" if more else ""
        sb = scale_of(fb)
        at = f" at index {c}" if b.size > 1 else ""
        was = ""
        if sb is not None and sb.size in (1, b.size):
            s = float(sb.reshape(-1)[c if sb.size > 1 else 0])
            was = f" (it dequantizes to {g3(b[c] * s)}, the int32 limit x scale {g3(s)})"
        return (f"its int32 bias '{name}' holds {int(b[c])}{at}{extra}, the int32 limit{was}: the bias was "
                f"clipped when quantized at input scale x weight scale, so its true value is lost; raise the "
                f"weight scale until |bias| / (input scale x weight scale) fits in int32 and quantize again")
    reach = _products(view, body, node, fx, fw, b.size)
    if reach is None:
        return None
    k, qx, qw = reach
    products = k * qx * qw  # per output channel
    fits = products <= INT32_MAX
    total = np.abs(b) + products
    over = fits & (total > INT32_MAX)
    if not over.any():
        return None
    c = int(np.argmax(over))
    at = f" at index {c}" if b.size > 1 else ""
    return (f"its int32 bias '{name}' holds {int(b[c])}{at}, too near the int32 limit for the accumulator: "
            f"|{int(b[c])}| + {k} x {qx} x {int(qw[c])} = {int(total[c])} > 2^31-1 = {INT32_MAX} (K x "
            f"max |x_q - x_zp| x max |w_q - w_zp|); raise the weight scale so the bias needs fewer int32 "
            f"steps and quantize again")


def _products(view, body, node, fx, fw, channels: int):
    """(K, max |x_q - x_zp|, max |w_q - w_zp| per output channel) of the node's
    accumulator, None when not known."""
    wq = constant_array(view, body, fw.inputs[0]) if fw.present_at(0) else None
    zx, zw = zero_point_of(fx), zero_point_of(fw)
    if wq is None or wq.dtype.kind not in "iu" or zx is None or zw is None or zx.size != 1:
        return None
    qx = farthest(fx.in_type(0), int(np.asarray(zx).reshape(-1)[0]))
    if qx is None:
        return None
    axis = _channel_axis(node)
    if wq.ndim < 2 or wq.shape[axis] != channels:
        return None
    if node.op_type == "ConvTranspose" and _attr(node, "group", 1) != 1:
        return None
    rows = by_channel(wq.astype(np.int64), axis)
    zw = np.asarray(zw, np.int64).reshape(-1)
    if zw.size not in (1, channels):
        return None
    qw = np.abs(rows - zw.reshape(-1, 1)).max(axis=1)
    if node.op_type == "ConvTranspose":
        k = wq.shape[0] * int(np.prod(wq.shape[2:], dtype=np.int64))
    else:
        k = rows.shape[1]
    return int(k), int(qx), qw
