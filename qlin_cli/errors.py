"""Errors qlin reports to the user as one line, never as a traceback."""

from __future__ import annotations

# Exit statuses of every command: 0 fine; 1 findings (check) or refused nodes
# (convert); 2 something could not be read or handled.
EXIT_OK, EXIT_FINDINGS, EXIT_BAD_INPUT = 0, 1, 2


class QlinError(Exception):
    """Something about an input file that stops qlin from handling it.

    ``str(err)`` is ``"PATH: reason"``; the CLI prints ``qlin: error: `` before it
    and exits with status 2.
    """

    def __init__(self, path: str, reason: str):
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


def unexpected(e: BaseException) -> str:
    """One line for an exception qlin did not foresee while reading a model."""
    if isinstance(e, UnicodeDecodeError):
        return "a name or string in the model is not valid UTF-8 (a corrupt or hostile file)"
    if isinstance(e, RecursionError):
        return "the model is nested too deeply to process"
    if isinstance(e, MemoryError):
        return "out of memory while processing the model"
    text = str(e).strip().splitlines()
    return f"internal error ({type(e).__name__}: {text[0][:160] if text else ''}); please report it"


# A run ended by a signal exits with 128 + the signal's number, as a shell reports a
# process killed by it: 130 for Ctrl-C (SIGINT), 143 for SIGTERM, 129 for SIGHUP.
EXIT_SIGNAL_BASE = 128


class Interrupted(BaseException):
    """SIGINT, SIGTERM or SIGHUP arrived (qlin_cli/signals.py). A BaseException, so that
    ``except Exception`` does not swallow it while ``finally`` blocks still clean up."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum
