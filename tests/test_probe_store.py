"""Probe outcomes stored once per range of releases (qlin_cli/targets/probe_store.py): every
release reads back as measured, a fact that holds for several releases is one line, and
adding a release adds lines only where it differs."""

from __future__ import annotations

import gzip
import json
import warnings

import pytest

from qlin_cli.targets import data_files, probe_store, probe_table, releases, versions


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
    no = probe_store.error_id("no")
    assert data["keys"]["a"] == [{"since": "1.9.0", "runs": 0, "fails": 1, "error": no},
                                 {"since": "1.10.0", "runs": 1, "fails": 0}]
    assert data["errors"] == {no: "no"}
    assert data["keys"]["b"] == [{"since": "1.9.0", "runs": 1, "fails": 0}]  # one line for three releases
    for v, t in tables.items():
        assert probe_store.version_data("rt", v, data) == t
    assert "c" not in probe_store.version_data("rt", "1.10.0", data)["keys"]  # probed from 1.11 on


def test_a_key_no_longer_probed_ends_its_range():
    tables = {"1.0.0": _table("1.0.0", {"a": {"runs": 1, "fails": 0}, "old": {"runs": 1, "fails": 0}}),
              "1.1.0": _table("1.1.0", {"a": {"runs": 1, "fails": 0}})}
    data = json.loads(probe_store.dumps(probe_store.fold("rt", tables, releases.key)))
    assert data["keys"]["old"] == [{"since": "1.0.0", "runs": 1, "fails": 0},
                                   {"since": "1.1.0", "absent": True}]
    for v, t in tables.items():
        assert probe_store.version_data("rt", v, data) == t


def test_a_release_like_the_last_changes_no_key_line():
    keys = {"a": {"runs": 1, "fails": 0}, "b": {"runs": 0, "fails": 1}}
    one = {"1.0.0": _table("1.0.0", keys)}
    two = dict(one, **{"1.1.0": _table("1.1.0", dict(keys))})
    before = probe_store.dumps(probe_store.fold("rt", one, releases.key)).splitlines()
    after = probe_store.dumps(probe_store.fold("rt", two, releases.key)).splitlines()
    added = [line for line in after if line not in before]
    # the new release's line, and the comma the line before it gains: no fact repeated
    assert [line.split(":")[0] for line in added] == ['"1.0.0"', '"1.1.0"']


def test_an_error_is_written_once_however_many_ranges_name_it():
    long = "load: " + "x" * 300
    tables = {v: _table(v, {k: {"runs": 0, "fails": 1, "error": long} for k in "abcd"} | {
        "e": {"runs": 0, "fails": 1, "error": f"other {v}"}}) for v in ("1.0.0", "1.1.0")}
    text = probe_store.dumps(probe_store.fold("rt", tables, releases.key))
    assert text.count(long) == 1 and text.count("other 1.") == 2
    data = json.loads(text)
    assert len(data["errors"]) == 3
    for v, t in tables.items():
        assert probe_store.version_data("rt", v, data) == t


def test_a_file_of_format_2_still_reads():
    """Format 2 wrote each error in place (no ``errors`` table): its releases read the same."""
    tables = {"1.0.0": _table("1.0.0", {"a": {"runs": 0, "fails": 1, "error": "load: no"}})}
    data = json.loads(probe_store.dumps(probe_store.fold("rt", tables, releases.key)))
    data["keys"]["a"][0]["error"] = data["errors"].pop(probe_store.error_id("load: no"))
    del data["errors"]
    assert probe_store.version_data("rt", "1.0.0", data) == tables["1.0.0"]
    table = probe_table.ProbeTable(probe_store.version_data("rt", "1.0.0", data, lazy=True))
    assert table.exact("a").error == "load: no"


def test_a_release_read_when_asked_is_the_release_read_whole():
    """The committed files hold every release a target name can judge; probe_table.load finds
    each key's entry when asked (ReleaseKeys over the file's bytes, bisected:
    data_files.Block); every release reads the same that way as unfolded whole, absent keys
    included, and every block is in the order bisecting needs."""
    for runtime in ("onnxruntime", "openvino"):
        data = probe_store._read(runtime)
        assert set(versions.known(runtime)) <= set(probe_store.releases(runtime)) == set(data["releases"])
        for block in ("keys", "errors"):
            assert list(data[block]) == sorted(data[block]), (runtime, block)
            assert list(data_files.block(probe_store.file_name(runtime), block)) == list(data[block])
        every = sorted(data["keys"])
        for i, v in enumerate(data["releases"]):
            newest = i == len(data["releases"]) - 1
            # the parsed file's entries, unfolded into a dict for the newest release, each
            # found when asked for the others (the same ranges: only what is compared is read)
            whole = probe_store.version_data(runtime, v, data, lazy=not newest)["keys"]
            lazy = probe_store.version_data(runtime, v, lazy=True)["keys"]
            assert set(lazy) == set(whole)
            if newest or i % 4 == 0:  # the count walks every range again: one release in four
                assert len(lazy) == len(whole)
            # each release reads a quarter of the keys entry by entry (release i from offset i):
            # every four releases read every key, the newest all of them
            asked = every if newest else every[i % 4::4]
            assert {k: lazy.get(k) for k in asked} == {k: whole.get(k) for k in asked}
            gone = [k for k in asked if k not in whole]
            table = probe_table.load(runtime, v)
            assert all(table.exact(k) is None for k in gone[:50])


def test_a_key_no_probe_has_is_judged_by_the_nearest_coarser_one():
    table = probe_table.ProbeTable({"runtime": "rt", "version": "1", "source": "", "probes": 3, "keys": {
        "op(int4) blocked axis=0 rank=2": {"runs": 0, "fails": 2, "error": "load: no int4"},
        "op(int4) blocked axis=1 rank=2 one block": {"runs": 1, "fails": 0},
        "op(int8) per-tensor": {"runs": 1, "fails": 0}}})
    from qlin_cli.targets.probe_keys import Key

    # one block along axis 0 was not probed: the blocked-along-axis-0 probes judge it
    assert table.outcome(Key("op(int4)", ("blocked", "axis=0", "rank=2", "one block"))).refused
    # no probe along axis 2: every blocked probe of the types, summed
    summed = table.outcome(Key("op(int4)", ("blocked", "axis=2", "rank=3")))
    assert (summed.runs, summed.fails, summed.error) == (1, 2, "load: no int4")
    assert table.outcome(Key("op(uint4)", ("blocked", "axis=0", "rank=2"))) is None  # other types: nothing
    assert table.outcome(Key("op(int8)", ("per-tensor",))).runs == 1
    assert str(Key("op(int8)", ("per-tensor", "[1]"))) == "op(int8) per-tensor [1]"  # the key's one text


def test_a_digest_is_written_where_it_changes_and_read_in_every_release():
    tables = {v: _table(v, {"a": {"runs": 1, "fails": 0, "digest": d}})
              for v, d in (("1.9.0", "d1"), ("1.10.0", "d1"), ("1.11.0", "d2"))}
    tables["1.10.0"]["keys"]["a"]["runs"] = 2
    data = json.loads(probe_store.dumps(probe_store.fold("rt", tables, releases.key)))
    assert data["keys"]["a"] == [{"since": "1.9.0", "runs": 1, "fails": 0, "digest": "d1"},
                                 {"since": "1.10.0", "runs": 2, "fails": 0},
                                 {"since": "1.11.0", "runs": 1, "fails": 0, "digest": "d2"}]
    for v, t in tables.items():
        assert probe_store.version_data("rt", v, data)["keys"] == t["keys"]


def _recorded_digests(runtime: str) -> dict[str, set[str]]:
    """{key: every probe digest a range of the runtime's file records for it}, ranges that
    end a key (``absent``) left out: one walk of the whole file, every release at once."""
    found: dict[str, set[str]] = {}
    for key, ranges in probe_store._read(runtime)["keys"].items():
        digest = None  # written where it changes: the last one before holds
        for r in ranges:
            digest = r.get("digest", digest)
            if "absent" not in r:
                found.setdefault(key, set()).add(digest)
    return found


def test_every_release_was_measured_on_todays_probes():
    """The data is held to the probes without running a runtime (`make remeasure` runs
    them): every range records the digest of the probes it was measured on
    (tools/probe_models.py ``digests``), and a probe changed since, or a probe key no
    release has, fails here until its keys are measured again (tools/gen_target_data.py
    RUNTIME VERSION --missing, in each release). Today's probes are known without making
    them while the files they are made from are those tests/data/probe_set.json was
    recorded from (``python tools/probe_models.py --record``); otherwise they are made, and
    a warning asks for the record again."""
    import probe_models

    from qlin_cli.targets import probe_keys

    recorded = json.loads(probe_models.RECORD.read_text(encoding="utf-8"))
    fresh = recorded["sources"] == probe_models.sources_digest(recorded["files"])
    for runtime in ("onnxruntime", "openvino"):
        found = _recorded_digests(runtime)
        releases_ = probe_store.releases(runtime)
        first = {k: r[0]["since"] for k, r in probe_store._read(runtime)["keys"].items()}
        assert set(first.values()) == {releases_[0]}, f"{runtime}: a key not measured in every release"
        one = {k: next(iter(d)) for k, d in found.items() if len(d) == 1}
        if fresh and len(one) == len(found) and probe_models.set_digest(one) == recorded["probes"]:
            assert len(one) == recorded["keys"]
            continue  # every key of every release on the probes the record was made of
        _held_to_probes_made_now(runtime, found)
    if not fresh:  # right, but slow: the record is what keeps this test under a second
        warnings.warn("tests/data/probe_set.json was recorded from other sources, so the data was held "
                      "to the probes made now (about 10 s): run `python tools/probe_models.py --record`",
                      stacklevel=1)
    assert probe_keys.opset_key(21) in found and probe_keys.ir_key(10) in found  # the load probes' keys


def _held_to_probes_made_now(runtime: str, found: dict[str, set[str]]) -> None:
    """The slow way, naming what is stale: every probe made, each key's digest compared."""
    import probe_models
    from probe_helpers import all_probes

    made = probe_models.digests(all_probes())
    stale = sorted(k for k, d in found.items() if k in made and d != {made[k]})
    assert not stale, f"{runtime}: {len(stale)} keys measured on other probes, first {stale[0]!r}"
    # every key of the data is a probe's key (a key a node can have, or a load probe's)
    assert sorted(set(made) ^ set(found))[:3] == [], f"{runtime}: keys not measured, or no probe's"


@pytest.mark.remeasure
def test_the_record_of_the_probe_set_is_the_probes_made_now():
    """`make remeasure`: the record make test reads is today's probes, made."""
    import probe_models
    from probe_helpers import all_probes

    recorded = json.loads(probe_models.RECORD.read_text(encoding="utf-8"))
    keyed = probe_models.digests(all_probes())
    assert (len(keyed), probe_models.set_digest(keyed)) == (recorded["keys"], recorded["probes"])
    assert recorded["sources"] == probe_models.sources_digest(recorded["files"])


def test_the_releases_are_read_from_the_head_of_each_file_as_the_whole_file_gives_them():
    """Listing the measured releases reads the files' ``releases`` blocks only
    (targets/data_files.py); what it lists is what a parse of the whole file gives."""
    from importlib import resources

    from qlin_cli.targets import data_files, kernel_store

    data = resources.files("qlin_cli.targets.data")
    names = [probe_store.file_name("onnxruntime"), probe_store.file_name("openvino"),
             kernel_store.file_name("onnxruntime")]
    for name in names:
        whole = json.loads(gzip.decompress((data / (name + data_files.GZ)).read_bytes()))
        assert data_files.releases(name) == tuple(whole["releases"]) and len(whole["releases"]) >= 15
    assert data_files.releases("no_such_probes.json") is None
    assert probe_store.releases("no_such_runtime") == ()


def test_the_target_data_takes_at_most_a_megabyte_stored_as_its_text_gives_it(tmp_path):
    """Every data file is stored gzip-compressed (data_files.write), all of them together at
    most 1 MB (5.9 MB as plain text); the stored bytes are what ``write`` makes of the
    file's text, with no time or name in them, so the same data is the same file."""
    from importlib import resources

    from qlin_cli.targets import data_files

    stored = sorted(p for p in resources.files("qlin_cli.targets.data").iterdir()
                    if p.name.endswith(".json" + data_files.GZ))
    assert len(stored) >= 3  # probes of each runtime, kernels (and fusion groups)
    assert sum(len(p.read_bytes()) for p in stored) <= 1_000_000
    for p in stored:
        text = gzip.decompress(p.read_bytes()).decode("utf-8")
        again = tmp_path / p.name.removesuffix(data_files.GZ)
        data_files.write(again, text)
        assert (tmp_path / p.name).read_bytes() == p.read_bytes()
        assert data_files.load(again) == json.loads(text)
        # one line per release, range and row: diffs read as changes (the blocks file holds few)
        assert text.count("\n") > (len(json.loads(text)["releases"]) if "_blocks" in p.name else 500)
    assert data_files.load(tmp_path / "none.json") is None


def test_the_keys_that_ran_are_read_as_the_outcomes_give_them():
    """ProbeTable.ran (the store's walk, no outcome made) lists what the outcomes say ran, for
    the oldest and the newest release of each runtime."""
    for runtime in ("onnxruntime", "openvino"):
        known = probe_store.releases(runtime)
        for v in (known[0], known[-1]):
            table = probe_table.load(runtime, v)
            assert table.ran() == sorted(k for k, o in table.keys().items() if o.runs), (runtime, v)
            assert 0 < len(table.ran()) < len(table.keys())


def test_the_errors_block_is_decompressed_only_when_a_read_range_names_an_error():
    """A release's probe keys read lazily leave the file's tail (its errors block, 64 KB of
    onnxruntime's text) compressed until a key whose range names an error is read (a fresh
    process: the data files' reads are kept for the process's life)."""
    import subprocess
    import sys

    code = (
        "from qlin_cli.targets import data_files, probe_store\n"
        "name = probe_store.file_name('onnxruntime')\n"
        "v = probe_store.releases('onnxruntime')[-1]\n"
        "keys = probe_store.version_data('onnxruntime', v, lazy=True)['keys']\n"
        "assert 'error' not in keys['Q -> DQ int16 after AveragePool to graph output']\n"
        "print(data_files._parts(name)._tail is None)\n"
        "assert 'error' in keys['Q -> DQ int16 from graph input to graph output']\n"
        "print(data_files._parts(name)._tail is None)\n")
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert got.stdout.split() == ["True", "False"], got.stderr
