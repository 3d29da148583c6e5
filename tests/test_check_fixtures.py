"""Every rule has a committed fixture that triggers it and a near miss that does not."""

from __future__ import annotations

import json
import os

import pytest
from conftest import FIXTURES, MODELS

from qlin_cli import rules
from qlin_cli.check.engine import check_file

with open(os.path.join(MODELS, "manifest.json")) as f:
    MANIFEST: dict[str, list[str]] = json.load(f)


@pytest.mark.parametrize("rel", sorted(MANIFEST))
def test_fixture_raises_exactly_what_the_manifest_says(rel):
    result = check_file(os.path.join(MODELS, rel))
    assert result.error is None
    found = {d.code for d in result.diagnostics if d.severity != "info"}
    assert set(MANIFEST[rel]) <= found, (rel, found)
    if not MANIFEST[rel]:
        assert found == set(), [d.message for d in result.diagnostics]


@pytest.mark.parametrize("rule", rules.all_rules(), ids=lambda r: r.code)
def test_every_rule_has_a_triggering_and_a_clean_fixture(rule):
    bad = os.path.join(MODELS, f"rules/{rule.code}-bad.onnx")
    ok = os.path.join(MODELS, f"rules/{rule.code}-ok.onnx")
    bad_codes = {d.code for d in check_file(bad).diagnostics}
    ok_codes = {d.code for d in check_file(ok).diagnostics}
    assert rule.code in bad_codes
    assert rule.code not in ok_codes


def test_unnamed_nodes_are_named_by_index_and_graph_path():
    result = check_file(os.path.join(MODELS, "scopes/loop-bad.onnx"))
    d = result.diagnostics[0]
    assert d.node == "#0"
    assert d.graph.startswith("main/loop.body/inner_if.")
    assert f"#0 in {d.graph}" in d.message


def test_function_nodes_use_the_functions_own_imports():
    result = check_file(os.path.join(MODELS, "scopes/function-bad.onnx"))
    by_code = {d.code: d for d in result.diagnostics}
    assert by_code["QL103"].graph == "function local.QuantizeBlock"
    assert "function does not import" in by_code["QL103"].message


def test_committed_fixtures_match_the_generator(tmp_path):
    import make_fixtures

    make_fixtures.write_all(str(tmp_path))
    for rel in MANIFEST:
        with open(os.path.join(MODELS, rel), "rb") as a, open(tmp_path / rel, "rb") as b:
            assert a.read() == b.read(), f"{rel} is stale: run `make fixtures`"
    with open(tmp_path / "manifest.json") as f:
        assert json.load(f) == MANIFEST
    assert os.path.exists(os.path.join(FIXTURES, "make_fixtures.py"))
