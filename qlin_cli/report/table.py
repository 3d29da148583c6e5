"""Tables for `qlin rules`, `qlin targets` and `qlin inspect`.

On a terminal a rich table; in a pipe or a file plain columns, never cut (a cell of
several lines becomes one, joined by ", "), since a file has no width to fit and
``grep`` reads lines. Cells come in as plain text; everything from a model is made
printable (report/safe.py) by the caller.
"""

from __future__ import annotations

import sys

import click


def show(columns: list[str], rows: list[list[str]], *, title: str | None = None,
         right: tuple[str, ...] = ()) -> None:
    """Print one table: ``columns`` its header, ``rows`` its cells (text), ``right`` the
    columns aligned right on a terminal."""
    if sys.stdout.isatty():
        _rich(columns, rows, title, right)
    else:
        plain(columns, rows, title)


def plain(columns: list[str], rows: list[list[str]], title: str | None = None) -> None:
    """Plain columns, two spaces apart; the last column is not padded."""
    lines = [[", ".join(part.strip() for part in c.splitlines()) for c in r] for r in [columns, *rows]]
    widths = [max(len(r[i]) for r in lines) for i in range(len(columns) - 1)]
    if title:
        click.echo(f"{title}:")
    for r in lines:
        click.echo(("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=False))
                    + ("  " if widths else "") + r[-1]).rstrip())


def _rich(columns, rows, title, right) -> None:
    from rich.markup import escape
    from rich.table import Table

    table = Table(title=title, show_edge=False, header_style="bold")
    for c in columns:
        table.add_column(c, justify="right" if c in right else "left", overflow="fold")
    for r in rows:
        table.add_row(*(escape(c) for c in r))
    from .console import console

    console(highlight=False).print(table)
