"""QT402 precision-ignored. The targets that report it decide when, each in its own module
(targets/<runtime>.py); docs/targets.md lists which."""

from __future__ import annotations

from ...code import Code
from ...severity import WARNING


class PrecisionIgnored(Code):
    """
    ## What it checks
    QuantizeLinear-23+ nodes with a `precision` attribute the target does not honour.

    ## Why is this bad?
    `precision` names the type the division is done in. onnxruntime 1.31 and
    openvino 2026.4 ignore it (measured: float16 and bfloat16 precision give the
    float32 result; onnxruntime does not even report an invalid type); TensorRT's
    parser warns that it "does not support setting quantization precision" and uses
    the scale's type.

    ## Example
    ```
    QuantizeLinear-23(x: float, y_scale: float, precision=FLOAT16)
    ```

    ## Fix
    Drop `precision` if the float32 result is what you want; otherwise quantize in
    the wanted type explicitly (cast x and the scale first).
    """

    code = "QT402"
    name = "precision-ignored"
    severity = WARNING
    summary = "The target ignores the precision attribute."
