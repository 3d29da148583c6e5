"""Every conversion of the producer shapes, held against the runtimes installed here.

    python bench/bench_producer_convert.py

For each model of fixtures/producer_shapes.py and each target (ai.onnx opsets 19, 21, 23, 25;
its own domain, ai.onnx, com.microsoft), `qlin convert` runs through the API; every model it
writes changed is run beside its source in onnxruntime (default session options) and in openvino
(compile on CPU, one inference), on the same inputs. A conversion is silent when the converted
model computes other values than the source on a runtime that runs both and the report has no
warning for that runtime, or when it fails where the source runs and the report does not say
that runtime refuses it. One line per runtime: pairs run, identical, different with a warning,
different silently, converted models that fail where the source runs (said or silent).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "fixtures"), str(ROOT)]

OPSETS = (19, 21, 23, 25)
DOMAINS = (None, "ai.onnx", "com.microsoft")


def _ort(model_bytes: bytes, feeds: dict):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 4
    try:
        session = ort.InferenceSession(model_bytes, options, providers=["CPUExecutionProvider"])
        return session.run(None, feeds)
    except Exception:
        return None


def _openvino(model_bytes: bytes, feeds: dict):
    try:
        import openvino as ov
    except ImportError:
        return None
    try:
        core = ov.Core()
        compiled = core.compile_model(core.read_model(model_bytes, b""), "CPU")
        result = compiled(feeds)
        return [np.asarray(result[o]) for o in compiled.outputs]
    except Exception:
        return None


RUNTIMES = {"onnxruntime": _ort, "openvino": _openvino}


def _same(a, b) -> bool:
    return all(np.array_equal(x, y, equal_nan=True) for x, y in zip(a, b, strict=True))


def main() -> None:
    import onnx
    import producer_shapes

    import qlin
    from qlin_cli.errors import QlinError

    tally = {rt: {"pairs": 0, "same": 0, "warned": 0, "silent": 0, "fails": 0, "fails said": 0}
             for rt in RUNTIMES}
    written = refused = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, model, feeds in producer_shapes.shapes():
            src = Path(tmp) / f"{name}.onnx"
            onnx.save(model, src)
            source = {rt: run(model.SerializeToString(), feeds) for rt, run in RUNTIMES.items()}
            for opset in OPSETS:
                for domain in DOMAINS:
                    out = Path(tmp) / f"{name}.{opset}.{domain}.onnx"
                    try:
                        result = qlin.convert(src, to_opset=opset, to_domain=domain, output=out)
                    except QlinError:
                        refused += 1
                        continue
                    if result.model is None:
                        refused += 1
                        continue
                    written += 1
                    warned = {w.target for w in getattr(result, "warnings", ())}
                    converted = result.model.SerializeToString()
                    for rt, run in RUNTIMES.items():
                        if source[rt] is None:
                            continue
                        t = tally[rt]
                        got = run(converted, feeds)
                        if got is None:
                            said = any(w.target == rt and w.severity == "error" for w in result.warnings)
                            t["fails said" if said else "fails"] += 1
                            if not said:
                                print(f"  {rt}: {name} -> opset {opset} {domain or ''} fails silently")
                            continue
                        t["pairs"] += 1
                        if _same(source[rt], got):
                            t["same"] += 1
                        elif rt in warned:
                            t["warned"] += 1
                        else:
                            t["silent"] += 1
                            print(f"  {rt}: {name} -> opset {opset} {domain or ''} differs without a warning")
    print(f"conversions written: {written}, refused: {refused}")
    for rt, t in tally.items():
        print(f"{rt}: {t['pairs']} pairs run, {t['same']} identical, {t['warned']} different with a warning, "
              f"{t['silent']} different silently; converted models that fail where the source runs: "
              f"{t['fails said']} with the report saying so, {t['fails']} silently")


if __name__ == "__main__":
    main()
