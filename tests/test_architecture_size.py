"""Functions stay small: none above MAX_LINES outside the evaluator's kernels, whose
arithmetic reads best in one piece (evaluator/ holds them, each checked against
onnx.reference and onnxruntime bit for bit)."""

from __future__ import annotations

import ast
import glob
import os

import source_trees
from paths import ROOT

MAX_LINES = 60
PACKAGE = os.path.join(ROOT, "qlin_cli")
KERNELS = os.path.join(PACKAGE, "evaluator")


def long_functions(folder: str, limit: int) -> list[str]:
    found = []
    for path in sorted(glob.glob(os.path.join(folder, "**", "*.py"), recursive=True)):
        if path.startswith(KERNELS + os.sep):
            continue
        tree = source_trees.tree(path)
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > limit:
                    found.append(f"{os.path.relpath(path, ROOT)}:{node.lineno} {node.name} ({lines} lines)")
    return found


def test_no_function_is_longer_than_the_limit():
    assert long_functions(PACKAGE, MAX_LINES) == []


def test_the_finder_finds_a_long_function(tmp_path):
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_LINES))
    (tmp_path / "m.py").write_text(f"def long():\n{body}\n")
    assert long_functions(str(tmp_path), MAX_LINES) == [
        f"{os.path.relpath(str(tmp_path / 'm.py'), ROOT)}:1 long ({MAX_LINES + 1} lines)"]
