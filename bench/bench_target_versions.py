"""Each measured onnxruntime version's profile against that real release, on the Q/DQ model
matrix of tests/test_targets_matrix.py (its fast subset; QLIN_MATRIX=full for every case).

For each version in qlin_cli/targets/data: install it in a throwaway venv (pip), load and run
every model there with default SessionOptions, and compare with what
`qlin check --target onnxruntime@VERSION` predicts (an error means: does not run). Prints one
line per version: agreement, "qlin says it runs, it does not", "qlin says refused, it runs".
Usage: python bench/bench_target_versions.py [VERSION ...]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "fixtures")]

RUNNER = r"""
import json, sys, numpy as np, onnxruntime as ort
import ml_dtypes  # noqa: F401  (feeds of its types)
folder = sys.argv[1]
out = {}
for case in json.load(open(folder + "/cases.json")):
    o = ort.SessionOptions(); o.log_severity_level = 4
    try:
        s = ort.InferenceSession(folder + "/" + case + ".onnx", o, providers=["CPUExecutionProvider"])
    except Exception as e:
        out[case] = "load: " + str(e).splitlines()[0][:200]; continue
    try:
        feeds = dict(np.load(folder + "/" + case + ".npz", allow_pickle=True))
        vals = {}
        for k, v in feeds.items():
            if v.dtype.kind == "V" or str(v.dtype) not in ("float32", "float16", "float64", "int8", "uint8",
                                                          "int16", "uint16", "int32", "int64", "bool"):
                vals[k] = ort.OrtValue.ortvalue_from_numpy(v)
            else:
                vals[k] = ort.OrtValue.ortvalue_from_numpy(np.ascontiguousarray(v))
        s.run_with_ort_values(None, vals)
        out[case] = "ok"
    except Exception as e:
        out[case] = "run: " + str(e).splitlines()[0][:200]
print(json.dumps(out))
"""


def _cases():
    import test_targets_matrix as tm

    cases = tm.matrix()
    return cases if os.environ.get("QLIN_MATRIX") == "full" else tm.fast_subset(cases)


def _measure(version: str, folder: str) -> dict:
    env = Path(folder) / f"venv-{version}"
    venv.EnvBuilder(with_pip=True).create(env)
    py = str(env / "bin" / "python")
    subprocess.run([py, "-m", "pip", "install", "-q", "--disable-pip-version-check",
                    f"onnxruntime=={version}", "ml_dtypes"], check=True, capture_output=True)
    runner = Path(folder) / "runner.py"
    runner.write_text(RUNNER)
    done = subprocess.run([py, str(runner), folder], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    import numpy as np
    import onnx
    import test_targets_matrix as tm

    from qlin_cli.targets import predict, versions

    wanted = sys.argv[1:] or versions.known()
    with tempfile.TemporaryDirectory() as folder:
        ids = []
        models = {}
        for case in _cases():
            model, feeds = tm.build(case)
            if any(d.severity == "error" for d in tm.check_model(model, "", ignore=tm.VALIDITY)):
                continue
            cid = f"c{len(ids)}"
            ids.append(cid)
            models[cid] = model
            onnx.save(model, f"{folder}/{cid}.onnx")
            np.savez(f"{folder}/{cid}.npz", **{k: np.asarray(v.astype(tm.dtypes.BY_NAME[case_type].numpy))
                                               for k, v, case_type in _typed(feeds, model)})
        Path(folder, "cases.json").write_text(json.dumps(ids))
        kind = "full" if os.environ.get("QLIN_MATRIX") else "fast subset"
        print(f"{len(ids)} models of the matrix ({kind})")
        for version in wanted:
            real = _measure(version, folder)
            agree = says_runs_fails = says_refused_runs = 0
            for cid in ids:
                predicted_runs = not any(f.severity == "error" for f in
                                         predict.findings(models[cid], "", [f"onnxruntime@{version}"]))
                runs = real.get(cid) == "ok"
                agree += predicted_runs == runs
                says_runs_fails += predicted_runs and not runs
                says_refused_runs += runs and not predicted_runs
            print(f"onnxruntime {version}: {agree}/{len(ids)} agree, {says_runs_fails} said to run but fail, "
                  f"{says_refused_runs} said refused but run", flush=True)


def _typed(feeds: dict, model):
    from qlin_cli.schema import dtypes

    types = {vi.name: dtypes.name_of(vi.type.tensor_type.elem_type) for vi in model.graph.input}
    return [(k, v, types[k]) for k, v in feeds.items()]


if __name__ == "__main__":
    main()
