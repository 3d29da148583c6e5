"""QT210 not-confirmed. Reported by `qlin check --target T --confirm` (targets/confirm.py)."""

from __future__ import annotations

from ...code import Code
from ...severity import INFO


class NotConfirmed(Code):
    """
    ## What it checks
    With `--confirm`, whether the target's prediction could be held against the runtime
    itself: the release the target judges must be the onnxruntime or openvino installed
    in qlin's Python (onnxruntime's or openvino's `__version__` equal to it), the model's
    inputs must be declared tensors whose values qlin can make, and the run must end within
    the time given (120 s).

    ## Why is this bad?
    It is not: an info, saying that the target's findings on the model rest on qlin's
    prediction alone, and why (the release not installed, or another release installed;
    a range of releases, or a runtime qlin does not run; inputs that cannot be made; a
    run that did not end in time).

    ## Example
    ```
    model.onnx:main:model: QT210 info [model] onnxruntime 1.20.1: not confirmed: the release
    judged is onnxruntime 1.20.1, the one installed here 1.31.1
    ```

    ## Fix
    Install the release the target judges (`pip install onnxruntime==1.20.1`) and run the
    check there, or name the release installed (`--target onnxruntime@1.31.1`).
    """

    code = "QT210"
    name = "not-confirmed"
    severity = INFO
    summary = "The prediction was not held against the runtime: its release is not installed here, or so."
