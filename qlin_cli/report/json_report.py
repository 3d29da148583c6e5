"""The machine report for `qlin check --format json` (contract version 2).

Version 2 (from 1): a diagnostic's ``message`` no longer starts with the location
(``node`` / ``graph`` / the new ``title`` say it); each file has ``nodes``; the summary
has ``unchecked``, ``nodes`` and ``infos``.

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
