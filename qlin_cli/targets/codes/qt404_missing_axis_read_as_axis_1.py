"""QT404 missing-axis-read-as-axis-1: the logic is here, each target's fact is its
``vendor_missing_axis``; docs/targets.md lists which targets report it."""

from __future__ import annotations

from ...code import Code
from ...severity import WARNING


class MissingAxisReadAsAxis1(Code):
    """
    ## What it checks
    com.microsoft QuantizeLinear / DequantizeLinear nodes with a 1-D scale of more than
    one element and no `axis`.

    ## Why is this bad?
    The com.microsoft schema says that without `axis` the scale must be a scalar
    (qlin reports QL404); onnxruntime reads such a node as per-axis along axis 1,
    as ai.onnx does (measured), so the model runs and means something the spec does
    not define.

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
        axis = target.vendor_missing_axis
        if axis is None or f.domain != schema.MICROSOFT or not schema.is_linear(f.spec) or f.has("axis"):
            return
        shape = f.scale_shape
        if shape is not None and len(shape) == 1 and (shape[0] or 0) > 1:
            yield target.finding(
                "QT404",
                f"a 1-D scale without axis is read as per-axis along axis {axis} "
                "(the com.microsoft schema says it must be a scalar)",
                fix="set axis explicitly",
            )
