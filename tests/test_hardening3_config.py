"""Hardening 3: configuration bombs load and match in time linear in their size.

100,000 per-path-ignores or per-node-ignores entries, or a 10 MB node glob, gave no answer
in 30 s: every list of codes rebuilt the table of every code, fnmatch compiled each pattern
(and turned ``a*a*...`` into a regular expression it never finished), and the file was
parsed twice. Then the file took tomllib seconds, each list of codes was checked again,
every pattern was cut into pieces before any was needed (twice for per-path-ignores), a
class was compiled as a regular expression for each pattern (60 us each), and the codes of
the entries that hold were added list to list (quadratic). What is counted here is the
work: the file read once by toml_fast.py (never by tomllib), each different list of codes
checked once, a pattern read only when a text reaches its literal prefix, no regular
expression made from a pattern, the codes of 10,000 matching entries given once each.

docs/security.md gives the times of the 100,000-entry and 10 MB bombs, measured."""

from __future__ import annotations

import fnmatch
import json
import os
import re
import shutil

import pytest
from click.testing import CliRunner
from hardening_helpers import assert_bad_input, cli, guard  # noqa: F401
from hypothesis import given, settings
from hypothesis import strategies as st
from paths import MODELS

from qlin_cli import codes, config, globs, toml_fast
from qlin_cli.cli import main
from qlin_cli.globs import Glob, GlobSet

BROKEN = os.path.join(MODELS, "broken", "chain.onnx")  # QL501, QL405, QL604 on named nodes
ALL = [("input_q", "QL501"), ("input_dq", "QL501"), ("weight_q", "QL405"), ("weight_q", "QL604"),
       ("weight_dq", "QL405")]


def _count(monkeypatch, calls, name, owner, attr):
    real = getattr(owner, attr)

    def counted(*a, **k):
        calls[name] += 1
        return real(*a, **k)

    monkeypatch.setattr(owner, attr, counted)


def _check(tmp_path, text, monkeypatch):
    """`qlin check` of the broken chain under a pyproject.toml of ``text``: the findings kept,
    and the work counted."""
    (tmp_path / "pyproject.toml").write_text(text)
    shutil.copy(BROKEN, tmp_path / "m.onnx")
    calls = dict.fromkeys(["known", "translate", "tomllib", "fast", "codes", "globs"], 0)
    _count(monkeypatch, calls, "known", codes, "known")
    _count(monkeypatch, calls, "translate", fnmatch, "translate")
    _count(monkeypatch, calls, "tomllib", config._tomllib(), "loads")
    _count(monkeypatch, calls, "fast", toml_fast, "loads")
    _count(monkeypatch, calls, "codes", config, "_codes")
    _count(monkeypatch, calls, "globs", globs, "_pieces")  # a pattern cut into its pieces
    config.known_codes.cache_clear()
    config.known_prefix.cache_clear()
    config._PARSED.clear()
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, ["check", "--format", "json", "m.onnx"])
    assert r.exit_code in (0, 1), r.output
    found = [(d["node"], d["code"]) for d in json.loads(r.stdout)["files"][0]["diagnostics"]]
    return found, calls


def test_twenty_thousand_entries_each_are_read_once(tmp_path, monkeypatch):
    n = 20_000
    lines = ["[tool.qlin.per-path-ignores]", '"m.onnx" = ["QL604"]']
    lines += [f'"dir{i}/*.onnx" = ["QL405"]' for i in range(n)]
    lines += ["[tool.qlin.per-node-ignores]", '"weight_*" = ["QL405"]']
    lines += [f'"node{i}_*" = ["QL501"]' for i in range(n)]
    found, calls = _check(tmp_path, "\n".join(lines) + "\n", monkeypatch)
    assert found == [("input_q", "QL501"), ("input_dq", "QL501")]
    # one parse, by the fast reader; the codes table built once, each different list
    # checked once; the path's patterns read: "m.onnx" and none of "dir*"; the node names'
    # patterns read: "weight_*" alone
    assert calls == {"known": 1, "translate": 0, "tomllib": 0, "fast": 1, "codes": 4, "globs": 2}, calls


def test_ten_thousand_entries_that_all_hold_give_each_code_once(tmp_path, monkeypatch):
    """Each pattern ends in a class (the node names end in "q", a letter no class holds): all
    10,000 hold for every node name; their codes were added list to list, and each class
    was compiled by fnmatch (4,096 kept)."""
    n = 10_000
    lines = ["[tool.qlin.per-node-ignores]"] + [f'"*[!{i}]" = ["QL501", "QL4"]' for i in range(n)]
    found, calls = _check(tmp_path, "\n".join(lines) + "\n", monkeypatch)
    assert found == [("weight_q", "QL604")]
    assert calls["translate"] == calls["tomllib"] == 0 and calls["globs"] == n, calls
    cfg = config.Config(per_node_ignores={f"*[!{i}]": ["QL501", "QL4"] for i in range(n)})
    assert cfg.ignored_for_node("input_q") == ["QL501", "QL4"] and cfg.ignored_for_node("") is None


def test_a_ten_megabyte_glob_is_matched(tmp_path, monkeypatch):
    glob = "a*" * 5_000_000 + "q"  # 10 MB: a piece for each "a"
    found, calls = _check(tmp_path, f'[tool.qlin.per-node-ignores]\n"{glob}" = ["QL"]\n"input_q" = []\n',
                          monkeypatch)
    assert found == [f for f in ALL if f[0] != "input_q"]
    assert calls["translate"] == calls["tomllib"] == 0 and calls["fast"] == 1, calls


def test_a_ten_megabyte_path_glob_is_matched(tmp_path, monkeypatch):
    glob = "m" + "*?" * 5_000_000  # 10 MB: a "?" in each piece
    text = f'[tool.qlin.per-path-ignores]\n"{glob}" = ["QL"]\n"m.onnx" = ["QL604"]\n'
    found, calls = _check(tmp_path, text, monkeypatch)
    assert found == [f for f in ALL if f[1] != "QL604"]
    assert calls["translate"] == calls["tomllib"] == 0 and calls["fast"] == 1, calls


@pytest.mark.parametrize("glob, holds", [
    ("?" * 10_000_000, False),  # one piece of 10 MB: read as far as the name reaches
    ("?" * 6 + "[q]" * 3_000_000, False),  # 9 MB, the same
    ("[!x]*" * 200_000, False),  # 200,000 classes, each a piece
    ("i[" + "a-c" * 1_000_000 + "n]put_q", True),  # one class of 3 MB: read by str.split
    ("i[" + "a-c" * 1_000_000 + "]put_q", False),
])
def test_megabyte_globs_of_classes_are_matched_without_regular_expressions(glob, holds, monkeypatch):
    calls = {"translate": 0}
    _count(monkeypatch, calls, "translate", fnmatch, "translate")
    assert GlobSet([glob]).matching("input_q") == ([0] if holds else [])
    assert calls["translate"] == 0


# ---- the same answers as fnmatch --------------------------------------------------------------

CLASSY = "ab-!]^[\\*?z"


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.lists(st.text(CLASSY, max_size=10), min_size=1, max_size=6), st.text(CLASSY + "/c", max_size=6))
def test_a_set_answers_as_fnmatchcase_with_classes(patterns, text):
    """Classes as fnmatch reads them: ranges and their dropped ends, "!" and "]" first, "^"
    and "\\" as members, unclosed brackets (tests/test_globs.py has the plainer cases)."""
    want = []
    for i, p in enumerate(patterns):
        try:
            if fnmatch.fnmatchcase(text, p):
                want.append(i)
        except re.error:  # a pattern fnmatch cannot compile: not compared
            return
    assert GlobSet(patterns).matching(text) == want


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.lists(st.text("ab*?[]!", max_size=6), min_size=1, max_size=8),
       st.lists(st.text("ab[]!", max_size=5), min_size=globs._SCANS + 1, max_size=globs._SCANS + 6))
def test_a_set_asked_many_times_answers_from_its_table_as_fnmatchcase(patterns, texts):
    """The first texts are answered by a pass over the prefixes, the later from a table."""
    held = GlobSet(patterns)
    for text in texts:
        assert held.matching(text) == [i for i, p in enumerate(patterns) if fnmatch.fnmatchcase(text, p)]
    assert held._by_prefix is not None


def test_long_classes_read_by_str_calls_answer_as_fnmatchcase():
    bodies = ["a-c" * 40 + "x", "!" + "a-ck" * 30, "b-d" * 30 + "b-a", "a-cc-e" * 20, "-" + "a-c" * 30,
              "a-c" * 30 + "-", "!-" + "a-c" * 30, "a-" + "a-c" * 30, "]-a" + "b-c" * 30]
    for body in bodies:
        for c in "abcdefkxz-]!":
            assert Glob(f"[{body}]").matches(c) == fnmatch.fnmatchcase(c, f"[{body}]"), (body, c)


@settings(max_examples=100, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.text("ab*?[]!/.", max_size=8), st.sampled_from([[], ["QL4"], ["QL5", "QL4"]])),
                min_size=1, max_size=5, unique_by=lambda e: e[0]),
       st.lists(st.sampled_from(["a", "b", "ab", "a.b", "[a]", "*"]), min_size=1, max_size=4))
def test_per_path_ignores_hold_for_a_path_and_the_folders_above_it(entries, parts):
    """A pattern holds for the path, or as "pattern/*" (its "/"s at its end left out) for a
    folder above it: one set of patterns answers both, as two sets of fnmatch patterns did."""
    cfg = config.Config(path=os.path.join(os.sep, "r", "pyproject.toml"), per_path_ignores=dict(entries))
    rel = "/".join(parts)
    held = [v for p, v in entries
            if fnmatch.fnmatchcase(rel, p) or fnmatch.fnmatchcase(rel, p.rstrip("/") + "/*")]
    want = list(dict.fromkeys(c for v in held for c in v)) if all(held) else []
    if not held:
        want = None
    assert cfg.ignored_for(os.path.join(os.sep, "r", *parts)) == want


# ---- a file the fast reader leaves to tomllib -------------------------------------------------

def test_a_file_outside_the_fast_readers_part_of_toml_is_read_by_tomllib(tmp_path, monkeypatch):
    text = ('[tool.other]\nwhen = 1979-05-27\nratio = 0.5\n[[tool.other.list]]\nx = """a\nb"""\n'
            '[tool.qlin.per-node-ignores]\n"weight_*" = ["QL405"]\n')
    found, calls = _check(tmp_path, text, monkeypatch)
    assert found == [f for f in ALL if f not in [("weight_q", "QL405"), ("weight_dq", "QL405")]]
    assert calls["fast"] == 1 and calls["tomllib"] == 1, calls


def test_an_integer_past_pythons_4300_digits_is_one_line(tmp_path, guard, monkeypatch):  # noqa: F811
    """tomllib's int() raised a ValueError that was no TOMLDecodeError: a traceback."""
    cfg = tmp_path / "pyproject.toml"
    cfg.write_text("[tool.other]\nx = " + "9" * 5000 + "\n[tool.qlin]\n")
    (tmp_path / "w").mkdir()
    monkeypatch.chdir(tmp_path / "w")
    assert_bad_input(cli("check", BROKEN), cfg, "not valid TOML", "4300 digits")


@pytest.mark.parametrize("table", [
    {"a": ["QL4"], "b": ["ZZ"], "c": [1], "d": ["QL4"]},
    {"a": ["QL4"], "b": [1], "c": ["ZZ"]},
    {"a": ["QL4"], "b": "QL4"},
    {"a": ["QL4"], "b": [["QL4"]], "c": ["ZZ"]},
    {"a": [True], "b": [1]},
    {"a": ["ql4 ", "QL5"], "b": [], "c": ["ql4 ", "QL5"]},
])
def test_each_list_of_codes_checked_once_gives_what_checking_each_entry_gave(table):
    """A bad list is named by its first entry, a good one read as before (upper case, no
    spaces), each entry its own list."""
    def each(t):
        return {k: config._codes(v, f"where {config._brief(k)}") for k, v in t.items()}

    try:
        want = each(table)
    except config.ConfigError as e:
        with pytest.raises(config.ConfigError) as got:
            config._code_lists(table, "where")
        assert str(got.value) == str(e)
        return
    got = config._code_lists(table, "where")
    assert got == want and got["a"] is not got.get("c")
