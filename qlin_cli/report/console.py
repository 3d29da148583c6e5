"""The rich Console qlin draws with on stdout."""

from __future__ import annotations


def console(**options):
    """A rich Console whose closed pipe is a BrokenPipeError, which ``output.report()``
    handles (rich's own handling exits with status 1, which would read as findings)."""
    from rich.console import Console

    class _Console(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True
            raise BrokenPipeError

    return _Console(**options)
