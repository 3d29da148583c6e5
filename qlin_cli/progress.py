"""A rich progress bar on stderr, shown only when stderr is a terminal."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")


def stderr_is_terminal() -> bool:
    return sys.stderr.isatty()


def track(items: Iterable[T], total: int, description: str, *, min_items: int = 2,
          console=None) -> Iterator[T]:
    """Yield ``items``; with a terminal (or a given console) and enough items, show progress."""
    if console is None and (total < min_items or not stderr_is_terminal()):
        yield from items
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = console or Console(stderr=True)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=console, transient=True) as bar:
        task = bar.add_task(description, total=total)
        for item in items:
            yield item
            bar.advance(task)
