"""The machine report for `qlin check --format json` (contract version 1)."""

from __future__ import annotations

import json


def render(results, summary: dict) -> str:
    doc = {
        "version": 1,
        "files": [r.to_json() for r in results],
        "summary": summary,
    }
    return json.dumps(doc, indent=2)
