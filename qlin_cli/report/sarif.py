"""SARIF 2.1.0 for `qlin check --format sarif` (code scanning in GitHub and others).

Messages are shown to people, so they are made printable (report/safe.py);
identifiers (node names, graphs) are kept exactly; the artifact URI
percent-encodes every byte of the file name. The document is ASCII JSON and
valid Unicode for any model and any file name.
"""

from __future__ import annotations

import json
from importlib.metadata import PackageNotFoundError, version

from .safe import file_uri, printable, unicode_tree

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def _version() -> str:
    try:
        return version("qlin")
    except PackageNotFoundError:  # running from a source tree
        return "0+unknown"


def artifact_uri(path: str) -> str:
    """A relative URI when the model is under the working directory, else a file URI."""
    return file_uri(path)


def _rule(rule) -> dict:
    doc = rule.doc()
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": doc.split("## Why", 1)[0].replace("## What it checks", "").strip()},
        "help": {"text": doc, "markdown": doc},
        "defaultConfiguration": {"level": LEVEL[rule.severity]},
    }


def render(results) -> str:
    """The SARIF log of ``results``: every code that can fire (QL and QT, ``codes``) is a rule
    of the driver, so each result's ruleIndex points at its own."""
    from .. import codes

    rules = [c for c in codes.all_codes() if c.kind in codes.CHECKED]
    index = {r.code: i for i, r in enumerate(rules)}
    sarif_results = []
    notifications = []
    for r in results:
        uri = artifact_uri(r.path)
        if r.error is not None:
            notifications.append({
                "level": "error",
                "message": {"text": printable(f"{r.path}: {r.error}")},
                "locations": [{"physicalLocation": {"artifactLocation": {"uri": uri}}}],
            })
            continue
        for d in r.diagnostics:
            sarif_results.append({
                "ruleId": d.code,
                "ruleIndex": index[d.code],
                "level": LEVEL[d.severity],
                "message": {"text": printable(d.message)},
                "locations": [{
                    "physicalLocation": {"artifactLocation": {"uri": uri}},
                    "logicalLocations": [{
                        "name": d.node,
                        "fullyQualifiedName": f"{d.graph}/{d.node}",
                        "kind": "member",
                    }],
                }],
                "properties": {"opType": d.op_type, "domain": d.domain, "opset": d.opset,
                               "graph": d.graph},
            })
    run = {
        "tool": {"driver": {
            "name": "qlin",
            "version": _version(),
            "rules": [_rule(r) for r in rules],
        }},
        "results": sarif_results,
        "invocations": [{
            "executionSuccessful": not notifications,
            "toolExecutionNotifications": notifications,
        }],
    }
    return json.dumps(unicode_tree({"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}), indent=2)
