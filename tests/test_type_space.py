"""Every measured release answers the spec's whole type space (tests/type_space.py) from its
own measurements.

Each case of the space is filed under a probe key every release was measured on
(tools/probe_models.py makes a probe for each key the matrix has none of). What qlin
predicts for a release must then be what that release did with the key's probes: an error
finding where every probe failed, none where every probe ran (a key whose probes split is
value-dependent and left to the hand-written checks). Model-level refusals (an opset the
release does not load) are the load probes' business and are left out here.

``make test`` holds every release to a slice of the space (release i takes every 128th case
from offset 4i, so the 32 releases together cover a quarter of the cases, about 45 each);
``pytest -m targets_full`` holds each release to all of it, and runs the whole space in the
onnxruntime and openvino installed here, holding the predictions to what they do.
"""

from __future__ import annotations

import functools

import pytest
import test_targets_matrix as tm
import type_space

from qlin_cli.check.engine import check_analysis
from qlin_cli.model.analysis import analyze
from qlin_cli.targets import predict, probe_keys, probe_table

RUNTIMES = ("onnxruntime", "openvino")
SLICES = 128  # make test: release i takes every SLICES-th case from offset 4i


@functools.cache
def _space() -> tuple:
    return tuple(type_space.space())


@functools.cache
def _case(i: int) -> tuple | None:
    """(case, analysis, key) of case ``i`` of the space; None when qlin's spec rules find an
    error in it (the runtimes' verdict on an invalid model is no prediction of qlin's). The
    model's one analysis serves the spec check and every release's prediction."""
    case = _space()[i]
    model, _ = tm.build(case)
    a = analyze(model, "")
    if any(d.severity == "error" for d in check_analysis(a, ignore=tm.VALIDITY, frames=False)):
        return None
    (body, index, _), = a.nodes()
    return case, a, probe_keys.node_key(a.any_facts(body, index))


def _cases(indexes=None) -> list[tuple]:
    """``_case`` of each index (default: the whole space), the invalid ones left out."""
    found = (_case(i) for i in (range(len(_space())) if indexes is None else indexes))
    return [c for c in found if c is not None]


def _releases() -> list[tuple[str, str]]:
    return [(r, v) for r in RUNTIMES for v in probe_table.available_versions(r)]


def disagreements(runtime: str, version: str, cases) -> tuple[int, list[str]]:
    """(cases compared, what the prediction for ``runtime==version`` got wrong against the
    release's own outcome of each case's key)."""
    table = probe_table.load(runtime, version)
    compared, bad = 0, []
    for case, a, key in cases:
        mine = table.exact(key)
        if mine is None:
            bad.append(f"{case.id}: {runtime} {version} has no outcome for {key!r}")
            continue
        if mine.runs and mine.fails:
            continue
        # codes, severities and places only: the way out a plan words is not read (advice=False)
        found = predict.findings_in(a, [f"{runtime}=={version}"], advice=False)
        if any(p.severity == "error" and p.where == "model" for p in found):
            continue
        compared += 1
        errors = [p for p in found if p.severity == "error"]
        if mine.refused and not errors:
            bad.append(f"{case.id}: {runtime} {version} refused every probe of {key!r} ({mine.error[:120]}) "
                       "but qlin predicts no error")
        elif errors and not mine.refused:
            bad.append(f"{case.id}: {runtime} {version} ran every probe of {key!r} but qlin predicts "
                       f"{errors[0].code}: {errors[0].message}")
    return compared, bad


def test_the_space_crosses_every_type():
    """Every type a version allows for x, the scale and the quantized value appears in some
    case of that version, at every granularity it has, with and without zero point."""
    from qlin_cli.schema import lookup

    space = _space()
    for opset in tm.OPSETS:
        q = lookup("", "QuantizeLinear", opset)
        mine = [c for c in space if c.opset == opset and not c.domain and c.kind == "q"]
        assert {c.q_type for c in mine} == set(q.quantized_types)
        assert {c.float_type for c in mine} == set(q.allowed(q.inputs[0]))
        assert {c.scale_type for c in mine} == set(q.allowed(q.inputs[1]))
        grans = ["tensor", "tensor1", *(["axis"] if "per-axis" in q.granularities else []),
                 *(["block"] if "blocked" in q.granularities else [])]
        for gran in grans:
            for zp in ("zero", "none"):
                assert {c.q_type for c in mine if c.gran == gran and c.zp == zp} == set(q.quantized_types)
        dq = lookup("", "DequantizeLinear", opset)
        mine = [c for c in space if c.opset == opset and not c.domain and c.kind == "dq"]
        assert {c.q_type for c in mine} == set(dq.quantized_types)
        assert {c.scale_type for c in mine} == set(dq.allowed(dq.inputs[1]))
        assert {c.float_type for c in mine} == set(dq.allowed(dq.outputs[0]))


@pytest.mark.parametrize("at", range(len(_releases())), ids=[f"{r}-{v}" for r, v in _releases()])
def test_each_release_answers_its_slice_of_the_space_from_its_own_data(at):
    runtime, version = _releases()[at]
    cases = _cases(range(4 * at % SLICES, len(_space()), SLICES))
    compared, bad = disagreements(runtime, version, cases)
    assert compared > 0  # a release older than the space's opsets refuses most cases as a whole
    assert not bad, f"{len(bad)} of {compared}:\n" + "\n".join(bad[:20])


@pytest.mark.targets_full
@pytest.mark.parametrize("at", range(len(_releases())), ids=[f"{r}-{v}" for r, v in _releases()])
def test_each_release_answers_the_whole_space_from_its_own_data(at, request):
    if not tm._full_selected(request.config):
        pytest.skip("the whole space for every release runs with `pytest -m targets_full`")
    runtime, version = _releases()[at]
    cases = _cases()
    assert len(cases) == len(_space())  # every case spec-valid
    compared, bad = disagreements(runtime, version, cases)
    assert not bad, f"{len(bad)} of {compared}:\n" + "\n".join(bad[:20])


@pytest.mark.targets_full
@pytest.mark.parametrize("runtime", RUNTIMES)
def test_the_installed_runtime_does_what_qlin_predicts_on_the_whole_space(runtime, request):
    """`pytest -m targets_full`: every case run in the installed release, its outcome
    (refused or ran, and whether the output differs from the spec) held to the prediction
    (onnxruntime 1.31.1 on the space before its last 710 keys: 0 disagreements of 4,398)."""
    if not tm._full_selected(request.config):
        pytest.skip("the whole space in the installed runtimes runs with `pytest -m targets_full`")
    if runtime not in tm.runtimes():
        pytest.skip(f"{runtime} is not installed")
    bad = []
    for case in _space():
        bad += tm.disagreements(tm.evaluate_case(case, (runtime,)))
    assert not bad, f"{len(bad)} disagreements:\n" + "\n".join(bad[:40])
