"""QT404 missing-axis-read-as-axis-1: the logic is here, each target's fact is its
``missing_axis`` (the release's missing-axis probes); docs/targets.md lists which targets
report it."""

from __future__ import annotations

from ...code import Code
from ...severity import WARNING


class MissingAxisReadAsAxis1(Code):
    """
    ## What it checks
    com.microsoft QuantizeLinear / DequantizeLinear nodes with a 1-D scale of more than
    one element and no `axis`.

    ## Why is this bad?
    The com.microsoft QuantizeLinear page: axis "is optional. If it's not specified, it
    means per-tensor quantization and input 'x_scale' and 'x_zero_point' must be scalars"
    (qlin reports QL404). A runtime that reads a 1-D scale along axis 1, as ai.onnx does,
    runs the model, and it means something the spec does not define. Measured per release
    by missing-axis probes (tools/probe_quantize.py).

    ## Example
    ```
    com.microsoft QuantizeLinear(x [2, 3], y_scale [3])      # no axis
    ```

    ## Fix
    State `axis` (1 is what onnxruntime uses).
    """

    code = "QT404"
    name = "missing-axis-read-as-axis-1"
    severity = WARNING
    summary = "The target reads a 1-D scale without axis as per-axis along axis 1."

    @staticmethod
    def check(target, site):
        from ... import schema

        f = site.facts
        if f.domain != schema.MICROSOFT or not schema.is_linear(f.spec) or f.has("axis"):
            return
        shape = f.scale_shape
        if shape is None or len(shape) != 1 or (shape[0] or 0) < 2:
            return
        axis = target.missing_axis(site)
        if axis is not None:
            yield target.finding(
                "QT404",
                f"a 1-D scale without axis is read as per-axis along axis {axis} "
                "(the com.microsoft schema says it must be a scalar)",
                fix="set axis explicitly",
            )
