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
* ``*`` and ``?`` never match ``/``; ``[...]`` is a bracket expression as git's wildmatch
  reads it (``[!...]`` or ``[^...]`` negated, ranges, ``[:alpha:]`` and the other POSIX
  classes; a reversed range ``[z-a]`` holds its low end alone; an unclosed ``[`` matches
  nothing); ``**/`` at the start matches in every folder, ``/**`` at the end everything
  inside, ``/**/`` zero or more folders; other ``**`` are plain ``*``.
* matched without regular expressions, in time linear in the pattern: each '/'-free part
  is cut at its stars and its pieces found leftmost, and ``**`` parts are a table over the
  path's depth (``git check-ignore`` itself goes back exponentially on ``a*a*...a*b``;
  tests/test_discover.py holds the two equal on every other case);
* an ignore file that is not a regular file (a FIFO) is not read.

The user's global excludes file (``core.excludesFile``) is not read: it belongs to one
machine, and a check should not change between a laptop and CI.
"""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Pattern:
    base: str  # the folder of the .gitignore it came from (absolute)
    segments: tuple  # per '/'-separated part: a _Segment, or STARSTAR for a whole "**"
    negated: bool
    folders_only: bool
    anchored: bool  # a '/' at its start or middle: matched from base; else the last name only

    def matches(self, path: str, is_dir: bool) -> bool:
        if self.folders_only and not is_dir:
            return False
        rel = os.path.relpath(path, self.base)
        if rel == "." or rel.startswith(".." + os.sep) or rel == "..":
            return False
        parts = rel.replace(os.sep, "/").split("/")
        if not self.anchored:
            return self.segments[0].matches(parts[-1])
        return _segments_match(self.segments, parts)


STARSTAR = "**"  # a whole segment "**": any number of folders


def _segments_match(segments: tuple, parts: list[str]) -> bool:
    """Whether the pattern's segments match the path's parts: a table over (segment, part),
    so repeated "**" cost their count times the path's depth, never more."""
    last = len(segments) - 1
    reach = {0}  # the parts index each segment may start at
    for k, seg in enumerate(segments):
        nxt: set[int] = set()
        for i in reach:
            if seg is STARSTAR:
                # "/**" at the end holds everything inside (one part or more); elsewhere zero or more
                nxt.update(range(i + 1 if k == last else i, len(parts) + 1))
            elif i < len(parts) and seg.matches(parts[i]):
                nxt.add(i + 1)
        if not nxt:
            return False
        reach = nxt
    return len(parts) in reach


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
    segments = tuple(STARSTAR if part == "**" else _Segment(part) for part in _split(line))
    return Pattern(base, segments, negated, folders_only, anchored)


def _split(pattern: str) -> list[str]:
    """The pattern cut at each '/' that is not escaped or inside a bracket expression."""
    parts, start, i = [], 0, 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
        elif c == "[":
            end = _class_end(pattern, i)
            i = i + 1 if end is None else end + 1
        elif c == "/":
            parts.append(pattern[start:i])
            start = i = i + 1
        else:
            i += 1
    parts.append(pattern[start:])
    return parts


def _strip_trailing_spaces(line: str) -> str:
    end = len(line)
    while end > 0 and line[end - 1] == " " and not (end > 1 and line[end - 2] == "\\"):
        end -= 1
    return line[:end]


# The character classes git's wildmatch knows inside a bracket expression ("[[:alpha:]]").
POSIX = {
    "alnum": str.isalnum, "alpha": str.isalpha, "blank": lambda c: c in " \t",
    "cntrl": lambda c: ord(c) < 32 or ord(c) == 127, "digit": lambda c: "0" <= c <= "9",
    "graph": lambda c: c.isprintable() and not c.isspace(), "lower": str.islower,
    "print": str.isprintable, "punct": lambda c: c.isascii() and c.isprintable() and not c.isalnum()
    and c != " ", "space": str.isspace, "upper": str.isupper,
    "xdigit": lambda c: c in "0123456789abcdefABCDEF",
}


class _Class:
    """A bracket expression: members, ranges (a reversed one its low end alone, as in git), POSIX
    classes, ``!`` or ``^`` to negate; a backslash takes the next character as it is."""

    def __init__(self, inner: str):
        self.negated = inner[:1] in ("!", "^")
        if self.negated:
            inner = inner[1:]
        self.chars: set[str] = set()
        self.ranges: list[tuple[str, str]] = []
        self.tests: list = []
        self.never = False  # an unknown POSIX class: git's wildmatch matches nothing
        i = 0
        while i < len(inner):
            if inner.startswith("[:", i) and inner.find(":]", i + 2) > 0:
                end = inner.find(":]", i + 2)
                test = POSIX.get(inner[i + 2:end])
                if test is None:
                    self.never = True
                else:
                    self.tests.append(test)
                i = end + 2
                continue
            c = inner[i]
            if c == "\\" and i + 1 < len(inner):
                i += 1
                c = inner[i]
            if i + 2 < len(inner) and inner[i + 1] == "-":
                hi = inner[i + 2]
                if hi == "\\" and i + 3 < len(inner):
                    hi, i = inner[i + 3], i + 1
                # git's wildmatch takes the low end as a member before it reads the range, so a
                # reversed range ("[z-a]") holds its low end alone
                self.chars.add(c)
                self.ranges.append((c, hi))
                i += 3
                continue
            self.chars.add(c)
            i += 1

    def matches(self, c: str) -> bool:
        if self.never:
            return False
        hit = c in self.chars or any(lo <= c <= hi for lo, hi in self.ranges) or any(t(c) for t in self.tests)
        return hit != self.negated


ANY = object()  # "?": one character (never '/': segments hold none)


class _Segment:
    """One '/'-free part of a pattern, matched with each run of stars cut out: the pieces
    between stars are of fixed length, so the first must start the name, the last end it,
    and each other is taken at its leftmost place; nothing is tried twice (a pattern of a
    thousand stars costs a thousand finds, where a regular expression went back for ever)."""

    def __init__(self, part: str):
        self.pieces: list[list] = [[]]  # atoms: a character, ANY or a _Class
        self.broken = False  # an unclosed bracket: git's wildmatch matches nothing
        i, n = 0, len(part)
        while i < n:
            c = part[i]
            if c == "*":
                while i < n and part[i] == "*":
                    i += 1
                self.pieces.append([])
                continue
            if c == "?":
                self.pieces[-1].append(ANY)
            elif c == "[":
                end = _class_end(part, i)
                if end is None:
                    self.broken = True
                    return
                self.pieces[-1].append(_Class(part[i + 1:end]))
                i = end + 1
                continue
            elif c == "\\" and i + 1 < n:
                i += 1
                self.pieces[-1].append(part[i])
            else:
                self.pieces[-1].append(c)
            i += 1

    @staticmethod
    def _at(piece: list, name: str, i: int) -> bool:
        if i + len(piece) > len(name):
            return False
        for k, atom in enumerate(piece):
            c = name[i + k]
            if atom is ANY:
                continue
            if isinstance(atom, _Class):
                if not atom.matches(c):
                    return False
            elif atom != c:
                return False
        return True

    def matches(self, name: str) -> bool:
        if self.broken:
            return False
        pieces = self.pieces
        if len(pieces) == 1:
            return len(pieces[0]) == len(name) and self._at(pieces[0], name, 0)
        first, last = pieces[0], pieces[-1]
        if not self._at(first, name, 0):
            return False
        i = len(first)
        for piece in pieces[1:-1]:
            while i + len(piece) <= len(name) and not self._at(piece, name, i):
                i += 1
            if i + len(piece) > len(name):
                return False
            i += len(piece)
        start = len(name) - len(last)
        return start >= i and self._at(last, name, start)


def _class_end(pattern: str, start: int) -> int | None:
    """Where the bracket expression opened at ``start`` closes (a ']' first inside it is a
    member; so is a "[:name:]" class)."""
    i = start + 1
    if i < len(pattern) and pattern[i] in "!^":
        i += 1
    if i < len(pattern) and pattern[i] == "]":
        i += 1
    while i < len(pattern):
        if pattern.startswith("[:", i):
            end = pattern.find(":]", i + 2)
            if end > 0:
                i = end + 2
                continue
        if pattern[i] == "\\":
            i += 2
            continue
        if pattern[i] == "]":
            return i
        i += 1
    return None


def ignored(patterns, path: str, is_dir: bool) -> bool:
    """Whether the last pattern that matches ``path`` ignores it."""
    verdict = False
    for p in patterns:
        if p.matches(path, is_dir):
            verdict = not p.negated
    return verdict


def read(folder: str) -> list[Pattern]:
    """The patterns of ``folder``'s ``.gitignore`` (none if it has none or cannot be read)."""
    return _patterns_of(os.path.join(folder, ".gitignore"), folder)


def _patterns_of(path: str, base: str) -> list[Pattern]:
    """The patterns of an ignore file; none when it is not a regular file (a FIFO would
    block the walk for ever; git reads no such file either) or cannot be read."""
    try:
        if not os.path.isfile(path):
            return []
        with open(path, encoding="utf-8", errors="replace") as f:
            return parse(f.read(1 << 20), base)
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
    out: list[Pattern] = _patterns_of(os.path.join(top, ".git", "info", "exclude"), top)
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
