"""The kernel registries of every measured onnxruntime release, in one file
(qlin_cli/targets/data/onnxruntime_kernels.json.gz), each registration and schema stored once
with the releases that have it.

    {"format": 1, "runtime": "onnxruntime",
     "releases": {                   one line per release: its table less the two lists
       "1.18.1": {"format": 2, "max_ir": 10, "max_opset": 21, "domains": [...], ...},
       ...},
     "kernels": [                    one line per registration: the releases that have it
       [[["1.18.1", "1.24.4"], ["1.26.0", null]], {"domain": "", "op": "Abs", ...}],
       ...],
     "schemas": [ ...the same for the schema versions onnxruntime knows... ]}

A span ``[first, last]`` holds from ``first`` to ``last`` in release order, ``null``
meaning the newest measured. Neighbouring releases differ in 21 to 115 of about 1,860
lines, so 15 releases take 0.5 MB here where a file each took 4.5 MB, and a diff
between two commits still reads as what changed. ``table(version)`` gives one release's
table as tools/gen_ort_kernels.py wrote it (ort_table.OrtTable reads it); every release
reads back equal to what was measured (tests/test_targets_ort_table.py).
"""

from __future__ import annotations

import json

from . import data_files

FORMAT = 1
LISTS = ("kernels", "schemas")  # the fields kept per row; every other field per release


def file_name(runtime: str) -> str:
    return data_files.file_name(runtime, "kernels")


def _read(runtime: str) -> dict | None:
    return data_files.read(file_name(runtime))


def releases(runtime: str) -> tuple[str, ...]:
    """The releases with a kernel registry, in version order (the file's head alone)."""
    return data_files.releases(file_name(runtime)) or ()


def table(runtime: str, version: str, data: dict | None = None) -> dict:
    """One release's table, as the generator wrote it. LookupError when not measured."""
    data = _read(runtime) if data is None else data
    if data is None or version not in data["releases"]:
        raise LookupError(version)
    index = {v: i for i, v in enumerate(data["releases"])}
    at = index[version]

    out = dict(data["releases"][version])
    for field in LISTS:
        out[field] = [row for spans, row in data[field] if _holds(spans, index, at)]
    return out


def _holds(spans, index: dict, at: int) -> bool:
    """Whether a row of ``spans`` ([first, last or None] releases) holds at the release of
    place ``at`` in ``index`` (release -> its place)."""
    return any(index[first] <= at and (last is None or at <= index[last]) for first, last in spans)


_DOMAIN, _THEN_OP = b'"domain":"', b'","op":"'


def _op_of(line: bytes) -> tuple[str, str]:
    """(domain, op) of a row's line: how both lists are sorted first. The first place the
    line reads ``"domain":"D","op":"O"`` (found without a compiled pattern: 0.4 M
    instructions at every import)."""
    at = line.find(_DOMAIN)
    while at >= 0:
        end = line.find(b'"', at + len(_DOMAIN))
        if end >= 0 and line.startswith(_THEN_OP, end):
            stop = line.find(b'"', end + len(_THEN_OP))
            if stop >= 0:
                return line[at + len(_DOMAIN):end].decode(), line[end + len(_THEN_OP):stop].decode()
        at = line.find(_DOMAIN, at + 1)
    raise ValueError(f"no domain and op in {line[:80]!r}")


def needle(domain: str, op: str) -> bytes | None:
    """The text every row of (``domain``, ``op``) holds and no other row does (its domain and
    op as ``_op_of`` reads them, the op's closing quote included), for ``Rows.lines``; None
    for names the file would write escaped (a quote, a backslash, other than printable ASCII),
    which are bisected for."""
    if not (data_files.written_plain(domain) and data_files.written_plain(op)):
        return None
    return b'%s%s%s%s"' % (_DOMAIN, domain.encode(), _THEN_OP, op.encode())


def release_rows(runtime: str, version: str):
    """One release's table less its two lists, and a function giving the (schema rows,
    kernel rows) of one (domain, op) of that release: the file is bisected for the op's
    rows when it is asked for (data_files.Rows). LookupError when not measured."""
    name = file_name(runtime)
    have = data_files.head(name).get("releases", {})
    if version not in have:
        raise LookupError(version)
    index = {v: i for i, v in enumerate(have)}
    at = index[version]
    lists = {field: data_files.rows(name, field, _op_of) for field in LISTS}
    held: dict[bytes, bool] = {}  # a row's text of spans -> whether it holds at this release

    def holds(line: bytes) -> bool:
        spans = line[1:line.index(b"]]") + 2]  # (a row is [spans, row]; its spans end at the first "]]")
        found = held.get(spans)
        if found is None:
            found = held[spans] = _holds(json.loads(spans), index, at)
        return found

    def rows(domain: str, op: str) -> tuple[list, list]:
        # only the rows of this release are read (a third of QuantizeLinear's are others'); its
        # kernel rows as (since, until, text), each parsed when its range is asked for
        found = needle(domain, op)
        schemas = [x for x in lists["schemas"].lines((domain, op), found) if holds(x)]
        kernels = [x for x in lists["kernels"].lines((domain, op), found) if holds(x)]
        return parsed_rows(schemas), [(*range_of(x), x) for x in kernels]

    return dict(have[version]), rows


def parsed_rows(lines: list[bytes]) -> list[dict]:
    """The rows of lines of either list (``[spans, row]`` each)."""
    return [row for _, row in data_files.parsed(lines)]


_SINCE, _UNTIL = b'"since":', b',"until":'


def range_of(line: bytes) -> tuple[int, int | None]:
    """(since, until) of a kernel row's line, read from its text: the row's last two fields
    (its keys are written sorted, and no other key sorts after them; a test holds every line
    to its parsed row), so that a release's kernels of an op are parsed one range at a time
    (a QuantizeLinear-21 node: its range's 10 rows of the 52 in 1.31.1, 0.5 M instructions
    less of a check naming onnxruntime)."""
    at = line.rindex(_SINCE) + len(_SINCE)
    comma = line.index(_UNTIL, at)
    until = line[comma + len(_UNTIL):line.index(b"}", comma)]
    return int(line[at:comma]), None if until == b"null" else int(until)


def fold(runtime: str, tables: dict[str, dict], release_key, row_keys: dict) -> dict:
    """The store of ``tables`` ({release: table}); ``release_key`` sorts release numbers,
    ``row_keys`` {field: key} the rows of each of LISTS as the generator sorts them (so that
    each release's rows read back in its own order)."""
    order = sorted(tables, key=release_key)
    data: dict = {"format": FORMAT, "runtime": runtime,
                  "releases": {v: {k: x for k, x in tables[v].items() if k not in LISTS} for v in order}}
    for field in LISTS:
        rows: dict[str, tuple[dict, list[int]]] = {}  # canonical text -> (row, indexes of releases)
        for i, v in enumerate(order):
            for row in tables[v][field]:
                rows.setdefault(row_text(row), (row, []))[1].append(i)
        data[field] = [[_spans(at, order), row] for row, at in
                       sorted(rows.values(), key=lambda r: row_keys[field](r[0]))]
    return data


def _spans(at: list[int], order: list[str]) -> list[list]:
    spans: list[list] = []
    for i in at:
        if spans and spans[-1][1] == i - 1:
            spans[-1][1] = i
        else:
            spans.append([i, i])
    return [[order[a], None if b == len(order) - 1 else order[b]] for a, b in spans]


_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"))  # json.dumps's, made once


def row_text(value) -> str:
    """A row's canonical text (how rows are told apart, and the schemas' order)."""
    return _CANONICAL.encode(value)


def dumps(data: dict) -> str:
    """The file's text: one line per release and per row."""
    lines = ["{", f'"format": {data["format"]},', f'"runtime": {json.dumps(data["runtime"])},',
             '"releases": {']
    rel = list(data["releases"].items())
    lines += [f"{json.dumps(v)}: {row_text(r)}{',' if i < len(rel) - 1 else ''}"
              for i, (v, r) in enumerate(rel)]
    lines.append("},")
    for n, field in enumerate(LISTS):
        lines.append(f'"{field}": [')
        rows = data[field]
        lines += [f"{row_text(r)}{',' if i < len(rows) - 1 else ''}" for i, r in enumerate(rows)]
        lines.append("]" + ("," if n < len(LISTS) - 1 else ""))
    lines.append("}")
    return "\n".join(lines) + "\n"
