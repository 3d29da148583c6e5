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
