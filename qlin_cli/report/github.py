"""GitHub Actions workflow commands for `qlin check --format github`."""

from __future__ import annotations

COMMAND = {"error": "error", "warning": "warning", "info": "notice"}


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def render(results) -> str:
    lines = []
    for r in results:
        if r.error is not None:
            lines.append(f"::error file={_prop(r.path)},title={_prop('qlin: cannot check')}::"
                         f"{_data(r.error)}")
            continue
        for d in r.diagnostics:
            title = f"qlin {d.code} {d.severity} ({d.op_type} {d.node} in {d.graph})"
            lines.append(f"::{COMMAND[d.severity]} file={_prop(r.path)},title={_prop(title)}::"
                         f"{_data(d.message)}")
    return "\n".join(lines)
