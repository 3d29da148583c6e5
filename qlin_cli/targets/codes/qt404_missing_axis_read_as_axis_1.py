"""QT404 missing-axis-read-as-axis-1. The targets that report it decide when, each in its own module
(targets/<runtime>.py); docs/targets.md lists which."""

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
