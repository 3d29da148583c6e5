"""QT502 weight-not-dequantized. Reported by targets/tensorrt.py from the site's
``weight_cast`` (targets/weights.py); docs/targets.md lists which targets report it."""

from __future__ import annotations

from ...code import Code
from ...severity import WARNING


class WeightNotDequantized(Code):
    """
    ## What it checks
    That the weight of a Conv, ConvTranspose, MatMul or Gemm (input 1) which is stored as a
    quantized constant (int8, uint8, int4, float8 ...) is made float by a DequantizeLinear,
    not by a Cast and arithmetic written out by hand (Cast -> Sub -> Mul). qlin follows the
    weight back through Cast, Sub, Mul, Div and reshaping ops, at most six of them; a
    DequantizeLinear anywhere on the way, a float constant, or an activation ends the search
    without a finding.

    ## Why is this bad?
    TensorRT's developer guide, "Explicit Quantization", section "Quantized Weights"
    (docs.nvidia.com/deeplearning/tensorrt/latest/inference-library/quantized-types-explicit-quantization.html):
    "When using pre-quantized weights, an IDequantizeLayer is required between the weights
    and the linear operator that uses them." The ONNX parser makes an IDequantizeLayer of a
    DequantizeLinear only; a Cast and a Mul are ordinary layers, so the op is given float
    weights and is not a quantized linear operator. The model builds and its results are
    right: a warning, like every code of a runtime that runs an op in float where it could
    have run it in integers. Documented, not measured here (TensorRT needs an NVIDIA GPU).

    ## Example
    ```
    w: int8 initializer -> Cast(to=float) -> Mul(w_scale) -> Conv(x, .)
    ```

    ## Fix
    Replace the Cast and the arithmetic after it by one DequantizeLinear of the constant,
    with its scale (and zero point, 0 for TensorRT, see QT306).
    """

    code = "QT502"
    name = "weight-not-dequantized"
    severity = WARNING
    summary = "A weight stored quantized reaches its op without a DequantizeLinear: float weights."
