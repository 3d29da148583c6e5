"""`qlin check --format jsonl` (one JSON object per file, written as each file is checked, then
a summary line) and `--shard K/N` (shard K of N of the files found): docs/check.md."""

from __future__ import annotations

import glob
import json
import os
import sys

import pytest
from click.testing import CliRunner
from paths import MODELS

from qlin_cli import parallel
from qlin_cli.cli import main
from qlin_cli.discover import parse_shard, shard, walk

ALL = sorted(glob.glob(os.path.join(MODELS, "**", "*.onnx"), recursive=True))
SOME = [p for p in ALL if os.sep + "rules" + os.sep not in p]  # clean, broken, scopes: 17 files


def run(*args):
    r = CliRunner().invoke(main, ["check", "--no-config", *map(str, args)])
    return r.exit_code, r.stdout, r.stderr


def lines(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines()]


def test_jsonl_is_check_json_one_file_a_line_then_the_summary():
    code, out, _ = run("--format", "jsonl", *SOME)
    got = lines(out)
    code_json, out_json, _ = run("--format", "json", *SOME)
    doc = json.loads(out_json)
    assert code == code_json == 1
    *files, last = got
    assert [{k: v for k, v in f.items() if k not in ("type", "version")} for f in files] == doc["files"]
    assert all(f["type"] == "file" and f["version"] == doc["version"] for f in files)
    assert last == {"version": doc["version"], "type": "summary", "summary": doc["summary"]}
    assert out.isascii() and len(out.splitlines()) == len(SOME) + 1


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_each_line_is_written_before_the_next_file_is_taken(jobs, monkeypatch):
    """When the checker hands over file i's result, the lines of files 0..i-1 are already out
    (flushed), in one process and in worker processes alike."""
    monkeypatch.setattr(parallel, "MIN_BYTES", 0)  # small fixtures: a pool with -j 2 all the same
    written: list[int] = []
    pooled: list[bool] = []
    real = parallel.ordered_map

    def spy(fn, items, jobs_, paths, **kw):
        pooled.append(parallel.worth_it(paths, jobs_))
        for result in real(fn, items, jobs_, paths, **kw):
            written.append(sys.stdout.buffer.getvalue().count(b"\n"))
            yield result

    monkeypatch.setattr(parallel, "ordered_map", spy)
    code, out, _ = run("--format", "jsonl", "-j", jobs, *SOME)
    assert pooled == [jobs == "2"]
    assert written == list(range(len(SOME)))
    assert [f["path"] for f in lines(out)[:-1]] == SOME


def test_a_file_that_cannot_be_checked_is_a_line_with_its_error(tmp_path):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x08not a model")
    code, out, err = run("--format", "jsonl", SOME[0], bad)
    first, second, summary = lines(out)
    assert code == 2 and first["error"] is None and second["error"] and "bad.onnx" in err
    assert summary["summary"]["unchecked"] == 1


def test_jsonl_refuses_statistics_and_diff():
    for flag in ("--statistics", "--diff"):
        code, _, err = run("--format", "jsonl", flag, SOME[0])
        assert code == 2 and "not jsonl" in err


def test_jsonl_to_a_file(tmp_path):
    out = tmp_path / "r.jsonl"
    code, stdout, _ = run("--format", "jsonl", "-o", out, *SOME[:3])
    assert stdout == "" and len(lines(out.read_text())) == 4


@pytest.mark.parametrize("n", [1, 2, 3, 5, 7, len(ALL), len(ALL) + 3])
def test_the_shards_of_a_walk_are_disjoint_and_cover_it(n):
    found = walk([MODELS])
    parts = [shard(found, k, n) for k in range(1, n + 1)]
    union = [item for part in parts for item in part]
    assert sorted(union) == sorted(found) and len(union) == len(found)  # each file in exactly one
    assert max(map(len, parts)) - min(map(len, parts)) <= 1  # as even as can be
    for part in parts:  # each keeps the walk's order
        assert part == [item for item in found if item in part]
    assert parts == [shard(list(reversed(found)), k, n)[::-1] for k in range(1, n + 1)]  # by path, not order


def test_the_shards_checked_by_the_command_together_check_every_file_once():
    folder = os.path.join(MODELS, "scopes")
    _, whole, _ = run("--format", "jsonl", folder)
    everything = [f["path"] for f in lines(whole)[:-1]]
    paths = []
    for k in (1, 2, 3):
        _, out, _ = run("--format", "jsonl", "--shard", f"{k}/3", folder)
        part = lines(out)
        assert part[-1]["summary"]["files"] == len(part) - 1 == 2
        paths += [f["path"] for f in part[:-1]]
    assert sorted(paths) == sorted(everything) and len(everything) == 6


@pytest.mark.parametrize("bad", ["0/2", "3/2", "a/b", "1/0", "2", "1/2/3", "-1/2", "", "１/2"])
def test_a_bad_shard_is_one_line_and_exit_2(bad):
    code, out, err = run("--shard", bad, MODELS)
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and err.startswith("qlin: error: --shard: "), err


def test_parse_shard():
    assert parse_shard("1/1") == (1, 1) and parse_shard(" 3 / 4 ") == (3, 4)
    with pytest.raises(ValueError):
        parse_shard("5/4")
