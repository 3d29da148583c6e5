"""QT209 confirm-ran. Reported by `qlin check --target T --confirm` (targets/confirm.py)
where the release T judges is installed here."""

from __future__ import annotations

from ...code import Code
from ...severity import WARNING


class ConfirmRan(Code):
    """
    ## What it checks
    With `--confirm`, whether the release a target judges, when it is the one installed
    here, runs a model qlin predicted it refuses (an error finding of the target): the
    model is loaded, compiled and run once on generated inputs, as for QT208.

    ## Why is this bad?
    The prediction is wrong for this model: the probes of its nodes' kinds failed where
    the model itself runs (a rewrite of the whole graph removes the node the probes fail
    on, say). The target's errors on the model should not be believed, and a model that
    runs may still compute something else than the spec: the run checks only that it
    runs, not its outputs.

    ## Example
    ```
    model.onnx:main:model: QT209 warning [model] onnxruntime 1.31.1: installed here, it
    loaded, compiled and ran the model on generated inputs where qlin predicted 1 error
    (QT205): the prediction is wrong for this model: ...
    ```

    ## Fix
    Compare the model's outputs with another runtime's (or qlin's evaluator for its Q/DQ
    nodes), and report the model to qlin, so that its probes take it in.
    """

    code = "QT209"
    name = "confirm-ran"
    severity = WARNING
    summary = "The installed release judged ran a model qlin predicted it refuses; the prediction is wrong."
