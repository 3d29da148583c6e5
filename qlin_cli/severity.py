"""The three severities every finding carries (rules' QL codes and targets' QT codes alike), and
the docstring cleaner their documentation goes through. Imports nothing: `qlin rules` and
`qlin rule CODE` read codes without loading onnx, numpy or even ``inspect``."""

from __future__ import annotations

ERROR, WARNING, INFO = "error", "warning", "info"
SEVERITIES = (ERROR, WARNING, INFO)


def cleandoc(doc: str) -> str:
    """A docstring as ``inspect.cleandoc`` gives it: tabs expanded, the first line's leading blanks
    and the rest's common indentation removed, blank lines at either end dropped
    (``tests/test_lint_startup.py`` holds the two equal on every code's documentation)."""
    lines = doc.expandtabs().split("\n")
    indents = [len(line) - len(line.lstrip()) for line in lines[1:] if line.strip()]
    margin = min(indents, default=0)
    lines = [lines[0].lstrip()] + [line[margin:] for line in lines[1:]]
    while lines and not lines[-1]:
        lines.pop()
    while lines and not lines[0]:
        lines.pop(0)
    return "\n".join(lines)
