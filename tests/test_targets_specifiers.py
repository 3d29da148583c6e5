"""Runtime releases named as pip names them (targets/versions.py): a PEP 440 specifier set
after the runtime's name ("onnxruntime>=1.18,<1.21", "==1.20.*", "~=1.20", "!=", "<", ">")
admits the measured releases it matches; a version or set no measured release answers is
refused with the measured releases, not with the list of target names."""

from __future__ import annotations

import itertools
import json
import os

import pytest
from click.testing import CliRunner
from packaging.specifiers import SpecifierSet
from packaging.version import Version
from paths import MODELS

import qlin
from qlin_cli.cli import main
from qlin_cli.targets import registry, releases, versions

BAD = os.path.join(MODELS, "rules", "QL401-bad.onnx")


def _specifiers(runtime: str) -> list[str]:
    """Clauses over the measured releases' numbers and their neighbours, alone and in pairs."""
    have = releases.measured(runtime)
    numbers = set()
    for v in have:
        parts = v.split(".")
        numbers |= {v, ".".join(parts[:2]), f"{parts[0]}.{int(parts[1]) + 1}", f"{parts[0]}.{parts[1]}.0"}
    numbers = sorted(numbers, key=releases.key)
    one = [f"{op}{n}" for op in ("==", "!=", "<", "<=", ">", ">=", "~=") for n in numbers]
    one += [f"{op}{'.'.join(n.split('.')[:2])}.*" for op in ("==", "!=") for n in numbers]
    pairs = [f"{a},{b}" for a, b in itertools.islice(itertools.combinations(one[::7], 2), 400)]
    return one + pairs


@pytest.mark.parametrize("runtime", ["onnxruntime", "openvino"])
def test_specifiers_match_as_the_packaging_library_reads_them(runtime):
    checked = 0
    for spec in _specifiers(runtime):
        clauses = versions.specifier(spec)
        theirs = SpecifierSet(spec)
        for v in releases.measured(runtime):
            assert versions.matches(clauses, v) == (Version(v) in theirs), (spec, v)
            checked += 1
    assert checked > 2000


def _minor(v: str) -> tuple[int, int]:
    major, minor = v.split(".")[:2]
    return int(major), int(minor)


def test_a_specifier_set_names_the_measured_releases_it_admits():
    have = versions.known("onnxruntime")
    upto = registry.get("onnxruntime>=1.18,<1.21")
    assert upto.versions == tuple(v for v in have if (1, 18) <= _minor(v) < (1, 21))
    assert len(upto.versions) == 3
    assert registry.get("onnxruntime==1.20.*").versions == registry.get("onnxruntime@1.20").versions
    assert registry.get("onnxruntime==1.20.0").versions == registry.get("onnxruntime@1.20").versions
    approx = registry.get("onnxruntime~=1.30")
    assert approx.versions == tuple(v for v in have if _minor(v) >= (1, 30))
    assert "1.19.2" not in registry.get("onnxruntime>=1.18,!=1.19.*").versions
    ov = registry.get("openvino<2025")
    assert ov.versions and all(v.startswith("2024.") for v in ov.versions)


@pytest.mark.parametrize("name,words", [
    ("onnxruntime@1.17", "onnxruntime 1.17 was not measured (measured: 1.18.1"),
    ("onnxruntime<1.10", "no measured onnxruntime release matches <1.10 (measured: 1.18.1"),
    ("onnxruntime==1.2x", "is not a version clause"),
    ("onnxruntime>=1.20.*", "only == and != take a trailing .*"),
    ("openvino~=2025", "~= needs a release of two parts"),
])
def test_what_no_measured_release_answers_is_refused_with_the_measured_releases(name, words):
    r = CliRunner().invoke(main, ["check", "--target", name, BAD])
    assert r.exit_code == 2 and words in r.stderr, r.stderr
    assert "known: nnapi" not in r.stderr
    with pytest.raises(qlin.QlinError, match=words.split("(")[0].strip()[:30].replace(".", r"\.")):
        qlin.check(BAD, targets=name)


def test_a_specifier_keeps_its_commas_in_a_list_of_targets(tmp_path, monkeypatch):
    assert registry.split_names(["onnxruntime>=1.18,<1.21,openvino", "tensorrt-10"]) == [
        "onnxruntime>=1.18,<1.21", "openvino", "tensorrt-10"]
    r = CliRunner().invoke(main, ["check", "--jobs", "1", "--format", "json",
                                  "--target", "onnxruntime>=1.18,<1.21,openvino", BAD])
    assert r.exit_code == 1, r.output
    listed = CliRunner().invoke(main, ["check", "--jobs", "1", "--format", "json",
                                       "--target", "onnxruntime>=1.18,<1.21", "--target", "openvino", BAD])
    assert json.loads(r.stdout) == json.loads(listed.stdout)
    api = qlin.check(BAD, targets="onnxruntime>=1.18,<1.21,openvino", config=False)
    reported = json.loads(r.stdout)["files"][0]["diagnostics"]
    assert [f.code for f in api.findings] == [d["code"] for d in reported]
    (tmp_path / "qlin.toml").write_text('target = ["onnxruntime>=1.18,<1.21"]\n')
    monkeypatch.chdir(tmp_path)
    assert CliRunner().invoke(main, ["check", "--jobs", "1", BAD]).exit_code == 1
    (tmp_path / "qlin.toml").write_text('target = ["onnxruntime<1.10"]\n')
    bad = CliRunner().invoke(main, ["check", "--jobs", "1", BAD])
    assert bad.exit_code == 2 and "no measured onnxruntime release matches <1.10" in bad.stderr
