"""The patterns of ``.gitignore`` files, matched as git matches them (gitignore(5)).

Read when `qlin check` walks a folder inside a git repository: each folder's
``.gitignore`` applies to what is below it, after the ones above it, and the
repository's ``.git/info/exclude`` before them all; the last pattern that matches a
path decides (``!`` re-includes). What git's documentation says, as implemented:

* a blank line or one starting with ``#`` matches nothing; ``\\#`` and ``\\!`` start a
  pattern with that character; trailing spaces are dropped unless escaped;
* a trailing ``/`` matches folders only;
* a pattern with a ``/`` at its start or middle is relative to the ``.gitignore``'s
  folder; one without matches a name at any depth below it;
* ``*`` and ``?`` never match ``/``; ``[...]`` is a range (``[!...]`` negated);
  ``**/`` at the start matches in every folder, ``/**`` at the end everything inside,
  ``/**/`` zero or more folders; other ``**`` are plain ``*``.

The user's global excludes file (``core.excludesFile``) is not read: it belongs to one
machine, and a check should not change between a laptop and CI.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Pattern:
    base: str  # the folder of the .gitignore it came from (absolute)
    regex: re.Pattern
    negated: bool
    folders_only: bool

    def matches(self, path: str, is_dir: bool) -> bool:
        if self.folders_only and not is_dir:
            return False
        rel = os.path.relpath(path, self.base)
        if rel == "." or rel.startswith(".." + os.sep) or rel == "..":
            return False
        return self.regex.fullmatch(rel.replace(os.sep, "/")) is not None


def parse(text: str, base: str) -> list[Pattern]:
    """The patterns of one file's ``text``; ``base`` the folder they are relative to."""
    out = []
    for line in text.splitlines():
        p = compile_line(line, base)
        if p is not None:
            out.append(p)
    return out


def compile_line(line: str, base: str) -> Pattern | None:
    if not line or line.startswith("#"):
        return None
    line = _strip_trailing_spaces(line)
    negated = line.startswith("!")
    if negated:
        line = line[1:]
    elif line.startswith(("\\!", "\\#")):
        line = line[1:]
    folders_only = line.endswith("/") and not line.endswith("\\/")
    if folders_only:
        line = line[:-1]
    if not line:
        return None
    anchored = "/" in line
    if line.startswith("/"):
        line = line[1:]
    body = _translate(line)
    return Pattern(base, re.compile(body if anchored else "(?:.*/)?" + body, re.DOTALL), negated,
                   folders_only)


def _strip_trailing_spaces(line: str) -> str:
    end = len(line)
    while end > 0 and line[end - 1] == " " and not (end > 1 and line[end - 2] == "\\"):
        end -= 1
    return line[:end]


def _translate(pattern: str) -> str:
    """A gitignore glob as a regular expression over a '/'-separated path."""
    out = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if pattern.startswith("**/", i) and (i == 0 or pattern[i - 1] == "/"):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("/**", i) and i + 3 == n:
            out.append("/.*")
            i += 3
        elif c == "*":
            while i < n and pattern[i] == "*":
                i += 1
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            end = _class_end(pattern, i)
            if end is None:
                out.append(re.escape(c))
                i += 1
            else:
                inner = pattern[i + 1:end]
                neg = inner.startswith(("!", "^"))
                if neg:
                    inner = inner[1:]
                inner = inner.replace("\\", "\\\\")
                out.append(f"[{'^' if neg else ''}{inner}]")
                i = end + 1
        elif c == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def _class_end(pattern: str, start: int) -> int | None:
    """Where the range opened at ``start`` closes (a ']' first inside it is literal)."""
    i = start + 1
    if i < len(pattern) and pattern[i] in "!^":
        i += 1
    if i < len(pattern) and pattern[i] == "]":
        i += 1
    end = pattern.find("]", i)
    return None if end < 0 else end


def ignored(patterns, path: str, is_dir: bool) -> bool:
    """Whether the last pattern that matches ``path`` ignores it."""
    verdict = False
    for p in patterns:
        if p.matches(path, is_dir):
            verdict = not p.negated
    return verdict


def read(folder: str) -> list[Pattern]:
    """The patterns of ``folder``'s ``.gitignore`` (none if it has none or cannot be read)."""
    try:
        with open(os.path.join(folder, ".gitignore"), encoding="utf-8", errors="replace") as f:
            return parse(f.read(1 << 20), folder)
    except OSError:
        return []


def repository(folder: str) -> str | None:
    """The top folder of the git repository ``folder`` is in (one holding ``.git``)."""
    d = os.path.abspath(folder)
    while True:
        if os.path.exists(os.path.join(d, ".git")):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def above(folder: str) -> list[Pattern]:
    """The patterns that apply in ``folder`` from the repository around it: its
    ``.git/info/exclude``, then each ``.gitignore`` from the top down to ``folder``'s
    parent (``folder``'s own is read by the walk). None outside a repository."""
    top = repository(folder)
    if top is None:
        return []
    out: list[Pattern] = []
    try:
        with open(os.path.join(top, ".git", "info", "exclude"), encoding="utf-8", errors="replace") as f:
            out += parse(f.read(1 << 20), top)
    except OSError:
        pass
    chain = []
    d = os.path.dirname(os.path.abspath(folder))
    while len(d) >= len(top):
        chain.append(d)
        if d == top:
            break
        d = os.path.dirname(d)
    for d in reversed(chain):
        out += read(d)
    return out
