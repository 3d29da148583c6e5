"""What the check engine's per-shape verdicts rest on (check/engine.py, ``Rule.reads_values``):

* a node rule that says it reads no constant's value never reads one: its verdict on a
  node is the same with every constant made unreadable, so it is asked once per
  ``NodeFacts.shape_key``;
* a rule that reads values finds nothing where ``wants_values`` says it cannot, nor where
  ``clean_values`` says a node is clean;
* ``finite_non_zero`` (the batched look at many scales) agrees with a look at each.
"""

from __future__ import annotations

import glob
import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from paths import MODELS

from qlin_cli import rules
from qlin_cli.check.engine import check_model
from qlin_cli.model.analysis import analyze
from qlin_cli.model.facts import Const, NodeFacts
from qlin_cli.model.load import load_model
from qlin_cli.rules.base import ModelRule, finite_non_zero, magnitudes

FIXTURES = sorted(glob.glob(os.path.join(MODELS, "**", "*.onnx"), recursive=True))
NODE_RULES = [r for r in rules.all_rules() if not isinstance(r, ModelRule)]


class _Unreadable:
    """A constant nobody may read: every use fails the test."""

    def __getattr__(self, name):
        raise AssertionError(f"read a constant's {name}")


def _facts_of(path: str) -> list[NodeFacts]:
    model = load_model(path)
    a = analyze(model, os.path.dirname(path))
    return [f for body in a.bodies for i in range(len(body.nodes)) if (f := a.facts(body, i)) is not None]


def _without_values(f: NodeFacts) -> NodeFacts:
    return NodeFacts(f.op, f.domain, f.opset, f.imported, f.spec, f.in_typed, f.out_typed, f.attr_items,
                     tuple(None if c is None else _Unreadable() for c in f.values), f.inputs, f.outputs,
                     f.location)


def _said(rule, f) -> list:
    return [(v.message, v.fix) for v in rule.violations(f)]


def test_every_rule_that_reads_values_says_so():
    readers = {r.code for r in NODE_RULES if r.reads_values}
    assert readers == {"QL304", "QL501", "QL502", "QL503", "QL504"}


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: os.path.relpath(p, MODELS))
def test_a_rule_that_reads_no_value_decides_on_the_shape_alone(path):
    for f in _facts_of(path):
        blind = _without_values(f)
        for rule in NODE_RULES:
            if not rule.applies_to(f):
                continue
            if rule.reads_values:
                if not rule.wants_values(blind):  # decided without a value: nothing to find
                    assert _said(rule, f) == [], (rule.code, f.location)
                known = rule.clean_values([f])
                if known and known[0]:
                    assert _said(rule, f) == [], (rule.code, f.location)
            else:
                assert _said(rule, blind) == _said(rule, f), (rule.code, f.location)


def _const(array: np.ndarray, **fields) -> Const:
    t = numpy_helper.from_array(array, "c")
    for k, v in fields.items():
        setattr(t, k, v)
    return Const(t, ".", {})


def test_finite_non_zero_agrees_with_a_look_at_each_constant():
    cases = [np.float32(0.5), np.float32(0), np.float32(-0.0), np.float32(np.nan), np.float32(np.inf),
             np.array([0.1, 0.2], np.float32), np.array([0.1, 0, 0.2], np.float32),
             np.array([1e-45], np.float32),  # a subnormal is not zero
             np.array([0.5, np.nan], np.float16), np.array([0.5, 2.0], np.float16),
             np.array([0.5, -np.inf], np.float64), np.array([3.0], np.float64),
             np.zeros((0,), np.float32), np.full(2048, 0.25, np.float32),
             np.int8(3)]  # not a float: not known
    consts = [_const(np.asarray(c)) for c in cases] + [None]
    got = finite_non_zero(consts)
    for c, array, ok in zip(consts, [*cases, None], got, strict=True):
        if c is None or not ok:
            continue  # not known good: the rule looks itself
        values = np.asarray(array).astype(np.float64).reshape(-1)
        assert values.size and np.isfinite(values).all() and (values != 0).all(), array
    assert got == [True, False, False, False, False, True, False, True, False, True, False, True, False,
                   True, False, False]


def test_a_constant_numpy_cannot_read_as_it_is_is_left_to_the_rule():
    typed = onnx.TensorProto(name="c", data_type=TensorProto.FLOAT, dims=[2], float_data=[0.5, 0.5])
    short = numpy_helper.from_array(np.array([0.5, 0.5], np.float32), "c")
    short.dims[0] = 3  # fewer bytes than the dims need
    negative = numpy_helper.from_array(np.array([0.5], np.float32), "c")
    negative.dims[0] = -1
    external = numpy_helper.from_array(np.array([0.5], np.float32), "c")
    external.data_location = TensorProto.EXTERNAL
    assert [Const(t, ".", {}).plain() for t in (typed, short, negative, external)] == [None] * 4
    assert finite_non_zero([Const(t, ".", {}) for t in (typed, short, negative, external)]) == [False] * 4


def _chain(scales: list[np.ndarray]) -> onnx.ModelProto:
    nodes, inits, x = [], [], "x"
    for k, s in enumerate(scales):
        inits.append(numpy_helper.from_array(s, f"s{k}"))
        nodes.append(helper.make_node("QuantizeLinear", [x, f"s{k}"], [f"q{k}"], name=f"q{k}"))
        nodes.append(helper.make_node("DequantizeLinear", [f"q{k}", f"s{k}"], [f"d{k}"], name=f"d{k}"))
        x = f"d{k}"
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                          [helper.make_tensor_value_info(x, TensorProto.FLOAT, [4])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])


def test_nodes_of_one_shape_are_each_judged_on_their_own_values():
    """Every node has the shape of the first (checked clean): a bad scale among them is still
    found, on both nodes that read it, with and without the engine's cache."""
    scales = [np.float32(0.5 + k) for k in range(50)]
    scales[17], scales[33] = np.float32(0), np.float32(np.nan)
    model = _chain(scales)
    for cache in (True, False):
        found = [(d.code, d.node) for d in check_model(model, ".", cache=cache)]
        assert found == [("QL501", "q17"), ("QL501", "d17"), ("QL501", "q33"), ("QL501", "d33")]


def test_magnitudes_agree_with_a_look_at_each_constant():
    cases = [np.float32(0.5), np.float32(0), np.float32(np.nan), np.array([1e-45, 3.0, -7.0], np.float32),
             np.array([0.5, np.nan, -np.inf, 0.25], np.float16), np.array([-3.0, 0.0], np.float64),
             np.zeros((0,), np.float32), np.int8(3)]
    consts = [_const(np.asarray(c)) for c in cases] + [None]
    for array, got in zip([*cases, None], magnitudes(consts), strict=True):
        values = None if array is None else np.abs(np.asarray(array).astype(np.float64).reshape(-1))
        if values is None or values.size == 0 or np.asarray(array).dtype.kind != "f":
            assert got is None, array
            continue
        live = values[np.isfinite(values) & (values != 0)]
        assert got == ((float(live.min()), float(live.max())) if live.size else (np.inf, 0.0)), array


def test_the_numeric_rules_shortcuts_skip_only_what_the_full_look_finds_clean(monkeypatch):
    """QL504's batched clean look, QL505's scale-range look, QL506's bound from the types'
    ranges and the weights' dims and QL507's batched look at the zero points decide without
    reading values node by node; with each turned off, every fixture (the planted QL504 / QL505
    / QL506 / QL507 cases among them) gives the same findings."""
    from qlin_cli.rules import ql504_subnormal_scale as q504
    from qlin_cli.rules import ql505_dead_channel as q505
    from qlin_cli.rules import ql506_accumulator_overflow as q506
    from qlin_cli.rules import ql507_one_sided_zero_point as q507

    models = [(load_model(p), os.path.dirname(p)) for p in FIXTURES]
    codes = ("QL504", "QL505", "QL506", "QL507")

    def found():
        return [[(d.code, d.node, d.detail) for d in check_model(m, base, select=list(codes), cache=False)]
                for m, base in models]

    with_shortcuts = found()
    assert {c for f in with_shortcuts for c, _, _ in f} == set(codes)  # each is planted somewhere
    monkeypatch.setattr(q504.SubnormalScale, "clean_values", lambda self, nodes: None)
    monkeypatch.setattr(q505, "magnitudes", lambda consts: [None] * len(consts))
    monkeypatch.setattr(q505, "_outlier_possible", lambda scale: True)
    monkeypatch.setattr(q506, "_reduction", lambda node, dims: None)
    monkeypatch.setattr(q507, "_ends_possible", lambda nodes: [True] * len(nodes))
    assert found() == with_shortcuts


def test_whether_a_constant_has_a_value_below_zero_agrees_with_a_look_at_each():
    """``Const.summary``'s last part, which the targets' negative-scale summary reads."""
    from qlin_cli.model.facts import summarize

    cases = [np.float32(0.5), np.float32(-0.5), np.float32(-0.0), np.float32(np.nan), np.float32(-np.inf),
             np.array([0.1, -1e-45], np.float32), np.array([0.5, -2.0], np.float16),
             np.array([3.0, 0.0], np.float64), np.array([-3.0], np.float64), np.zeros((0,), np.float32),
             np.int8(-3)]
    consts = [_const(np.asarray(c)) for c in cases]
    summarize(consts)
    for array, c in zip(cases, consts, strict=True):
        values = np.asarray(array).astype(np.float64).reshape(-1)
        if values.size == 0 or np.asarray(array).dtype.kind != "f":
            assert c.summary is None, array
            continue
        assert c.summary[3] is bool((values < 0).any()), array
    assert [c.summary[3] for c in consts if c.summary is not None] == [
        False, True, False, False, True, True, True, False, True]
