"""The stored form of the target data (targets/data_files.py): a probe file's ``keys`` block
in runs compressed one by one, indexed in the gzip header; any gzip reader still reads the
file whole, and a lookup decompresses the one run its key falls in."""

from __future__ import annotations

import gzip
import json

import pytest

from qlin_cli.targets import data_files, probe_store


def _text(keys: list[str]) -> str:
    """A probe-file-shaped text: head fields, releases, a keys block, an errors block."""
    lines = ['{', '"runtime": "r",', '"releases": {', '"1.0": {"source": "s"}', '},', '"keys": {']
    for i, k in enumerate(keys):
        end = "," if i < len(keys) - 1 else ""
        lines += [f"{json.dumps(k)}: [", f'{{"since": "1.0", "runs": {i}, "fails": 0}}', f"]{end}"]
    lines += ["},", '"errors": {', '"e1": "a message"', "}", "}"]
    return "\n".join(lines) + "\n"


KEYS = sorted({f"QuantizeLinear-{v} x={t} note=\u00e9{i}" for v in (10, 13, 19, 21, 23)
               for t in ("float32", "float16") for i in range(60)})


@pytest.fixture
def parts(monkeypatch):
    monkeypatch.setattr(data_files, "RUN_BYTES", 512)  # many runs of a small text
    text = _text(KEYS)
    stored = data_files._members(text.encode())
    assert gzip.decompress(stored).decode() == text  # the file is its text to any reader
    p = data_files._Parts(stored)
    return text, p, p.runs_of(p.run_block)


def test_runs_give_every_key_as_the_whole_parse(parts):
    text, _, r = parts
    whole = json.loads(text)
    runs = data_files.Runs(r)
    assert len(r.firsts) > 20 and r.firsts == sorted(r.firsts)
    assert list(runs) == list(whole["keys"]) and len(runs) == len(KEYS)
    assert dict(runs.items()) == whole["keys"]
    for k in KEYS[::7]:
        assert runs[k] == whole["keys"][k] and k in runs


def test_a_lookup_decompresses_one_run(parts, monkeypatch):
    _, _, r = parts
    asked = []
    run = r.run
    monkeypatch.setattr(r, "run", lambda i: asked.append(i) or run(i))
    runs = data_files.Runs(r)
    assert runs[KEYS[len(KEYS) // 2]][0]["runs"] == len(KEYS) // 2
    assert len(asked) == 1


@pytest.mark.parametrize("missing", ["", "A", "QuantizeLinear-13 x=float32 note=\u00e95 more", "zzz"])
def test_a_key_not_stored_is_missing(parts, missing):
    runs = data_files.Runs(parts[2])
    assert missing not in runs
    with pytest.raises(KeyError):
        runs[missing]


@pytest.mark.parametrize("prefix", ["", "QuantizeLinear-19", "QuantizeLinear-19 x=float32",
                                    "QuantizeLinear-3", "zz"])
def test_keys_from_a_prefix_run_on_across_runs(parts, prefix):
    runs = data_files.Runs(parts[2])
    assert list(runs.keys_from(prefix)) == [k for k in KEYS if k >= prefix]


def test_head_and_tail_blocks_are_read_from_their_own_members(parts):
    text, p, r = parts
    assert p.run_block == "keys" and b'"releases"' in p.head and b'"keys": {' in p.head
    assert b'"errors"' in p.tail() and b'"errors"' not in p.head
    stored = len(p.head) + sum(len(r.run(i)) for i in range(len(r.firsts))) + len(p.tail())
    assert stored == len(text.encode())


def test_the_stored_probe_files_are_in_runs_and_a_release_reads_few_of_them(monkeypatch):
    for runtime in ("onnxruntime", "openvino"):
        name = probe_store.file_name(runtime)
        p = data_files._parts(name)
        r = p.runs_of("keys")
        assert p.run_block == "keys" and len(r.firsts) > 50
        asked: set[int] = set()
        run = r.run
        monkeypatch.setattr(r, "run", lambda i, run=run, asked=asked: asked.add(i) or run(i))
        keys = data_files.Runs(r)
        some = [k for i, k in enumerate(r.firsts) if i % 10 == 3]
        assert all(k in keys for k in some)
        assert asked == {r.firsts.index(k) for k in some}


def test_an_ops_versions_are_its_history_in_onnx_defs():
    from qlin_cli.convert import opsteps
    from qlin_cli.targets import probe_table

    for op in opsteps.ops():
        assert list(probe_table._versions(op)) == opsteps.history(op), op
    assert probe_table._versions("NoSuchOp") == ()


@pytest.mark.parametrize("prefix", [None, "QuantizeLinear-19", "QuantizeLinear-3", "zz"])
@pytest.mark.parametrize("ahead", [False, True])
def test_items_from_a_prefix_are_the_parsed_entries_kept_up_to_the_stop(parts, prefix, ahead):
    """Runs.items_from walks the runs in order from ``prefix``, keeps what ``keep`` keeps, ends
    at the first key ``stop`` is true of, and gives each value as the whole parse has it (some
    parsed before by a look-up, ``ahead``: those kept as they were)."""
    text, _, r = parts
    whole = json.loads(text)["keys"]
    runs = data_files.Runs(r)
    if ahead:
        before = [runs[k] for k in KEYS[::5]]
    keep = lambda k: "float32" in k  # noqa: E731
    stop = lambda k: k.startswith("QuantizeLinear-23")  # noqa: E731
    got = runs.items_from(prefix, keep, stop)
    start = prefix or ""
    want = [(k, whole[k]) for k in KEYS if k >= start and keep(k)]
    want = [(k, v) for k, v in want if k < "QuantizeLinear-23"]
    assert got == want
    if ahead:  # a value parsed before is the same object
        assert all(runs[k] is v for k, v in zip(KEYS[::5], before, strict=True))
    assert runs.items_from(prefix) == [(k, whole[k]) for k in KEYS if k >= start]
