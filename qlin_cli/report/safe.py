"""Text from models and from the file system, made safe to show.

Names inside a model (nodes, tensors, graphs, functions, domains) and file names
can hold anything: a newline followed by ``::error ...`` forges a GitHub Actions
annotation, an ANSI escape sequence clears or rewrites a terminal, a
bidirectional override reorders what a line appears to say, and a file name
need not be UTF-8 (Python hands its bytes back as lone surrogates, which a UTF-8
stdout refuses to encode). Every output of qlin goes through one of these:

* ``printable(text)``: for people (terminals, text reports, one-line errors,
  GitHub annotations, SARIF messages). Every character that ``str.isprintable``
  rejects (C0 and C1 controls, DEL, format characters such as bidi overrides,
  line and paragraph separators, surrogates, private use, unassigned) becomes a
  Python-style escape: ``\\n``, ``\\x1b``, ``\\u202e``; a byte of a file name
  that is not UTF-8 becomes ``\\xNN``. Printable text is returned unchanged.
* ``unicode_text(text)``: for machine formats (JSON, SARIF identifiers), which
  keep names exactly: only what cannot be valid Unicode (the bytes of a
  non-UTF-8 file name) is escaped, as above.
* ``github_data`` / ``github_property``: the workflow-command escapes of the
  GitHub Actions toolkit (the GitHub report applies them after ``printable``).
* ``file_uri(path)``: a URI for any file name (percent-encoded bytes).
"""

from __future__ import annotations

import os
from urllib.parse import quote

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(ch: str) -> str:
    o = ord(ch)
    if ch in _NAMED:
        return _NAMED[ch]
    if 0xDC80 <= o <= 0xDCFF:  # surrogateescape: one byte of a file name that is not UTF-8
        return f"\\x{o - 0xDC00:02x}"
    if o < 0x100:
        return f"\\x{o:02x}"
    if o < 0x10000:
        return f"\\u{o:04x}"
    return f"\\U{o:08x}"


def printable(text) -> str:
    """``text`` with every non-printable character escaped (one line, no control codes)."""
    text = text if isinstance(text, str) else str(text)
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else _escape(ch) for ch in text)


def unicode_text(text) -> str:
    """``text`` as valid Unicode: lone surrogates (non-UTF-8 file names) escaped, nothing else."""
    text = text if isinstance(text, str) else str(text)
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return "".join(_escape(ch) if 0xD800 <= ord(ch) <= 0xDFFF else ch for ch in text)


def unicode_tree(value):
    """A JSON-able structure with every string passed through ``unicode_text``."""
    if isinstance(value, str):
        return unicode_text(value)
    if isinstance(value, dict):
        return {unicode_text(k) if isinstance(k, str) else k: unicode_tree(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [unicode_tree(v) for v in value]
    return value


def github_data(text: str) -> str:
    """The escapes of a workflow command's message: %, CR and LF."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def github_property(text) -> str:
    """A property value (file=, title=): as data, plus ``:`` and ``,``."""
    return github_data(text).replace(":", "%3A").replace(",", "%2C")


def _uri_path(path: str) -> str:
    raw = os.fsencode(path)
    if os.sep != "/":
        raw = raw.replace(os.fsencode(os.sep), b"/")
    return quote(raw, safe="/")


def file_uri(path: str, base: str | None = None) -> str:
    """A relative URI when ``path`` is under ``base`` (default: the working folder),
    else a ``file://`` URI; every byte outside the unreserved set is percent-encoded,
    so any file name gives a valid URI that maps back to the same bytes."""
    full = os.path.abspath(path)
    rel = os.path.relpath(full, base or os.getcwd())
    if rel != ".." and not rel.startswith(".." + os.sep):
        return _uri_path(rel)
    return "file://" + _uri_path(full)
