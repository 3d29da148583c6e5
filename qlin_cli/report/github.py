"""GitHub Actions workflow commands for `qlin check --format github`.

Every value is made printable first (no newline, carriage return or escape
sequence from a model or a file name survives), then escaped as the Actions
toolkit escapes workflow commands, so one diagnostic is always exactly one
`::error file=...,title=...::message` line.
"""

from __future__ import annotations

from .safe import github_data, github_property, printable

# qlin's severity -> GitHub's annotation level: qlin says `info` everywhere, but
# `notice` is GitHub's own word for that level, so it stays here.
COMMAND = {"error": "error", "warning": "warning", "info": "notice"}


_data, _prop = github_data, github_property  # the bare escapes


def data(text) -> str:
    """A message from a model or the file system, as a workflow command's message."""
    return github_data(printable(text))


def prop(text) -> str:
    """A file name or title, as a workflow command's property value."""
    return github_property(printable(text))


def render(results) -> str:
    lines = []
    for r in results:
        if r.error is not None:
            lines.append(f"::error file={prop(r.path)},title={prop('qlin: cannot check')}::"
                         f"{data(r.error)}")
            continue
        for d in r.diagnostics:
            title = f"qlin {d.code} {d.severity} ({d.op_type} {d.node} in {d.graph})"
            lines.append(f"::{COMMAND[d.severity]} file={prop(r.path)},title={prop(title)}::"
                         f"{data(d.message)}")
    return "\n".join(lines)
