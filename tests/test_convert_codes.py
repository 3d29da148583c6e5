"""convert's QC codes (convert/codes/): documented like rules, listed by `qlin rules`, and
each one attached by a pass of convert (read from the source), none attached that does not exist."""

from __future__ import annotations

import ast
import glob
import os
import re

import pytest
import source_trees
from paths import ROOT

from qlin_cli.convert import codes


def test_every_code_is_documented_like_a_rule():
    found = codes.all_codes()
    assert [c.code for c in found] == ["QC101", "QC102", "QC201", "QC202", "QC301", "QC401", "QC402", "QC403"]
    for c in found:
        assert re.fullmatch(r"QC[1-4]\d\d", c.code) and re.fullmatch(r"[a-z0-9-]+", c.name)
        assert c.summary.endswith(".") and c.severity == "error", c.code  # a refusal writes nothing
        doc = c.doc()
        for section in ("What it checks", "Why is this bad?", "Example", "Fix"):
            assert f"## {section}" in doc, (c.code, section)
        assert '"' in doc.split("## Why is this bad?")[1].split("## Example")[0], c.code  # a quoted sentence
    with pytest.raises(KeyError):
        codes.get("QC999")


def _attached() -> set[str]:
    """Every code a pass hands to ``refused`` (convert/entries.py)."""
    out = set()
    for path in glob.glob(os.path.join(ROOT, "qlin_cli", "convert", "passes", "*.py")):
        tree = source_trees.tree(path)
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "refused"
                    and len(node.args) > 1 and isinstance(node.args[1], ast.Constant)):
                out.add(node.args[1].value)
    return out


def test_every_code_is_attached_by_a_pass_and_every_attached_code_exists():
    assert _attached() == {c.code for c in codes.all_codes()}
