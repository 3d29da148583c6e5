"""``predict.plan``: the conversion that makes a model run on a target, held against
``qlin convert`` and the real runtimes.

For every model of the matrix's fast subset that a runtime refuses: when a plan exists,
converting with its options succeeds (every rewrite proven by convert), qlin predicts no
error on the result, the runtime loads and runs it, and its output is the spec's output of
the original model (bit for bit where the runtime's output can be read back). When no plan
exists, the reasons are findings no conversion can remove.
"""

from __future__ import annotations

from collections import Counter

import pytest
from test_targets_matrix import (
    RUNNERS,
    Case,
    build,
    codes,
    differs,
    fast_cases,
    input_types,
    matrix,
    runtime_codes,
    runtimes,
)

from qlin_cli.convert.run import convert_model
from qlin_cli.convert.state import Options
from qlin_cli.evaluator import evaluate
from qlin_cli.model.analysis import analyze
from qlin_cli.targets import nodes, predict


def _refused(model, target) -> bool:
    return _refused_in(analyze(model, ""), target)


def _refused_in(a, target) -> bool:
    return any(p.severity == "error" for p in predict.findings_in(a, [target]))


def check_plan(case: Case, target: str) -> str:
    """'saved', 'no plan' or 'runs' (nothing to do); raises AssertionError on a broken promise."""
    model, feeds = build(case)
    a = analyze(model, "")  # one analysis for the prediction and the plan
    if not _refused_in(a, target):
        assert not predict.plan_in(a, target).needed
        return "runs"
    p = predict.plan_in(a, target)
    assert p.needed
    if p.choice is None:
        assert p.blocking, case.id
        assert not any(b.convertible for b in p.blocking), (case.id, [b.message for b in p.blocking])
        return "no plan"
    # the conversion reads the model's analysis as it is, as `qlin convert --target` hands it over
    result = convert_model(model, "", Options(**p.choice.options()), types=a.inferred, analysis=a)
    assert result.model is not None, (case.id, p.choice, [r.detail for r in result.refused])
    assert not _refused(result.model, target), (case.id, p.choice)
    assert result.ir_to == p.choice.ir_version, (case.id, p.choice, result.ir_to)
    o = RUNNERS[target](result.model, feeds, input_types(case))
    assert o.stage == "ok", (case.id, p.choice, o.message[-300:])
    want = codes(evaluate(model, feeds)[0], case.out_type)
    if o.output is not None:
        assert not differs(want, runtime_codes(o.output, case.out_type, want.size)), (case.id, p.choice)
    return "saved"


@pytest.fixture(scope="module")
def subset() -> list[Case]:
    return list(fast_cases())  # chosen once in the process, for test_targets_matrix.py too


@pytest.mark.parametrize("target", ["onnxruntime", "openvino"])
def test_plans_make_refused_models_run(subset, target):
    if target not in runtimes():
        pytest.skip("openvino is not installed")
    outcomes = Counter(check_plan(c, target) for c in subset)
    assert outcomes["saved"] >= 10 and outcomes["no plan"] >= 10, outcomes


def test_plan_choices():
    opset28 = build(Case("q", "", 28, "float", "float", "int8"))[0]
    c = predict.plan(opset28, "", "onnxruntime").choice
    assert (c.to_opset, c.to_domain, c.ir_version, c.lower) == (26, None, 13, False)
    assert predict.plan(opset28, "", "tensorrt-10").choice.to_opset == 24
    ms = build(Case("dq", "com.microsoft", 21, "float", "float", "int8"))[0]
    c = predict.plan(ms, "", "tensorrt-11").choice
    assert (c.to_opset, c.to_domain) == (21, "ai.onnx")
    quark = build(Case("q", "com.amd.quark", 21, "float", "float", "int8", "axis", 0))[0]
    c = predict.plan(quark, "", "onnxruntime").choice
    assert c.to_domain is not None and c.to_domain != "com.amd.quark"
    runs = build(Case("q", "", 21, "float", "float", "int8"))[0]
    p = predict.plan(runs, "", "onnxruntime")
    assert not p.needed and p.tried == 0
    assert p.to_json()["choice"]["to_opset"] == 21


def test_plan_lowers_where_no_version_expresses_the_node():
    """openvino refuses blocks that do not divide the axis; below opset 21 a blocked node
    cannot be written, so the plan lowers it to primitive ops, which openvino runs."""
    case = Case("q", "", 21, "float", "float", "int8", "block", 1, 3)
    p = predict.plan(build(case)[0], "", "openvino")
    assert p.choice is not None and p.choice.lower and p.choice.to_opset < 21
    assert p.choice.lowered == ("quantize",)


def test_a_candidate_with_lower_is_tried_only_where_it_lowers_a_node(monkeypatch):
    """``--lower`` changes only nodes no version can write; where none would be lowered, the
    candidate with it writes what the one without it wrote, so only the one without is
    run. Both still count as tried, and every one skipped gives the errors of its twin."""
    calls = []
    real = predict._try

    def spy(t, info, placed, types, opset, domain, lower, cache, noted=False):
        got = real(t, info, placed, types, opset, domain, lower, cache, noted)
        calls.append(((opset, domain, lower), got))
        return got

    monkeypatch.setattr(predict, "_try", spy)
    bf16 = build(Case("q", "", 21, "bfloat16", "bfloat16", "int8"))[0]
    p = predict.plan(bf16, "", "onnxruntime")
    ran = [c for c, _ in calls]
    assert p.choice is None and p.tried == 2 * len([c for c in ran[:-1] if not c[2]])
    assert not any(lower for _, _, lower in ran[:-1])  # the last call is the closest one, noted
    a = analyze(bf16, "")
    t = predict._targets(["onnxruntime"])[0]
    info, placed = predict._read(a)
    types = predict._model_types(info, (s.facts for s, _ in placed))
    for (opset, domain, _), (blocking, lowered, need, can) in calls[:-1]:
        assert not can
        twin = real(t, info, placed, types, opset, domain, True, {})
        assert ([x.message for x in twin[0]], twin[1:3]) == ([x.message for x in blocking], (lowered, need))
    calls.clear()
    blocked = Case("q", "", 21, "float", "float", "int8", "block", 1, 3)
    p = predict.plan(build(blocked)[0], "", "openvino")
    assert p.choice is not None and p.choice.lower
    assert any(c[2] for c, _ in calls)


def test_no_plan_names_what_no_conversion_fixes():
    bf16 = build(Case("q", "", 21, "bfloat16", "bfloat16", "int8"))[0]
    p = predict.plan(bf16, "", "onnxruntime")
    assert p.choice is None and {b.code for b in p.blocking} == {"QT202"}
    mixed = build(Case("q", "", 23, "float", "float16", "int8"))[0]
    p = predict.plan(mixed, "", "onnxruntime")
    assert p.choice is None and "QT203" in {b.code for b in p.blocking}


@pytest.mark.targets_full
@pytest.mark.parametrize("target", ["onnxruntime", "openvino"])
def test_full_matrix_plans(request, target):
    from test_targets_matrix import _full_selected

    if not _full_selected(request.config):
        pytest.skip("the full matrix runs with `pytest -m targets_full` (or QLIN_TARGETS_FULL=1)")
    if target not in runtimes():
        pytest.skip("openvino is not installed")
    outcomes = Counter(check_plan(c, target) for c in matrix())
    print(f"\nplans for {target}:", dict(outcomes))
    assert outcomes["saved"] >= 50


def _facts_of(model, index: int = 0, a=None):
    a = a or analyze(model, "")
    body = a.bodies[0]
    return a.any_facts(body, index)


def _meaning(f) -> tuple:
    return (f.spec, dict(f.attrs), f.in_types, f.quant_type, f.granularity, f.axis)


def test_the_plan_reads_each_candidate_node_as_convert_writes_it():
    """A candidate's node is convert's own rewrite (its QNode), not a guess: for matrix
    models at every opset and domain convert can write, the facts the plan checks mean what
    the facts of the converted model's node mean (an output_dtype becomes a zero point
    below 21, precision goes below 23, the axis in force is written). The conversions are not
    proven here (the convert tests prove them): only what they write is read."""
    from qlin_cli.convert.refusal import Refusal

    cases = [c for c in matrix() if c.kind == "q"][::7]
    compared = 0
    for case in cases:
        model, _ = build(case)
        a = analyze(model, "")  # read once: every conversion of the model below takes it
        f = _facts_of(model, a=a)
        if not nodes.is_linear(f):
            continue
        for opset in (13, 19, 21, 23, 25):
            for domain in (None, "ai.onnx", "com.microsoft"):
                q, written = predict._written(f, domain, opset)
                if isinstance(written, Refusal):
                    continue
                result = convert_model(model, "", Options(opset, domain, verify=False), types=a.inferred,
                                       analysis=a)
                if result.model is None:
                    continue
                g = predict._retargeted(f, written, opset)
                assert _meaning(g) == _meaning(_facts_of(result.model)), (case.id, opset, domain)
                compared += 1
    assert compared >= 100, compared
