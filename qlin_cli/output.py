"""Writing to stdout and stderr without tracebacks.

* ``error(text)``: the one-line ``qlin: error: ...`` on stderr, made printable
  (report/safe.py) whatever names it quotes.
* ``report()``: a block around everything a command writes to stdout. A reader
  that goes away (``qlin rules | head -3``) is not an error: the rest of the
  report is dropped and the command ends with the status it would have had. If
  stdout cannot take it (a full disk, a read-only file), the
  command ends with one line naming standard output and the reason, exit 2,
  and nothing more is tried on that stream (it is pointed at the null device,
  so the interpreter's own flush at exit cannot fail again with exit 120).
* ``prepare_stdout()``: characters the locale's encoding cannot hold are
  written as backslash escapes instead of failing.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys

from .errors import EXIT_BAD_INPUT
from .report.safe import printable


class OutputFailed(Exception):
    """stdout refused the report; ``str()`` is the one-line reason."""


def error(text: str) -> None:
    """``qlin: error: TEXT`` on stderr, one line; a stderr that fails is left alone."""
    _line(f"qlin: error: {printable(text)}")


def warning(text: str) -> None:
    """``qlin: warning: TEXT`` on stderr, one line."""
    _line(f"qlin: warning: {printable(text)}")


def _line(text: str) -> None:
    """One line on stderr, above the progress bar when one is drawn (never glued to it)."""
    from . import progress

    with contextlib.suppress(OSError, ValueError, AttributeError):  # AttributeError: no stderr at all
        if progress.print_above(text):
            return
        sys.stderr.write(text + "\n")
        sys.stderr.flush()


def error_at(path, reason) -> None:
    error(f"{path}: {reason}")


class ClosedStdout(io.TextIOBase):
    """Stands for a standard output the process was started without (``qlin check M >&-``):
    Python gives None there, and every report would fail on it with a traceback. Writing
    to it raises OutputFailed, which every command ends with one line and exit 2, as for
    any stdout that refuses the report; a command that writes nothing to it (``check -o
    FILE``) runs as usual."""

    encoding = "utf-8"
    errors = "backslashreplace"

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def write(self, text: str) -> int:
        raise OutputFailed("standard output is closed: nothing can be reported there "
                           "(give it a file or a pipe, or -o FILE)")

    def flush(self) -> None:
        return None


def prepare_stdout() -> None:
    if sys.stdout is None:
        sys.stdout = ClosedStdout()
        return
    with contextlib.suppress(AttributeError, ValueError, OSError):
        sys.stdout.reconfigure(errors="backslashreplace")


@contextlib.contextmanager
def report():
    """Run the writes of a report; an OSError from stdout becomes OutputFailed."""
    try:
        yield
        sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()  # the reader went away (`| head`): not an error, the status stands
    except OSError as e:
        _silence_stdout()
        raise OutputFailed(f"cannot write to standard output: {e.strerror or e}") from None


@contextlib.contextmanager
def report_to(path: str | None):
    """``report()``, or with ``path`` the report's writes to stdout go to that file:
    written whole to a temporary file beside it, then renamed over it (a reader never
    sees half a report; a file it replaces keeps its mode); a device or FIFO is written in
    place. A file that cannot be written (a full device too) is one line and exit 2."""
    if path is None:
        with report():
            yield
        return
    import io

    buffer = io.StringIO()
    saved = sys.stdout
    sys.stdout = buffer
    try:
        yield
    finally:
        sys.stdout = saved
    try:
        _write_text(path, buffer.getvalue())
    except OSError as e:
        raise OutputFailed(f"cannot write {printable(path)}: {e.strerror or e}") from None


def _write_text(path: str, text: str) -> None:
    import stat
    import tempfile

    folder = os.path.dirname(os.path.abspath(path))
    try:
        st = os.stat(path)
        mode = stat.S_IMODE(st.st_mode)
        if not stat.S_ISREG(st.st_mode) and not stat.S_ISDIR(st.st_mode):
            # a device (/dev/null, /dev/full), a FIFO or a socket is written in place, as a
            # shell's redirection writes it: replacing it would put a file where it was
            with open(path, "w", encoding="utf-8", errors="backslashreplace") as f:
                f.write(text)
            return
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    fd, tmp = tempfile.mkstemp(prefix=".qlin-", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as f:
            f.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _silence_stdout() -> None:
    """Point stdout at the null device so that no later flush fails."""
    with contextlib.suppress(Exception):
        fd = sys.stdout.fileno()
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, fd)
        os.close(null)
    with contextlib.suppress(Exception):
        sys.stdout.flush()


def fail_output(e: OutputFailed) -> None:
    error(str(e))
    sys.exit(EXIT_BAD_INPUT)
