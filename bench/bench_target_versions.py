"""Each measured runtime version's profile against that real release.

    python bench/bench_target_versions.py [onnxruntime|openvino [VERSION ...]]

Models: the Q/DQ matrix of tests/test_targets_matrix.py (its fast subset; QLIN_MATRIX=full,
as `make bench` sets it, for every case) and the real quantizer outputs of fixtures/corpus.py (onnxruntime's
quantize_static QDQ and QOperator, quantize_dynamic, MatMul n-bits), and the producer shapes of
fixtures/producer_shapes.py (ModelOpt, AIMET, torch QAT: float8 and 16-bit chains, float16
com.microsoft blocks, blocked int4 weights). For each version (default:
every measured one): install it in a throwaway venv, load and run every model there
(tools/probe_runner.py: default options, CPU) and compare with what `qlin check --target
RUNTIME@VERSION` predicts (an error means: does not run). One line per version and model set:
agreement, "qlin says it runs, it does not", "qlin says refused, it runs".
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "fixtures"), str(ROOT / "tools")]


def _matrix(folder: Path) -> dict[str, str]:
    """Write the matrix models; {id: model set}."""
    import test_targets_matrix as tm
    from probe_models import stored

    cases = tm.matrix() if os.environ.get("QLIN_MATRIX") == "full" else tm.fast_subset(tm.matrix())
    out = {}
    for i, case in enumerate(cases):
        model, feeds = tm.build(case)
        if any(d.severity == "error" for d in tm.check_model(model, "", ignore=tm.VALIDITY)):
            continue
        _write(folder, f"m{i}", model, {k: stored(v, tm.input_types(case)[k]) for k, v in feeds.items()})
        out[f"m{i}"] = "matrix"
    return out


def _corpus(folder: Path) -> dict[str, str]:
    """Write the quantizer outputs that build here; {id: model set}."""
    import corpus
    import onnx

    out = {}
    for name, path in corpus.build(folder / "corpus").items():
        _write(folder, f"c_{name}", onnx.load(path), corpus.sample_feeds(corpus.BY_NAME[name].model, 0))
        out[f"c_{name}"] = "quantizers"
    return out


def _producers(folder: Path) -> dict[str, str]:
    """Write the producer shapes; {id: model set}."""
    import producer_shapes

    out = {}
    for name, model, feeds in producer_shapes.shapes():
        _write(folder, f"p_{name}", model, feeds)
        out[f"p_{name}"] = "producers"
    return out


def _write(folder: Path, pid: str, model, feeds: dict) -> None:
    import onnx

    onnx.save(model, folder / f"{pid}.onnx")
    np.savez(folder / f"{pid}.npz", **feeds)


def _measure(runtime: str, version: str, folder: Path) -> dict:
    env = folder / f"venv-{version}"
    venv.EnvBuilder(with_pip=True).create(env)
    py = str(env / "bin" / "python")
    subprocess.run([py, "-m", "pip", "install", "-q", "--disable-pip-version-check", f"{runtime}=={version}"],
                   check=True, capture_output=True)
    import shutil

    import probe_runner

    try:
        return probe_runner.run_all(py, runtime, folder)
    finally:
        shutil.rmtree(env, ignore_errors=True)  # a release's venv is a few hundred MB


def main() -> None:
    """RUNTIME [VERSION ...]; without arguments (`make bench`) both runtimes, every release
    measured (about two minutes a release)."""
    from qlin_cli.targets import versions

    if len(sys.argv) > 1:
        jobs = [(sys.argv[1], sys.argv[2:] or versions.known(sys.argv[1]))]
    else:
        jobs = [(rt, versions.known(rt)) for rt in ("onnxruntime", "openvino")]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        sets = _write_sets(folder)
        for runtime, wanted in jobs:
            for version in wanted:
                _compare(runtime, version, folder, sets)


def _write_sets(folder: Path) -> dict[str, str]:
    """Write the models of every set (QLIN_SETS: only those named) and cases.json."""
    import onnx

    sets = {**_matrix(folder), **_corpus(folder), **_producers(folder)}
    if os.environ.get("QLIN_SETS"):  # e.g. QLIN_SETS=producers
        keep = set(os.environ["QLIN_SETS"].split(","))
        sets = {k: v for k, v in sets.items() if v in keep}
    cases = {}
    for pid in sets:
        inputs = onnx.load(folder / f"{pid}.onnx").graph.input
        cases[pid] = {vi.name: vi.type.tensor_type.elem_type for vi in inputs}
    (folder / "cases.json").write_text(json.dumps(cases))
    for name in sorted(set(sets.values())):
        print(f"{name}: {sum(1 for s in sets.values() if s == name)} models", flush=True)
    return sets


def _compare(runtime: str, version: str, folder: Path, sets: dict[str, str]) -> None:
    """Run every model in the release and print the agreement per model set."""
    import onnx

    from qlin_cli.targets import predict

    real = _measure(runtime, version, folder)
    tally: dict[str, list[int]] = {}
    for pid, kind in sets.items():
        model = onnx.load(folder / f"{pid}.onnx")
        predicted = not any(f.severity == "error" for f in
                            predict.findings(model, str(folder), [f"{runtime}@{version}"]))
        runs = real.get(pid) == "ok"
        t = tally.setdefault(kind, [0, 0, 0, 0])
        t[0] += 1
        t[1] += predicted == runs
        t[2] += predicted and not runs
        t[3] += runs and not predicted
        if predicted != runs and os.environ.get("QLIN_VERBOSE"):
            print(f"   {pid}: predicted {'runs' if predicted else 'refused'}, real {real.get(pid)}")
    for kind, (n, agree, said_runs, said_refused) in sorted(tally.items()):
        print(f"{runtime} {version} {kind}: {agree}/{n} agree, {said_runs} said to run but fail, "
              f"{said_refused} said refused but run", flush=True)


if __name__ == "__main__":
    main()
