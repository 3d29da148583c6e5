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
with its kernels and fusion files, where decompressing the whole files took 10-16 ms). A
fusion file's ``groups`` are stored so too, and a kernel file's two lists (``RunRows``: a
key's rows are looked for in the runs its key may fall in): a small check naming
onnxruntime decompressed 2 MB of fusion groups and 0.5 MB of kernels before.
``gzip -dc`` of the file is its text; stored, the runs cost 0.47 MB for all four files
(0.31 MB when each file was compressed whole).
"""

from __future__ import annotations

import json
import os
import zlib
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator, Mapping
from functools import cache

_DATA_PACKAGE = "qlin_cli.targets.data"
GZ = ".gz"  # how every data file is stored (``write``)
_OPEN = '"releases": {'
_CLOSE = {ord("{"): b"\n}", ord("["): b"\n]"}  # a block's closing line (no entry starts so)


def file_name(runtime: str, kind: str) -> str:
    """The name of a runtime's data file of one kind ("kernels", "probes", "blocks"), as the
    generators write it (under qlin_cli/targets/data/, gzipped)."""
    return f"{runtime}_{kind}.json"


def written_plain(text: str) -> bool:
    """Whether the generators write ``text`` in a JSON string as it is (printable ASCII, no
    quote, no backslash): then it can be looked for by its text."""
    return text.isascii() and text.isprintable() and '"' not in text and "\\" not in text


def _string_at(body: bytes, at: int) -> bytes:
    """The JSON string that starts at ``at`` (its quotes included), on one line: up to the
    first quote after it that no backslash escapes (a pattern compiled for it cost 0.4 M
    instructions at every import; keys hardly ever hold a backslash)."""
    end = body.find(b'"', at + 1)
    while end > 0 and body[end - 1] == 92:  # a backslash before it: escaped if an odd run
        run = end - 1
        while body[run - 1] == 92:
            run -= 1
        if (end - run) % 2 == 0:
            break
        end = body.find(b'"', end + 1)
    if body[at] != 34 or end < 0 or body.find(b"\n", at, end) >= 0:
        raise ValueError(f"no JSON string on one line at {at}")
    return body[at:end + 1]


@cache
def raw(file_name: str) -> bytes | None:
    """The file's bytes, read once (None without the file): ``file_name`` is stored
    gzip-compressed as ``file_name``.gz (``write``), which is read and decompressed whole
    (the generators and the whole-file tests; a check reads ``block``); a plain
    ``file_name`` is read as it is."""
    packed = _stored_bytes(file_name + GZ)
    if packed is not None:  # every member (``write``), each CRC checked
        return _inflate(packed)
    return _stored_bytes(file_name)


def _inflate(data: bytes) -> bytes:
    """``gzip.decompress``: every member of ``data`` decompressed, each CRC and length checked
    (zlib's; the gzip module is not imported for it)."""
    out = []
    while data:
        inflate = zlib.decompressobj(wbits=31)
        out.append(inflate.decompress(data))
        if not inflate.eof:
            raise EOFError("a gzip member ends before its end-of-stream marker")
        data = inflate.unused_data.lstrip(b"\x00")  # (gzip.decompress skips padding between members)
    return b"".join(out)


_FOLDER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def _stored_bytes(name: str) -> bytes | None:
    """The bytes of the package data file ``name`` (None without it): read from the package's
    folder, or through importlib.resources where the package is not a folder (a zip)."""
    if os.path.isdir(_FOLDER):
        try:
            with open(os.path.join(_FOLDER, name), "rb") as f:
                return f.read()
        except (FileNotFoundError, IsADirectoryError):
            return None
    from importlib import resources

    entry = resources.files(_DATA_PACKAGE) / name
    return entry.read_bytes() if entry.is_file() else None


def stored(path: os.PathLike | str) -> str:
    """Where the data file ``path`` (``<folder>/<name>.json``) is kept: ``path``.gz."""
    return os.fspath(path) + GZ


def load(path: os.PathLike | str) -> dict | None:
    """The data file ``path`` parsed, from its stored form (None without it): the generators'
    way to read a file they are about to write again."""
    try:
        with open(stored(path), "rb") as f:
            return json.loads(_inflate(f.read()))
    except FileNotFoundError:
        return None


def write(path: os.PathLike | str, text: str) -> int:
    """Store ``text`` as the data file ``path``: gzip-compressed at level 9 with no name or
    time in its header, a run block (``RUN_BLOCKS``) in runs (``_members``; the same text gives the
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
    out["releases"] = InOrder(block(file_name, "releases"))  # in the file's order, each parsed when asked
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
    runs = parts.runs_of(name)
    if runs is not None:
        return Runs(runs)
    found = _span(parts.head, name)
    if found is not None:
        return Block(parts.head, *found)
    tail = parts.tail()  # decompressed only for a block the head does not hold (a probe file's
    found = _span(tail, name)  # releases are in its head, its errors in 64 KB of tail)
    return Block(b"", 0, 0) if found is None else Block(tail, *found)


@cache
def rows(file_name: str, name: str, key_of: Callable[[bytes], tuple]) -> Rows:
    """The list block ``name`` of the file, one row per line, sorted by ``key_of(line)``."""
    parts = _parts(file_name)
    runs = None if parts is None else parts.runs_of(name)
    if runs is not None:
        return RunRows(runs, key_of)
    whole = parts is not None and not parts.blocks and parts.tail() == b""
    body = parts.head if whole else raw(file_name) or b""  # (one member: its head is the text)
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

    def _seek(self, key, after: bool = False) -> int:
        """Where the first entry whose key is ``key`` or after it starts (``after``: the first
        whose key is after ``key``): the file's bytes bisected, or, once many keys were asked
        for, the list of every entry's key."""
        if self._index is None:
            self._seeks += 1
        if self._index is not None or self._seeks > self.INDEX_AFTER:
            keys, starts = self._listed()
            i = bisect_right(keys, key) if after else bisect_left(keys, key)
            return starts[i] if i < len(starts) else self._end
        lo, hi = self._start, self._end
        while lo < hi:
            mid = (lo + hi) // 2
            at = self._next(mid)
            if at >= hi:
                hi = mid
            elif self._key(at) < key or after and self._key(at) == key:
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
        return _string_at(self._body, at)

    def _key(self, at: int) -> str:
        k = self._raw_key(at)
        return k[1:-1].decode() if b"\\" not in k else json.loads(k)

    def _found(self, key: str) -> int:
        """Where the entry of ``key`` starts, if anywhere: its line found by its text (a
        bisection read a key at each of a dozen steps), else bisected for (a key written
        escaped, or absent)."""
        if written_plain(key):
            at = self._body.find(b'\n"' + key.encode() + b'": ', self._start - 1, self._end) + 1
            if at and self._key(at) == key:
                return at
        return self._seek(key)

    def __getitem__(self, key: str):
        found = self._parsed.get(key, self)
        if found is self:
            at = self._found(key)
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

    def items_from(self, prefix: str | None = None, keep=None, stop=None) -> list[tuple[str, object]]:
        """(key, value) of the entries from the first key at or after ``prefix`` (None: the
        first entry) on, in order, up to the first key ``stop(key)`` is true of, but those whose
        key ``keep(key)`` refuses (not parsed). Each entry is read where the walk stands, not
        looked for by its key (a look-up searches the block from its start), and the values not
        parsed yet are parsed together, as one JSON array (one parse, not one an entry)."""
        return self._items_from(prefix, keep, stop)[0]

    def _items_from(self, prefix: str | None, keep, stop) -> tuple[list, bool]:
        """(``items_from``, whether ``stop`` ended the walk)."""
        parsed = self._parsed
        found: list = []  # (key, its position, or its value when parsed before)
        stopped = False
        for at in self._from(self._start if prefix is None else self._seek(prefix)):
            key = self._key(at)
            if stop is not None and stop(key):
                stopped = True
                break
            if keep is None or keep(key):
                found.append((key, parsed.get(key, at)))
        fresh = [(key, at) for key, at in found if type(at) is int]
        if fresh:
            texts = [self._text(at)[len(self._raw_key(at)) + 2:] for _, at in fresh]
            parsed.update(zip([key for key, _ in fresh], json.loads(b"[" + b",".join(texts) + b"]"),
                              strict=True))
        return [(key, parsed[key]) for key, _ in found], stopped

    def __iter__(self) -> Iterator[str]:
        return iter(self._listed()[0])

    def __len__(self) -> int:
        return len(self._listed()[0])


class InOrder(Mapping):
    """{key: value} of a block in the file's order, its keys listed in one walk and each
    value parsed when first asked for: a file's ``releases`` (not in key order, so not
    bisected), of which a check reads the one it judges by (all 15 of onnxruntime's kernel
    file, parsed, were 0.5 M instructions). Equal to ``dict(block.items())``."""

    def __init__(self, found: Block):
        self._block, self._at = found, {}
        for key, at in zip(*found._listed(), strict=True):
            self._at.setdefault(key, at)  # a key twice: its first value, as Block.items gives it
        self._parsed: dict[str, object] = {}

    def __getitem__(self, key: str):
        found = self._parsed.get(key, self)
        if found is self:
            at = self._at[key]
            found = self._parsed[key] = json.loads(self._block._text(at)[len(self._block._raw_key(at)) + 2:])
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(self._at)

    def __len__(self) -> int:
        return len(self._at)


class Later(Mapping):
    """``block(file_name, name)``, found when first read: a block kept out of the file's runs
    (in its tail) is decompressed only if an entry of it is asked for."""

    def __init__(self, file_name: str, name: str):
        self._file_name, self._name = file_name, name

    def _found(self) -> Block:
        return block(self._file_name, self._name)

    def __getitem__(self, key: str):
        return self._found()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._found())

    def __len__(self) -> int:
        return len(self._found())


class Rows(_Sorted):
    """A list block written one row (a JSON value) per line, rows in order of ``key_of``."""

    marker = b"["

    def __init__(self, body: bytes, start: int, end: int, key_of: Callable[[bytes], tuple]):
        super().__init__(body, start, end)
        self._key_of = key_of

    def _key(self, at: int):
        return self._key_of(self._body[at:self._body.find(b"\n", at, self._end + 1)])

    def lines(self, key, needle: bytes | None = None) -> list[bytes]:
        """The text of each row whose key is ``key``, unparsed: one run of lines, its end
        bisected too (walking the rows to it read each one's key: 76 of them for onnxruntime's
        QuantizeLinear); with ``needle``, a text that the lines of ``key`` hold and no other
        line does, the lines from the first that holds it to the last (two searches of the
        text, where bisecting read a key at each step: 4.6 M instructions of the kernel rows of
        a 5-node check)."""
        if needle is not None:
            body, start, end = self._body, self._start, self._end
            first = body.find(needle, start, end)
            if first < 0:
                return []
            last = body.find(b"\n", body.rfind(needle, start, end), end)
            # from the line end before the first (an entry starts after one) to the last's
            rows = body[body.rfind(b"\n", 0, first) + 1:end if last < 0 else last].rstrip()
            found = [line.removesuffix(b",") for line in rows.split(b"\n")]
            # the rows are in key order: the first and the last of ``key`` bound its lines; a row
            # holding the text nested in it (another op's) is bisected past instead
            if self._key_of(found[0]) == key and self._key_of(found[-1]) == key:
                return found
        first = self._seek(key)
        last = self._seek(key, after=True) if first < self._end else first
        rows = self._body[first:last].rstrip()
        return [line.removesuffix(b",") for line in rows.split(b"\n")] if rows else []


def parsed(lines: list[bytes]) -> list:
    """Rows' texts parsed as one JSON list (a parse per row cost more than the rows' own text)."""
    return json.loads(b"[" + b",".join(lines) + b"]") if lines else []


class RunRows:
    """A list block stored in runs (``LIST_RUN_BLOCKS``) as ``Rows`` gives one: the rows of a
    key are looked for from the run before the first whose first row's key is the key or
    after it, on through the runs that start with the key."""

    def __init__(self, runs, key_of: Callable[[bytes], tuple]):
        self._runs, self._key_of = runs, key_of
        self._keys = [key_of(first.encode()) for first in runs.firsts]
        self._rows: dict[int, Rows] = {}

    def _run(self, i: int) -> Rows:
        found = self._rows.get(i)
        if found is None:
            body = b"\n" + self._runs.run(i)  # (a row starts after a newline)
            found = self._rows[i] = Rows(body, 1, len(body), self._key_of)
        return found

    def lines(self, key, needle: bytes | None = None) -> list[bytes]:
        """``Rows.lines``."""
        keys = self._keys
        if not keys:
            return []
        i = max(bisect_left(keys, key) - 1, 0)
        found = self._run(i).lines(key, needle)
        i += 1
        while i < len(keys) and keys[i] == key:
            found += self._run(i).lines(key, needle)
            i += 1
        return found


# ---- the stored form: a head, runs of one block's entries, a tail ---------------------
# the blocks stored in runs: a probe file's keys, a fusion file's groups ({key: value} blocks, the
# first a file has), a kernel file's lists (rows, both); others are stored whole
RUN_BLOCKS = ("keys", "groups")
LIST_RUN_BLOCKS = ("kernels", "schemas")
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
    """The stored form of ``text``: one member when it has none of ``RUN_BLOCKS`` or
    ``LIST_RUN_BLOCKS``; else the text before the first such block's entries (its index of
    runs in the header), the entries in runs of about ``RUN_BYTES`` cut where an entry
    starts, and the text after them (up to the next block's entries, whose runs follow).
    Their concatenation is ``text``, so any gzip reader reads the file whole. A file of one
    {key: value} block in runs is indexed {"block": name, "runs": [[first key, stored
    length] ...]}; one of list blocks {"blocks": [[name, [[first row, length] ...], length
    of the text after them] ...]}."""
    found = next(((b, _span(text, b)) for b in RUN_BLOCKS if _span(text, b) is not None), None)
    if found is not None:
        blocks = [found] if found[1][0] < found[1][1] else []
    else:
        blocks = sorted(((b, span) for b in LIST_RUN_BLOCKS if (span := _span(text, b)) is not None
                         and span[0] < span[1]), key=lambda b: b[1][0])
    if not blocks:
        return _member(text)
    cut = [_runs(text, *span, b"[" if name in LIST_RUN_BLOCKS else b'"') for name, span in blocks]
    stored = [[_member(text[a:b]) for a, b in zip(c, c[1:], strict=False)] for c in cut]
    ends = [span[1] for _, span in blocks]
    starts = [span[0] for _, span in blocks[1:]] + [len(text)]
    gaps = [_member(text[end:nxt]) for end, nxt in zip(ends, starts, strict=True)]
    if found is not None:
        firsts = [json.loads(_string_at(text, a)) for a in cut[0][:-1]]
        index: dict = {"block": found[0],
                       "runs": [[k, len(r)] for k, r in zip(firsts, stored[0], strict=True)]}
    else:
        index = {"blocks": [[name, [[text[a:text.index(b"\n", a)].decode(), len(r)]
                                    for a, r in zip(c, runs, strict=False)], len(gap)]
                            for (name, _), c, runs, gap in zip(blocks, cut, stored, gaps, strict=True)]}
    packed = json.dumps(index, separators=(",", ":")).encode()
    if len(packed) > 65000:  # (a header's extra field holds at most 65,535 bytes)
        raise ValueError(f"{sum(map(len, stored))} runs do not fit a gzip header: raise RUN_BYTES")
    out = [_member(text[:blocks[0][1][0]], packed)]
    for runs, gap in zip(stored, gaps, strict=True):
        out += [*runs, gap]
    return b"".join(out)


def _runs(text: bytes, start: int, end: int, marker: bytes) -> list[int]:
    """Where the runs of the entries between ``start`` and ``end`` start (each about
    ``RUN_BYTES`` of text, cut where an entry starts: a line beginning with ``marker``), and
    ``end``."""
    cuts = [start]
    at = start
    while True:
        at = text.find(b"\n" + marker, at + RUN_BYTES, end)
        if at < 0:
            break
        cuts.append(at + 1)
    return [*cuts, end]


class _Runs:
    """One block's runs in a stored file: the first key (or row) of each, and each run
    decompressed when asked for."""

    def __init__(self, rest: bytes, at: int, runs: list):
        self._rest = rest
        self.firsts: list = []
        self.spans: list[tuple[int, int]] = []
        for first, size in runs:
            self.firsts.append(first)
            self.spans.append((at, size))
            at += size
        self.end = at

    def run(self, i: int) -> bytes:
        at, size = self.spans[i]
        return zlib.decompress(self._rest[at:at + size], wbits=31)


class _Parts:
    """A stored data file: its head decompressed, its runs and the rest when asked for.
    ``blocks``: {name: its runs} of every block in runs; ``run_block``: the name of a file's
    one {key: value} block in runs (None: it has none)."""

    def __init__(self, data: bytes):
        index = _index(data) or {}
        inflate = zlib.decompressobj(wbits=31)
        self.head = inflate.decompress(data)  # the first member only
        rest = inflate.unused_data
        self.run_block = index.get("block")
        self.blocks: dict[str, _Runs] = {}
        self._gaps: list[tuple[int, int]] = []  # (where, stored length) of the text between runs
        at = 0
        if self.run_block is not None:
            self.blocks[self.run_block] = runs = _Runs(rest, 0, index.get("runs", ()))
            self._gaps.append((runs.end, len(rest) - runs.end))
        for name, runs_of, gap in index.get("blocks", ()):
            self.blocks[name] = runs = _Runs(rest, at, runs_of)
            self._gaps.append((runs.end, gap))
            at = runs.end + gap
        self._rest = rest
        self._tail: bytes | None = None if rest else b""

    def runs_of(self, name: str) -> _Runs | None:
        return self.blocks.get(name)

    def tail(self) -> bytes:
        """The text of the file after its head that is in no run (without runs: all of it)."""
        if self._tail is None:
            if not self._gaps:
                self._tail = _inflate(self._rest)
            else:
                self._tail = b"".join(_inflate(self._rest[a:a + n]) for a, n in self._gaps)
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
    packed = _stored_bytes(file_name + GZ)
    if packed is not None:
        return _Parts(packed)
    entry = _stored_bytes(file_name)
    if entry is None:
        return None
    parts = _Parts(b"")
    parts.head = entry
    return parts


class Runs(Mapping):
    """The run block of a stored file as ``Block`` gives a block: a key is looked for in the
    one run whose first key is the last at or before it, decompressed when first asked."""

    def __init__(self, runs: _Runs):
        self._runs = runs
        self._blocks: dict[int, Block] = {}

    def _block(self, i: int) -> Block:
        found = self._blocks.get(i)
        if found is None:
            body = b"\n" + self._runs.run(i)  # (an entry starts after a newline)
            found = self._blocks[i] = Block(body, 1, len(body))
        return found

    def _run_of(self, key: str) -> int:
        return bisect_right(self._runs.firsts, key) - 1

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
        for i in range(first, len(self._runs.firsts)):
            yield from (self._block(i).keys_from(prefix) if i == first else self._block(i))

    def items_from(self, prefix: str | None = None, keep=None, stop=None) -> list[tuple[str, object]]:
        """``Block.items_from`` across the runs."""
        first = 0 if prefix is None else max(self._run_of(prefix), 0)
        out: list = []
        for i in range(first, len(self._runs.firsts)):
            found, stopped = self._block(i)._items_from(prefix if i == first else None, keep, stop)
            out += found
            if stopped:
                break
        return out

    def items(self) -> Iterator[tuple[str, object]]:
        for i in range(len(self._runs.firsts)):
            yield from self._block(i).items()

    def __iter__(self) -> Iterator[str]:
        for i in range(len(self._runs.firsts)):
            yield from self._block(i)

    def __len__(self) -> int:
        return sum(len(self._block(i)) for i in range(len(self._runs.firsts)))
