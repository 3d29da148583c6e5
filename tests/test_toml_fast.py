"""qlin_cli/toml_fast.py, the fast reader of configuration TOML, held to tomllib: on random
documents of the part of TOML it reads it gives what tomllib gives (values, types, order);
on random edits of them, and on every case below outside that part, it gives that or None
(the caller then asks tomllib), never a value where tomllib finds an error.

`make test` runs QLIN_FUZZ_EXAMPLES (default 60) examples of each; `make fuzz` 5,000."""

from __future__ import annotations

import os
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from qlin_cli import toml_fast

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

EXAMPLES = int(os.environ.get("QLIN_FUZZ_EXAMPLES", "60"))


def _typed(value):
    """The value with its types and key order spelled out (True == 1 and {a, b} == {b, a}
    in Python; not here)."""
    if isinstance(value, dict):
        return ("dict", [(k, _typed(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [_typed(v) for v in value])
    return (type(value).__name__, value)


def _tomllib(text: str):
    try:
        return tomllib.loads(text)
    except ValueError:  # TOMLDecodeError, or an integer past int()'s 4300 digits
        return None


def _agrees(text: str, *, must_read: bool = False) -> None:
    fast, slow = toml_fast.loads(text), _tomllib(text)
    if fast is None:
        assert not must_read or slow is None, ("declined", text[:300])
        return
    assert slow is not None, ("tomllib refuses what toml_fast read", text[:300])
    assert _typed(fast) == _typed(slow), text[:300]


# ---- random documents of the subset -----------------------------------------------------------

_ESC = {"\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r", '"': '\\"', "\\": "\\\\"}
_SPACES = ["", " ", "  ", "\t"]
_COMMENTS = ["", "", " # note", "#", " # é \t x"]


def _string(text: str, how: str) -> tuple[str, str]:
    """``text`` as a literal string (where it can be one) or a basic string: control
    characters escaped; the others written (``plain``), all escaped (``u``), or every other
    one escaped (``mixed``)."""
    if how == "literal" and not any(c == "'" or (ord(c) < 32 and c != "\t") or ord(c) == 127 for c in text):
        return f"'{text}'", text
    out = []
    for n, c in enumerate(text):
        escape = how == "u" or (how == "mixed" and n % 2)
        if c in _ESC and not escape:
            out.append(_ESC[c])
        elif c in _ESC or ord(c) < 32 or ord(c) == 127 or escape:
            out.append(f"\\u{ord(c):04X}" if ord(c) <= 0xFFFF and n % 3 else f"\\U{ord(c):08x}")
        else:
            out.append(c)
    return '"' + "".join(out) + '"', text


def _integer(n: int) -> tuple[str, int]:
    digits = str(abs(n))
    if len(digits) > 1 and n % 3 == 0:
        digits = digits[0] + "_".join(digits[1:])
    return ("-" if n < 0 else "+" if n % 5 == 1 else "") + digits, n


def _array(drawn) -> tuple[str, list]:
    """(text, value) of an array of drawn items, laid out by the drawn seed: on one line, or
    over several with comments, with a comma at the end or not."""
    items, seed = drawn
    rnd = random.Random(seed)
    breaks = rnd.random() < 0.5
    sep = rnd.choice([",\n  ", ", # c\n", ",\n\n"] if breaks else [", ", ",", " , "])
    text = sep.join(t for t, _ in items) + ("," if items and rnd.random() < 0.5 else "")
    opening = rnd.choice(["[", "[ ", "[\n", "[ # c\n"]) if breaks else "["
    return opening + text + rnd.choice(_SPACES) + "]", [v for _, v in items]


def _inline(drawn) -> tuple[str, dict]:
    pairs, seed = drawn
    rnd = random.Random(seed)
    text = ", ".join(f"{k}{rnd.choice(_SPACES)}={rnd.choice(_SPACES)}{t}" for (k, _), (t, _) in pairs)
    return "{" + rnd.choice(_SPACES) + text + rnd.choice(_SPACES) + "}", {k: v for (_, k), (_, v) in pairs}


# Strategies made once (made in each draw, they took most of the test's time); a draw gives
# (TOML text, the value tomllib must read from it).
_TEXT = (st.text(st.characters(blacklist_categories=("Cs",)), max_size=8)
         | st.text("ab*?[]/.-_ #=\"'\\", max_size=8))
_STRING = st.builds(_string, _TEXT, st.sampled_from(["literal", "plain", "plain", "u", "mixed"]))
_KEY = st.text("abcxyzQL09_-", min_size=1, max_size=6).map(lambda k: (k, k)) | _STRING
_BOOL = st.sampled_from([("true", True), ("false", False)])
_LEAF = _STRING | st.integers(-(10**20), 10**20).map(_integer) | _BOOL
_SEED = st.integers(0, 2**16)
_VALUES: list = []  # by depth: values nested at most 3 deep
_PAIRS: list = []  # by depth: lists of (key, value), each key once
for _depth in range(4):
    _VALUES.append(_LEAF if _depth == 3 else st.deferred(
        lambda d=_depth: _LEAF | _LEAF | st.tuples(st.lists(_VALUES[d + 1], max_size=4), _SEED).map(_array)
        | st.tuples(_PAIRS[d + 1], _SEED).map(_inline)))
    _PAIRS.append(st.lists(st.tuples(_KEY, _VALUES[_depth]), max_size=4 if _depth == 0 else 3,
                           unique_by=lambda p: p[0][1]))
_PATHS = st.lists(st.sampled_from(["tool", "qlin", "per-path-ignores", '"per-node-ignores"', "'x.y'", "a"]),
                  min_size=1, max_size=3)


@st.composite
def _document(draw):
    """A document: key = value lines at the top, then tables, each with its lines. Paths may
    repeat or pass through values; tomllib then refuses and so must the reader."""
    lines = []
    rnd = random.Random(draw(_SEED))  # where spaces, comments and blank lines go

    def pairs():
        for (k, _), (t, _) in draw(_PAIRS[0]):
            space = [rnd.choice(_SPACES) for _ in range(3)]
            lines.append(f"{space[0]}{k}{space[1]}={space[2]}{t}{rnd.choice(_COMMENTS)}")
            if rnd.random() < 0.2:
                lines.append(rnd.choice(["", "# comment", "   ", "\t# x"]))

    pairs()
    for _ in range(draw(st.integers(0, 4))):
        dot = rnd.choice([".", " . ", ". "])
        space = [rnd.choice(_SPACES) for _ in range(3)]
        lines.append(f"{space[0]}[{space[1]}{dot.join(draw(_PATHS))}{space[2]}]{rnd.choice(_COMMENTS)}")
        pairs()
    end = rnd.choice(["\n", "\n", "", "\r\n"])
    return end.join(lines) + (end if lines and rnd.random() < 0.5 else "")


@pytest.mark.fuzz
@settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(_document())
def test_documents_of_the_subset_are_read_as_tomllib_reads_them(text):
    _agrees(text, must_read=True)


_EDIT_CHARS = "\"'[]{}=.,#\\\n\r\t 019azeEx_+-:é\x00\x7f\u2028"


@pytest.mark.fuzz
@settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(_document(), st.lists(st.tuples(st.sampled_from(["insert", "delete", "replace", "repeat"]),
                                       st.integers(0, 10**6), st.sampled_from(_EDIT_CHARS)),
                             min_size=1, max_size=4))
def test_edited_documents_are_read_as_tomllib_reads_them_or_left_to_it(text, edits):
    for kind, at, c in edits:
        at = at % (len(text) + 1)
        if kind == "insert":
            text = text[:at] + c + text[at:]
        elif kind == "delete":
            text = text[:at] + text[at + 1:]
        elif kind == "replace":
            text = text[:at] + c + text[at + 1:]
        else:
            line_start = text.rfind("\n", 0, at) + 1
            line_end = text.find("\n", at)
            line = text[line_start:line_end if line_end >= 0 else len(text)]
            text = text[:line_start] + line + "\n" + text[line_start:]
    _agrees(text)


# ---- cases outside the subset, and invalid TOML -----------------------------------------------

LEFT_TO_TOMLLIB = [
    'a = """x"""', "a = '''x'''", 'a = """\nx"""', "a.b = 1", "[[a]]\nb = 1", "a = 1.5", "a = 1e3",
    "a = inf", "a = nan", "a = 0x1F", "a = 0o7", "a = 0b1", "a = 1979-05-27", "a = 07:32:00",
    "a = 1979-05-27T07:32:00Z", 'a = "\\e"', 'a = "\\x41"', 'a = "\\uD800"', 'a = "\\U00110000"',
    "a = {b.c = 1}", "a = {b = 1,}", "a = {b = 1\n}", "x = " + "[" * 50 + "]" * 50,
    "a = " + "9" * 5000,
]
INVALID = [
    "[tool.qlin\nselect = 1\n", "a = 1\na = 2", '"a" = 1\na = 2', "[a]\n[a]", "a = 1\n[a]",
    "a = {}\n[a]", "a = {b = 1}\n[a.b]", "[a]\nb = 1\n[a.b]", "[a.b]\n[a]\nb = 1", "a = [1,,2]",
    "a = [,]", "a = 1 2", "a =", "= 1", "a = \"x", "a = 'x", "a = \"\x01\"", "a = 1 # \x01",
    "a = 1\rb = 2", "\ufeffa = 1", "a = 00", "a = +", "a = 1_", "a = 1__0", "a = _1", "[]", "[a.]",
    "[.a]", "[ [a]]", "a = [1 2]", "a = {b = 1 c = 2}", "a = {b = 1, b = 2}", "a = truex",
    "a = True", 'a = "x"y', "a b = 1", "[a] x",
]


@pytest.mark.parametrize("text", LEFT_TO_TOMLLIB + INVALID)
def test_what_it_does_not_read_is_left_to_tomllib(text):
    assert toml_fast.loads(text) is None
    _agrees(text)


def test_what_it_reads():
    cases = {
        "": {}, "\n\n# x\n": {}, "a = 1": {"a": 1}, "a = -0": {"a": 0}, "a = +1_000": {"a": 1000},
        '"" = "x"': {"": "x"}, "'a.b' = 'c\\d'": {"a.b": "c\\d"}, 'a = "\\u00e9\\t\\"\\\\"': {"a": 'é\t"\\'},
        "a = [ ]\nb = [\n  1, # one\n  'x',\n]": {"a": [], "b": [1, "x"]},
        "[x . 'y' . \"z\"]\nk = {a = [true, {b = false}]}": {
            "x": {"y": {"z": {"k": {"a": [True, {"b": False}]}}}}},
        "[a.b]\n[a]\nc = 1\r\n": {"a": {"b": {}, "c": 1}},
        "\t[tool.qlin.per-path-ignores] # x\n  \"m/*.onnx\"\t=\t[\"QL4\" , \"QL5\",]  # y": {
            "tool": {"qlin": {"per-path-ignores": {"m/*.onnx": ["QL4", "QL5"]}}}},
    }
    for text, value in cases.items():
        assert toml_fast.loads(text) is not None, text
        assert _typed(toml_fast.loads(text)) == _typed(value) == _typed(tomllib.loads(text)), text


def test_each_array_is_its_own_list():
    got = toml_fast.loads('a = ["QL1"]\nb = ["QL1"]\n')
    assert got == {"a": ["QL1"], "b": ["QL1"]} and got["a"] is not got["b"]


def test_a_deep_nesting_is_left_to_tomllib_at_once(monkeypatch):
    """The hardening case (arrays 50,000 deep, which tomllib cannot read): declined at the
    33rd level, not read to the bottom."""
    opened = []
    real = toml_fast._array
    monkeypatch.setattr(toml_fast, "_array", lambda *a: opened.append(1) or real(*a))
    assert toml_fast.loads("x = " + "[" * 50_000 + "]" * 50_000 + "\n") is None
    assert len(opened) == 33
