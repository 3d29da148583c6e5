import numpy as np

from .. import schema
from .base import WARNING, ModelRule, Violation
from .base_qdq import producer, scale_of, short_float

# ai.onnx ops whose input 2 is a bias added to input 0 (x) times input 1 (the weight).
BIAS_OPS = ("Conv", "ConvTranspose", "Gemm")


class BiasScale(ModelRule):
    """
    ## What it checks
    For every int32 DequantizeLinear that feeds the bias (input 2) of a Conv,
    ConvTranspose or Gemm whose input and weight come from DequantizeLinear nodes:
    that the bias scale equals input scale x weight scale (per output channel
    for per-channel weights), within the rounding of the scales' float type (a
    few units in the last place). Gemm nodes with alpha or beta other than 1
    are left out. A non-zero bias zero point is QL502's.

    ## Why is this bad?
    "Bias must be quantized using scale = x_scale * w_scale and zero_point = 0"
    (QLinearConv). Runtimes that fuse the pattern into an integer convolution
    add the int32 bias to the int32 accumulator as it is, assuming that scale:
    with any other scale the fused model adds a rescaled bias and gives other
    results than the model run as written.

    ## Example
    ```
    DequantizeLinear(x_q, 0.02) -> x;  DequantizeLinear(w_q, 0.005) -> w
    DequantizeLinear(b_q: int32, 0.001) -> b          # should be 0.0001
    Conv(x, w, b)
    ```

    ## Fix
    Quantize the bias again with scale input scale x weight scale and zero
    point 0.
    """

    code = "QL603"
    name = "bias-scale"
    severity = WARNING
    summary = "An int32 bias DequantizeLinear whose scale is not input scale x weight scale."

    def check_model(self, view):
        for body, _, node, fx, fw in biased_ops(view):
            found = producer(view, body, node.input[2], schema.LINEAR_DEQUANTIZE)
            if found is None:
                continue
            jb, fb = found
            if fb.in_type(0) != "int32":
                continue
            sx, sw, sb = scale_of(fx), scale_of(fw), scale_of(fb)
            if sx is None or sw is None or sb is None or sx.size != 1:
                continue
            bad = _mismatch(sx, sw, sb)
            if bad is None:
                continue
            got, want, at = bad
            where = f" at index {at}" if at is not None else ""
            yield Violation(
                f"its int32 bias '{node.input[2]}' is dequantized with scale {short_float(got)}{where}, "
                f"but input scale x weight scale is {short_float(want)} ('{node.input[0]}' x "
                f"'{node.input[1]}'): "
                f"quantize the bias with scale input scale x weight scale",
                at=view.node_site(body, jb))


def biased_ops(view):
    """(body, index, node, x's DequantizeLinear facts, w's) of every ai.onnx Conv,
    ConvTranspose and Gemm (alpha and beta 1) with a bias whose x and w a DequantizeLinear
    makes: the nodes whose bias should be x scale x w scale (QL603, QL605)."""
    for body in view.bodies:
        for i, (domain, op) in enumerate(body.kinds):
            if op not in BIAS_OPS or schema.normalize_domain(domain) != schema.AI_ONNX:
                continue
            node = body.nodes[i]
            if len(node.input) < 3 or not node.input[2] or not _unit_gemm(node):
                continue
            found = [producer(view, body, node.input[k], schema.LINEAR_DEQUANTIZE) for k in range(2)]
            if None not in found:
                yield body, i, node, found[0][1], found[1][1]


def _unit_gemm(node) -> bool:
    for a in node.attribute:
        if a.name in ("alpha", "beta") and a.f != 1.0:
            return False
    return True


def _mismatch(sx, sw, sb):
    """(stored, expected, index) of the first bias scale off input x weight, or None."""
    want = np.float64(sx.reshape(-1)[0]) * sw.astype(np.float64).reshape(-1)
    got = sb.astype(np.float64).reshape(-1)
    if got.size == 1 and want.size > 1:
        got = np.broadcast_to(got, want.shape)
    elif want.size == 1 and got.size > 1:
        want = np.broadcast_to(want, got.shape)
    if got.shape != want.shape:
        return np.float32(got[0]), np.float32(want[0]), None
    eps = np.finfo(sb.dtype).eps if sb.dtype.kind == "f" else np.finfo(np.float32).eps
    off = ~np.isclose(got, want, rtol=4 * float(eps), atol=0.0)
    if not off.any():
        return None
    k = int(np.argmax(off))
    return np.float32(got[k]), np.float32(want[k]), (k if got.size > 1 else None)
