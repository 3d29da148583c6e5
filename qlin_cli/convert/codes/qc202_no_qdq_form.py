"""QC202 no-qdq-form, refused by the format pass (convert/passes/format.py)."""

from __future__ import annotations

from ...code import Code


class NoQdqForm(Code):
    """
    ## What it checks
    That each QOperator node `--to-format qdq` rewrites has a QDQ form at the target
    opset: a DequantizeLinear for each quantized input and for an int32 bias, the float
    op, a QuantizeLinear for the output.

    ## Why is this bad?
    The QDQ form must be a valid model at the target opset. DequantizeLinear-10's page:
    "'x_scale' ... It's a scalar, which means a per-tensor/layer quantization"; per-axis
    scales come with DequantizeLinear-13 ("axis ... for per-axis quantization"). The
    float op must read the tensor as the QOperator node does: com.microsoft QLinearConv
    with `channels_last=1` reads NHWC, Conv reads NCHW; QLinearSoftmax's `opset`
    attribute says how its axis is read ("for onnx v.13+, or the dimension coerced to
    NxD Matrix for onnx v.12-"), which Softmax at another opset reads otherwise.

    ## Example
    ```
    QLinearConv with a per-channel w_scale, `--to-format qdq` at opset 11
    ```

    ## Fix
    The reason names what is missing: add `--to-opset 13` for per-channel scales, or
    rewrite the node by hand (a Transpose around a channels-last node).
    """

    code = "QC202"
    name = "no-qdq-form"
    summary = "A QOperator node has no QDQ form at the target opset."
