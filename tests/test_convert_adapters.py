"""Every ai.onnx Q/DQ version step, both directions, and the registry against onnx.defs."""

from __future__ import annotations

import functools

import numpy as np
import onnx
import pytest
from convert_builders import blocked_dq, dq_model, per_axis, q_model
from onnx import TensorProto, defs

from qlin_cli.check.engine import check_model
from qlin_cli.convert import adapters
from qlin_cli.convert.registry import REGISTRY
from qlin_cli.convert.run import Options, convert_model

OPS = ("QuantizeLinear", "DequantizeLinear")


@functools.cache
def _histories() -> dict[str, tuple[int, ...]]:
    """Each ai.onnx op's since_versions in onnx.defs (every schema read once, not per op)."""
    found: dict[str, set[int]] = {}
    for s in defs.get_all_schemas_with_history():
        if s.domain == "":
            found.setdefault(s.name, set()).add(s.since_version)
    return {op: tuple(sorted(v)) for op, v in found.items()}


def _history(op: str) -> list[int]:
    return list(_histories().get(op, ()))


@pytest.mark.parametrize("op", OPS)
def test_registry_covers_every_version_change_in_onnx_defs(op):
    hist = _history(op)
    for a, b in zip(hist, hist[1:], strict=False):
        assert ("", op, a, b) in REGISTRY, f"no adapter {op} {a} -> {b}"
        assert ("", op, b, a) in REGISTRY, f"no adapter {op} {b} -> {a}"
    steps = {(k[2], k[3]) for k in REGISTRY if k[1] == op}
    expected = {(a, b) for a, b in zip(hist, hist[1:], strict=False)}
    assert steps == expected | {(b, a) for a, b in expected}


def test_every_registered_step_of_an_ai_onnx_op_joins_two_of_its_versions_in_onnx_defs():
    """One registry for Q/DQ and every other op: each ai.onnx key names two neighbouring
    since_versions of the op in onnx.defs (a step onnx.defs does not have is never taken)."""
    from qlin_cli.convert import ops  # noqa: F401  (registers the other ops' adapters)

    others = {k[1] for k in REGISTRY} - set(OPS)
    assert {"Squeeze", "BatchNormalization", "Resize"} <= others
    for domain, op, a, b in REGISTRY:
        if domain != "":
            continue
        hist = _history(op)
        assert a in hist and b in hist and abs(hist.index(a) - hist.index(b)) == 1, (op, a, b)


def _convert(model, opset, **kw):
    return convert_model(model, ".", Options(opset, **kw))


def _valid(model):
    onnx.checker.check_model(model, full_check=True)
    errors = [d for d in check_model(model, ".") if d.severity == "error"]
    assert errors == [], [d.message for d in errors]


def _neighbours():
    hist = _history("QuantizeLinear")
    return list(zip(hist, hist[1:], strict=False))


@pytest.mark.parametrize("low,high", _neighbours())
@pytest.mark.parametrize("kind", ["q", "dq"])
def test_every_step_both_directions(low, high, kind):
    build = q_model if kind == "q" else dq_model
    for a, b in ((low, high), (high, low)):
        r = _convert(build(a), b)
        assert not r.refused, r.refused
        assert r.model is not None
        assert {o.domain: o.version for o in r.model.opset_import}[""] == b
        # a node that changes is proven; one the target takes as it is needs no proof
        assert all(e.verified or e.action == "kept" for e in r.entries)
        assert all(e.changes and e.changes != ["nothing"] for e in r.entries)
        _valid(r.model)


def test_13_to_10_drops_axis_on_per_tensor_and_refuses_per_axis():
    r = _convert(q_model(13, attrs={"axis": 1}), 10)
    assert not r.refused and not r.model.graph.node[0].attribute
    _valid(r.model)
    r = _convert(per_axis("QuantizeLinear", 13), 10)
    assert r.model is None and "per-axis" in r.refused[0].detail
    assert "--to-opset 13" in r.refused[0].ways_out


def test_21_to_19_output_dtype_becomes_zero_point():
    m = q_model(21, zero_point=None, attrs={"output_dtype": TensorProto.INT8}, out_type="int8")
    r = _convert(m, 19)
    node = r.model.graph.node[0]
    assert len(node.input) == 3 and not node.attribute
    zp = next(t for t in r.model.graph.initializer if t.name == node.input[2])
    assert zp.data_type == TensorProto.INT8 and onnx.numpy_helper.to_array(zp) == 0
    assert r.entries[0].verified
    _valid(r.model)


def test_23_to_21_strips_precision_only_when_unchanged():
    same = q_model(23, attrs={"precision": TensorProto.FLOAT})
    r = _convert(same, 21)
    assert not r.refused and not r.model.graph.node[0].attribute
    _valid(r.model)
    other = q_model(23, attrs={"precision": TensorProto.FLOAT16})
    r = _convert(other, 21)
    assert r.model is None and "precision" in r.refused[0].detail


def test_23_to_21_dequantize_output_dtype():
    same = dq_model(23, attrs={"output_dtype": TensorProto.FLOAT})
    assert not _convert(same, 21).refused
    other = dq_model(23, attrs={"output_dtype": TensorProto.FLOAT16}, out_type="float16")
    assert _convert(other, 21).refused


@pytest.mark.parametrize("q_type,opset,needs", [
    ("int16", 19, 21), ("uint16", 13, 21), ("int4", 19, 21), ("uint4", 13, 21),
    ("float8e4m3fn", 13, 19), ("float4e2m1", 21, 23), ("int2", 24, 25)])
def test_types_refused_below_their_opset(q_type, opset, needs):
    zp = np.zeros((), dtype=np.float32) if q_type.startswith("float") else np.int64(0)
    m = dq_model(25, zero_point=zp, zp_type=q_type, x_type=q_type)
    r = _convert(m, opset)
    assert r.model is None, q_type
    assert q_type in r.refused[0].detail
    assert f"--to-opset {needs}" in r.refused[0].ways_out
    assert _convert(m, needs).model is not None


def test_float8e8m0_scale_refused_below_24():
    m = dq_model(24, scale=np.float32(0.5), scale_type="float8e8m0")
    m.graph.output[0].type.tensor_type.elem_type = TensorProto.FLOAT
    r = _convert(m, 23)
    assert r.model is None and "float8e8m0" in r.refused[0].detail


def test_blocked_refused_below_21_and_lowered_with_lower():
    r = _convert(blocked_dq(21, "int8"), 19)
    assert r.model is None and "blocked" in r.refused[0].detail and "--lower" in r.refused[0].ways_out
    assert r.refused[0].code == "QC102" and r.refused[0].severity == "error"
    r = _convert(blocked_dq(21, "int8"), 19, lower=True)
    assert r.model is not None and r.count("lowered") == 1 and r.verified == 1
    _valid(r.model)


def test_path_walks_through_every_version():
    assert adapters.steps("", "QuantizeLinear", 25, 13) == [(25, 24), (24, 23), (23, 21), (21, 19), (19, 13)]
    assert adapters.steps("", "DequantizeLinear", 10, 19) == [(10, 13), (13, 19)]


def test_identical_nodes_are_proven_once(monkeypatch):
    """Facts leave names out: two nodes with equal facts and equal rewrites share one proof."""
    from qlin_cli.convert import verify

    calls = []
    real = verify.prove
    monkeypatch.setattr(verify, "prove", lambda case: calls.append(case) or real(case))
    model = q_model(21)
    node = model.graph.node[0]
    twin = onnx.NodeProto()
    twin.CopyFrom(node)
    twin.name, twin.output[0] = "twin", "y_twin"
    model.graph.node.append(twin)
    out = onnx.ValueInfoProto()
    out.CopyFrom(model.graph.output[0])
    out.name = "y_twin"
    model.graph.output.append(out)
    r = _convert(model, 21, to_domain="com.microsoft")
    assert not r.refused and r.count("converted") == 2 and r.verified == 2
    assert len(calls) == 1


def test_every_attribute_of_the_schema_table_has_a_policy():
    """retarget decides each attribute by its policy; one the table gains without a policy
    would travel unjudged."""
    from qlin_cli.convert.qnode import KNOWN_ATTRS
    from qlin_cli.convert.retarget import POLICIES

    assert set(POLICIES) == set(KNOWN_ATTRS)
