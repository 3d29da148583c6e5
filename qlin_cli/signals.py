"""SIGINT, SIGTERM and SIGHUP end qlin the same clean way.

Python's default turns only SIGINT into an exception; SIGTERM and SIGHUP would
end the process at once, leaving any named temporary file behind. While a
command runs (``handled``), each of the three raises ``errors.Interrupted`` in
the main thread, so every ``finally`` block runs (convert's writer removes its
temporary files there), and the command exits with 128 + the signal's number
after one line on stderr.

* The first signal wins: later ones are ignored while qlin cleans up, so a
  second Ctrl-C cannot cut a cleanup short (SIGKILL still ends the process).
* ``critical()`` marks a few statements that must not be cut in two (creating
  a named temporary file and remembering its name; the renames that publish an
  output): a signal arriving inside is held and raised when the block ends.
* A signal that was ignored when qlin started (``nohup``) stays ignored.
"""

from __future__ import annotations

import contextlib
import signal
import threading

from .errors import EXIT_SIGNAL_BASE, Interrupted

SIGNALS = tuple(getattr(signal, n) for n in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, n))
_state: dict = {"critical": 0, "pending": None, "raised": False}


def _reset() -> None:
    _state.update(critical=0, pending=None, raised=False)


def _raise(signum: int) -> None:
    _state["raised"] = True
    raise Interrupted(signum)


def _handler(signum, frame) -> None:
    if _state["pending"] is not None:  # already on the way out: finish cleaning up
        return
    _state["pending"] = signum
    if not _state["critical"]:
        _raise(signum)


@contextlib.contextmanager
def handled():
    """Install the handlers for the duration of a command (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {}
    _reset()
    for s in SIGNALS:
        try:
            if signal.getsignal(s) is signal.SIG_IGN:
                continue
            previous[s] = signal.signal(s, _handler)
        except (OSError, ValueError):
            continue
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
        _reset()


@contextlib.contextmanager
def critical():
    """Hold signals until the block ends; then raise the one that arrived, if any."""
    _state["critical"] += 1
    try:
        yield
    finally:
        _state["critical"] -= 1
    if not _state["critical"] and _state["pending"] is not None and not _state["raised"]:
        _raise(_state["pending"])


def name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def exit_status(signum: int) -> int:
    return EXIT_SIGNAL_BASE + signum
