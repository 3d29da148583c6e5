"""Models in the shapes producers qlin was not tuned on write (fixtures/producers.py):
ModelOpt / AIMET float8, qonnx / brevitas QCDQ, float16 scales, torch QAT BatchNormalization,
simplifier output, a Constant feeding an op. Each is valid (onnx.checker, full); qlin check
finds nothing wrong with it, and qlin's onnxruntime profile says what onnxruntime does with
it, loaded and run with its default options."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from producers import BUILDERS

from qlin_cli.check.engine import check_file

# Where the onnxruntime profile still differs from onnxruntime (measured with 1.31.1, default
# graph optimizations): its fusions hand float8 Q/DQ around a Conv to QLinearConv, which has
# no float8 kernel, so the model fails to load; the profile does not model the fusions yet.
KNOWN_GAPS: set[str] = set()  # fp8_conv: modelled (onnxruntime.FUSED)


def _runs(path: str) -> bool:
    try:
        s = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        feeds = {}
        for i in s.get_inputs():
            dt = np.float16 if i.type == "tensor(float16)" else np.float32
            feeds[i.name] = np.random.default_rng(0).normal(size=i.shape).astype(dt)
        s.run(None, feeds)
        return True
    except Exception:
        return False


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    folder = tmp_path_factory.mktemp("producers")
    out = {}
    for name, build in BUILDERS.items():
        path = str(folder / f"{name}.onnx")
        onnx.save(build(), path)
        out[name] = path
    return out


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_valid_and_clean(saved, name):
    onnx.checker.check_model(saved[name], full_check=True)
    r = check_file(saved[name])
    assert r.error is None
    assert [d.code for d in r.diagnostics if d.severity != "info"] == []


@pytest.mark.parametrize("name", [
    pytest.param(n, marks=pytest.mark.xfail(strict=True, reason="onnxruntime's float8 fusions: not modelled"))
    if n in KNOWN_GAPS else n for n in sorted(BUILDERS)])
def test_targets_agree_with_onnxruntime(saved, name):
    r = check_file(saved[name], targets=["onnxruntime"])
    predicted = not any(d.severity == "error" for d in r.diagnostics)
    assert predicted == _runs(saved[name]), [d.message for d in r.diagnostics]
