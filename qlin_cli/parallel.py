"""`qlin check -j N`: files checked in worker processes, results in the order given.

Each file is checked whole by one worker (the same function one process runs), and
results are taken back in input order, so the report, the error lines on stderr and
the exit status are those of one process. Workers are forked from the parent once it
has imported the checker, so they start without importing onnx again.

A pool only pays off with enough work: fewer than ``MIN_FILES`` files or less than
``MIN_BYTES`` of model files (graphs; external data is never read) run in one process,
as does a platform without fork.

The pool is qlin's own: each worker holds one file at a time, so when a worker dies (a
kill, a crash in a native library) the parent knows which file it held, reports that file
as not checked (``lost``), starts another worker and finishes the rest. Workers die with
the parent: on Linux the kernel kills them when it ends (PR_SET_PDEATHSIG), elsewhere they
end at the next file, when the pipe to the parent is closed.
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
    """Workers leave SIGINT to the parent, which reports it once and ends the run, and die
    with the parent."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG: killed when the parent ends
    except (OSError, AttributeError):
        pass


def _serve(conn, fn: Callable, parent: int) -> None:
    _worker_start()
    if os.getppid() != parent:  # the parent ended before the death signal was asked for
        os._exit(0)
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):
            os._exit(0)
        if job is None:
            os._exit(0)
        i, item = job
        try:
            conn.send((i, fn(item), None))
        except BaseException as e:  # nothing may escape a worker: the parent reports it
            conn.send((i, None, f"{type(e).__name__}: {e}"))


def ordered_map(fn: Callable, items: Sequence, jobs: int, work_paths: Sequence[str],
                lost: Callable | None = None) -> Iterator:
    """``map(fn, items)``, in order, on ``jobs`` forked workers when that pays off. An item
    whose worker dies gives ``lost(item, why)`` (without ``lost``, RuntimeError)."""
    if not worth_it(work_paths, jobs):
        yield from map(fn, items)
        return
    yield from _Pool(fn, items, min(jobs, len(items)), lost).results()


class _Pool:
    def __init__(self, fn: Callable, items: Sequence, workers: int, lost: Callable | None):
        self.fn, self.items, self.size, self.lost = fn, items, workers, lost
        self.ctx = multiprocessing.get_context("fork")
        self.idle: list = []
        self.busy: dict = {}  # worker -> the index it holds

    def _start(self):
        here, there = self.ctx.Pipe()
        p = self.ctx.Process(target=_serve, args=(there, self.fn, os.getpid()), daemon=True)
        p.start()
        there.close()
        return p, here

    def results(self) -> Iterator:
        from multiprocessing.connection import wait

        todo = list(range(len(self.items)))[::-1]
        done: dict = {}
        out = 0
        try:
            self.idle = [self._start() for _ in range(self.size)]
            while out < len(self.items):
                while self.idle and todo:
                    w = self.idle.pop()
                    try:
                        w[1].send((todo[-1], self.items[todo[-1]]))
                    except OSError:  # it died waiting for work: another takes its place
                        w[0].join(1)
                        self.idle.append(self._start())
                        continue
                    self.busy[w] = todo.pop()
                ready = wait([w[1] for w in self.busy] + [w[0].sentinel for w in self.busy])
                for w in list(self.busy):
                    if w[1] in ready or w[0].sentinel in ready:
                        self._collect(w, done, bool(todo))
                while out in done:
                    yield done.pop(out)
                    out += 1
        finally:
            self._stop()

    def _collect(self, w, done: dict, more: bool) -> None:
        i = self.busy.pop(w)
        try:
            _, value, failed = w[1].recv()
        except (EOFError, OSError):  # the worker died holding item i
            w[0].join(1)
            code = w[0].exitcode
            why = (f"killed by signal {-code}" if code is not None and code < 0 else f"exit status {code}")
            done[i] = self._lost(i, f"its worker process ended ({why})")
            if more:
                self.idle.append(self._start())
            return
        done[i] = value if failed is None else self._lost(i, failed)
        self.idle.append(w)

    def _lost(self, i: int, why: str):
        if self.lost is None:
            raise RuntimeError(why)
        return self.lost(self.items[i], why)

    def _stop(self) -> None:
        workers = self.idle + list(self.busy)
        for _, conn in workers:
            try:
                conn.send(None)
            except (OSError, ValueError):
                pass
            conn.close()
        for p, _ in workers:
            p.join(0.5)
            if p.is_alive():
                p.kill()
                p.join()
