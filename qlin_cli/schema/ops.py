"""The schema table of QuantizeLinear / DequantizeLinear, and the types every table uses.

This is the single place where the facts of the linear Q/DQ ops live: inputs, type
constraints, attributes with defaults, granularities and whether the zero point is
optional. The other op families (QLinearConv, MatMulInteger, MatMulNBits ...) have
their tables in ``families/``, one module per family, written with the same
``OpSpec`` / ``Param`` / ``Group``. Rules, the converter and the evaluator read them
through `qlin_cli.schema`.

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
# The runtime that defines a vendor domain's ops (onnxruntime's contrib operators): a model
# moved into the domain is for it, so a conversion into it is held to what it computes.
DOMAIN_RUNTIMES = {MICROSOFT: ("onnxruntime",)}

# Vendor domains' aliases: the spelling onnx uses for the default domain.
DOMAIN_ALIASES = {"ai.onnx": AI_ONNX}

PER_TENSOR = "per-tensor"
PER_AXIS = "per-axis"
BLOCKED = "blocked"

# Families: ops that share one meaning and one implementation across domains.
LINEAR_QUANTIZE = "linear-quantize"
LINEAR_DEQUANTIZE = "linear-dequantize"
QLINEAR = "qlinear"  # ops on quantized tensors with scale / zero-point groups (QLinearConv, QGemm ...)
INTEGER = "integer"  # integer ops with zero points only (MatMulInteger, ConvInteger)
DYNAMIC_QUANTIZE = "dynamic-quantize"  # scales computed at run time (DynamicQuantizeLinear ...)
N_BITS = "n-bits"  # packed low-bit weights in blocks (MatMulNBits, GatherBlockQuantized)
BLOCK_FLOAT = "block-float"  # shared-exponent fake quantization (Quark BFPQuantizeDequantize)

# Parameter roles: what each input or output is to the quantization.
X, SCALE, ZERO_POINT, Y = "x", "scale", "zero_point", "y"
BIAS = "bias"  # an int32 bias quantized with scale = input scale * weight scale
OTHER = "other"  # an input the quantization does not concern (indices, lengths, float A)

# Attribute types (onnx.AttributeProto.AttributeType numbers; the table needs no onnx import).
A_FLOAT, A_INT, A_STRING, A_FLOATS, A_INTS, A_STRINGS = 1, 2, 3, 6, 7, 8

# Scale shapes a group allows (Group.forms): SCALAR is a scalar or a one-element 1-D
# tensor; a tuple of dimension indices is a tensor of those dimensions of the quantized
# tensor ((0,) is [D0], (0, 2) is [D0, D2]); ROWS / COLS are the full-rank matmul forms
# [..., M, 1] and [..., 1, N].
SCALAR, ROWS, COLS = "scalar", "rows", "cols"

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
    variadic: bool = False  # the last input, repeated (QLinearConcat's inputs)


@dataclass(frozen=True)
class Group:
    """One scale / zero-point group of a non-linear op: the tensor it quantizes and the
    shapes its scale may take. ``tensor`` is the input index of the quantized tensor, or
    ``-1 - k`` for output k. ``alt`` = (attribute, forms): the forms in force when that
    attribute is non-zero (QGemm's per-column b scale follows transB)."""

    name: str
    tensor: int
    forms: tuple = (SCALAR,)
    alt: tuple | None = None
    what: str = ""  # how messages name a per-channel form: "output channel (M)"

    def forms_for(self, attrs) -> tuple:
        if self.alt is not None and attrs.get(self.alt[0], 0):
            return self.alt[1]
        return self.forms


@dataclass(frozen=True)
class Constraint:
    """A documented attribute value rule: ``kind`` is "one-of" (``arg`` the allowed
    values), "min" (the least value), "pow2-min" (a power of two >= ``arg``),
    "pow2-min-or-0" (that, or 0), "axis" (an axis of input ``arg``: in [-r, r-1]) or
    "axis-unless-rank-1" (the same, not read when that input has rank 1). ``source``
    quotes where it is stated."""

    attribute: str
    kind: str
    arg: object
    source: str = ""


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
    # Non-linear families only: scale / zero-point groups, attribute types (A_INT ...;
    # absent names are INT), attributes without a default that must be given,
    # documented attribute value rules, and where the entry's facts come from.
    groups: tuple[Group, ...] = ()
    attribute_types: dict[str, int] = field(default_factory=dict)
    required: frozenset[str] = frozenset()
    constraints: tuple[Constraint, ...] = ()
    source: str = ""

    def role_index(self, role: str, group: int = 0) -> int | None:
        """The input position of a role in a group (None: the op has no such input)."""
        for i, p in enumerate(self.inputs):
            if p.role == role and p.group == group:
                return i
        return None

    def attribute_type(self, name: str) -> int:
        return self.attribute_types.get(name, A_INT)

    def param_at(self, i: int) -> Param | None:
        """The parameter input ``i`` binds to (a variadic last parameter repeats)."""
        if i < len(self.inputs):
            return self.inputs[i]
        if self.inputs and self.inputs[-1].variadic:
            return self.inputs[-1]
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
