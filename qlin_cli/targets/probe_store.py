"""The probe outcomes of every measured release of a runtime, in one file per runtime
(qlin_cli/targets/data/<runtime>_probes.json), each fact stored once with the range of
releases it holds for.

    {"format": 2, "runtime": "openvino", "device": "CPU",
     "releases": {                                   one line per measured release
       "2024.0.0": {"probes": 1531, "hosts": [...], "source": "python tools/gen_target_data.py ..."},
       ...},
     "keys": {                                       per probe key (targets/probe_keys.py)
       "ai.onnx:DequantizeLinear-21(int4,float,int4) blocked axis=1": [
         {"since": "2024.0.0", "runs": 0, "fails": 5, "error": "load: ..."},
         {"since": "2025.3.0", "runs": 5, "fails": 0}],
       ...}}

An entry holds from its ``since`` release up to the release before the next entry's
``since`` (releases in version order); a key whose first entry is newer than a release, or
whose entry in force says ``"absent": true``, was not probed there. Adding the next release
adds a line only where its outcome differs, so a diff between two commits, or between two
releases, reads as what changed. ``hosts`` in an
entry keeps each CPU's outcome where the CPUs measured differ (tools/gen_target_data.py
``--merge``).
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources

_DATA_PACKAGE = "qlin_cli.targets.data"
FORMAT = 2


def file_name(runtime: str) -> str:
    return f"{runtime}_probes.json"


@cache
def _read(runtime: str) -> dict | None:
    entry = resources.files(_DATA_PACKAGE) / file_name(runtime)
    if not entry.is_file():
        return None
    return json.loads(entry.read_text(encoding="utf-8"))


def releases(runtime: str) -> tuple[str, ...]:
    """The releases measured, in version order."""
    data = _read(runtime)
    return () if data is None else tuple(data["releases"])


def version_data(runtime: str, version: str, data: dict | None = None) -> dict:
    """One release's outcomes as a table of its own (probe_table.ProbeTable's input):
    runtime, version, source, hosts, probes and ``keys`` {key: entry}. LookupError when the
    release was not measured."""
    data = _read(runtime) if data is None else data
    if data is None or version not in data["releases"]:
        raise LookupError(version)
    order = list(data["releases"])
    at = order.index(version)
    keys = {}
    for key, ranges in data["keys"].items():
        found = None
        for r in ranges:
            if order.index(r["since"]) <= at:
                found = r
            else:
                break
        if found is not None and not found.get("absent"):
            keys[key] = {k: v for k, v in found.items() if k != "since"}
    release = data["releases"][version]
    return {"runtime": data["runtime"], "version": version, "device": data.get("device", "CPU"),
            "source": release["source"], "hosts": release.get("hosts", []), "probes": release["probes"],
            "keys": keys}


def fold(runtime: str, tables: dict[str, dict], order_key) -> dict:
    """The range file of ``tables`` ({release: version_data-like dict}); ``order_key``
    sorts release numbers."""
    order = sorted(tables, key=order_key)
    data = {"format": FORMAT, "runtime": runtime, "device": "CPU",
            "releases": {v: {"probes": tables[v]["probes"], "hosts": tables[v].get("hosts", []),
                             "source": tables[v]["source"]} for v in order},
            "keys": {}}
    for key in sorted({k for t in tables.values() for k in t["keys"]}):
        ranges, last = [], None
        for v in order:
            entry = tables[v]["keys"].get(key)
            if entry == last:
                continue  # the same as before (or still not probed)
            # a key no longer probed from this release on ends its range
            ranges.append({"since": v, "absent": True} if entry is None else {"since": v, **entry})
            last = entry
        data["keys"][key] = ranges
    return data


def dumps(data: dict) -> str:
    """The file's text: one line per release and per range, keys in order."""
    lines = ["{", f'"format": {data["format"]},', f'"runtime": {json.dumps(data["runtime"])},',
             f'"device": {json.dumps(data["device"])},', '"releases": {']
    rel = list(data["releases"].items())
    lines += [f"{json.dumps(v)}: {json.dumps(r)}{',' if i < len(rel) - 1 else ''}"
              for i, (v, r) in enumerate(rel)]
    lines += ["},", '"keys": {']
    keys = list(data["keys"].items())
    for i, (key, ranges) in enumerate(keys):
        lines.append(f"{json.dumps(key)}: [")
        lines += [f"{json.dumps(r)}{',' if j < len(ranges) - 1 else ''}" for j, r in enumerate(ranges)]
        lines.append("]" + ("," if i < len(keys) - 1 else ""))
    lines += ["}", "}"]
    return "\n".join(lines) + "\n"
