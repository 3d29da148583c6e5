"""Hold the schema table against onnx.defs and onnxruntime's registered schemas."""

from __future__ import annotations

import re

import onnx.defs
import pytest

from qlin_cli import schema
from qlin_cli.schema import dtypes

_TENSOR = re.compile(r"tensor\((\w+)\)")


def _allowed(sch, type_str: str) -> frozenset[str]:
    m = _TENSOR.fullmatch(type_str)
    if m:
        return frozenset({m.group(1)})
    for tc in sch.type_constraints:
        if tc.type_param_str == type_str:
            return frozenset(_TENSOR.fullmatch(t).group(1) for t in tc.allowed_type_strs)
    raise AssertionError(f"no constraint {type_str}")


def _compare(spec, sch, default_of):
    params = list(sch.inputs) + list(sch.outputs)
    ours = list(spec.inputs) + list(spec.outputs)
    assert [p.name for p in params] == [p.name for p in ours]
    for theirs, mine in zip(params, ours, strict=True):
        assert _allowed(sch, theirs.type_str) == spec.allowed(mine), mine.name
    # inputs that share a type variable in the registered schema share one here
    for i, a in enumerate(params):
        for j, b in enumerate(params):
            same_var = a.type_str == b.type_str and not a.type_str.startswith("tensor(")
            if same_var:
                assert ours[i].types == ours[j].types, (a.name, b.name)
    optional = [str(p.option).endswith("Optional") for p in sch.inputs]
    assert optional == [p.optional for p in spec.inputs]
    assert set(sch.attributes) == set(spec.attributes)
    for name, attr in sch.attributes.items():
        assert default_of(attr) == spec.attributes[name], name


def _onnx_default(attr):
    d = attr.default_value
    return d.i if d.name else None


AI_ONNX_SPECS = [s for s in schema.SPECS if s.domain == schema.AI_ONNX]


@pytest.mark.parametrize("spec", AI_ONNX_SPECS, ids=lambda s: f"{s.op_type}-{s.since}")
def test_ai_onnx_entry_matches_onnx_defs(spec):
    sch = onnx.defs.get_schema(spec.op_type, spec.since, "")
    assert sch.since_version == spec.since
    _compare(spec, sch, _onnx_default)


@pytest.mark.parametrize("op", ["QuantizeLinear", "DequantizeLinear"])
def test_every_onnx_version_is_in_the_table(op):
    """Every since_version onnx.defs has for the op, up to the newest opset, is an entry."""
    history = {onnx.defs.get_schema(op, v, "").since_version
               for v in range(10, onnx.defs.onnx_opset_version() + 1)}
    assert history == {s.since for s in schema.versions("", op)}


def test_lookup_takes_highest_version_not_above_opset():
    assert schema.lookup("", "QuantizeLinear", 12).since == 10
    assert schema.lookup("ai.onnx", "QuantizeLinear", 22).since == 21
    assert schema.lookup("", "QuantizeLinear", 27).since == 25
    assert schema.lookup("", "QuantizeLinear", 30).since == 28
    assert schema.lookup("", "QuantizeLinear", 9) is None


def _ort_schemas():
    from onnxruntime.capi.onnxruntime_pybind11_state import get_all_operator_schema

    return {(s.domain, s.name, s.since_version): s for s in get_all_operator_schema()}


MS_SPECS = [s for s in schema.SPECS if s.domain == schema.MICROSOFT]


def _ort_default(attr):
    raw = attr._default_value
    if not raw:
        return None
    proto = onnx.AttributeProto()
    proto.ParseFromString(raw)
    return proto.i


@pytest.mark.parametrize("spec", MS_SPECS, ids=lambda s: s.op_type)
def test_com_microsoft_entry_matches_onnxruntime(spec):
    sch = _ort_schemas()[(spec.domain, spec.op_type, spec.since)]

    class _Adapter:  # onnxruntime's pybind schema spells type_str as typeStr
        def __init__(self, s):
            self.type_constraints = s.type_constraints
            self.attributes = s.attributes
            self.inputs = [_P(p) for p in s.inputs]
            self.outputs = [_P(p) for p in s.outputs]

    class _P:
        def __init__(self, p):
            self.name, self.type_str, self.option = p.name, p.typeStr, p.option

    _compare(spec, _Adapter(sch), _ort_default)


def test_every_type_in_the_table_has_dtype_facts():
    for spec in schema.SPECS:
        for types in spec.types.values():
            for t in types:
                assert t in dtypes.BY_NAME, (spec.op_type, t)


def test_integer_ranges_match_bit_widths():
    for d in dtypes.BY_NAME.values():
        if d.kind == "int":
            signed = d.lo < 0
            assert d.hi - d.lo == 2**d.bits - 1
            assert (d.lo == -(2 ** (d.bits - 1))) == signed
