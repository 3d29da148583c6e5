"""Python's cyclic garbage collector, paused while one model is checked.

Checking a model builds tens of thousands of small objects that live until the
end (the facts of every node, their tuples, the scopes' type maps) and hardly any
cyclic garbage. Each of those allocations counts towards the collector's next
run, and each run walks every object still alive: on the 10,000-pair benchmark
model the collector took 0.2 to 0.45 s of a 1.4 s check. Reference counting
still frees everything as usual; only cycles wait: the collector is switched
back on (if it was on) when the check ends, and gathers them at its next run.

Reentrant and thread-safe: nested or concurrent pauses switch the collector
back on once, when the last one ends (so checks that keep overlapping in
threads keep it off until none is running).
"""

from __future__ import annotations

import gc
import threading
from contextlib import contextmanager

_lock = threading.Lock()
_depth = 0
_was_enabled = False
_starting = False  # the collector is off for the process's start (``pause_for_start``)


def pause_for_start() -> None:
    """The collector off while a command starts (the command line's entry point calls it):
    importing qlin's modules, click, onnx and numpy made about 80 collections of objects that
    all live on (20 ms of a 300 ms `qlin check` of a small model). It is switched back on
    when the first ``paused_collection`` block ends (the first model checked or converted),
    after every object then alive is moved out of its reach (``gc.freeze``: the first
    collection would otherwise walk them all, the cost merely put off; a cycle among them is
    freed only if it is left by reference counting, as the modules' own objects are); a
    command that has none (a listing, --help) ends with it off."""
    global _starting
    with _lock:
        if _depth == 0 and gc.isenabled():
            gc.disable()
            _starting = True


@contextmanager
def paused_collection():
    global _depth, _was_enabled, _starting
    with _lock:
        started = False
        if _depth == 0:
            _was_enabled = gc.isenabled() or _starting
            started, _starting = _starting, False
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                if started:  # what the start made lives on: left out of every later collection
                    gc.freeze()  # (else the first collection walks it all)
                gc.enable()
