"""The facts of a QDQ group's key that lie outside the op and its Q/DQ (targets/fusion.py):
``Group.before``, the Conv / MatMul / Gemm whose output an Add or Mul of a constant reads
through a Q -> DQ pair (openvino folds an int8 Add of a constant into the MatMul before it,
its bias), and ``after`` "Add", a MatMul whose output an Add of a constant reads
(onnxruntime 1.21 .. 1.24 make the two a Gemm first, so a blocked weight's MatMul runs in
float there). Each is measured in every release (tools/probe_fusion.py's matrix); dropping
either from the key makes these tests fail."""

from __future__ import annotations

import probe_fusion

from qlin_cli.model.analysis import analyze
from qlin_cli.targets import fusion, predict


def _add(sym: bool, act: str = "uint8") -> dict:
    """An Add of a constant (symmetric or not) reading a MatMul's output through Q -> DQ."""
    return probe_fusion._spec(op="Add", act=act, b="const", before="MatMul", sym=sym, after="q")


def _groups(spec: dict, target: str) -> dict:
    return predict.groups_in(analyze(probe_fusion.build(spec), "."), target)


def _qt501(spec: dict, target: str) -> list:
    return [f for f in predict.findings(probe_fusion.build(spec), ".", target) if f.code == "QT501"]


def test_the_key_names_the_op_before_an_add_of_a_constant():
    model = probe_fusion.build(_add(True))
    groups = probe_fusion.group_ops(model)
    assert [name.split("_")[0] for name, _ in groups] == ["before", "group"]
    g = groups[1][1]
    assert g.before == "MatMul" and g.text == "MatMul -> Add(uint8 tensor, uint8 tensor sym const) -> Q uint8"
    assert fusion.Group.from_json(g.to_json()) == g
    # the helper MatMul is measured by its own cases, not by this one's
    assert [name for name, _ in probe_fusion.measured_groups(model)] == [groups[1][0]]
    plain = probe_fusion.group_ops(probe_fusion.build(probe_fusion._spec(op="Add", act="uint8", b="const")))
    assert plain[0][1].before == ""


def test_openvino_folds_an_int8_add_of_a_constant_into_the_matmul_before_it():
    """Measured in every release: with int8 activations the Add of a constant (symmetric or
    not) is folded into the FullyConnected before it (the layer runs in i8), with uint8 ones
    it is a float Add; QT501 follows the data's outcome, said for the uint8 ones only. A key
    without ``before`` would be the lone Add's, which runs in float with either type."""
    table = fusion.table("openvino", "2026.4.1")
    for act in ("int8", "uint8"):
        for sym in (True, False):
            spec = _add(sym, act=act)
            key = probe_fusion.group_ops(probe_fusion.build(spec))[1][1].text
            said = table.outcome(key)
            assert said == (fusion.FLOAT if act == "uint8" else "runs in i8 (FullyConnected)"), key
            found = _qt501(spec, "openvino")
            assert len(found) == (act == "uint8"), key
            groups = _groups(spec, "openvino")
            assert groups["integer"] == 1 + (act == "int8") and groups["not_measured"] == 0, (key, groups)
    lone = probe_fusion.group_ops(probe_fusion.build(probe_fusion._spec(op="Add", act="int8", b="const")))
    assert table.outcome(lone[0][1].text) == fusion.FLOAT
    found = _qt501(_add(False), "openvino")
    assert "MatMul -> Add(uint8 tensor, uint8 tensor const) -> Q uint8" in found[0].message


def test_onnxruntime_1_21_to_1_24_leave_a_blocked_matmul_read_by_a_bias_add_in_float():
    spec = probe_fusion._spec(op="MatMul", act="float", w="int4", gran="blocked", axis=0, block=32,
                              after="add", bias="none")
    key = probe_fusion.group_ops(probe_fusion.build(spec))[0][1].text
    assert key == "MatMul(float, int4 blocked axis=0 block=32 sym const) -> Add"
    for release in ("1.21", "1.22", "1.23", "1.24"):
        found = _qt501(spec, f"onnxruntime@{release}")
        assert len(found) == 1 and "MatMulNBits" in found[0].message, release
        assert "the output read by 'float' instead of 'Add'" in found[0].message
    for release in ("1.20", "1.25", "1.31", "1.32"):
        assert _qt501(spec, f"onnxruntime@{release}") == [], release
    # read by a Sigmoid, the same MatMul becomes MatMulNBits in 1.21 .. 1.24 too
    assert _qt501(dict(spec, after="float"), "onnxruntime@1.22") == []


def test_the_way_out_named_is_a_group_the_release_runs_in_integer():
    """openvino 2026.4.1 runs that MatMul in float, and its nearest measured group fails to
    compile: QT501 named the load error as the way out ("it load: ..."); now only a group the
    release runs in integer is named, else none."""
    spec = probe_fusion._spec(op="MatMul", act="float", w="int4", gran="blocked", axis=0, block=32,
                              after="add", bias="none")
    found = _qt501(spec, "openvino")
    assert len(found) == 1 and "; it load: " not in found[0].message, found[0].message
    table = fusion.table("openvino", "2026.4.1")
    floats = sorted(k for k, o in table.outcomes.items() if o == fusion.FLOAT)
    for key in floats[::40]:
        near = table.reason(key)
        assert near is None or near[1].startswith(fusion.INTEGER), (key, near)
