"""Glob patterns matched without a regular expression per pattern (qlin_cli/globs.py): the
same answers as fnmatch.fnmatchcase, and configuration bombs (100,000 patterns, a 10 MB
pattern) answered in time linear in their size."""

from __future__ import annotations

import fnmatch

from hypothesis import given, settings
from hypothesis import strategies as st

from qlin_cli.globs import Glob, GlobSet

ALPHABET = "ab*?[]!/-."


@settings(max_examples=400, deadline=None, derandomize=True)
@given(st.text(ALPHABET, max_size=12), st.text("ab/-.[]!*?", max_size=10))
def test_a_glob_answers_as_fnmatchcase(pattern, text):
    assert Glob(pattern).matches(text) == fnmatch.fnmatchcase(text, pattern)


def test_the_classes_and_stars_fnmatch_knows():
    cases = [("[*]x", "*x"), ("[!a]*", "b"), ("[]a]", "]"), ("[!]]", "a"), ("[", "["), ("a[b", "a[b"),
             ("*a*a*a*b", "aaaab"), ("*a*a*a*b", "aaaa"), ("**", ""), ("*.onnx", "m.onnx"),
             ("weight_*", "weight_q"), ("a?c", "abc"), ("[a-c]x", "bx"), ("[!a-c]x", "bx")]
    for pattern, text in cases:
        assert Glob(pattern).matches(text) == fnmatch.fnmatchcase(text, pattern), (pattern, text)


def test_a_set_gives_every_matching_pattern_in_order():
    patterns = ["m*", "*.onnx", "x/*", "m.onnx", "[mn].onnx", "other"]
    got = GlobSet(patterns).matching("m.onnx")
    assert got == [i for i, p in enumerate(patterns) if fnmatch.fnmatchcase("m.onnx", p)] == [0, 1, 3, 4]


def test_bombs_are_answered_by_the_patterns_that_can_match(monkeypatch):
    """100,000 patterns: a text is compared with those whose literal prefix it starts with;
    a 10 MB pattern of 5,000,000 stars is read only as far as the text goes (fnmatch
    compiled it into a regular expression that never finished)."""
    many = GlobSet(f"dir{i}/*.onnx" for i in range(100_000))
    huge = GlobSet(["a*" * 5_000_000 + "b"])
    compared = []
    real = Glob.matches
    monkeypatch.setattr(Glob, "matches", lambda self, text: compared.append(text) or real(self, text))
    assert many.matching("dir77/m.onnx") == [77] and many.matching("m.onnx") == []
    assert huge.matching("aaaa") == [] and huge.matching("ab") == []
    assert huge.matching("a" * 20) == []
    assert len(compared) == 4, compared  # only a pattern whose literal prefix starts the text
