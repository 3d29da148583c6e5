"""The project's Python files parsed once per test process: several tests walk every source's
tree (imports, function lengths, facts restated outside schema/, what imports a runtime), and
each parse of the 250-odd files of qlin_cli costs about a second. The trees are shared: a
test reads them and never changes one."""

from __future__ import annotations

import ast
import functools
import os


@functools.cache
def _parsed(path: str, stamp: tuple[int, int]) -> ast.Module:
    with open(path, encoding="utf-8") as f:
        return ast.parse(f.read(), path)


def tree(path) -> ast.Module:
    """The parsed module at ``path`` (parsed again only if the file changed)."""
    path = os.path.abspath(os.fspath(path))
    st = os.stat(path)
    return _parsed(path, (st.st_mtime_ns, st.st_size))
