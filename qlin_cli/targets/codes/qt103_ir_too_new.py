"""QT103 ir-too-new. The targets that report it decide when, each in its own module
(targets/<runtime>.py); docs/targets.md lists which."""

from __future__ import annotations

from ...code import Code


class IrTooNew(Code):
    """
    ## What it checks
    That the model's `ir_version` is one the target loads.

    ## Why is this bad?
    onnxruntime 1.31 refuses IR 14 ("Unsupported model IR version: 14, max supported
    IR version: 13") whatever the model contains. ai.onnx opset 28 and the float6
    types need IR 14.

    ## Example
    ```
    ir_version: 14
    ```

    ## Fix
    `qlin convert --target NAME` writes the lowest IR the converted model needs; it
    is refused when a type the model stores needs the newer IR.
    """

    code = "QT103"
    name = "ir-too-new"
    summary = "The model's IR version is newer than the target loads."
