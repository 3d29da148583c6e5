"""The probe outcomes of every measured release of a runtime, in one file per runtime
(qlin_cli/targets/data/<runtime>_probes.json.gz), each fact stored once with the range of
releases it holds for.

    {"format": 3, "runtime": "openvino", "device": "CPU",
     "releases": {                                   one line per measured release
       "2024.0.0": {"probes": 1531, "hosts": [...], "source": "python tools/gen_target_data.py ..."},
       ...},
     "keys": {                                       per probe key (targets/probe_keys.py)
       "ai.onnx:DequantizeLinear-21(int4,float,int4) blocked axis=1": [
         {"since": "2024.0.0", "runs": 0, "fails": 5, "error": "5d41402abc"},
         {"since": "2025.3.0", "runs": 5, "fails": 0}],
       ...},
     "errors": {                                     each runtime message once, by its id
       "5d41402abc": "load: ...",
       ...}}

A range's ``digest`` names the probes it was measured on (tools/probe_models.py
``digests``: each probe's model and feeds), written where it differs from the range before
(a range without one has the digest of the last range before it that has one): a test
holds every release's data to today's probes without running a runtime.

An entry holds from its ``since`` release up to the release before the next entry's
``since`` (releases in version order); a key whose first entry is newer than a release, or
whose entry in force says ``"absent": true``, was not probed there. Adding the next release
adds a line only where its outcome differs, so a diff between two commits, or between two
releases, reads as what changed. ``hosts`` in an
entry keeps each CPU's outcome where the CPUs measured differ (tools/gen_target_data.py
``--merge``). A range names its first error by an id (the first 10 hex digits of its
BLAKE2b hash) in ``errors``. Format 2 wrote them in place: 310 messages of onnxruntime
written out 21,774 times made 6.1 MB of its 8.1 MB, read in about 40 ms each time a
command named the target (2.3 MB and about 24 ms now).
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from . import data_files

FORMAT = 3


def file_name(runtime: str) -> str:
    return data_files.file_name(runtime, "probes")


def _read(runtime: str) -> dict | None:
    return data_files.read(file_name(runtime))


def releases(runtime: str) -> tuple[str, ...]:
    """The releases measured, in version order (the file's head alone)."""
    return data_files.releases(file_name(runtime)) or ()


def version_data(runtime: str, version: str, data: dict | None = None, *, lazy: bool = False) -> dict:
    """One release's outcomes as a table of its own (probe_table.ProbeTable's input):
    runtime, version, source, hosts, probes and ``keys`` {key: entry}; with ``lazy``, a
    ``ReleaseKeys`` that finds a key's entry when it is asked for. LookupError when the
    release was not measured."""
    if data is None and lazy:  # the blocks of the file, each entry parsed when asked for
        name = file_name(runtime)
        data = data_files.head(name)
        if version not in data.get("releases", ()):
            raise LookupError(version)
        # the messages when a range naming one is first read: the block is in the file's tail,
        # 64 KB of onnxruntime's text decompressed for it, which a model whose probes all ran never asks
        data = {**data, "keys": data_files.block(name, "keys"), "errors": data_files.Later(name, "errors")}
    data = _read(runtime) if data is None else data
    if not data or version not in data["releases"]:
        raise LookupError(version)
    order = list(data["releases"])
    keys = ReleaseKeys(data["keys"], frozenset(order[order.index(version) + 1:]), data.get("errors", {}))
    release = data["releases"][version]
    return {"runtime": data["runtime"], "version": version, "device": data.get("device", "CPU"),
            "source": release["source"], "hosts": release.get("hosts", []), "probes": release["probes"],
            "keys": keys if lazy else dict(keys.entries())}


def error_id(text: str) -> str:
    """The id a range names its error by."""
    import hashlib  # writing the file only: readers go without it

    return hashlib.blake2b(text.encode("utf-8", "backslashreplace"), digest_size=5).hexdigest()


class ReleaseKeys(Mapping):
    """{key: entry} of one release, read from the ranges of every release when a key is
    asked for (a release of 6,000 keys is not unfolded to judge a model that asks for 20)."""

    def __init__(self, ranges: dict[str, list[dict]], newer: frozenset[str], errors: dict[str, str]):
        self._ranges = ranges
        self._newer = newer  # the releases after this one
        self._errors = errors  # id -> message

    def __getitem__(self, key: str) -> dict:
        ranges = self._ranges[key]
        at = self._in_force(ranges)
        if at is None:
            raise KeyError(key)
        return self._entry(ranges, at)

    def _entry(self, ranges: list[dict], at: int) -> dict:
        """The entry of the range ``ranges[at]`` (in force at this release)."""
        entry = dict(ranges[at])
        del entry["since"]
        if "error" in entry:  # an id (format 3), or the message itself (format 2)
            entry["error"] = self._errors.get(entry["error"], entry["error"])
        if at and "digest" not in entry:  # written where it changes: the last one before holds
            digest = next((r["digest"] for r in reversed(ranges[:at]) if "digest" in r), None)
            if digest is not None:
                entry["digest"] = digest
        return entry

    def _in_force(self, ranges: list[dict]) -> int | None:
        """Where the range in force at this release is in ``ranges`` (None: not probed there)."""
        newer, found = self._newer, None
        for i, r in enumerate(ranges):
            if r["since"] in newer:
                break
            found = i
        return None if found is None or "absent" in ranges[found] else found

    def entries(self):
        """(key, entry) of every key of this release, in the file's order: one walk of the
        ranges (``keys()`` then each key asked for walks them twice)."""
        entry = self._entry
        for key, ranges, at in self._walk():
            yield key, entry(ranges, at)

    def ran(self):
        """The keys of this release whose probes ran (``runs`` above 0), in the file's order,
        without making their entries (what a release's features read: versions.py)."""
        for key, ranges, at in self._walk():
            if ranges[at]["runs"]:
                yield key

    def _walk(self):
        """(key, its ranges, where the range in force is) of every key this release probed."""
        in_force = self._in_force
        for key, ranges in self._ranges.items():
            at = in_force(ranges)
            if at is not None:
                yield key, ranges, at

    def candidates(self, prefix: str = ""):
        """The keys of the file starting with ``prefix``, in order: those of this release and
        maybe others (cheaper than ``iter``; a bisection of the file where it is read lazily)."""
        keys_from = getattr(self._ranges, "keys_from", None)
        found = keys_from(prefix) if keys_from is not None else iter(sorted(self._ranges))
        for k in found:
            if k.startswith(prefix):
                yield k
            elif k > prefix:
                return

    def __iter__(self):
        newer = self._newer
        for k, ranges in self._ranges.items():  # _in_force, inline: a walk of every key
            found = None
            for r in ranges:
                if r["since"] in newer:
                    break
                found = r
            if found is not None and "absent" not in found:
                yield k

    def __len__(self) -> int:
        return sum(1 for _ in self)


def fold(runtime: str, tables: dict[str, dict], order_key) -> dict:
    """The range file of ``tables`` ({release: version_data-like dict}); ``order_key``
    sorts release numbers."""
    order = sorted(tables, key=order_key)
    data = {"format": FORMAT, "runtime": runtime, "device": "CPU",
            "releases": {v: {"probes": tables[v]["probes"], "hosts": tables[v].get("hosts", []),
                             "source": tables[v]["source"]} for v in order},
            "keys": {}, "errors": {}}
    errors = data["errors"]
    for key in sorted({k for t in tables.values() for k in t["keys"]}):
        ranges, last = [], None
        for v in order:
            entry = tables[v]["keys"].get(key)
            if entry == last:
                continue  # the same as before (or still not probed)
            # a key no longer probed from this release on ends its range
            ranges.append({"since": v, "absent": True} if entry is None
                          else {"since": v, **_named(entry, errors)})
            last = entry
        digest = None  # a range's probe digest is written where it differs from the range before
        for r in ranges:
            if "digest" in r:
                if r["digest"] == digest:
                    del r["digest"]
                else:
                    digest = r["digest"]
        data["keys"][key] = ranges
    data["errors"] = dict(sorted(errors.items()))
    return data


def _named(entry: dict, errors: dict[str, str]) -> dict:
    """``entry`` with its error given by id, the message entered in ``errors``."""
    if "error" not in entry:
        return entry
    text = entry["error"]
    eid = error_id(text)
    if errors.setdefault(eid, text) != text:
        raise ValueError(f"two errors have the id {eid}")  # 40 bits: not met among thousands
    return {**entry, "error": eid}


def dumps(data: dict) -> str:
    """The file's text: one line per release and per range, keys in order."""
    return ranged_text(data, "keys", "errors")


def ranged_text(data: dict, ranged: str, last: str) -> str:
    """The text of a store of ranges (this one's, block_store's): its head, one line per
    release, the section ``ranged`` with one line per range of each entry, then the section
    ``last`` with one line per entry."""
    lines = ["{", f'"format": {data["format"]},', f'"runtime": {json.dumps(data["runtime"])},',
             f'"device": {json.dumps(data["device"])},', '"releases": {']
    rel = list(data["releases"].items())
    lines += [f"{json.dumps(v)}: {json.dumps(r)}{',' if i < len(rel) - 1 else ''}"
              for i, (v, r) in enumerate(rel)]
    lines += ["},", f'"{ranged}": {{']
    entries = list(data[ranged].items())
    for i, (key, ranges) in enumerate(entries):
        lines.append(f"{json.dumps(key)}: [")
        lines += [f"{json.dumps(r)}{',' if j < len(ranges) - 1 else ''}" for j, r in enumerate(ranges)]
        lines.append("]" + ("," if i < len(entries) - 1 else ""))
    tail = list(data.get(last, {}).items())
    lines += ["},", f'"{last}": {{']
    lines += [f"{json.dumps(k)}: {json.dumps(t)}{',' if i < len(tail) - 1 else ''}"
              for i, (k, t) in enumerate(tail)]
    lines += ["}", "}"]
    return "\n".join(lines) + "\n"
