"""A fast reader for the part of TOML that configuration files are written in.

tomllib parses in Python, character by character: a pyproject.toml of 200,000 lines of
``"glob" = ["CODE"]`` took it 2.2 s, 8 times what ``loads`` takes, which reads each of the
same lines with one regular expression. ``loads`` gives exactly what ``tomllib.loads``
gives, or None when the text holds anything it does not read, so that the caller asks
tomllib and tomllib's answers and errors stand. What it reads:

* tables ``[a.b]`` (keys bare or quoted, each table declared once, none through a value);
* ``key = value`` with a bare or quoted key (no dotted keys), each key once per table;
* basic strings on one line (escapes ``\\b \\t \\n \\f \\r \\" \\\\ \\uXXXX \\UXXXXXXXX``),
  literal strings on one line, decimal integers, ``true`` and ``false``;
* arrays of those (over several lines, with comments), inline tables of those;
* comments, blank lines, CRLF line ends.

Anything else gives None: multi-line strings, dotted keys, arrays of tables, floats, dates
and times, hexadecimal or octal or binary integers, other escapes, nesting past 32 levels,
a key or table given twice, and every text that is not TOML.
"""

from __future__ import annotations

import re

_CTRL = r"\x00-\x08\x0a-\x1f\x7f"  # control characters: allowed nowhere but tab (and newlines)
_BARE = r"([A-Za-z0-9_-]+)"
_PLAIN = r'"([^"\\' + _CTRL + r']*)"'  # a basic string without an escape
_TEXT = r'[^"\\' + _CTRL + r"]*"
_ESCAPED = r'"(' + _TEXT + r'(?:\\(?:[btnfr"\\]|u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8})' + _TEXT + r')*)"'
_LITERAL = r"'([^'" + _CTRL + r"]*)'"
_KEY = "(?:" + _BARE + "|" + _ESCAPED + "|" + _LITERAL + ")"  # groups: bare, basic, literal
_WS = r"[ \t]*"
_END = _WS + r"(?:#[^" + _CTRL + r"]*)?(?:\n|\Z)"  # the rest of a line after a statement

# The common line, read by one match: a key and a one-line array of strings or a string,
# without escapes (groups: basic key, bare key, literal key, the array's inside, string).
_ITEM = r'"[^"\\' + _CTRL + r']*"'
_LINE = re.compile(
    _WS + "(?:" + _PLAIN + "|" + _BARE + "|" + _LITERAL + ")" + _WS + "=" + _WS
    + r"(?:\[(" + _WS + "(?:" + _ITEM + _WS + "(?:," + _WS + _ITEM + _WS + ")*(?:," + _WS + r")?)?)\]|"
    + _PLAIN + ")" + _END)
_ITEMS = re.compile(r'"([^"]*)"')  # the strings of an array _LINE matched
# The commonest of those, as the README writes it ('"glob" = ["CODE", ...]'), tried first:
# a simpler expression, a quarter less time (groups: key, the array's inside)
_USUAL = re.compile(r'"([^"\\' + _CTRL + r']*)" = \[(' + _ITEM + "(?:, " + _ITEM + r")*)\]\n")

_KEY_VALUE = re.compile(_WS + _KEY + _WS + "=" + _WS)
_KEY_PART = re.compile(_KEY + _WS)
_TABLE = re.compile(_WS + r"\[" + _WS)
_LINE_END = re.compile(_END)
_SPACE = re.compile(_WS)
_ARRAY_SPACE = re.compile(r"(?:[ \t\n]+|#[^" + _CTRL + r"]*)*")
_STRING = re.compile(_ESCAPED)
_LITERAL_STRING = re.compile(_LITERAL)
_INTEGER = re.compile(r"[+-]?(?:0|[1-9](?:_?[0-9])*)")
_ESCAPE = re.compile(r'\\(?:([btnfr"\\])|u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8}))')
_ESCAPES = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", '"': '"', "\\": "\\"}
_DEPTH = 32  # arrays and inline tables nested deeper are left to tomllib
_DIGITS = 1000  # longer integers too (Python's int() refuses past 4300 digits)


class _Declined(Exception):
    """The text holds something this reader leaves to tomllib."""


def loads(text: str) -> dict | None:
    """What ``tomllib.loads(text)`` gives, or None: read it with tomllib."""
    try:
        return _document(text.replace("\r\n", "\n") if "\r" in text else text)
    except _Declined:
        return None


def _document(src: str) -> dict:
    root: dict = {}
    tables = {id(root)}  # the tables made by [headers] (their ids: each is alive in the tree)
    declared: set[tuple] = set()  # the headers given
    table = root
    pos, size = 0, len(src)
    usual, line, strings = _USUAL.match, _LINE.match, _ITEMS.findall
    arrays: dict[str, list[str]] = {}  # the inside of an array: its strings (many lines repeat one)
    while pos < size:
        m = usual(src, pos)
        if m is not None:
            key, items = m.groups()
            string = None
        else:
            m = line(src, pos)
            if m is not None:
                basic, bare, literal, items, string = m.groups()
                key = basic if basic is not None else bare if bare is not None else literal
        if m is not None:
            if key in table:
                raise _Declined
            if string is not None:
                table[key] = string
            else:
                found = arrays.get(items)
                if found is None:
                    found = arrays[items] = strings(items)
                table[key] = found[:]  # each array its own list, as tomllib gives
            pos = m.end()
            continue
        m = _LINE_END.match(src, pos)
        if m is not None:  # a blank line or a comment
            pos = m.end()
            continue
        m = _TABLE.match(src, pos)
        if m is not None:
            pos, keys = _header(src, m.end())
            table = _open(root, keys, tables, declared)
            continue
        m = _KEY_VALUE.match(src, pos)
        if m is None:
            raise _Declined
        key = _key(m)
        if key in table:
            raise _Declined
        value, pos = _value(src, m.end(), 0)
        table[key] = value
        pos = _ended(src, pos)
    return root


def _ended(src: str, pos: int) -> int:
    """The start of the next line, after a statement that ended at ``pos``."""
    m = _LINE_END.match(src, pos)
    if m is None:
        raise _Declined
    return m.end()


def _key(m: re.Match) -> str:
    bare, basic, literal = m.group(1, 2, 3)
    if bare is not None:
        return bare
    return _unescape(basic) if basic is not None else literal


def _header(src: str, pos: int) -> tuple[int, list[str]]:
    """The keys of a ``[table]`` header whose first key starts at ``pos``, and the start of
    the next line."""
    if src.startswith("[", pos):
        raise _Declined  # an array of tables
    keys = []
    while True:
        m = _KEY_PART.match(src, pos)
        if m is None:
            raise _Declined
        keys.append(_key(m))
        pos = m.end()
        if src.startswith(".", pos):
            pos = _SPACE.match(src, pos + 1).end()
        elif src.startswith("]", pos):
            return _ended(src, pos + 1), keys
        else:
            raise _Declined


def _open(root: dict, keys: list[str], tables: set[int], declared: set[tuple]) -> dict:
    """The table a header names, made with the tables above it where they are new."""
    table = root
    for key in keys:
        if key in table:
            table = table[key]
            if id(table) not in tables:  # a value given by `key = value`
                raise _Declined
        else:
            new: dict = {}
            table[key] = new
            tables.add(id(new))
            table = new
    if tuple(keys) in declared:
        raise _Declined
    declared.add(tuple(keys))
    return table


def _value(src: str, pos: int, depth: int):
    """The value starting at ``pos`` and the index after it."""
    c = src[pos:pos + 1]
    if c == '"':
        m = _STRING.match(src, pos)
        if m is None or src.startswith('"""', pos):
            raise _Declined
        return _unescape(m.group(1)), m.end()
    if c == "'":
        m = _LITERAL_STRING.match(src, pos)
        if m is None or src.startswith("'''", pos):
            raise _Declined
        return m.group(1), m.end()
    if c == "[":
        return _array(src, pos + 1, depth + 1)
    if c == "{":
        return _inline_table(src, pos + 1, depth + 1)
    if src.startswith("true", pos):
        return True, pos + 4
    if src.startswith("false", pos):
        return False, pos + 5
    m = _INTEGER.match(src, pos)
    if m is None or m.end() - pos > _DIGITS:
        raise _Declined
    # what follows is checked by the caller: a "." (float), "-" or ":" (date, time), "x"
    # (hexadecimal) or "e" (exponent) after the digits is declined there
    return int(m.group()), m.end()


def _array(src: str, pos: int, depth: int) -> tuple[list, int]:
    if depth > _DEPTH:
        raise _Declined
    space = _ARRAY_SPACE.match
    out: list = []
    pos = space(src, pos).end()
    if src.startswith("]", pos):
        return out, pos + 1
    while True:
        value, pos = _value(src, pos, depth)
        out.append(value)
        pos = space(src, pos).end()
        c = src[pos:pos + 1]
        if c == "]":
            return out, pos + 1
        if c != ",":
            raise _Declined
        pos = space(src, pos + 1).end()
        if src.startswith("]", pos):
            return out, pos + 1


def _inline_table(src: str, pos: int, depth: int) -> tuple[dict, int]:
    if depth > _DEPTH:
        raise _Declined
    out: dict = {}
    pos = _SPACE.match(src, pos).end()
    if src.startswith("}", pos):
        return out, pos + 1
    while True:
        m = _KEY_VALUE.match(src, pos)
        if m is None:
            raise _Declined
        key = _key(m)
        if key in out:
            raise _Declined
        out[key], pos = _value(src, m.end(), depth)
        pos = _SPACE.match(src, pos).end()
        c = src[pos:pos + 1]
        if c == "}":
            return out, pos + 1
        if c != ",":
            raise _Declined
        pos = _SPACE.match(src, pos + 1).end()


def _unescape(text: str) -> str:
    return _ESCAPE.sub(_escaped, text) if "\\" in text else text


def _escaped(m: re.Match) -> str:
    simple, short, long = m.groups()
    if simple is not None:
        return _ESCAPES[simple]
    code = int(short or long, 16)
    if 0xD800 <= code <= 0xDFFF or code > 0x10FFFF:
        raise _Declined  # not a Unicode scalar value: tomllib's error
    return chr(code)
