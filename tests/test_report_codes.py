"""One table of codes (qlin_cli/codes.py) behind every list and format: the QL rules and the
QT target codes. Before it, SARIF knew only the rules and crashed on a target's finding
(`KeyError: 'QT405'`)."""

from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner
from paths import MODELS, ROOT

from qlin_cli import codes, rules
from qlin_cli.cli import main
from qlin_cli.convert import codes as convert_codes
from qlin_cli.targets import codes as target_codes

SCHEMA = os.path.join(os.path.dirname(ROOT), "shared", "data", "sarif-schema-2.1.0.json")
# a model with rule findings (QL401) and, for openvino and TensorRT, target findings
MODEL = os.path.join(MODELS, "rules", "QL401-bad.onnx")


def test_the_table_holds_every_rule_target_and_convert_code_once():
    table = codes.known()
    assert table == sorted(table, key=lambda c: (("QL", "QT", "QC").index(c[:2]), c))
    assert len(set(table)) == len(table)
    assert set(table) == ({r.code for r in rules.all_rules()} | {c.code for c in target_codes.all_codes()}
                          | {c.code for c in convert_codes.all_codes()})
    assert codes.known(codes.CHECKED) == [c for c in table if not c.startswith("QC")]
    assert codes.get("qt405").kind == "target" and codes.get("QL401").kind == "rule"
    assert codes.get("qc102").kind == "convert" and codes.get("QC102").severity == "error"
    assert codes.get("QL999") is None


@pytest.mark.parametrize("fmt", ["text", "json", "github", "sarif"])
@pytest.mark.parametrize("targets", [[], ["--target", "openvino,tensorrt-10,onnxruntime"]])
def test_every_format_with_and_without_targets(fmt, targets):
    r = CliRunner().invoke(main, ["check", "--jobs", "1", "--format", fmt, *targets, MODEL])
    assert r.exit_code == 1, r.output
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert "Traceback" not in r.output
    assert "QL401" in r.output
    if fmt != "sarif":
        return
    log = json.loads(r.stdout)
    run = log["runs"][0]
    driver = [rule["id"] for rule in run["tool"]["driver"]["rules"]]
    assert driver == codes.known(codes.CHECKED)
    for result in run["results"]:
        assert driver[result["ruleIndex"]] == result["ruleId"]
    found = {result["ruleId"] for result in run["results"]}
    assert any(c.startswith("QT") for c in found) == bool(targets), found
    if os.path.exists(SCHEMA):
        import jsonschema

        with open(SCHEMA, encoding="utf-8") as f:
            jsonschema.validate(log, json.load(f))


def test_statistics_and_rule_docs_read_the_table():
    r = CliRunner().invoke(main, ["check", "--jobs", "1", "--statistics", "--target", "openvino", MODEL])
    assert r.exit_code == 1 and "QL401" in r.output
    shown = CliRunner().invoke(main, ["rule", "QT405"])
    assert shown.exit_code == 0 and codes.get("QT405").name in shown.output
    listed = CliRunner().invoke(main, ["rules", "--format", "json"])
    assert [it["code"] for it in json.loads(listed.stdout)] == codes.known()


def test_only_divergence_codes_judge_a_kind_of_fact():
    """targets.codes.judging reads the QT4xx modules alone: every code that judges a kind of
    fact (Code.judges) must be one of them, and they are the codes judging reads."""
    from qlin_cli.targets.codes import QUANTIZE_ARITHMETIC

    judges = {c.code for c in target_codes.all_codes() if c.judges}
    assert judges and all(c.lower().startswith(target_codes.JUDGING_PREFIX) for c in judges), judges
    assert set(target_codes.judging(QUANTIZE_ARITHMETIC)) == {
        c.code for c in target_codes.all_codes() if c.judges == QUANTIZE_ARITHMETIC}
