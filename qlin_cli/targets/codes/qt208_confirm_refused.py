"""QT208 confirm-refused. Reported by `qlin check --target T --confirm` (targets/confirm.py)
where the release T judges is installed here."""

from __future__ import annotations

from ...code import Code


class ConfirmRefused(Code):
    """
    ## What it checks
    With `--confirm`, that the release a target judges, when it is the one installed here,
    loads, compiles and runs the model once on generated inputs (each input's shape from
    the model, a symbolic dimension as 1) where qlin predicted no error for the target:
    onnxruntime on its CPU provider, openvino on CPU, in a subprocess a crash of the
    runtime cannot take qlin down with. The message quotes the runtime's own error and the
    stage it failed at (load, compile, run), or says that it crashed.

    ## Why is this bad?
    qlin predicts from probes of single nodes and of the few chains a runtime rewrites;
    a runtime also fails on what a whole graph makes of them. openvino 2026.4.1 was seen to
    fail `compile_model` on the default QDQ output of onnxruntime's `quantize_static` for a
    two-layer MLP ("Can't allocate registers for a snippet: not enough registers", issue 37;
    a CPU-dependent failure) where qlin predicted warnings only. The runtime's error is the
    fact; the prediction missed it.

    ## Example
    ```
    $ qlin check --target openvino --confirm reshape.onnx
    reshape.onnx:main:model: QT208 error [model] openvino 2026.4.1: installed here, fails at run
    where qlin predicted no error: [cpu]reshape: the shape of input data (1.6) conflicts with
    the reshape pattern (4.-1): ...
    ```

    ## Fix
    Read the runtime's error: a defect of the model (a shape that cannot be, as above) is
    fixed in the model; a runtime's limit needs another form of the graph or another release.
    Report a model whose error is the runtime's to qlin, so that a probe measures it.
    """

    code = "QT208"
    name = "confirm-refused"
    summary = "The release judged, installed here, failed to load, compile or run a model qlin said it runs."
