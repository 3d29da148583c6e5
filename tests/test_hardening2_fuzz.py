"""Hardening 2: hypothesis renames things in the fixture models (hostile strings and arbitrary
text; ``rename`` in tests/hardening_helpers.py) and runs `qlin check` in every format and
`qlin convert` in both: no control character in text or GitHub output, one workflow command
per diagnostic, JSON and SARIF parse and are ASCII, JSON keeps node names exactly.

`make test` runs QLIN_FUZZ_EXAMPLES (default 25: six qlin runs an example) examples; `make fuzz` 5,000.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile

import onnx
import pytest
from hardening_helpers import NAME_TARGETS, NAMES, Guard, cli, guard, rename, unsafe_characters  # noqa: F401
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from paths import MODELS

from qlin_cli.model.graphs import bodies

EXAMPLES = int(os.environ.get("QLIN_FUZZ_EXAMPLES", "25"))  # make test: 25 (was 60); make fuzz: 5,000
SEEDS = sorted(os.path.join(r, f) for r, _, fs in os.walk(MODELS) for f in fs if f.endswith(".onnx"))
SEED_BYTES = [open(p, "rb").read() for p in SEEDS]


def _ok(r) -> None:
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert r.exit_code in (0, 1, 2), (r.exit_code, r.stdout[-500:], r.stderr[-500:])
    assert "Traceback" not in r.stdout + r.stderr and "internal error" not in r.stderr, r.stderr
    if r.exit_code == 2:
        lines = r.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("qlin: error: "), r.stderr


@pytest.mark.fuzz
@settings(max_examples=EXAMPLES, deadline=None, derandomize=EXAMPLES <= 200, print_blob=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.data_too_large])
@given(seed=st.sampled_from(range(len(SEEDS))),
       renames=st.lists(st.tuples(st.integers(0, 99), NAME_TARGETS, NAMES), min_size=1, max_size=6),
       file_name=st.one_of(st.just("m"), NAMES.filter(
           lambda n: "/" not in n and "\x00" not in n and 0 < len(n.encode()) < 200)))
def test_fuzz_names_in_every_format(seed, renames, file_name, guard):  # noqa: F811
    m = onnx.ModelProto()
    m.ParseFromString(SEED_BYTES[seed])
    for k, target, name in renames:
        rename(m, k, target, name)
    try:
        data = m.SerializeToString()
    except Exception:
        return
    work = tempfile.mkdtemp(prefix="qlin-fuzz-names-")
    try:
        path = os.path.join(work, file_name + ".onnx")
        with open(path, "wb") as f:
            f.write(data)
        mine = Guard()  # this example's input, checked before its folder goes
        mine.watch(path)
        results = {}
        for fmt in ("text", "github", "json", "sarif"):
            r = cli("check", "--format", fmt, path)
            _ok(r)
            results[fmt] = r
            assert unsafe_characters(r.stdout + r.stderr) == [], (fmt, unsafe_characters(r.stdout + r.stderr))
        doc = json.loads(results["json"].stdout)
        assert results["json"].stdout.isascii() and results["sarif"].stdout.isascii()
        sarif = json.loads(results["sarif"].stdout)
        diags = doc["files"][0]["diagnostics"]
        error = doc["files"][0]["error"]
        github = results["github"].stdout.splitlines()
        assert len(github) == (1 if error is not None else len(diags)), github
        assert all(line.startswith(("::error file=", "::warning file=", "::notice file=")) for line in github)
        assert len(sarif["runs"][0]["results"]) == len(diags)
        if error is None:  # node labels in JSON are the model's names, exactly
            names = {n.name for b in bodies(m) for n in b.owner.node if n.name}
            for d in diags:
                if not d["node"].startswith("#") and d["op_type"]:
                    assert d["node"] in names or d["node"].startswith("opset_import"), d["node"]
        for fmt in ("text", "json"):
            r = cli("convert", path, "--to-opset", 21, "--to-domain", "com.microsoft", "--dry-run",
                    "--format", fmt)
            _ok(r)
            assert unsafe_characters(r.stdout + r.stderr) == []
        mine.verify()
    finally:
        shutil.rmtree(work, ignore_errors=True)
