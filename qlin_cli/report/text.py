"""The human report: diagnostics grouped by file, then a summary line.

File names, messages and graph paths come from outside: each is made printable
(report/safe.py: no control character or escape sequence reaches the terminal)
and then escaped for rich's markup.
"""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape as _markup

from .safe import printable

STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}


def escape(text) -> str:
    """Outside text as rich markup that prints it literally and on one line."""
    return _markup(printable(text))


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def render(results, summary: dict, console: Console) -> None:
    for r in results:
        if r.error is not None:
            continue
        if not r.diagnostics:
            continue
        console.print(f"[bold]{escape(r.path)}[/bold]", soft_wrap=True)
        for d in r.diagnostics:
            style = STYLE.get(d.severity, "")
            console.print(
                f"  [{style}]{d.code}[/{style}] [{style}]{d.severity:<7}[/{style}] "
                f"{escape(d.message)} [dim]({escape(d.graph)})[/dim]",
                highlight=False,
                soft_wrap=True,
            )
    infos = sum(r.count("info") for r in results)
    failed = sum(1 for r in results if r.error is not None)
    checked = summary["files"] - failed
    parts = [plural(summary["errors"], "error"), plural(summary["warnings"], "warning")]
    if infos:
        parts.append(plural(infos, "note"))
    line = f"{', '.join(parts)} in {plural(checked, 'file')} checked"
    if failed:
        line += f"; {plural(failed, 'file')} could not be checked"
    style = "bold red" if summary["errors"] or failed else "bold green"
    console.print(f"[{style}]{line}[/{style}]", highlight=False)
