"""The schema table: every QuantizeLinear / DequantizeLinear version qlin knows.

This is the single place where the facts live: inputs, type constraints,
attributes with defaults, granularities and whether the zero point is optional.
Rules, the converter and the evaluator read it through `qlin_cli.schema`.

Sources (see ../shared/seeds in the development tree, and tests/test_schema.py
which holds the ai.onnx and com.microsoft entries against onnx.defs and
onnxruntime's registered schemas):

* ai.onnx QuantizeLinear / DequantizeLinear 10, 13, 19, 21, 23, 24, 25: the ONNX
  operator pages and ``onnx.defs``. onnx 1.23's ``onnx.defs`` also has version 28
  (float6e2m3 and float6e3m2 outputs, nothing else changed); it is here too, so a
  model at opset 28 is checked against the schema it really claims.
* com.microsoft QuantizeLinear / DequantizeLinear 1: onnxruntime's registered
  schema, which is wider than its documentation page (int16/uint16/int4/uint4,
  float16 inputs, optional zero point). ``axis`` has no default: when it is
  absent the node is per-tensor and a 1-D scale is an error.
* com.amd.quark ExtendedQuantizeLinear 1: AMD Quark's page. The page gives
  ``axis`` a default of 1 while Quark's kernel uses 0 when it is absent. qlin
  follows the page for the default (the spec text is what a model claims to
  follow) and warns, rule QL402, wherever the difference changes the result.
* com.amd.quark ExtendedDequantizeLinear 1 has no page of its own; qlin takes it
  as the mirror of ExtendedQuantizeLinear (x and zero point of the quantized
  types, float scale, float output, the same ``axis``). This is a decision, not a
  quoted fact.
"""

from __future__ import annotations

from dataclasses import dataclass, field

AI_ONNX = ""
MICROSOFT = "com.microsoft"
QUARK = "com.amd.quark"

DOMAIN_NAMES = {AI_ONNX: "ai.onnx", MICROSOFT: "com.microsoft", QUARK: "com.amd.quark"}

# Vendor domains' aliases: the spelling onnx uses for the default domain.
DOMAIN_ALIASES = {"ai.onnx": AI_ONNX}

PER_TENSOR = "per-tensor"
PER_AXIS = "per-axis"
BLOCKED = "blocked"

# Families: ops that share one meaning and one implementation across domains.
LINEAR_QUANTIZE = "linear-quantize"
LINEAR_DEQUANTIZE = "linear-dequantize"

# Parameter roles: what each input or output is to the quantization.
X, SCALE, ZERO_POINT, Y = "x", "scale", "zero_point", "y"

# What a node without an `axis` attribute means.
AXIS_DEFAULT = "default"  # the schema's default axis applies
AXIS_ABSENT_PER_TENSOR = "per-tensor"  # no axis means per-tensor (com.microsoft)


@dataclass(frozen=True)
class Param:
    name: str
    types: str  # key into OpSpec.types; inputs sharing a key must share a type
    optional: bool = False
    role: str = X
    group: int = 0  # which scale / zero point group the parameter belongs to


@dataclass(frozen=True, eq=False)  # one object per schema: compared by identity
class OpSpec:
    domain: str
    op_type: str
    since: int
    kind: str  # "quantize" or "dequantize"
    inputs: tuple[Param, ...]
    outputs: tuple[Param, ...]
    types: dict[str, frozenset[str]]
    attributes: dict[str, int | None]  # name -> default (None: no default)
    granularities: frozenset[str]
    notes: tuple[str, ...] = field(default=())
    family: str = ""
    axis_absent: str = AXIS_DEFAULT
    # The axis the vendor's own kernel uses when `axis` is absent, where it differs
    # from the documented default (None: no known difference).
    kernel_axis_default: int | None = None

    def role_index(self, role: str, group: int = 0) -> int | None:
        """The input position of a role in a group (None: the op has no such input)."""
        for i, p in enumerate(self.inputs):
            if p.role == role and p.group == group:
                return i
        return None

    @property
    def domain_name(self) -> str:
        return DOMAIN_NAMES.get(self.domain, self.domain)

    @property
    def min_inputs(self) -> int:
        return sum(1 for p in self.inputs if not p.optional)

    def allowed(self, param: Param) -> frozenset[str]:
        return self.types[param.types]

    @property
    def quantized_types(self) -> frozenset[str]:
        """The types of the quantized side: y for quantize, x for dequantize."""
        side = self.outputs[0] if self.kind == "quantize" else self.inputs[0]
        return self.types[side.types]

    @property
    def axis_default(self) -> int | None:
        return self.attributes.get("axis")


def _set(*names: str) -> frozenset[str]:
    return frozenset(names)


# ---- type sets, named as they grow across ai.onnx versions --------------------
FLOAT = _set("float")
HIGH_10 = _set("float", "int32")
HIGH_19 = _set("bfloat16", "float", "float16", "int32")
SCALE_19_DQ = _set("bfloat16", "float", "float16")
SCALE_24_Q = HIGH_19 | {"float8e8m0"}
SCALE_24_DQ = SCALE_19_DQ | {"float8e8m0"}
INT8S = _set("int8", "uint8")
FLOAT8S = _set("float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz")
Q_19 = INT8S | FLOAT8S
Q_21 = Q_19 | {"int16", "uint16", "int4", "uint4"}
Q_23 = Q_21 | {"float4e2m1"}
Q_25 = Q_23 | {"int2", "uint2"}
Q_28 = Q_25 | {"float6e2m3", "float6e3m2"}

MS_HIGH = _set("float", "float16")
MS_Q = _set("int8", "uint8", "int16", "uint16", "int4", "uint4")
QUARK_Q = _set("int32", "int16", "int8", "uint32", "uint16", "uint8", "float16", "bfloat16")


def _q(domain, op, since, x_t, s_t, y_t, attrs, grans, *, scale_shares_x=False, notes=(), **kw):
    """A quantize entry: inputs x, y_scale, optional y_zero_point; output y."""
    types = {"T1": x_t, "T3": y_t}
    scale_key = "T1" if scale_shares_x else "T2"
    if not scale_shares_x:
        types["T2"] = s_t
    return OpSpec(
        domain, op, since, "quantize",
        (Param("x", "T1"), Param("y_scale", scale_key, role=SCALE),
         Param("y_zero_point", "T3", True, role=ZERO_POINT)),
        (Param("y", "T3", role=Y),),
        types, attrs, frozenset(grans), tuple(notes), LINEAR_QUANTIZE, **kw,
    )


def _dq(domain, op, since, x_t, s_t, y_t, attrs, grans, *, out_is_scale=True, notes=(), **kw):
    """A dequantize entry: inputs x, x_scale, optional x_zero_point; output y."""
    types = {"T1": x_t, "T2": s_t}
    out_key = "T2" if out_is_scale else "T3"
    if not out_is_scale:
        types["T3"] = y_t
    return OpSpec(
        domain, op, since, "dequantize",
        (Param("x", "T1"), Param("x_scale", "T2", role=SCALE),
         Param("x_zero_point", "T1", True, role=ZERO_POINT)),
        (Param("y", out_key, role=Y),),
        types, attrs, frozenset(grans), tuple(notes), LINEAR_DEQUANTIZE, **kw,
    )


T = (PER_TENSOR,)
TA = (PER_TENSOR, PER_AXIS)
TAB = (PER_TENSOR, PER_AXIS, BLOCKED)
A13 = {"axis": 1}
A19 = {"axis": 1, "saturate": 1}
A21 = {"axis": 1, "saturate": 1, "block_size": 0, "output_dtype": 0}
A23 = {"axis": 1, "saturate": 1, "block_size": 0, "output_dtype": 0, "precision": 0}
D21 = {"axis": 1, "block_size": 0}
D23 = {"axis": 1, "block_size": 0, "output_dtype": 0}

QL, DQL = "QuantizeLinear", "DequantizeLinear"

SPECS: tuple[OpSpec, ...] = (
    # ---- ai.onnx QuantizeLinear --------------------------------------------
    # Before 19 y_scale is fixed to float; from 19 to 21 it shares T1 with x.
    _q(AI_ONNX, QL, 10, HIGH_10, FLOAT, INT8S, {}, T),
    _q(AI_ONNX, QL, 13, HIGH_10, FLOAT, INT8S, A13, TA),
    _q(AI_ONNX, QL, 19, HIGH_19, None, Q_19, A19, TA, scale_shares_x=True),
    _q(AI_ONNX, QL, 21, HIGH_19, None, Q_21, A21, TAB, scale_shares_x=True),
    _q(AI_ONNX, QL, 23, HIGH_19, HIGH_19, Q_23, A23, TAB),
    _q(AI_ONNX, QL, 24, HIGH_19, SCALE_24_Q, Q_23, A23, TAB),
    _q(AI_ONNX, QL, 25, HIGH_19, SCALE_24_Q, Q_25, A23, TAB),
    _q(AI_ONNX, QL, 28, HIGH_19, SCALE_24_Q, Q_28, A23, TAB),
    # ---- ai.onnx DequantizeLinear ------------------------------------------
    _dq(AI_ONNX, DQL, 10, INT8S | {"int32"}, FLOAT, FLOAT, {}, T),
    _dq(AI_ONNX, DQL, 13, INT8S | {"int32"}, FLOAT, FLOAT, A13, TA),
    _dq(AI_ONNX, DQL, 19, Q_19 | {"int32"}, SCALE_19_DQ, None, A13, TA),
    _dq(AI_ONNX, DQL, 21, Q_21 | {"int32"}, SCALE_19_DQ, None, D21, TAB),
    _dq(AI_ONNX, DQL, 23, Q_23 | {"int32"}, SCALE_19_DQ, SCALE_19_DQ, D23, TAB, out_is_scale=False),
    _dq(AI_ONNX, DQL, 24, Q_23 | {"int32"}, SCALE_24_DQ, SCALE_19_DQ, D23, TAB, out_is_scale=False),
    _dq(AI_ONNX, DQL, 25, Q_25 | {"int32"}, SCALE_24_DQ, SCALE_19_DQ, D23, TAB, out_is_scale=False),
    _dq(AI_ONNX, DQL, 28, Q_28 | {"int32"}, SCALE_24_DQ, SCALE_19_DQ, D23, TAB, out_is_scale=False),
    # ---- com.microsoft (onnxruntime contrib ops) ---------------------------
    _q(MICROSOFT, QL, 1, MS_HIGH, None, MS_Q, {"axis": None}, TA, scale_shares_x=True,
       notes=("axis has no default: absent means per-tensor",), axis_absent=AXIS_ABSENT_PER_TENSOR),
    _dq(MICROSOFT, DQL, 1, MS_Q | {"int32"}, MS_HIGH, None, {"axis": None}, TA,
        notes=("axis has no default: absent means per-tensor",), axis_absent=AXIS_ABSENT_PER_TENSOR),
    # ---- com.amd.quark (AMD Quark custom ops) ------------------------------
    # The page gives axis 1 as the default; Quark's kernel uses 0 (measured, see
    # ../shared/seeds/README.md), recorded as kernel_axis_default.
    _q(QUARK, "ExtendedQuantizeLinear", 1, FLOAT, FLOAT, QUARK_Q, {"axis": 1}, TA,
       notes=("the page says axis defaults to 1; Quark's kernel uses 0",), kernel_axis_default=0),
    _dq(QUARK, "ExtendedDequantizeLinear", 1, QUARK_Q, FLOAT, FLOAT, {"axis": 1}, TA,
        notes=("mirror of ExtendedQuantizeLinear; no page of its own",), kernel_axis_default=0),
)
# ai.onnx QuantizeLinear's default output type when neither output_dtype nor a
# zero point is given ("If neither ... are supplied, output data type is uint8").
DEFAULT_QUANT_TYPE = "uint8"
