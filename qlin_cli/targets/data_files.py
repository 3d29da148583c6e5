"""Reading the data files of targets/data/ (kernel_store.py, probe_store.py): the whole
file, the releases it holds from its head alone, or one block of it entry by entry.

Both stores write the ``releases`` block first, one line per release: listing the measured
releases (which every target name is checked against) parses those lines and not the rest.

A check judges a model by the few dozen facts its nodes ask for, of thousands in a file.
Both stores write each block's entries in order (probe keys, error ids, kernel rows by
domain and op), so an entry is found by bisecting the file's bytes: about 20 ``find``
calls and one small JSON parse per fact asked for, nothing read in advance. Naming a
target costs reading the file's bytes (1-3 ms), where parsing the whole of onnxruntime's
probes took 60-70 ms (tests/test_probe_store.py holds every entry read this way equal to
the whole file parsed, and every block in order).
"""

from __future__ import annotations

import gzip
import json
import os
import re
import zlib
from bisect import bisect_left
from collections.abc import Callable, Iterator, Mapping
from functools import cache
from importlib import resources

_DATA_PACKAGE = "qlin_cli.targets.data"
GZ = ".gz"  # how every data file is stored (``write``)
_OPEN = '"releases": {'
_KEY = re.compile(rb'"[^"\\\n]*(?:\\.[^"\\\n]*)*"')  # a JSON string on one line
_CLOSE = {ord("{"): b"\n}", ord("["): b"\n]"}  # a block's closing line (no entry starts so)


@cache
def raw(file_name: str) -> bytes | None:
    """The file's bytes, read once (None without the file): ``file_name`` is stored
    gzip-compressed as ``file_name``.gz (``write``), which is read and decompressed whole
    (about 4 ms for the largest); a plain ``file_name`` is read as it is."""
    folder = resources.files(_DATA_PACKAGE)
    packed = folder / (file_name + GZ)
    if packed.is_file():  # (zlib reads the gzip member and checks its CRC in one call)
        return zlib.decompress(packed.read_bytes(), wbits=31)
    entry = folder / file_name
    return entry.read_bytes() if entry.is_file() else None


def stored(path: os.PathLike | str) -> str:
    """Where the data file ``path`` (``<folder>/<name>.json``) is kept: ``path``.gz."""
    return os.fspath(path) + GZ


def load(path: os.PathLike | str) -> dict | None:
    """The data file ``path`` parsed, from its stored form (None without it): the generators'
    way to read a file they are about to write again."""
    try:
        with open(stored(path), "rb") as f:
            return json.loads(gzip.decompress(f.read()))
    except FileNotFoundError:
        return None


def write(path: os.PathLike | str, text: str) -> int:
    """Store ``text`` as the data file ``path``: gzip-compressed at level 9 with no name or
    time in its header (the same text gives the same bytes, so git sees a change only where
    the data changed), written whole and then put in place (a reader never sees half a
    file). Returns the bytes written. The text is one line per release and per range:
    ``gzip -dc`` of two commits' files diffs as what changed (docs/targets.md)."""
    target = stored(path)
    body = gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0)
    part = target + ".part"
    with open(part, "wb") as f:
        f.write(body)
    os.replace(part, target)
    return len(body)


@cache
def read(file_name: str) -> dict | None:
    """The whole file parsed, once (None without the file): the generators' and tests' way."""
    found = raw(file_name)
    return None if found is None else json.loads(found)


def releases(file_name: str) -> tuple[str, ...] | None:
    """The releases of a data file in its order (None without the file): its head alone."""
    return None if raw(file_name) is None else tuple(head(file_name).get("releases", ()))


@cache
def head(file_name: str) -> dict:
    """The file's fields before its blocks, and its ``releases`` block, parsed ({} without
    the file)."""
    body = raw(file_name)
    if body is None:
        return {}
    out: dict = {}
    for line in body[:body.find(b"\n" + _OPEN.encode())].splitlines()[1:]:
        k, _, v = line.partition(b": ")
        out[json.loads(k)] = json.loads(v.removesuffix(b","))
    out["releases"] = dict(block(file_name, "releases").items())  # in the file's order
    return out


def _span(body: bytes, name: str) -> tuple[int, int] | None:
    """Where the entries of the top-level block ``name`` start and end."""
    opened = body.find(b'\n"' + name.encode() + b'": ')
    if opened < 0:
        return None
    start = body.index(b"\n", opened + 1) + 1
    return start, body.index(_CLOSE[body[start - 2]], start - 1) + 1


@cache
def block(file_name: str, name: str) -> Block:
    """The {key: value} block ``name`` of the file (empty without the file or block)."""
    body = raw(file_name) or b""
    start, end = _span(body, name) or (0, 0)
    return Block(body, start, end)


@cache
def rows(file_name: str, name: str, key_of: Callable[[bytes], tuple]) -> Rows:
    """The list block ``name`` of the file, one row per line, sorted by ``key_of(line)``."""
    body = raw(file_name) or b""
    start, end = _span(body, name) or (0, 0)
    return Rows(body, start, end, key_of)


class _Sorted:
    """Entries of one block, each starting a line with ``marker``, sorted by ``_key``."""

    marker = b""
    INDEX_AFTER = 64  # seeks before every entry's start and key are listed once (a folder, a test)

    def __init__(self, body: bytes, start: int, end: int):
        self._body, self._start, self._end = body, start, end
        self._seeks = 0
        self._index: tuple[list, list[int]] | None = None  # (keys, starts), in order

    def _key(self, at: int):  # pragma: no cover - interface
        raise NotImplementedError

    def _next(self, at: int) -> int:
        """Where the first entry starting at ``at`` or later starts (the block's end: none)."""
        found = self._body.find(b"\n" + self.marker, at - 1, self._end)
        return self._end if found < 0 else found + 1

    def _seek(self, key) -> int:
        """Where the first entry whose key is ``key`` or after it starts: the file's bytes
        bisected, or, once many keys were asked for, the list of every entry's key."""
        if self._index is None:
            self._seeks += 1
        if self._index is not None or self._seeks > self.INDEX_AFTER:
            keys, starts = self._listed()
            i = bisect_left(keys, key)
            return starts[i] if i < len(starts) else self._end
        lo, hi = self._start, self._end
        while lo < hi:
            mid = (lo + hi) // 2
            at = self._next(mid)
            if at >= hi:
                hi = mid
            elif self._key(at) < key:
                lo = at + 1
            else:
                hi = mid
        return self._next(lo)

    def _listed(self) -> tuple[list, list[int]]:
        """(every entry's key, where each starts), in order: made once."""
        if self._index is None:
            starts = list(self._from(self._start))
            self._index = ([self._key(at) for at in starts], starts)
        return self._index

    def _from(self, at: int) -> Iterator[int]:
        """The starts of the entries from ``at`` on."""
        while at < self._end:
            yield at
            at = self._next(at + 1)

    def _text(self, at: int) -> bytes:
        """The entry starting at ``at``, up to the next one."""
        return self._body[at:self._next(at + 1)].rstrip().removesuffix(b",")


class Block(_Sorted, Mapping):
    """{key: value} of a block written ``"key": value`` one entry per line (or run of lines),
    keys in order; each value parsed when first asked for."""

    marker = b'"'

    def __init__(self, body: bytes, start: int, end: int):
        super().__init__(body, start, end)
        self._parsed: dict[str, object] = {}

    def _raw_key(self, at: int) -> bytes:
        return _KEY.match(self._body, at).group()

    def _key(self, at: int) -> str:
        k = self._raw_key(at)
        return k[1:-1].decode() if b"\\" not in k else json.loads(k)

    def __getitem__(self, key: str):
        found = self._parsed.get(key, self)
        if found is self:
            at = self._seek(key)
            if at >= self._end or self._key(at) != key:
                raise KeyError(key)
            text = self._text(at)
            found = self._parsed[key] = json.loads(text[len(self._raw_key(at)) + 2:])
        return found

    def __contains__(self, key) -> bool:
        try:
            self[key]
        except KeyError:
            return False
        return True

    def items(self) -> Iterator[tuple[str, object]]:
        """(key, value) of every entry in the file's order: one walk of the block, no
        bisecting (a block out of key order too: the releases)."""
        for key, at in zip(*self._listed(), strict=True):
            found = self._parsed.get(key, self)
            if found is self:
                found = self._parsed[key] = json.loads(self._text(at)[len(self._raw_key(at)) + 2:])
            yield key, found

    def keys_from(self, prefix: str) -> Iterator[str]:
        """The keys from the first one at or after ``prefix`` on, in order."""
        return (self._key(at) for at in self._from(self._seek(prefix)))

    def __iter__(self) -> Iterator[str]:
        return iter(self._listed()[0])

    def __len__(self) -> int:
        return len(self._listed()[0])


class Rows(_Sorted):
    """A list block written one row (a JSON value) per line, rows in order of ``key_of``."""

    marker = b"["

    def __init__(self, body: bytes, start: int, end: int, key_of: Callable[[bytes], tuple]):
        super().__init__(body, start, end)
        self._key_of = key_of

    def _key(self, at: int):
        return self._key_of(self._body[at:self._body.find(b"\n", at, self._end + 1)])

    def matching(self, key) -> list:
        """The rows whose key is ``key``, parsed."""
        found = []
        for at in self._from(self._seek(key)):
            if self._key(at) != key:
                break
            found.append(json.loads(self._text(at)))
        return found
