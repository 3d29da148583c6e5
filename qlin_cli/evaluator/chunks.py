"""Chunked, threaded driver: run a kernel over cache-sized pieces of a job.

A *job* is a tuple of arrays ``(x, out, *params)``: ``x`` and ``out`` have the
same shape, each parameter broadcasts against it (its extent is either the same
or 1 along every axis). The driver cuts the job along its first axis, and along
the second when single rows are large, into pieces of about ``CHUNK`` elements,
and ``threads()`` workers take them one by one from a shared counter. Each worker
owns preallocated scratch buffers (``Scratch``), so the only memory beyond the
output is a few chunks per worker. numpy releases the GIL inside its loops,
which is what lets two workers use two cores.
"""

from __future__ import annotations

import itertools
import math
import os
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # (concurrent.futures, and the logging it imports: 5 ms a process, asked
    # only when a large array is split across threads)
    from concurrent.futures import ThreadPoolExecutor

# Elements per piece. Smaller pieces stay in L2, but every numpy call then hands
# the GIL to the other worker, and on a small VM each hand-over costs more than
# the cache misses. Measured on 2 cores for 16M float32 elements (uint8 /
# int8 blocked / float8): 2**17: 12 / 22 / 36 ms, 2**18: 7 / 13 / 21 ms,
# 2**19: 6 / 11 / 19 ms, 2**20: 6 / 11 / 28 ms.
CHUNK = 1 << 19
_MIN_PARALLEL = 1 << 17  # below this many elements run in the calling thread

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def threads() -> int:
    env = os.environ.get("QLIN_THREADS")
    if env:
        return max(1, int(env))
    return max(1, min(os.cpu_count() or 1, 8))


def _executor(n: int) -> ThreadPoolExecutor:
    from concurrent.futures import ThreadPoolExecutor

    global _pool
    with _pool_lock:
        if _pool is None or _pool._max_workers < n:  # noqa: SLF001
            _pool = ThreadPoolExecutor(max_workers=n, thread_name_prefix="qlin-eval")
        return _pool


class Scratch:
    """Per-worker buffers, reused for every piece; ``get(i, dtype, shape)``. A buffer holds
    ``size`` elements (the largest piece of the run, at most CHUNK) or the piece asked for: a
    small job allocates small buffers (a CHUNK-sized one is a mapping the system makes and
    unmaps on every call, which the proof of a rewritten node paid per node)."""

    def __init__(self, size: int = CHUNK) -> None:
        self._bufs: dict[tuple[int, str], np.ndarray] = {}
        self._size = size

    def get(self, slot: int, dtype, shape) -> np.ndarray:
        dtype = np.dtype(dtype)
        n = math.prod(shape)
        key = (slot, dtype.str)
        buf = self._bufs.get(key)
        if buf is None or buf.size < n:
            buf = np.empty(max(n, self._size), dtype)
            self._bufs[key] = buf
        return buf[:n].reshape(shape)


def _piece(a: np.ndarray, ref_shape: tuple[int, ...], idx: tuple[slice, ...]) -> np.ndarray:
    """Slice a broadcastable parameter like the piece ``idx`` of the job."""
    if a.ndim == 0:
        return a
    sl = tuple(s if a.shape[k] != 1 or ref_shape[k] == 1 else slice(None)
               for k, s in enumerate(idx))
    return a[sl]


def pieces(shape: tuple[int, ...], chunk: int = CHUNK) -> Iterator[tuple[slice, ...]]:
    if len(shape) == 0:
        yield ()
        return
    row = int(np.prod(shape[1:], dtype=np.int64))
    if len(shape) >= 2 and row > 2 * chunk:
        inner = int(np.prod(shape[2:], dtype=np.int64))
        step = max(1, chunk // max(inner, 1))
        for i in range(shape[0]):
            for j in range(0, shape[1], step):
                yield (slice(i, i + 1), slice(j, min(j + step, shape[1])))
        return
    step = max(1, chunk // max(row, 1))
    for i in range(0, shape[0], step):
        yield (slice(i, min(i + step, shape[0])),)


Kernel = Callable[[np.ndarray, np.ndarray, list, Scratch], None]


def run(jobs: list[tuple], kernel: Kernel, chunk: int = CHUNK) -> None:
    """Apply ``kernel(x_piece, out_piece, param_pieces, scratch)`` to every piece."""
    work = []
    for job in jobs:
        x, out, *params = job
        if x.size == 0:
            continue
        for idx in pieces(x.shape, chunk):
            work.append((x, out, params, idx))
    total = sum(j[0].size for j in jobs)
    if total < _MIN_PARALLEL or len(work) < 2 or (n := threads()) == 1:
        _run_list(work, kernel)
        return
    n = min(n, len(work))
    # Workers take the next piece from a shared counter (next() on it is atomic
    # under the GIL): on a shared machine a worker whose core is busy elsewhere
    # does fewer pieces instead of holding up the others.
    counter = itertools.count()
    futures = [_executor(n).submit(_run_list, work, kernel, counter) for _ in range(n)]
    for f in futures:
        f.result()


def _run_list(work: list, kernel: Kernel, counter=None) -> None:
    scratch = Scratch(min(CHUNK, max((w[0].size for w in work), default=0)))
    order = range(len(work)) if counter is None else counter
    # overflow to Inf, Inf - Inf and NaN inputs are part of the semantics here
    with np.errstate(all="ignore"):
        for i in order:
            if i >= len(work):
                break
            x, out, params, idx = work[i]
            kernel(x[idx], out[idx], [_piece(p, x.shape, idx) for p in params], scratch)
