"""Many glob patterns matched in time linear in their size (per-path-ignores and
per-node-ignores of a configuration).

The patterns mean what ``fnmatch.fnmatchcase`` gives them (``*``, ``?``, ``[seq]``,
``[!seq]``; tests/test_globs.py holds the two equal), but they are not turned into one
regular expression each: ``fnmatch`` compiles every pattern (100,000 entries took half a
minute, and a 10 MB pattern of ``a*a*...`` never finished). A pattern is cut at its stars
into pieces without one; the first piece must start the text, the last end it, and each
other is found leftmost in order, which decides a star pattern exactly without going back.
Patterns are kept by the literal text before their first wildcard, so a text is compared
only with the patterns whose prefix it starts with.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

_WILD = ("*", "?", "[")


def _class_end(pattern: str, i: int) -> int:
    """The index after the ``]`` closing the class opened at ``i``, or -1 (fnmatch's rules:
    a ``!`` and then a ``]`` right after the bracket are members, not the end)."""
    j = i + 1
    if j < len(pattern) and pattern[j] == "!":
        j += 1
    if j < len(pattern) and pattern[j] == "]":
        j += 1
    j = pattern.find("]", j)
    return -1 if j < 0 else j + 1


def _pieces(pattern: str) -> list[str]:
    """The pattern cut at each star outside a class (a fast split when it has no class)."""
    if "[" not in pattern:
        return pattern.split("*")
    pieces, start, i = [], 0, 0
    while i < len(pattern):
        c = pattern[i]
        if c == "[":
            end = _class_end(pattern, i)
            i = end if end > 0 else i + 1
        elif c == "*":
            pieces.append(pattern[start:i])
            start = i = i + 1
        else:
            i += 1
    pieces.append(pattern[start:])
    return pieces


@functools.lru_cache(maxsize=4096)
def _regex(piece: str) -> re.Pattern:
    """A piece with ``?`` or a class as a regular expression of it alone (no star: it
    matches a fixed number of characters and cannot go back)."""
    import fnmatch

    body = fnmatch.translate(piece)  # '(?s:...)\\Z'
    return re.compile(body[:-2] if body.endswith("\\Z") else body)


def _plain(piece: str) -> bool:
    return "?" not in piece and "[" not in piece


def _at(piece: str, text: str, i: int) -> int:
    """The end of ``piece`` matched at ``i`` exactly, or -1."""
    if _plain(piece):
        return i + len(piece) if text.startswith(piece, i) else -1
    m = _regex(piece).match(text, i)
    return m.end() if m else -1


def _find(piece: str, text: str, i: int) -> int:
    """The end of the leftmost match of ``piece`` at or after ``i``, or -1."""
    if _plain(piece):
        j = text.find(piece, i)
        return j + len(piece) if j >= 0 else -1
    m = _regex(piece).search(text, i)
    return m.end() if m else -1


def _ends(piece: str, text: str, lo: int) -> bool:
    """Whether ``piece`` matches the end of ``text``, starting at ``lo`` or later."""
    if _plain(piece):
        return len(text) - len(piece) >= lo and text.endswith(piece)
    return any(_regex(piece).fullmatch(text, start) for start in range(len(text), lo - 1, -1))


class Glob:
    """One pattern, kept as its pieces (strings: a 10 MB pattern is cut by str.split and
    read only as far as a text goes)."""

    __slots__ = ("pieces",)

    def __init__(self, pattern: str):
        self.pieces = _pieces(pattern)

    def matches(self, text: str) -> bool:
        pieces = self.pieces
        if len(pieces) == 1:
            return _at(pieces[0], text, 0) == len(text)
        i = _at(pieces[0], text, 0)
        if i < 0:
            return False
        for k in range(1, len(pieces) - 1):
            i = _find(pieces[k], text, i)
            if i < 0:
                return False
        return _ends(pieces[-1], text, i)


def literal_prefix(pattern: str) -> str:
    """The text before the pattern's first wildcard."""
    cut = min((j for j in (pattern.find(w) for w in _WILD) if j >= 0), default=len(pattern))
    return pattern[:cut]


class GlobSet:
    """Patterns in order; ``matching(text)`` gives the indexes of those that match it."""

    def __init__(self, patterns: Iterable[str]):
        self._by_prefix: dict[str, list[tuple[int, Glob]]] = {}
        self._sizes: set[int] = set()  # the lengths of the prefixes held
        for n, pattern in enumerate(patterns):
            prefix = literal_prefix(pattern)
            self._by_prefix.setdefault(prefix, []).append((n, Glob(pattern)))
            self._sizes.add(len(prefix))

    def matching(self, text: str) -> list[int]:
        found: list[int] = []
        for k in self._sizes:
            if k <= len(text):
                for index, glob in self._by_prefix.get(text[:k], ()):
                    if glob.matches(text):
                        found.append(index)
        found.sort()
        return found
