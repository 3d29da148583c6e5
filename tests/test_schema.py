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


# ---- the other op families ------------------------------------------------------------
FAMILY_SPECS = list(schema.FAMILY_SPECS)
_ATTR_TYPE = {1: "FLOAT", 2: "INT", 3: "STRING", 6: "FLOATS", 7: "INTS", 8: "STRINGS"}


def _plain_default(raw_attr: onnx.AttributeProto | None):
    if raw_attr is None or not raw_attr.name:
        return None
    value = onnx.helper.get_attribute_value(raw_attr)
    return value.decode() if isinstance(value, bytes) else value


def _compare_family(spec, params_in, params_out, constraints, attributes):
    """params: (name, type_str, optional, variadic); attributes: name -> (type name,
    required, default)."""
    def allowed(type_str):
        m = _TENSOR.fullmatch(type_str)
        return frozenset({m.group(1)}) if m else constraints[type_str]

    for theirs, mine in ((params_in, spec.inputs), (params_out, spec.outputs)):
        assert [p[0] for p in theirs] == [p.name for p in mine]
        for (name, type_str, optional, variadic), p in zip(theirs, mine, strict=True):
            assert allowed(type_str) == spec.allowed(p), (spec.op_type, name)
            assert optional == p.optional, (spec.op_type, name)
            assert variadic == p.variadic, (spec.op_type, name)
        for (_, ta, _, _), a in zip(theirs, mine, strict=True):  # shared type variables
            for (_, tb, _, _), b in zip(theirs, mine, strict=True):
                if ta == tb and not ta.startswith("tensor("):
                    assert a.types == b.types, (spec.op_type, a.name, b.name)
    assert set(attributes) == set(spec.attributes), spec.op_type
    for name, (type_name, required, default) in attributes.items():
        assert _ATTR_TYPE[spec.attribute_type(name)] == type_name, (spec.op_type, name)
        assert (name in spec.required) == required, (spec.op_type, name)
        mine = spec.attributes[name]
        if isinstance(default, float):
            assert mine == pytest.approx(default), (spec.op_type, name)
        else:
            assert mine == default, (spec.op_type, name)


def _opt(option) -> tuple[bool, bool]:
    text = str(option)
    return text.endswith("Optional"), text.endswith("Variadic")


@pytest.mark.parametrize("spec", [s for s in FAMILY_SPECS if s.domain == schema.AI_ONNX],
                         ids=lambda s: f"{s.op_type}-{s.since}")
def test_ai_onnx_family_entry_matches_onnx_defs(spec):
    sch = onnx.defs.get_schema(spec.op_type, spec.since, "")
    assert sch.since_version == spec.since
    cons = {tc.type_param_str: frozenset(_TENSOR.fullmatch(t).group(1) for t in tc.allowed_type_strs)
            for tc in sch.type_constraints}
    ins = [(p.name, p.type_str, *_opt(p.option)) for p in sch.inputs]
    outs = [(p.name, p.type_str, *_opt(p.option)) for p in sch.outputs]
    attrs = {n: (onnx.AttributeProto.AttributeType.Name(a.type), a.required, _plain_default(a.default_value))
             for n, a in sch.attributes.items()}
    _compare_family(spec, ins, outs, cons, attrs)


@pytest.mark.parametrize("op", ["QLinearConv", "QLinearMatMul", "MatMulInteger", "ConvInteger",
                                "DynamicQuantizeLinear"])
def test_every_onnx_version_of_a_family_op_is_in_the_table(op):
    history = set()
    for v in range(1, onnx.defs.onnx_opset_version() + 1):
        try:
            history.add(onnx.defs.get_schema(op, v, "").since_version)
        except onnx.defs.SchemaError:
            pass
    assert history == {s.since for s in schema.versions("", op)}


@pytest.mark.parametrize("spec", [s for s in FAMILY_SPECS if s.domain == schema.MICROSOFT],
                         ids=lambda s: s.op_type)
def test_com_microsoft_family_entry_matches_onnxruntime(spec):
    sch = _ort_schemas()[(spec.domain, spec.op_type, spec.since)]
    cons = {tc.type_param_str: frozenset(_TENSOR.fullmatch(t).group(1) for t in tc.allowed_type_strs)
            for tc in sch.type_constraints}
    ins = [(p.name, p.typeStr, *_opt(p.option)) for p in sch.inputs]
    outs = [(p.name, p.typeStr, *_opt(p.option)) for p in sch.outputs]
    attrs = {}
    for n, a in sch.attributes.items():
        raw = None
        if a._default_value:
            raw = onnx.AttributeProto()
            raw.ParseFromString(a._default_value)
        attrs[n] = (str(a.type).split(".")[-1], a.required, _plain_default(raw))
    _compare_family(spec, ins, outs, cons, attrs)


def test_bfp_entry_matches_quarks_page():
    """AMD Quark's page for BFPQuantizeDequantize (no registry to read: Quark's library is
    not a dependency): one float input x and output y, the attributes and defaults listed."""
    spec = schema.lookup("com.amd.quark", "BFPQuantizeDequantize", 1)
    assert [p.name for p in spec.inputs] == ["x"] and [p.name for p in spec.outputs] == ["y"]
    assert spec.allowed(spec.inputs[0]) == {"float"} == spec.allowed(spec.outputs[0])
    assert spec.attributes == {"bfp_method": "to_bfp", "axis": 1, "bit_width": 16, "block_size": 8,
                               "rounding_mode": 0, "sub_block_size": 2, "sub_block_shift_bits": 1,
                               "convert_to_bfloat_before_bfp": 0}


def test_every_family_entry_names_its_source_and_valid_groups():
    for spec in FAMILY_SPECS:
        assert spec.source, spec.op_type
        assert spec.family in schema.OTHER_FAMILIES
        for g, group in enumerate(spec.groups):
            n_out = len(spec.outputs)
            assert -n_out <= group.tensor < len(spec.inputs), (spec.op_type, group.name)
            if group.forms:
                assert spec.role_index(schema.SCALE, g) is not None or \
                    spec.role_index(schema.ZERO_POINT, g) is not None, (spec.op_type, group.name)
        for c in spec.constraints:
            assert c.attribute in spec.attributes and c.source, (spec.op_type, c.attribute)


def test_lookup_reaches_families_but_convert_facing_sets_stay_linear():
    assert schema.lookup("", "QLinearMatMul", 20).since == 10
    assert schema.lookup("", "QLinearMatMul", 21).since == 21
    assert schema.lookup("", "DynamicQuantizeLinear", 10) is None
    assert schema.knows("com.microsoft", "MatMulNBits") and not schema.is_known_op("com.microsoft",
                                                                                    "MatMulNBits")
    assert all(schema.is_linear(s) for s in schema.SPECS)
    assert not any(schema.is_linear(s) for s in schema.FAMILY_SPECS)
