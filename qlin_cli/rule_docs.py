"""Rule metadata (code, name, severity, summary, documentation, fixable, default) read from the
rule modules' source without running them.

The rule modules in ``qlin_cli/rules/`` stay the one place these facts live; this
module reads their class attributes and docstrings with ``ast`` so that ``qlin rules``
and ``qlin rule CODE`` start without importing onnx and numpy, which the rules' own
imports (``qlin_cli.schema``) pull in. A value the reader cannot evaluate statically
(anything but a literal or a severity constant) makes it fall back to importing the
registry, so the answer is always the registry's; ``tests/test_lint_startup.py`` holds
the two equal for every rule.
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass

from .severity import ERROR, INFO, WARNING, cleandoc

RULES_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rules")
CONSTANTS = {"ERROR": ERROR, "WARNING": WARNING, "INFO": INFO}  # the names rules write severities by
FIELDS = ("code", "name", "severity", "summary", "fixable", "default")


@dataclass(frozen=True)
class RuleDoc:
    code: str
    name: str
    severity: str
    summary: str
    fixable: bool
    text: str  # the class docstring, cleaned (Rule.doc())
    default: bool = True  # runs when nothing is selected (Rule.default)

    def doc(self) -> str:
        return self.text


class _Unreadable(Exception):
    pass


def _value(node: ast.AST):
    if isinstance(node, ast.Name) and node.id in CONSTANTS:
        return CONSTANTS[node.id]
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError):
        raise _Unreadable from None


_TREES: dict[tuple[str, int, int], ast.Module] = {}


def _tree(entry: str) -> ast.Module:
    """A module of the rules package parsed, once per process while the file stays as it is (each
    rule's own read parses the base modules too)."""
    path = os.path.join(RULES_DIR, entry)
    st = os.stat(path)
    key = (entry, st.st_mtime_ns, st.st_size)
    if key not in _TREES:
        with open(path, encoding="utf-8") as f:
            _TREES[key] = ast.parse(f.read(), entry)
    return _TREES[key]


def _classes(prefix: str = "") -> dict[str, tuple[list[str], dict, str | None]]:
    """Every class of the rules package: name -> (base names, class attributes, docstring);
    with ``prefix`` ("ql405_"), of that rule's module and the base modules only."""
    found: dict[str, tuple[list[str], dict, str | None]] = {}
    for entry in sorted(os.listdir(RULES_DIR)):
        if not entry.endswith(".py") or (prefix and not entry.startswith((prefix, "base"))):
            continue
        for node in _tree(entry).body:
            if not isinstance(node, ast.ClassDef):
                continue
            bases = [b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute)
                     else "" for b in node.bases]
            attrs = {}
            for stmt in node.body:
                targets = []
                if isinstance(stmt, ast.Assign):
                    targets, value = stmt.targets, stmt.value
                elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
                    targets, value = [stmt.target], stmt.value
                for t in targets:
                    if isinstance(t, ast.Name) and t.id in FIELDS:
                        attrs[t.id] = value
            if node.name in found:
                raise _Unreadable  # two classes of one name: let the registry decide
            found[node.name] = (bases, attrs, ast.get_docstring(node, clean=False))
    return found


def _resolve(name: str, classes, field: str, seen=()):
    if name not in classes or name in seen:
        raise _Unreadable
    bases, attrs, _ = classes[name]
    if field in attrs:
        return _value(attrs[field])
    for b in bases:
        if b in classes:
            return _resolve(b, classes, field, (*seen, name))
    raise _Unreadable


def _is_rule(name: str, classes, seen=()) -> bool:
    if name == "Rule":
        return True
    if name not in classes or name in seen:
        return False
    return any(_is_rule(b, classes, (*seen, name)) for b in classes[name][0])


def _read(prefix: str = "") -> dict[str, RuleDoc]:
    classes = _classes(prefix)
    docs: dict[str, RuleDoc] = {}
    for name, (_, _, doc) in classes.items():
        if name == "Rule" or not _is_rule(name, classes):
            continue
        values = {f: _resolve(name, classes, f) for f in FIELDS}
        if not values["code"]:
            continue
        if values["code"] in docs:
            raise _Unreadable
        docs[values["code"]] = RuleDoc(**values, text=cleandoc(doc or ""))
    return docs


def _imported() -> dict[str, RuleDoc]:
    from . import rules

    return {r.code: RuleDoc(r.code, r.name, r.severity, r.summary, bool(r.fixable), r.doc(), bool(r.default))
            for r in rules.all_rules()}


_CACHE: dict[str, RuleDoc] = {}


def all_docs() -> list[RuleDoc]:
    if not _CACHE:
        try:
            _CACHE.update(_read())
        except (_Unreadable, OSError, SyntaxError):
            _CACHE.update(_imported())
    return [d for _, d in sorted(_CACHE.items())]


def get(code: str) -> RuleDoc | None:
    """One rule's entry, read from its own module (and the base modules) when it can be:
    `qlin rule QL405` parses 5 files, not every rule's."""
    code = code.upper()
    if not _CACHE and code.isalnum():
        try:
            found = _read(code.lower() + "_").get(code)
        except (_Unreadable, OSError, SyntaxError):
            found = None
        if found is not None:
            return found
    all_docs()
    return _CACHE.get(code)
