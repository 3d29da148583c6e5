"""QC403 symmetric-bound, refused by the symmetric pass (convert/passes/symmetric.py)."""

from __future__ import annotations

from ...code import Code


class SymmetricBound(Code):
    """
    ## What it checks
    That an 8-bit Q/DQ tensor requantized to int8 with zero point 0 (`--to-symmetric`,
    and `convert --target` for a runtime that quantizes symmetrically only) computes what
    the source computes within the bound the user allows (`--tolerance N`, in steps of
    the source's scale; 0 by default), measured in qlin's evaluator and onnx.reference on
    every code boundary and rounding tie of both grids and on random values (constant
    weights: on every weight).

    ## Why is this bad?
    QuantizeLinear: "y = saturate((x / y_scale) + y_zero_point)"; DequantizeLinear: "y =
    (x - x_zero_point) * x_scale". A tensor with scale s and zero point z holds s * (q -
    z); with zero point 0 it holds s' * q, and keeping the source's whole range needs
    s' = s * max((z - lo) / 128, (hi - z) / 127), up to about twice s. The codes round on
    that wider grid, so values differ by up to about 1.5 steps of s: not the same values,
    so qlin writes the tensor only when the user allows the difference it measured.

    ## Example
    ```
    uint8 zero point 0 -> int8 zero point 0, scale x2.01: within 2 steps
    (1,413 of 1,556 measured values differ)
    ```

    ## Fix
    Allow the measured bound with `--tolerance N` (the reason gives N), or requantize
    the model with symmetric activations (onnxruntime's quantizer:
    `extra_options={"ActivationSymmetric": True}` with int8 activations).
    """

    code = "QC403"
    name = "symmetric-bound"
    summary = "Requantizing an 8-bit tensor with zero point 0 differs beyond --tolerance."
