"""The machine report for `qlin check --format json` and `--format jsonl` (contract version 2).

Version 2 (from 1): a diagnostic's ``message`` no longer starts with the location
(``node`` / ``graph`` / the new ``title`` say it); each file has ``nodes``; the summary
has ``unchecked``, ``nodes`` and ``infos``. With ``--statistics`` the document holds
``statistics`` (code, severity, name, count, fixable: how many have a fix) in place of
``files``.

``--format jsonl`` streams the same per-file objects, one line each as each file is
checked (``file_line``: ``"type": "file"`` and ``version`` added), then one summary line
(``summary_line``: ``"type": "summary"``).

Names are kept exactly; the output is ASCII (``json.dumps`` escapes every other
character, controls included), and a file name that is not UTF-8 has its
undecodable bytes written as ``\\xNN`` (report/safe.py), so the document is
valid JSON and valid Unicode for any input.
"""

from __future__ import annotations

import json

from .safe import unicode_tree

VERSION = 2


def render(results, summary: dict) -> str:
    doc = {
        "version": VERSION,
        "files": [r.to_json() for r in results],
        "summary": summary,
    }
    return json.dumps(unicode_tree(doc), indent=2)


def file_line(result) -> str:
    """One line of `--format jsonl`: a checked file, as ``render`` gives it under ``files``."""
    return json.dumps(unicode_tree({"version": VERSION, "type": "file", **result.to_json()}))


def summary_line(summary: dict) -> str:
    """The last line of `--format jsonl`: the run's summary, as ``render`` gives it."""
    return json.dumps({"version": VERSION, "type": "summary", "summary": summary})


def render_statistics(results, summary: dict) -> str:
    """`--statistics --format json`: one entry per code found, most frequent first, and the
    summary (no findings)."""
    from collections import Counter

    from .. import codes

    counts = Counter((d.code, d.severity) for r in results for d in r.diagnostics)
    fixable = Counter((d.code, d.severity) for r in results for d in r.diagnostics if d.fix is not None)
    names = codes.names()
    rows = [{"code": code, "severity": severity, "name": names.get(code, ""), "count": n,
             "fixable": fixable[(code, severity)]}
            for (code, severity), n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
    return json.dumps({"version": VERSION, "statistics": rows, "summary": summary}, indent=2)
