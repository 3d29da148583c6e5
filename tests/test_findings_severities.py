"""predict.findings_in with ``severities``: the findings of those severities, each as without
it (convert's report reads only errors and warnings, and no longer places every info)."""

from __future__ import annotations

import glob
import os

from paths import MODELS

from qlin_cli.model.analysis import analyze
from qlin_cli.model.load import load_model_bytes
from qlin_cli.targets import predict

FIXTURES = sorted(glob.glob(os.path.join(MODELS, "**", "*.onnx"), recursive=True))


def test_a_severity_filter_keeps_each_finding_as_it_was():
    seen = set()
    for path in FIXTURES:
        model, _ = load_model_bytes(path)
        a = analyze(model, os.path.dirname(path))
        for target in ("onnxruntime", "openvino", "tensorrt-10"):
            whole = predict.findings_in(a, [target])
            for kept in (("error", "warning"), ("info",), ("error",)):
                assert predict.findings_in(a, [target], severities=kept) == [
                    f for f in whole if f.severity in kept], (path, target, kept)
            seen.update(f.severity for f in whole)
    assert seen >= {"error", "warning", "info"}  # (each severity was there to be filtered)
