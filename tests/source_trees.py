"""Python source files parsed once per process: the architecture tests read every file of
qlin_cli/ (imports, restated schema facts, function lengths), several tests each; a tree
is kept by the file's text, so an edited or new file is parsed afresh. Nothing that reads
a tree here changes it."""

from __future__ import annotations

import ast
import functools


@functools.cache
def _parsed(text: str) -> tuple[ast.Module, tuple[ast.AST, ...]]:
    tree = ast.parse(text)
    return tree, tuple(ast.walk(tree))


def nodes(path: str) -> tuple[ast.AST, ...]:
    """Every node of the file's tree, in ``ast.walk`` order."""
    return _read(path)[1]


def _read(path: str) -> tuple[ast.Module, tuple[ast.AST, ...]]:
    with open(path, encoding="utf-8") as f:
        return _parsed(f.read())
