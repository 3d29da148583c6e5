"""What bounds a format conversion's time from below, against `qlin check` of the same model.

bench_formats.py times each conversion whole. This bench times it again with parts of its
work left out, to show which parts alone already exceed issue 36's 2x (a diagnosis, never a
result anyone is given: the cut processes' outputs are thrown away):

* ``convert``: the conversion as `qlin convert ... --dry-run` runs it;
* ``no view``: without the measured runtimes' findings on the result, the report's list of
  nodes onnxruntime or openvino would compute otherwise (``convert_pipeline._differences``
  returns nothing);
* ``no proof``: without the format rewrites' measurements (``formats/measure.py``:
  onnxruntime and onnx.reference on random and edge inputs) and the weights' proofs
  (``formats/nbits_proof.py``): every case taken as exact;
* ``neither``: without both;
* ``start``: the process that imports what a conversion imports and reads nothing (``START``:
  the pipeline, the passes, the check engine and rules, the writer, the targets' predictions,
  onnxruntime).

Every variant runs as a whole process, interleaved with `qlin check --no-cache` in each round
(CPU time of the process, user + system: these machines are shared). The models are
bench_formats.py's, at QLIN_BENCH_SIZES (3000) nodes; QLIN_BENCH_ROUNDS (5) rounds;
QLIN_BENCH_MODELS (all four).
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bench_formats  # noqa: E402  (this folder's: the models and their flags)

VARIANTS = ("convert", "no view", "no proof", "neither", "start")
START = ("onnxruntime", "numpy.random", "qlin_cli.convert_pipeline", "qlin_cli.convert.passes",
         "qlin_cli.convert.run", "qlin_cli.convert.write", "qlin_cli.convert.result_types",
         "qlin_cli.check.engine", "qlin_cli.rules", "qlin_cli.targets.predict", "qlin_cli.model.analysis")


def _cut(variant: str) -> None:
    """Leave out what ``variant`` names (in this process only)."""
    import qlin_cli.convert_pipeline as pipeline
    from qlin_cli.convert.formats import fuse
    from qlin_cli.convert.formats.measure import Measured
    from qlin_cli.convert.passes import prove

    if variant in ("no view", "neither"):
        pipeline._differences = lambda a, after: []
    if variant in ("no proof", "neither"):
        def exact(cases, seed=0):
            return [Measured(0, 0, 1, ("none",)) for _ in cases]

        prove.measure_all = fuse.measure_all = exact
        prove.prove_all = lambda cases: [None] * len(cases)


def _child(variant: str, args: list[str]) -> None:
    """The process of one variant: ``args`` as `qlin` takes them, started as entry.run starts
    one (numpy's BLAS on one thread, the collector paused) before anything is cut."""
    from qlin_cli import entry, gc_pause

    entry.one_blas_thread()
    gc_pause.pause_for_start()
    if variant == "start":
        import importlib

        for name in START:
            importlib.import_module(name)
        return
    if variant != "convert":
        _cut(variant)
    sys.argv = ["qlin", *args]
    entry.run()


def _cpu(argv: list[str]) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, check=False, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    rounds = int(os.environ.get("QLIN_BENCH_ROUNDS", "5"))
    sizes = [int(s) for s in os.environ.get("QLIN_BENCH_SIZES", "3000").split(",")]
    names = os.environ.get("QLIN_BENCH_MODELS", ",".join(bench_formats.MODELS)).split(",")
    me = [sys.executable, os.path.abspath(__file__), "--child"]
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            for name in names:
                make, flags = bench_formats.MODELS[name]
                path = os.path.join(tmp, f"{name}{n}.onnx")
                make(path, n)
                convert = ["convert", path, *flags, "--dry-run"]
                times: dict[str, list[float]] = {v: [] for v in ("check", *VARIANTS)}
                for _ in range(rounds):
                    times["check"].append(_cpu([sys.executable, "-m", "qlin_cli", "check", "--no-cache",
                                                path]))
                    for v in VARIANTS:
                        times[v].append(_cpu([*me, v, *convert]))
                base = statistics.median(times["check"])
                parts = ", ".join(f"{v} {statistics.median(times[v]) / base:.2f}x" for v in VARIANTS)
                print(f"{n:5d} nodes {name:8s} {' '.join(flags[:2])}: check {base:.2f} s CPU (median of "
                      f"{rounds}); {parts}", flush=True)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        _child(sys.argv[2], sys.argv[3:])
    else:
        main()
