"""SARIF 2.1.0 for `qlin check --format sarif` (code scanning in GitHub and others)."""

from __future__ import annotations

import json
import os
from importlib.metadata import PackageNotFoundError, version

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def _version() -> str:
    try:
        return version("qlin")
    except PackageNotFoundError:  # running from a source tree
        return "0+unknown"


def artifact_uri(path: str) -> str:
    """A relative URI when the model is under the working directory, else a file URI."""
    full = os.path.abspath(path)
    rel = os.path.relpath(full, os.getcwd())
    if not rel.startswith(".."):
        return rel.replace(os.sep, "/")
    return "file://" + full.replace(os.sep, "/")


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


def render(results, all_rules) -> str:
    rules = list(all_rules)
    index = {r.code: i for i, r in enumerate(rules)}
    sarif_results = []
    notifications = []
    for r in results:
        uri = artifact_uri(r.path)
        if r.error is not None:
            notifications.append({
                "level": "error",
                "message": {"text": f"{r.path}: {r.error}"},
                "locations": [{"physicalLocation": {"artifactLocation": {"uri": uri}}}],
            })
            continue
        for d in r.diagnostics:
            sarif_results.append({
                "ruleId": d.code,
                "ruleIndex": index[d.code],
                "level": LEVEL[d.severity],
                "message": {"text": d.message},
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
            "informationUri": "https://pypi.org/project/qlin/",
            "rules": [_rule(r) for r in rules],
        }},
        "results": sarif_results,
        "invocations": [{
            "executionSuccessful": not notifications,
            "toolExecutionNotifications": notifications,
        }],
    }
    return json.dumps({"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}, indent=2)
