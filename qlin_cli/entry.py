"""The process entry point of `qlin`, `python -m qlin_cli` and `python -m qlin`.

``run()`` runs the command line (``cli.main``) and then ends the process as soon as the
command's work is done: the atexit handlers run (a worker pool's, logging's), stdout and
stderr are flushed, and the process exits with the command's status, without the
interpreter's teardown. That teardown frees every object onnx, numpy and the analysis made,
one at a time, and wrote nothing: it was 80 ms of a 650 ms `qlin check` of a small model
(docs/performance.md). Everything qlin writes is written, flushed and closed before the
command returns (the reports go through output.report(); files through convert/write.py).

``cli.main`` itself is left as click makes it, for callers in a Python process (tests, the
API's users) whose interpreter goes on.
"""

from __future__ import annotations

import atexit
import os
import sys
from typing import NoReturn


def run(prog_name: str | None = None) -> NoReturn:
    from .gc_pause import pause_for_start

    one_blas_thread()
    pause_for_start()  # (gc_pause.py: until the first model is read)
    from .cli import main

    try:
        main(prog_name=prog_name)
    except SystemExit as e:
        leave(e.code)
    leave(0)


def one_blas_thread() -> None:
    """numpy's BLAS (OpenBLAS in numpy's wheels) to one thread, unless the user chose a
    number (OPENBLAS_NUM_THREADS set): set before numpy is first imported, which is when
    OpenBLAS starts its threads. Each thread it starts waits for work by spinning: on this
    project's 2-core machine that was about 95 ms of CPU a process (`python -c "import onnx"`
    238 -> 154 ms, a 1-node `qlin check` 287 -> 190 ms; docs/performance.md), more with more
    cores. qlin computes no large matrix product (its evaluator works element by element; a
    format conversion's measurement multiplies a layer's worth of samples), so nothing waits
    on the threads it leaves out. The command line only: the API leaves its caller's process
    as it is."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def leave(code: object) -> NoReturn:
    """End the process with ``code`` as SystemExit(code) would: None is 0, an integer is the
    status, anything else is written to stderr and the status is 1."""
    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code
    else:
        _write(sys.stderr, f"{code}\n")
        status = 1
    run_exitfuncs = getattr(atexit, "_run_exitfuncs", None)  # CPython's; what it runs at exit
    if run_exitfuncs is None:  # another interpreter: its own exit, teardown and all
        sys.exit(status)
    run_exitfuncs()
    flush_std_streams()
    os._exit(status & 0xFF)  # as the system reads any status: its low 8 bits


def _write(stream, text: str) -> None:
    try:
        stream.write(text)
    except (OSError, ValueError, AttributeError):
        pass


def flush_std_streams() -> None:
    """Flush stdout and stderr as the interpreter does at exit, a failure ignored (qlin's
    reports have been written and flushed already: output.report)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
