"""QT402 precision-ignored: the logic is here, each target's fact is its ``divides_in``
(targets/<runtime>.py); docs/targets.md lists which targets report it."""

from __future__ import annotations

from ...code import Code
from ...severity import WARNING


class PrecisionIgnored(Code):
    """
    ## What it checks
    QuantizeLinear-23+ nodes with a `precision` attribute the target does not honour.

    ## Why is this bad?
    QuantizeLinear's page: precision is "The precision of the division operation between
    x and y_scale. If not provided, it will be the same as the type of y_scale." onnxruntime 1.31 and
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

    @staticmethod
    def check(target, f):
        from .. import nodes

        if target.divides_in is None or nodes.kind(f) != nodes.QUANTIZE:
            return
        asked = nodes.precision_type(f)
        if asked is None:
            return
        if target.divides_in == "float32":
            done_in, shown = "float", "float32"
        else:  # "scale"
            done_in = nodes.scale_type(f)
            shown = f"{done_in} (the scale's type)"
        if done_in is not None and asked != done_in:
            yield target.finding(
                "QT402",
                f"precision={asked} is ignored: the division is done in {shown}",
                fix="drop precision, or cast x and the scale first",
            )
