"""Reading the data files of targets/data/ (kernel_store.py, probe_store.py): the whole
file, the releases it holds from its head alone, or one block of it entry by entry.

Both stores write the ``releases`` block first, one line per release: listing the measured
releases (which every target name is checked against) parses those lines and not the rest.

A check judges a model by the few dozen facts its nodes ask for, of thousands in a file.
Both stores write each block's entries in order (probe keys, error ids, kernel rows by
domain and op), so an entry is found by bisecting the file's bytes: about 20 ``find``
calls and one small JSON parse per fact asked for, nothing read in advance, where parsing
the whole of onnxruntime's probes took 60-70 ms (tests/test_probe_store.py holds every
entry read this way equal to the whole file parsed, and every block in order).

A probe file's ``keys`` block, nearly all of it, is stored as runs of entries each
compressed on its own (``write``), with an index of the runs in the gzip header: a check
decompresses the head (releases, 1-2 % of the text) and the runs its keys fall in (16 KiB
of text each; 45 fixture models checked for onnxruntime read 15 of its 152 runs, 2.9 ms
with its kernels and fusion files, where decompressing the whole files took 10-16 ms).
``gzip -dc`` of the file is its text; stored, the runs cost 0.47 MB for all four files
(0.31 MB when each file was compressed whole).
"""

from __future__ import annotations

import gzip
import json
import os
import re
import zlib
from bisect import bisect_left, bisect_right
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
    (the generators and the whole-file tests; a check reads ``block``); a plain
    ``file_name`` is read as it is."""
    folder = resources.files(_DATA_PACKAGE)
    packed = folder / (file_name + GZ)
    if packed.is_file():  # every member (``write``), each CRC checked
        return gzip.decompress(packed.read_bytes())
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
    time in its header, a ``keys`` block in runs (``_members``; the same text gives the
    same bytes, so git sees a change only where the data changed), written whole and then
    put in place (a reader never sees half a file). Returns the bytes written. The text is
    one line per release and per range: ``gzip -dc`` of two commits' files diffs as what
    changed (docs/targets.md)."""
    target = stored(path)
    body = _members(text.encode("utf-8"))
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
    return None if _parts(file_name) is None else tuple(head(file_name).get("releases", ()))


@cache
def head(file_name: str) -> dict:
    """The file's fields before its blocks, and its ``releases`` block, parsed ({} without
    the file)."""
    parts = _parts(file_name)
    if parts is None:
        return {}
    body = parts.head
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
    """The {key: value} block ``name`` of the file (empty without the file or block): from
    the decompressed head or tail of the file, or its runs (``Runs``) for the run block."""
    parts = _parts(file_name)
    if parts is None:
        return Block(b"", 0, 0)
    if name == parts.run_block:
        return Runs(parts)
    for body in (parts.head, parts.tail()):
        found = _span(body, name)
        if found is not None:
            return Block(body, *found)
    return Block(b"", 0, 0)


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
        self._whole: dict[str, object] | None = None  # every entry in the file's order, once walked

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
        bisecting (a block out of key order too: the releases); a walk after the first
        reads the entries it kept."""
        if self._whole is not None:
            yield from self._whole.items()
            return
        whole = {}
        for key, at in zip(*self._listed(), strict=True):
            found = self._parsed.get(key, self)
            if found is self:
                found = self._parsed[key] = json.loads(self._text(at)[len(self._raw_key(at)) + 2:])
            whole[key] = found
            yield key, found
        self._whole = whole

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
        self._matched: dict = {}  # key -> its rows parsed, once (each release's table asks again)

    def _key(self, at: int):
        return self._key_of(self._body[at:self._body.find(b"\n", at, self._end + 1)])

    def matching(self, key) -> list:
        """The rows whose key is ``key``, parsed (the same row objects each time: read, not
        changed)."""
        found = self._matched.get(key)
        if found is None:
            found = []
            for at in self._from(self._seek(key)):
                if self._key(at) != key:
                    break
                found.append(json.loads(self._text(at)))
            self._matched[key] = found
        return list(found)


# ---- the stored form: a head, runs of one block's entries, a tail ---------------------
RUN_BLOCK = "keys"  # the block stored in runs (a probe file's; others are stored whole)
RUN_BYTES = 16384  # text per run: 16 KiB (a few dozen keys) decompresses in about 0.05 ms
_SUBFIELD = b"QL"  # the gzip header's extra subfield holding the index (RFC 1952, 2.3.1.1)


def _member(data: bytes, extra: bytes = b"") -> bytes:
    """One gzip member of ``data`` (level 9, no name, time 0), ``extra`` in its header."""
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
    body = deflate.compress(data) + deflate.flush()
    flags = 4 if extra else 0  # FEXTRA
    header = b"\x1f\x8b\x08" + bytes([flags]) + b"\x00\x00\x00\x00\x02\x03"
    if extra:
        sub = _SUBFIELD + len(extra).to_bytes(2, "little") + extra
        header += len(sub).to_bytes(2, "little") + sub
    tail = (zlib.crc32(data) & 0xFFFFFFFF).to_bytes(4, "little")
    tail += (len(data) & 0xFFFFFFFF).to_bytes(4, "little")
    return header + body + tail


def _members(text: bytes) -> bytes:
    """The stored form of ``text``: one member when it has no ``RUN_BLOCK``; else the text
    before the block's entries (its index of runs in the header: each run's first key and
    stored length), the entries in runs of about ``RUN_BYTES`` cut where an entry starts,
    and the rest. Their concatenation is ``text``, so any gzip reader reads the file whole."""
    span = _span(text, RUN_BLOCK)
    if span is None or span[0] == span[1]:
        return _member(text)
    start, end = span
    cuts = [start]
    at = start
    while True:
        at = text.find(b'\n"', at + RUN_BYTES, end)
        if at < 0:
            break
        cuts.append(at + 1)
    cuts.append(end)
    runs = [_member(text[a:b]) for a, b in zip(cuts, cuts[1:], strict=False)]
    firsts = [json.loads(_KEY.match(text, a).group()) for a in cuts[:-1]]
    index = json.dumps({"block": RUN_BLOCK, "runs": [[k, len(r)] for k, r in zip(firsts, runs, strict=True)]},
                       separators=(",", ":")).encode()
    if len(index) > 65000:  # (a header's extra field holds at most 65,535 bytes)
        raise ValueError(f"{len(runs)} runs do not fit a gzip header: raise RUN_BYTES")
    return _member(text[:start], index) + b"".join(runs) + _member(text[end:])


class _Parts:
    """A stored data file: its head decompressed, its runs and tail when asked for."""

    def __init__(self, data: bytes):
        index = _index(data)
        inflate = zlib.decompressobj(wbits=31)
        self.head = inflate.decompress(data)  # the first member only
        rest = inflate.unused_data
        self.run_block = index.get("block") if index else None
        self.firsts: list[str] = []
        self.spans: list[tuple[int, int]] = []
        at = 0
        for first, size in (index or {}).get("runs", ()):
            self.firsts.append(first)
            self.spans.append((at, size))
            at += size
        self._rest, self._tail_at = rest, at
        self._tail: bytes | None = None if rest else b""

    def run(self, i: int) -> bytes:
        at, size = self.spans[i]
        return zlib.decompress(self._rest[at:at + size], wbits=31)

    def tail(self) -> bytes:
        if self._tail is None:
            self._tail = gzip.decompress(self._rest[self._tail_at:])
        return self._tail


def _index(data: bytes) -> dict | None:
    """The index of runs in the first member's header (None: the file is not in runs)."""
    if len(data) < 12 or data[:3] != b"\x1f\x8b\x08" or not data[3] & 4:
        return None
    size = int.from_bytes(data[10:12], "little")
    extra, at = data[12:12 + size], 0
    while at + 4 <= len(extra):
        n = int.from_bytes(extra[at + 2:at + 4], "little")
        if extra[at:at + 2] == _SUBFIELD:
            return json.loads(extra[at + 4:at + 4 + n])
        at += 4 + n
    return None


@cache
def _parts(file_name: str) -> _Parts | None:
    """The stored file, read once (None without it); a plain ``file_name`` is one head."""
    folder = resources.files(_DATA_PACKAGE)
    packed = folder / (file_name + GZ)
    if packed.is_file():
        return _Parts(packed.read_bytes())
    entry = folder / file_name
    if not entry.is_file():
        return None
    parts = _Parts(b"")
    parts.head = entry.read_bytes()
    return parts


class Runs(Mapping):
    """The run block of a stored file as ``Block`` gives a block: a key is looked for in the
    one run whose first key is the last at or before it, decompressed when first asked."""

    def __init__(self, parts: _Parts):
        self._parts = parts
        self._blocks: dict[int, Block] = {}

    def _block(self, i: int) -> Block:
        found = self._blocks.get(i)
        if found is None:
            body = b"\n" + self._parts.run(i)  # (an entry starts after a newline)
            found = self._blocks[i] = Block(body, 1, len(body))
        return found

    def _run_of(self, key: str) -> int:
        return bisect_right(self._parts.firsts, key) - 1

    def __getitem__(self, key: str):
        i = self._run_of(key)
        if i < 0:
            raise KeyError(key)
        return self._block(i)[key]

    def __contains__(self, key) -> bool:
        i = self._run_of(key)
        return i >= 0 and key in self._block(i)

    def keys_from(self, prefix: str) -> Iterator[str]:
        """The keys from the first one at or after ``prefix`` on, in order."""
        first = max(self._run_of(prefix), 0)
        for i in range(first, len(self._parts.firsts)):
            yield from (self._block(i).keys_from(prefix) if i == first else self._block(i))

    def items(self) -> Iterator[tuple[str, object]]:
        for i in range(len(self._parts.firsts)):
            yield from self._block(i).items()

    def __iter__(self) -> Iterator[str]:
        for i in range(len(self._parts.firsts)):
            yield from self._block(i)

    def __len__(self) -> int:
        return sum(len(self._block(i)) for i in range(len(self._parts.firsts)))
