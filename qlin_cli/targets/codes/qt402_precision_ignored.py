"""QT402 precision-ignored: the logic is here, each target's fact is its ``division``
(the release's division probes, or documentation); docs/targets.md lists which targets
report it."""

from __future__ import annotations

from ...code import Code
from ...severity import WARNING
from . import QUANTIZE_ARITHMETIC


class PrecisionIgnored(Code):
    """
    ## What it checks
    QuantizeLinear-23+ nodes with a `precision` attribute the target does not honour.

    ## Why is this bad?
    QuantizeLinear's page: precision is "The precision of the division operation between
    x and y_scale. If not provided, it will be the same as the type of y_scale." Measured per
    release by division probes (tools/probe_quantize.py; `qlin targets --versions RUNTIME`):
    openvino and onnxruntime 1.24 to 1.31 divide in float32 whatever float16 or bfloat16
    precision asks, onnxruntime 1.24 to 1.29 divide float16 in float16 when precision asks
    for float, 1.32 does as asked; TensorRT's parser warns that it "does not support
    setting quantization precision" and uses the scale's type.

    ## Example
    ```
    QuantizeLinear-23(x: float, y_scale: float, precision=FLOAT16)
    ```

    ## Fix
    Drop `precision` if the result the target gives is what you want; otherwise quantize in
    the wanted type explicitly (cast x and the scale first).
    """

    code = "QT402"
    name = "precision-ignored"
    severity = WARNING
    judges = QUANTIZE_ARITHMETIC  # every target that probes a QuantizeLinear's arithmetic runs it
    summary = "The target ignores the precision attribute."

    @staticmethod
    def check(target, site):
        from .. import nodes

        f = site.facts
        done = target.division(site)  # None: as the page, or not known
        asked = None if done is None or nodes.kind(f) != nodes.QUANTIZE else nodes.precision_type(f)
        if asked is not None and done != asked:
            shown = "float32" if done == "float" else done
            if done == nodes.scale_type(f):
                shown += " (the scale's type)"
            yield target.finding(
                "QT402",
                f"precision={asked} is ignored: the division is done in {shown}",
                fix="drop precision, or cast x and the scale first",
            )
