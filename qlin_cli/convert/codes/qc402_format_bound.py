"""QC402 format-bound, refused by the prove pass (convert/passes/prove.py)."""

from __future__ import annotations

from ...code import Code


class FormatBound(Code):
    """
    ## What it checks
    That the QDQ form of a QOperator node computes what the node computes within the
    bound the user allows (`--tolerance N`, in quantization steps of the output; 0 by
    default), measured on random and edge inputs in onnxruntime and onnx.reference
    (convert/formats/measure.py); and that it could be measured at all.

    ## Why is this bad?
    The two forms compute differently by their pages. QLinearConv-10: "Each input or
    output and its related zero point must have same type", the convolution taken on the
    zero-point-shifted integers and the result requantized once with x_scale * w_scale /
    y_scale; the QDQ form's Conv computes in float and QuantizeLinear rounds "(x /
    y_scale) + y_zero_point" there. The results can differ by a step where a value
    falls near a rounding tie. qlin writes such a rewrite only when the user allows the
    difference it measured, and never calls it proven.

    ## Example
    ```
    QLinearConv -> DequantizeLinear, Conv, QuantizeLinear: 3 of 4,096 outputs differ by 1 step
    ```

    ## Fix
    Allow the measured bound with `--tolerance N` (the reason gives N), or keep the
    node as it is. A node that cannot be measured (an input of unknown shape, no
    onnxruntime for a com.microsoft node) says why.
    """

    code = "QC402"
    name = "format-bound"
    summary = "The QDQ form of a QOperator node differs beyond --tolerance, or cannot be measured."
