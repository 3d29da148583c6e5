"""QT100 version-not-measured. The targets that report it decide when, each in its own module
(targets/<runtime>.py); docs/targets.md lists which."""

from __future__ import annotations

from ...code import Code
from ...severity import WARNING


class VersionNotMeasured(Code):
    """
    ## What it checks
    That the runtime version a target names (`onnxruntime@1.33`) is one qlin measured.

    ## Why is this bad?
    Every fact of a versioned target comes from that release, installed and probed
    (tools/gen_target_data.py). A newer release is judged as the newest measured one,
    which may refuse what the newer one runs, or the other way round.

    ## Example
    ```
    qlin check --target onnxruntime@1.40 model.onnx
    ```

    ## Fix
    Measure the release: `make target-data RUNTIME=onnxruntime VERSION=1.40.0`.
    """

    code = "QT100"
    name = "version-not-measured"
    severity = WARNING
    summary = "The runtime version is newer than the versions qlin measured; judged as the newest."
