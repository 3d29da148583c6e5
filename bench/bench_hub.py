"""qlin's Python API on a distributed engine (docs/hub.md): Dask's LocalCluster with 2 worker
processes maps ``qlin.check_paths`` over batches of model files, against the same files
checked by one plain process; both as files per second per core, and their ratio (and
concurrent.futures' ProcessPoolExecutor on the same batches, for reference).

The files: the fixture models (fixtures/models) and the quantizer corpus (fixtures/corpus.py,
built here into a temporary folder with onnxruntime's quantizers), each checked COPIES times
(as copies under other names, so each check reads and checks a file). Both engines do one
untimed pass first (imports, the rule registry), then each is timed ROUNDS times,
interleaved, best kept. The results of both must be equal (same JSON per file).

Needs the `hub` extra (``pip install -e '.[hub]'``; `make bench` installs it).
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import shutil
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

WORKERS, COPIES, ROUNDS, BATCH = 2, 4, 5, 16


def check_batch(paths: list[str]) -> list[dict]:
    """What a worker runs: one batch of files, each checked as `qlin check` checks it (its own
    configuration), as the JSON objects of `qlin check --format json`'s ``files``."""
    import qlin

    return [r.to_json() for r in qlin.check_paths(paths)]


def files_to_check(tmp: str) -> list[str]:
    import qlin
    from fixtures import corpus

    corpus_dir = os.path.join(tmp, "corpus")
    with contextlib.redirect_stdout(io.StringIO()):  # the calibrators' own prints
        corpus.build(corpus_dir)
    found = qlin.discover([os.path.join(ROOT, "fixtures", "models"), corpus_dir], config=False)
    files = []
    for copy in range(COPIES):  # copies under other names: each check reads and checks its file
        folder = os.path.join(tmp, f"copy{copy}")
        for i, path in enumerate(found):
            dest = os.path.join(folder, f"{i:04d}_{os.path.basename(path)}")
            os.makedirs(folder, exist_ok=True)
            shutil.copyfile(path, dest)
            for data in _external_data(path):  # a model's external data goes with it
                shutil.copyfile(os.path.join(os.path.dirname(path), data), os.path.join(folder, data))
            files.append(dest)
    return files


def _external_data(path: str) -> list[str]:
    import onnx

    model = onnx.load(path, load_external_data=False)
    names = set()
    for t in model.graph.initializer:
        for entry in t.external_data:
            if entry.key == "location" and "/" not in entry.value and entry.value not in ("", ".", ".."):
                names.add(entry.value)
    return sorted(n for n in names if os.path.isfile(os.path.join(os.path.dirname(path), n)))


def plain(files: list[str]) -> list[dict]:
    return check_batch(files)


def on_dask(client, files: list[str]) -> list[dict]:
    batches = [files[i:i + BATCH] for i in range(0, len(files), BATCH)]
    futures = client.map(check_batch, batches, pure=False)
    return [row for batch in client.gather(futures) for row in batch]


def on_pool(pool, files: list[str]) -> list[dict]:
    """The same batches on concurrent.futures' process pool: the engine without Dask, for
    reference (how much of the ratio is Dask's, how much the machine's)."""
    batches = [files[i:i + BATCH] for i in range(0, len(files), BATCH)]
    return [row for batch in pool.map(check_batch, batches) for row in batch]


def main() -> None:
    from concurrent.futures import ProcessPoolExecutor

    from dask.distributed import Client, LocalCluster

    logging.getLogger().setLevel(logging.ERROR)  # the quantizers' advice while the corpus is built
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        files = files_to_check(tmp)
        built = time.perf_counter() - t
        t = time.perf_counter()
        cluster = LocalCluster(n_workers=WORKERS, threads_per_worker=1, processes=True,
                               dashboard_address=":0", silence_logs=logging.ERROR)
        client = Client(cluster)
        started = time.perf_counter() - t
        pool = ProcessPoolExecutor(WORKERS)
        engines = {"plain": lambda: plain(files), "dask": lambda: on_dask(client, files),
                   "pool": lambda: on_pool(pool, files)}
        try:
            got = {name: run() for name, run in engines.items()}  # untimed: imports, rule registry
            times = dict.fromkeys(engines, float("inf"))
            for _ in range(ROUNDS):
                for name, run in engines.items():
                    t = time.perf_counter()
                    run()
                    times[name] = min(times[name], time.perf_counter() - t)
        finally:
            pool.shutdown()
            client.close()
            cluster.close()
    same = got["dask"] == got["plain"] == got["pool"]
    n = len(files)
    rate = {name: n / t for name, t in times.items()}
    per_core = {"plain": rate["plain"], "dask": rate["dask"] / WORKERS, "pool": rate["pool"] / WORKERS}
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"{n} files ({n // COPIES} fixture and corpus models x {COPIES}), {os.cpu_count()} cores here "
          f"(load {load:.1f}), best of {ROUNDS} interleaved; corpus built in {built:.0f} s, "
          f"cluster started in {started:.1f} s")
    for name, label in (("plain", "one plain process"), ("dask", f"dask LocalCluster x{WORKERS}"),
                        ("pool", f"ProcessPoolExecutor x{WORKERS}")):
        print(f"  {label:26} {times[name]:6.2f} s  {rate[name]:7.1f} files/s  "
              f"{per_core[name]:7.1f} files/s/core")
    print(f"  files/s per core, dask / one plain process: {per_core['dask'] / per_core['plain']:.2f} "
          f"(speed-up {rate['dask'] / rate['plain']:.2f}x; the process pool: "
          f"{per_core['pool'] / per_core['plain']:.2f}); results identical: {same}")
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
