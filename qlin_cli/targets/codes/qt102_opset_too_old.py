"""QT102 opset-too-old. The targets that report it decide when, each in its own module
(targets/<runtime>.py); docs/targets.md lists which."""

from __future__ import annotations

from ...code import Code


class OpsetTooOld(Code):
    """
    ## What it checks
    That the ai.onnx opset the model imports is not older than the target supports.

    ## Why is this bad?
    TensorRT's ONNX parser supports opset 9 and later; older models are not parsed.

    ## Example
    ```
    opset_import: [{domain: "", version: 8}]
    ```

    ## Fix
    `qlin convert --target NAME` raises the opset.
    """

    code = "QT102"
    name = "opset-too-old"
    summary = "The model's ai.onnx opset is older than the target supports."
