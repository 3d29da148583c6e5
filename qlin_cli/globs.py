"""Many glob patterns matched in time linear in their size (per-path-ignores and
per-node-ignores of a configuration).

The patterns mean what ``fnmatch.fnmatchcase`` gives them (``*``, ``?``, ``[seq]``,
``[!seq]``; tests/test_globs.py and tests/test_hardening3_config.py hold the two equal), but
no regular expression is made of them: ``fnmatch`` compiles every pattern (100,000 entries
took half a minute, a 10 MB pattern of ``a*a*...`` never finished), and a class alone takes
60 us to compile (100,000 patterns with a class each: 6 s).

A pattern is cut at its stars into pieces without one; the first piece must start the text,
the last end it, and each other is found leftmost in order, which decides a star pattern
exactly without going back. A piece is a fixed-length run of characters, ``?`` and classes;
one with a ``?`` or a class is read into those lazily, only as far as a text can reach, so a
10 MB pattern costs what the text compared with it costs. Patterns are kept by the literal
text before their first wildcard, so a text is compared only with the patterns whose prefix
it starts with, and a pattern is read (cut into pieces) when a text first reaches it.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import operator
import re
from collections.abc import Iterable

_PREFIX = re.compile(r"[^*?\[]*")  # the literal text before the first wildcard
# each one's, in patterns joined by NULs: a match a pattern (the rest of it skipped in one step)
_PREFIXES = re.compile(r"([^*?\[\0]*)[^\0]*\0?")
# A class as fnmatch reads it: "[", an optional "!", an optional "]" (a member), up to the
# next "]". (Where this regular expression gives back the optional "]" to close "[]" or
# "[!]", fnmatch reads a literal "[" instead; neither holds a star, so both cut a pattern
# at the same stars.)
_CLASS = re.compile(r"(\[!?\]?[^\]]*\])")
_ANY_RUN = re.compile(r"\?+")
_CLOSE_DASHES = re.compile(r"-.?-", re.DOTALL)
_FEW = 64  # pieces of a pattern made at once (more: each when first reached)
_SCANS = 8  # texts a GlobSet answers by a pass over all prefixes, before it makes its table
_LITERAL_RUN = re.compile(r"[^?\[]+")


def _pieces(pattern: str) -> list[str]:
    """The pattern cut at each star outside a class (str.split when no class holds one)."""
    if "*" not in pattern:
        return [pattern]
    if "[" not in pattern:
        return pattern.split("*")
    last = pattern.rfind("]")  # no class closes after it: searched no further
    parts = _CLASS.split(pattern[:last + 1])  # text, class, text, ..., text
    parts[-1] += pattern[last + 1:]
    if "*" not in "".join(parts[1::2]):
        return pattern.split("*")
    pieces: list[str] = []
    current: list[str] = []
    for n, part in enumerate(parts):
        if n % 2:  # a class, stars and all
            current.append(part)
            continue
        cut = part.split("*")
        current.append(cut[0])
        if len(cut) > 1:
            pieces.append("".join(current))
            pieces.extend(cut[1:-1])
            current = [cut[-1]]
    pieces.append("".join(current))
    return pieces


class _Class:
    """The characters one ``[...]`` matches: single characters and ranges (merged, sorted),
    or all but those."""

    __slots__ = ("chars", "los", "his", "negated")

    def __init__(self, chars: str, ranges: list[tuple[str, str]], negated: bool):
        self.chars = frozenset(chars)
        self.los: list[str] = []
        self.his: list[str] = []
        for lo, hi in sorted(ranges) if ranges else ():
            if self.his and lo <= self.his[-1]:
                self.his[-1] = max(self.his[-1], hi)
            else:
                self.los.append(lo)
                self.his.append(hi)
        self.negated = negated

    def has(self, c: str) -> bool:
        if c in self.chars:
            found = True
        else:
            k = bisect.bisect_right(self.los, c) - 1
            found = k >= 0 and c <= self.his[k]
        return found != self.negated


@functools.lru_cache(maxsize=4096)  # the same class in many patterns is read once
def _class(body: str) -> _Class:
    """The class ``[body]`` as ``fnmatch.translate`` reads it.

    A "-" is a range between its neighbours, except the first character (after a "!"),
    one of the two characters after a range's "-", and a last character. A range whose
    ends are in the wrong order is dropped with both ends. What is left decides the rest:
    nothing matches nothing; a "!" first negates the others (alone, it matches any
    character), and a range of which that "!" was the low end leaves "-" and its high end as
    members."""
    negated = body.startswith("!")
    start = 2 if negated else 1
    k = body.find("-", start)
    if not 0 <= k < len(body) - 1:  # no range
        return _Class(body[1:] if negated else body, [], negated)
    if len(body) > 64:
        found = _ranges(body, start)
        if found is not None:
            return _Class("".join(found[0])[start - 1:], found[1], negated)
    dashes = []
    while 0 <= k < len(body) - 1:
        dashes.append(k)
        k = body.find("-", k + 3)
    gone: set[int] = set()  # positions of dropped ranges, ends and "-"
    kept = []
    for k in dashes:
        if body[k - 1] > body[k + 1]:
            gone.update((k - 1, k, k + 1))
        else:
            kept.append(k)
    first = 0
    while first in gone:
        first += 1
    if first >= len(body):
        return _Class("", [], False)  # nothing left: matches nothing
    negated = body[first] == "!"
    ranges = [(body[k - 1], body[k + 1]) for k in kept]
    extra = ""
    if negated and kept and kept[0] == first + 1:  # "!-x": "-" and "x" are members
        ranges.pop(0)
        extra = "-" + body[first + 2]
    # the single members: every position left that is not a range's "-"
    cuts = sorted(gone.union(kept, [first] if negated else []))
    chars, start = [extra], 0
    for k in cuts:
        chars.append(body[start:k])
        start = k + 1
    chars.append(body[start:])
    return _Class("".join(chars), ranges, negated)


def _ranges(body: str, start: int) -> tuple[list[str], list[tuple[str, str]]] | None:
    """A long class read by str and map calls, not character by character (a 10 MB class
    took 6 s): (the text less its "-"s, the ranges), when every "-" is a range whose ends
    are in order: none before ``start`` or last, and none two or fewer characters from
    another. None for any other class."""
    if _CLOSE_DASHES.search(body) or body.find("-", 0, start) >= 0 or body.endswith("-"):
        return None
    parts = body.split("-")  # each but the ends at least two characters long
    los = list(map(operator.itemgetter(-1), parts[:-1]))
    his = list(map(operator.itemgetter(0), parts[1:]))
    if any(map(operator.gt, los, his)):
        return None
    return parts, list(set(zip(los, his, strict=True)))


def _class_end(piece: str, i: int, last: int) -> int:
    """The index after the ``]`` closing the class opened at ``i``, or -1 (``last``: the
    index of the piece's last ``]``)."""
    j = i + 1
    if piece.startswith("!", j):
        j += 1
    if piece.startswith("]", j):
        j += 1
    return piece.find("]", j) + 1 if j <= last else -1


class _Fixed:
    """A piece with ``?`` or ``[``: atoms that each match a fixed number of characters (a
    literal run its own length, a run of ``?`` its count, a class one), read only as far as
    a text needs."""

    __slots__ = ("piece", "atoms", "read", "size", "last", "full")

    def __init__(self, piece: str):
        self.piece = piece
        self.atoms: list = []
        self.read = 0  # how far into the piece atoms are made
        self.size = 0  # how many characters they match
        self.last = piece.rfind("]")
        self.full = -1  # the size, once the whole piece is read

    def length(self, room: int) -> int:
        """The number of characters the piece matches, or -1 when that is more than ``room``."""
        if self.full >= 0:
            return self.full if self.full <= room else -1
        piece, atoms = self.piece, self.atoms
        i, size = self.read, self.size
        while size <= room and i < len(piece):
            c = piece[i]
            if c == "?":
                end = _ANY_RUN.match(piece, i).end()
                atoms.append(end - i)
                size += end - i
            elif c == "[":
                end = _class_end(piece, i, self.last)
                if end > 0:
                    atoms.append(_class(piece[i + 1:end - 1]))
                else:  # never closed: a literal "["
                    end = i + 1
                    atoms.append("[")
                size += 1
            else:
                end = _LITERAL_RUN.match(piece, i).end()
                atoms.append(piece[i:end])
                size += end - i
            i = end
        self.read, self.size = i, size
        if i == len(piece):
            self.full = size
        return size if size <= room else -1

    def _at(self, text: str, i: int) -> int:
        """The end of the piece matched at ``i``, where it fits, or -1."""
        for atom in self.atoms:
            if atom.__class__ is str:
                if not text.startswith(atom, i):
                    return -1
                i += len(atom)
            elif atom.__class__ is int:
                i += atom
            else:
                if not atom.has(text[i]):
                    return -1
                i += 1
        return i

    def end_at(self, text: str, i: int) -> int:
        """The end of the piece matched at ``i`` exactly, or -1."""
        return self._at(text, i) if self.length(len(text) - i) >= 0 else -1

    def find(self, text: str, i: int) -> int:
        """The end of the leftmost match at or after ``i``, or -1."""
        size = self.length(len(text) - i)
        if size < 0:
            return -1
        first = self.atoms[0]
        last = len(text) - size  # the last place it can start
        while i <= last:
            if first.__class__ is str:  # jump to where its literal start is
                i = text.find(first, i, last + len(first))
                if i < 0:
                    return -1
            end = self._at(text, i)
            if end >= 0:
                return end
            i += 1
        return -1

    def ends(self, text: str, lo: int) -> bool:
        """Whether the piece matches the end of ``text``, starting at ``lo`` or later."""
        size = self.full
        if size < 0 or size > len(text) - lo:
            size = self.length(len(text) - lo)
        return size >= 0 and self._at(text, len(text) - size) >= 0


class Glob:
    """One pattern, kept as its pieces: strings (a 10 MB pattern is cut by str.split), each
    with a ``?`` or a class read into a _Fixed. A pattern of a few pieces has them made at
    once; one of more has each made when a text first reaches it."""

    __slots__ = ("pieces", "_made")

    def __init__(self, pattern: str):
        pieces: list = _pieces(pattern)
        if len(pieces) > 3:  # "a**b" is "a*b": empty pieces between stars match anywhere
            pieces = [pieces[0], *filter(None, pieces[1:-1]), pieces[-1]]
        self._made: dict[int, str | _Fixed] | None = None
        if len(pieces) <= _FEW:
            pieces = [_Fixed(p) if "?" in p or "[" in p else p for p in pieces]
        else:
            self._made = {}
        self.pieces = pieces

    def _piece(self, k: int) -> str | _Fixed:
        made = self._made
        if made is None:
            return self.pieces[k]
        piece = made.get(k)
        if piece is None:
            piece = self.pieces[k]
            if "?" in piece or "[" in piece:
                piece = _Fixed(piece)
            made[k] = piece
        return piece

    def matches(self, text: str) -> bool:
        pieces = self.pieces
        piece = self._piece if self._made is not None else pieces.__getitem__
        first = piece(0)
        if first.__class__ is str:
            i = len(first) if text.startswith(first) else -1
        else:
            i = first.end_at(text, 0)
        last = len(pieces) - 1
        if last == 0 or i < 0:
            return i == len(text)
        for k in range(1, last):
            middle = piece(k)
            if middle.__class__ is str:
                j = text.find(middle, i)
                i = j + len(middle) if j >= 0 else -1
            else:
                i = middle.find(text, i)
            if i < 0:
                return False
        end = piece(last)
        if end.__class__ is str:
            return len(text) - len(end) >= i and text.endswith(end)
        return end.ends(text, i)


def literal_prefix(pattern: str) -> str:
    """The text before the pattern's first wildcard."""
    return _PREFIX.match(pattern).group()


class GlobSet:
    """Patterns in order; ``matching(text)`` gives the indexes of those that match it.

    The first few texts find the patterns whose prefix they start with by one pass of
    ``str.startswith`` over the prefixes (C, no loop of Python: 100,000 in a few ms); after
    those, a table of the patterns by prefix is made once, and a text looks up each of its
    own prefixes whose length some pattern's prefix has."""

    def __init__(self, patterns: Iterable[str]):
        self._patterns = list(patterns)
        self._prefixes = _prefixes(self._patterns)
        self._asked = 0
        self._by_prefix: dict[str, list[int]] | None = None
        self._sizes: list[int] = []  # the lengths of the prefixes held
        self._globs: dict[int, Glob] = {}  # made when a text first reaches the pattern

    def _candidates(self, text: str) -> Iterable[int]:
        """The indexes of the patterns whose literal prefix starts ``text``, in order."""
        self._asked += 1
        if self._by_prefix is None and self._asked <= _SCANS:
            return itertools.compress(itertools.count(), map(text.startswith, self._prefixes))
        if self._by_prefix is None:
            by_prefix: dict[str, list[int]] = {}
            for n, prefix in enumerate(self._prefixes):
                found = by_prefix.get(prefix)
                if found is None:
                    by_prefix[prefix] = [n]
                else:
                    found.append(n)
            self._by_prefix = by_prefix
            self._sizes = sorted(set(map(len, by_prefix)))
        out: list[int] = []
        for k in self._sizes:
            if k > len(text):
                break
            out += self._by_prefix.get(text[:k], ())
        return sorted(out)

    def matching(self, text: str) -> list[int]:
        found: list[int] = []
        globs = self._globs
        for index in self._candidates(text):
            glob = globs.get(index)
            if glob is None:
                glob = globs[index] = Glob(self._patterns[index])
            if glob.matches(text):
                found.append(index)
        return found


def _prefixes(patterns: list[str]) -> list[str]:
    """Each pattern's literal prefix: read by one search of the patterns joined by NUL
    characters when none holds one (a call per pattern took most of the time of 100,000)."""
    joined = "\0".join(patterns)
    if patterns and joined.count("\0") == len(patterns) - 1:
        return _PREFIXES.findall(joined)[:len(patterns)]  # (and an empty match at the end)
    return [literal_prefix(p) for p in patterns]
