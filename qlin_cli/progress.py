"""Rich progress bars on stderr, shown only when stderr is a terminal.

A description is shown printable and free of rich markup (report/safe.py), so
a file or model name placed in one cannot reach the terminal as a control
sequence.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")

_ACTIVE: list = []  # the bars on screen, innermost last


def print_above(text: str) -> bool:
    """Print one plain line above the bar on screen, if any (True: done). A line
    written straight to stderr while a bar is drawn would be glued onto it."""
    if not _ACTIVE:
        return False
    _ACTIVE[-1].console.print(text, markup=False, highlight=False, emoji=False,
                              soft_wrap=True)
    return True


def stderr_is_terminal() -> bool:
    return sys.stderr.isatty()


class Meter:
    """A bar fed by ``update(done, total)``. It appears only on a terminal (or on
    the console given), and only once the work has taken ``delay`` seconds.

        with Meter("verifying") as update:
            update(3, 10)
    """

    def __init__(self, description: str, *, delay: float = 0.5, console=None,
                 enabled: bool = True):
        self.description = description
        self.delay = delay
        self.console = console
        self.enabled = enabled and (console is not None or stderr_is_terminal())
        self.bar = None
        self.task = None
        self.start = 0.0

    def __enter__(self):
        self.start = time.monotonic()
        return self.update

    def update(self, done: int, total: int) -> None:
        if self.bar is None:
            if not self.enabled or time.monotonic() - self.start < self.delay:
                return
            from rich.console import Console
            from rich.markup import escape
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )

            from .report.safe import printable

            self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                TimeElapsedColumn(), console=self.console or Console(stderr=True),
                                transient=True, redirect_stdout=False, redirect_stderr=False)
            self.bar.start()
            _ACTIVE.append(self.bar)
            self.task = self.bar.add_task(escape(printable(self.description)), total=total)
        self.bar.update(self.task, completed=done, total=total)

    def __exit__(self, *exc) -> bool:
        if self.bar is not None:
            if self.bar in _ACTIVE:
                _ACTIVE.remove(self.bar)
            self.bar.stop()
        return False


def track(items: Iterable[T], total: int, description: str, *, min_items: int = 2,
          console=None, enabled: bool = True) -> Iterator[T]:
    """Yield ``items``; with a terminal (or a given console) and enough items, show progress."""
    if not enabled or (console is None and total < min_items):
        yield from items
        return
    with Meter(description, delay=0, console=console) as update:
        for done, item in enumerate(items, 1):
            yield item
            update(done, total)
