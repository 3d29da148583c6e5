"""The rich Console qlin draws with on stdout."""

from __future__ import annotations


def console(**options):
    """A rich Console whose closed pipe is a BrokenPipeError, which ``output.report()``
    handles (rich's own handling exits with status 1, which would read as findings).
    Emoji codes are left as written: a node named ``:warning:`` is shown as that name."""
    from rich.console import Console

    class _Console(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True
            raise BrokenPipeError

    return _Console(**{"emoji": False, **options})


class Plain:
    """What the text report prints on when it is not a terminal: the plain text a rich
    Console prints there (no colour, no wrapping), without loading rich (about 35 ms of a
    1-node check into a pipe or a file; tests/test_cli_plain_output.py holds both equal)."""

    is_terminal = False
    color_system = None

    def __init__(self, file):
        self.file = file

    def write(self, text: str) -> None:
        """``text`` and a newline; flushed, as rich flushes each print."""
        self.file.write(text + "\n")
        self.file.flush()
