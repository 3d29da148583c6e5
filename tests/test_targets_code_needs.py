"""What a target knows of a code without importing the code's module: its severity
(targets.codes.SEVERITIES), the kind of fact the QT4xx arithmetic codes judge
(codes.QUANTIZE_ARITHMETIC), and whether its check can find anything on a site (base.NEEDS):
each held to what the modules themselves say and do."""

from __future__ import annotations

import glob
import os

import onnx
import pytest

from qlin_cli.model.analysis import analyze
from qlin_cli.targets import base, codes, predict, registry, releases

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = sorted(glob.glob(os.path.join(ROOT, "fixtures", "models", "**", "*.onnx"), recursive=True))


def test_every_severity_written_down_is_the_modules():
    every = {c.code: c.severity for c in codes.all_codes()}
    assert codes.SEVERITIES == every
    assert all(codes.severity(c) == s for c, s in every.items())


def test_a_code_not_written_down_is_asked_of_its_module(monkeypatch):
    monkeypatch.delitem(codes.SEVERITIES, "QT103")
    assert codes.severity("QT103") == codes.get("QT103").severity == "error"
    with pytest.raises(KeyError):
        codes.severity("QT999")


def test_the_arithmetic_judged_is_the_one_the_modules_declare():
    assert base.arithmetic_codes() == codes.judged(codes.QUANTIZE_ARITHMETIC)


def _targets():
    """Every target, and every measured release of the two probed runtimes (their probes
    differ in what the needs read: rounding, division, pairs)."""
    found = registry.all_targets()
    for runtime in ("onnxruntime", "openvino"):
        found += [registry.get(f"{runtime}@{v}") for v in releases.measured(runtime)]
    return found


def _sites(paths):
    for path in paths:
        try:
            model = onnx.load(path, load_external_data=False)
            a = analyze(model, os.path.dirname(path))
            placed = predict._read(a)[1]
        except Exception:  # (a broken fixture the check reports as unreadable has no sites)
            continue
        yield from (site for site, _ in placed)


def _matrix_paths(tmp_path_factory):
    from test_targets_matrix import build, fast_cases

    folder = tmp_path_factory.mktemp("matrix")
    paths = []
    for i, case in enumerate(fast_cases()):
        path = str(folder / f"m{i}.onnx")
        onnx.save(build(case)[0], path)
        paths.append(path)
    return paths


@pytest.fixture(scope="module")
def checked(tmp_path_factory):
    """(code, whether its need held, whether its check found something) over every site of
    the fixtures and of the matrix's fast subset, for every target."""
    targets = _targets()
    seen = []
    for site in _sites(FIXTURES + _matrix_paths(tmp_path_factory)):
        if site.facts.opset is None:
            continue  # (findings_for asks no check of such a node)
        for t in targets:
            for c, need in base.NEEDS.items():
                found = list(codes.get(c).check(t, site))
                seen.append((c, need(t, site), bool(found)))
    return seen


def test_a_code_whose_need_fails_finds_nothing(checked):
    missed = sorted({c for c, need, found in checked if found and not need})
    assert not missed, missed


def test_the_needs_are_asked_where_their_codes_find_something(checked):
    """The test above has teeth: most codes with a need are found somewhere, and every need
    says no somewhere (it spares an import)."""
    found = {c for c, _, f in checked if f}
    assert len(found) >= 10, sorted(found)
    assert {c for c, need, _ in checked if not need} == set(base.NEEDS)


def _first_info_by_name(children, want):
    """``releases._first_info`` asked name by name (importlib.metadata's Lookup)."""
    return next((c for c in children if releases._is_info(c.lower(), want)), None)


@pytest.mark.parametrize("children", [
    [],
    ["a-info", "x-info-y", "b-1.dist-info", "A-2.DIST-INFO", "a-1.dist-info"],
    ["a.dist-info-x", "a-1.egg-info", "a-2.dist-info"],
    ["\u03a3-1.dist-info", "a_b-1.dist-info", "A.B-2.dist-info", "a-b-3.dist-info"],
    ["c", "a", "a-", "-info", ".dist-info", "a.dist-info"],
])
@pytest.mark.parametrize("want", ["a", "a_b", "b", "\u03c3"])
def test_the_first_info_folder_is_the_one_asking_each_name_finds(children, want):
    assert releases._first_info(children, want) == _first_info_by_name(children, want)
