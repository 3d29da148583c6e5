"""QT101 opset-too-new. The targets that report it decide when, each in its own module
(targets/<runtime>.py); docs/targets.md lists which."""

from __future__ import annotations

from ...code import Code


class OpsetTooNew(Code):
    """
    ## What it checks
    That the ai.onnx opset the model imports is one the target loads.

    ## Why is this bad?
    Runtimes refuse a model whose opset is newer than the one they were built for,
    before looking at a single node: onnxruntime 1.31 stops at opset 26 ("Opset 27 is
    under development and support for this is limited"), TensorRT 10 at 24.

    ## Example
    ```
    opset_import: [{domain: "", version: 28}]     # onnxruntime: at most 26
    ```

    ## Fix
    `qlin convert --target NAME` moves every node to the newest opset the target
    loads and proves each rewritten Q/DQ node; nodes that need the newer opset (a
    float6 output needs QuantizeLinear-28) are refused with the reason.
    """

    code = "QT101"
    name = "opset-too-new"
    summary = "The model's ai.onnx opset is newer than the target loads."
