"""qlin_cli.convert.opsteps against onnx.defs, and docs/opsteps.md against its generator."""

from __future__ import annotations

import importlib.util
import os
import re

import pytest

from qlin_cli.convert import opsteps
from qlin_cli.convert.opsteps import FIRST_OPSET, SAME_MEANING, SEMANTIC_CHANGES

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "opsteps.md")
NEWEST = opsteps.newest_opset()
STEPS = list(opsteps.all_steps())


def _generator():
    spec = importlib.util.spec_from_file_location(
        "gen_opsteps_doc", os.path.join(ROOT, "tools", "gen_opsteps_doc.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _attr(d: opsteps.StepDiff, name: str) -> opsteps.AttrChange:
    return next(a for a in d.attributes if a.name == name)


# ----------------------------------------------------------------------- classification ---

def test_the_range_has_steps():
    assert NEWEST >= 21
    assert len(STEPS) > 300
    assert {op for op, *_ in STEPS} >= {"Conv", "Squeeze", "Softmax", "Resize", "Cast"}


@pytest.mark.parametrize("op,old,new,d", STEPS, ids=[f"{s[0]}-{s[1]}-{s[2]}" for s in STEPS])
def test_every_step_is_classified(op, old, new, d):
    assert d.kind != "unclassified", (
        f"{op} {old}->{new}: no visible difference; add it to SEMANTIC_CHANGES or SAME_MEANING")
    # exactly one of: type-only, structural, semantic (structural wins over a semantic note)
    assert d.type_only == (not d.structural and not d.semantic)
    if d.type_only:
        assert d.types or d.regrouped or d.same_meaning
    assert d.summary() and "\n" not in d.summary()


def test_steps_are_neighbours_above_opset_10():
    for op, old, new, _ in STEPS:
        versions = opsteps.history(op)
        assert versions.index(new) == versions.index(old) + 1
        assert FIRST_OPSET < new <= NEWEST
        assert opsteps.schema_at(op, FIRST_OPSET) is None or old >= opsteps.schema_at(
            op, FIRST_OPSET).since_version


def test_hand_lists_name_real_steps():
    steps = {(op, new) for op, _, new, _ in STEPS}
    assert set(SEMANTIC_CHANGES) <= steps, set(SEMANTIC_CHANGES) - steps
    assert set(SAME_MEANING) <= steps, set(SAME_MEANING) - steps
    assert not set(SEMANTIC_CHANGES) & set(SAME_MEANING)
    for note in [*SEMANTIC_CHANGES.values(), *SAME_MEANING.values()]:
        assert note.strip() and "\n" not in note


def test_same_meaning_steps_really_show_no_difference():
    # an entry there is only a claim about a step onnx.defs shows nothing for; once something
    # shows, the entry is stale
    for (op, new) in SAME_MEANING:
        versions = opsteps.history(op)
        d = opsteps.diff(op, versions[versions.index(new) - 1], new)
        assert not d.structural and not d.types and not d.regrouped, (op, new)


def test_counts_add_up():
    kinds = [d.kind for *_, d in STEPS]
    assert kinds.count("type-only") + kinds.count("structural") + kinds.count("semantic") == len(STEPS)
    assert kinds.count("structural") >= 50 and kinds.count("semantic") >= 25


# ---------------------------------------------------------------------------- facts ---

def test_history_and_schema_at():
    assert opsteps.history("Relu") == [1, 6, 13, 14]
    assert opsteps.history("NoSuchOp") == []
    assert opsteps.schema_at("NoSuchOp", NEWEST) is None
    assert opsteps.schema_at("Relu", 12).since_version == 6
    assert opsteps.schema_at("Relu", 13).since_version == 13
    assert opsteps.schema_at("Relu", NEWEST).since_version == 14


def test_layer_normalization_has_no_schema_before_17():
    assert opsteps.history("LayerNormalization") == [17]
    assert opsteps.schema_at("LayerNormalization", 16) is None
    assert opsteps.schema_at("LayerNormalization", 17).since_version == 17
    assert opsteps.step_pairs("LayerNormalization") == []
    assert not any(op == "LayerNormalization" for op, *_ in opsteps.steps(NEWEST, 10))


def test_squeeze_11_to_13_moves_axes_from_attribute_to_input():
    d = opsteps.diff("Squeeze", 11, 13)
    axes = _attr(d, "axes")
    assert axes.old is not None and axes.new is None and axes.changed == ("removed",)
    (added,) = d.inputs
    assert added.index == 1 and added.old is None
    assert added.new.name == "axes" and added.new.option == "optional"
    assert added.new.types == frozenset({"tensor(int64)"})
    assert d.structural and not d.type_only and d.kind == "structural"
    assert "attribute axes removed" in d.summary() and "input 1 axes (optional) added" in d.summary()


def test_unsqueeze_13_axes_input_is_required():
    d = opsteps.diff("Unsqueeze", 11, 13)
    (added,) = d.inputs
    assert added.new.name == "axes" and added.new.option == "single"
    assert opsteps.CountChange("min_input", 1, 2) in d.counts


def test_relu_steps_are_type_only():
    d6 = opsteps.diff("Relu", 6, 13)
    assert d6.type_only and d6.types == (opsteps.TypeChange("T", ("tensor(bfloat16)",), ()),)
    d13 = opsteps.diff("Relu", 13, 14)
    assert d13.type_only
    (t,) = d13.types
    assert t.added == ("tensor(int16)", "tensor(int32)", "tensor(int64)", "tensor(int8)")
    assert t.removed == ()


def test_clip_11_turns_min_max_attributes_into_inputs():
    d = opsteps.diff("Clip", 6, 11)
    assert {a.name for a in d.attributes} == {"min", "max"}
    assert all(a.changed == ("removed",) for a in d.attributes)
    assert [(c.index, c.new.name, c.new.option) for c in d.inputs] == [
        (1, "min", "optional"), (2, "max", "optional")]
    assert d.kind == "structural"
    # Clip 11 -> 12 only adds integer types
    d12 = opsteps.diff("Clip", 11, 12)
    assert d12.type_only and not d12.types[0].removed


def test_softmax_13_is_a_semantic_change():
    assert ("Softmax", 13) in SEMANTIC_CHANGES
    assert ("LogSoftmax", 13) in SEMANTIC_CHANGES and ("Hardmax", 13) in SEMANTIC_CHANGES
    d = opsteps.diff("Softmax", 11, 13)
    assert d.semantic == (SEMANTIC_CHANGES[("Softmax", 13)],)
    axis = _attr(d, "axis")
    assert axis.changed == ("default",)
    assert (axis.old.default_text, axis.new.default_text) == ("1", "-1")
    assert not d.type_only
    # Softmax 1 -> 11 has an identical signature: only the hand list knows it
    d11 = opsteps.diff("Softmax", 1, 11)
    assert not d11.structural and not d11.types and d11.kind == "semantic"


def test_constraint_renamed_with_the_same_types_is_no_change():
    # BatchNormalization 14 -> 15: scale/B move from T to their own T1 and mean/var from U to
    # T2, with the very same allowed types; only the sharing with X changes.
    d = opsteps.diff("BatchNormalization", 14, 15)
    assert d.types == ()
    assert d.type_only
    assert d.regrouped and "[scale B]" in d.regrouped[0]
    # and in general: no TypeChange where the sets are equal
    for *_, step in STEPS:
        for t in step.types:
            assert t.added or t.removed


def test_pow_12_splits_the_exponent_type():
    d = opsteps.diff("Pow", 7, 12)
    assert d.type_only
    assert d.regrouped == ("shared constraints [X Y Z] -> [X Z]",)
    assert {t.constraint for t in d.types} == {"T", "T -> T1"}


def test_defaults_are_compared_by_value_not_text():
    # Conv 1 -> 11 rewrote attribute descriptions but no default
    assert opsteps.diff("Conv", 1, 11).attributes == ()
    assert opsteps.diff("Conv", 1, 11).same_meaning
    # GridSample 16 -> 20: the mode default changed value
    mode = _attr(opsteps.diff("GridSample", 16, 20), "mode")
    assert mode.changed == ("default",)
    assert (mode.old.default_text, mode.new.default_text) == ("'bilinear'", "'linear'")


def test_deprecation_is_structural():
    d = opsteps.diff("Scatter", 9, 11)
    assert d.deprecated == (False, True) and d.kind == "structural"


def test_diff_works_both_ways_and_across_several_versions():
    down = opsteps.diff("Squeeze", 13, 11)
    assert _attr(down, "axes").changed == ("added",)
    assert down.inputs[0].new is None and down.inputs[0].old.name == "axes"
    wide = opsteps.diff("Softmax", 1, 13)
    assert len(wide.semantic) == 2
    with pytest.raises(KeyError):
        opsteps.diff("Softmax", 1, 12)


def test_steps_walk_in_order_both_ways():
    up = [(a, b) for op, a, b, _ in opsteps.steps(10, NEWEST) if op == "Relu"]
    assert up == [(6, 13), (13, 14)]
    down = [(a, b) for op, a, b, _ in opsteps.steps(NEWEST, 10) if op == "Relu"]
    assert down == [(14, 13), (13, 6)]
    assert not any(op == "Relu" for op, *_ in opsteps.steps(13, 13))
    squeeze = [(a, b) for op, a, b, _ in opsteps.steps(12, 13) if op == "Squeeze"]
    assert squeeze == [(11, 13)]
    # ops absent at one end (introduced after 10) have no step
    assert not any(op == "Gelu" for op, *_ in opsteps.steps(10, NEWEST))
    # the walk from 10 to the newest is all_steps minus the ops introduced after 10
    assert sorted((op, a, b) for op, a, b, _ in opsteps.steps(10, NEWEST)) == sorted(
        (op, a, b) for op, a, b, _ in STEPS if opsteps.schema_at(op, 10) is not None)
    # an op introduced later walks once both ends have it
    assert [(a, b) for op, a, b, _ in opsteps.steps(23, 25) if op == "Attention"] == [
        (23, 24), (24, 25)]


# ----------------------------------------------------------------------------- the doc ---

def test_doc_is_up_to_date():
    gen = _generator()
    current = open(DOC, encoding="utf-8").read()
    cached = gen.parse_measurements(current)
    assert set(cached) == {(op, a, b) for op, a, b, _ in STEPS}, \
        "measure again: python tools/gen_opsteps_doc.py"
    assert gen.render(cached) == current, "regenerate: python tools/gen_opsteps_doc.py --reuse"


def test_doc_measurements_are_current_for_a_sample():
    gen = _generator()
    cached = gen.parse_measurements(open(DOC, encoding="utf-8").read())
    for step in [("Squeeze", 11, 13), ("Softmax", 11, 13), ("Relu", 13, 14), ("Clip", 6, 11),
                 ("Split", 13, 18), ("Resize", 11, 13)]:
        assert gen.measure(*step) == cached[step], step


def test_doc_names_no_local_path():
    text = open(DOC, encoding="utf-8").read()
    assert not re.search(r"(?<![\w.])/(work|home|tmp|project|usr|root)/", text)


def test_the_index_is_read_without_the_step_records():
    """A target's check asks opsteps for an op's version in force only: compare and records
    (the step records' dataclasses) are imported when one of their names is first asked for,
    and a name opsteps has not is an AttributeError."""
    import sys

    import fast_process

    code = ("import sys\nfrom qlin_cli.convert import opsteps\nassert opsteps.since_at('MatMul', 21) == 13\n"
            "late = ('qlin_cli.convert.opsteps.records', 'qlin_cli.convert.opsteps.compare')\n"
            "assert not any(m in sys.modules for m in late), sorted(sys.modules)\n"
            "assert opsteps.diff is opsteps.compare.diff and opsteps.StepDiff.__name__ == 'StepDiff'\n"
            "assert all(m in sys.modules for m in late)\n"
            "try:\n    opsteps.no_such_name\nexcept AttributeError:\n    pass\n"
            "else:\n    raise SystemExit(3)\n")
    p = fast_process.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr[-2000:]
