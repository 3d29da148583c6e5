"""Probe outcomes stored once per range of releases (qlin_cli/targets/probe_store.py): every
release reads back as measured, a fact that holds for several releases is one line, and
adding a release adds lines only where it differs."""

from __future__ import annotations

import json

from qlin_cli.targets import probe_store, probe_table, releases, versions


def _table(version, keys, probes=3):
    return {"runtime": "rt", "version": version, "device": "CPU", "source": f"measured {version}",
            "hosts": ["cpu A"], "probes": probes, "keys": keys}


def test_fold_and_unfold_give_every_release_back():
    tables = {
        "1.9.0": _table("1.9.0", {"a": {"runs": 0, "fails": 1, "error": "no"}, "b": {"runs": 1, "fails": 0}}),
        "1.10.0": _table("1.10.0", {"a": {"runs": 1, "fails": 0}, "b": {"runs": 1, "fails": 0}}),
        "1.11.0": _table("1.11.0", {"a": {"runs": 1, "fails": 0}, "b": {"runs": 1, "fails": 0},
                                    "c": {"runs": 1, "fails": 0}}),
    }
    data = json.loads(probe_store.dumps(probe_store.fold("rt", tables, releases.key)))
    assert list(data["releases"]) == ["1.9.0", "1.10.0", "1.11.0"]  # version order, not text order
    assert data["keys"]["a"] == [{"since": "1.9.0", "runs": 0, "fails": 1, "error": "no"},
                                 {"since": "1.10.0", "runs": 1, "fails": 0}]
    assert data["keys"]["b"] == [{"since": "1.9.0", "runs": 1, "fails": 0}]  # one line for three releases
    for v, t in tables.items():
        assert probe_store.version_data("rt", v, data) == t
    assert "c" not in probe_store.version_data("rt", "1.10.0", data)["keys"]  # probed from 1.11 on


def test_a_release_like_the_last_changes_no_key_line():
    keys = {"a": {"runs": 1, "fails": 0}, "b": {"runs": 0, "fails": 1}}
    one = {"1.0.0": _table("1.0.0", keys)}
    two = dict(one, **{"1.1.0": _table("1.1.0", dict(keys))})
    before = probe_store.dumps(probe_store.fold("rt", one, releases.key)).splitlines()
    after = probe_store.dumps(probe_store.fold("rt", two, releases.key)).splitlines()
    added = [line for line in after if line not in before]
    # the new release's line, and the comma the line before it gains: no fact repeated
    assert [line.split(":")[0] for line in added] == ['"1.0.0"', '"1.1.0"']


def test_the_committed_files_hold_every_measured_release():
    for runtime in ("onnxruntime", "openvino"):
        have = probe_store.releases(runtime)
        assert set(versions.known(runtime)) <= set(have), runtime
        for v in have:
            table = probe_table.load(runtime, v)
            assert table.probes > 1000 and len(table.keys()) > 500
