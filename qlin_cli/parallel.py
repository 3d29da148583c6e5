"""`qlin check -j N`: files checked in worker processes, results in the order given.

Each file is checked whole by one worker (the same function one process runs), and
results are taken back in input order, so the report, the error lines on stderr and
the exit status are those of one process. Workers are forked from the parent once it
has imported the checker, so they start without importing onnx again.

A pool only pays off with enough work: fewer than ``MIN_FILES`` files or less than
``MIN_BYTES`` of model files (graphs; external data is never read) run in one process,
as does a platform without fork.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterator, Sequence

MIN_FILES = 4
MIN_BYTES = 2 * 2**20  # below this, forking and pickling cost more than they save


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def worth_it(paths: Sequence[str], jobs: int) -> bool:
    if jobs < 2 or len(paths) < MIN_FILES:
        return False
    if "fork" not in multiprocessing.get_all_start_methods():
        return False
    total = 0
    for p in paths:
        try:
            total += os.path.getsize(p)
        except OSError:
            pass
        if total >= MIN_BYTES:
            return True
    return False


def _worker_start() -> None:
    """Workers leave SIGINT to the parent, which reports it once and ends the run."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def ordered_map(fn: Callable, items: Sequence, jobs: int, work_paths: Sequence[str]) -> Iterator:
    """``map(fn, items)``, in order, on ``jobs`` forked workers when that pays off."""
    if not worth_it(work_paths, jobs):
        yield from map(fn, items)
        return
    from concurrent.futures import ProcessPoolExecutor

    ctx = multiprocessing.get_context("fork")
    workers = min(jobs, len(items))
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_worker_start) as pool:
        futures = [pool.submit(fn, item) for item in items]
        try:
            for f in futures:
                yield f.result()
        finally:
            for f in futures:
                f.cancel()
