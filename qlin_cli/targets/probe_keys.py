"""The key a probe model measures and a node of any model maps to.

A runtime without a kernel registry (openvino) is described by probe models: small models,
one quantized node each, loaded, compiled and run in that runtime version
(tools/gen_target_data.py). Each probe is filed under the key of its node; a node of a
user's model is judged by the probes filed under its own key. A key holds what decides
whether the runtime takes the node: the op and the schema version in force, the type of
each input (absent ones as "-"), and the granularity (per-tensor, with a scale of shape [1]
or not, per-axis, or blocked with its axis for Q/DQ; per-channel when any scale or zero point of another
family has more than one element), and the attributes in DECIDING when set.
"""

from __future__ import annotations

import math
from functools import cache

import onnx

from .. import schema
from ..schema.ir import OLDEST_IR, newest_opset

PER_CHANNEL = "per-channel"
# What the loading probes cover: from the first opset with a quantized op (QuantizeLinear-10)
# to the newest onnx knows, and every IR version with opset imports.
PROBED_OPSETS = range(min(s.since for s in schema.SPECS if s.domain == schema.AI_ONNX), newest_opset() + 1)
PROBED_IR = range(OLDEST_IR, onnx.IR_VERSION + 1)


class Key(str):
    """A probe key: its one text form (how the data files name it, and what it is as a
    ``str``) and its fields: ``head`` (what is probed, the op, its version and the types:
    "ai.onnx:QuantizeLinear-21(float,float,int8)") and ``details`` (what else decides,
    most general first: granularity, axis, rank, layout, attributes). A coarser key drops
    details from the end (``coarser``); nothing reads the text back."""

    head: str
    details: tuple[str, ...]

    def __new__(cls, head: str, details: tuple[str, ...] = ()):
        self = super().__new__(cls, " ".join((head, *details)))
        self.head, self.details = head, details
        return self

    def coarser(self):
        """The keys with fewer details, the nearest first (the head alone not among them)."""
        for n in range(len(self.details) - 1, 0, -1):
            yield Key(self.head, self.details[:n])

    def __reduce__(self):  # pickled as its text
        return str, (str(self),)


class ChainKey(str):
    """The key of a chain DQ -> op -> tail (``chain_key``, ``paired_key``,
    ``transposed_key``): the DQ's node key, the op and the version of it in force, what
    else the probe names of the op ("with a int8 DQ operand"), and the tail. ``versioned``
    gives the same chain through another version of the op."""

    dq: str
    op: str
    since: int
    details: str
    tail: str

    def __new__(cls, dq: str, op: str, since: int, details: str, tail: str):
        self = super().__new__(cls, f"{dq} -> {op}-{since}{' ' + details if details else ''} -> {tail}")
        self.dq, self.op, self.since, self.details, self.tail = dq, op, since, details, tail
        return self

    def versioned(self, since: int) -> ChainKey:
        return ChainKey(self.dq, self.op, since, self.details, self.tail)

    def __reduce__(self):
        return str, (str(self),)


def node_key(f) -> Key | None:
    """The key of a node (model.facts.NodeFacts); None when qlin knows no schema for it or
    an input type is unknown."""
    if f.spec is None:
        return None
    types = []
    for present, t in zip(f.present, f.resolved_types, strict=False):
        if not present:
            types.append("-")
        elif t is None:
            return None
        else:
            types.append(t)
    return Key(f"{f.spec.domain_name}:{f.op}-{f.spec.since}({','.join(types)})",
               (*_granularity(f), *_layout(f), *_deciding(f)))


DIVIDED = ("float16", "bfloat16")  # division types a runtime may widen to float32
# a division type whose quotient is an integer (the page: "The type of y_scale determines the
# precision of the division"), which a runtime may do in float32 and keep the fraction of
INTEGER_DIVIDED = ("int32",)
# What the probes of a QuantizeLinear's arithmetic measure (tools/probe_quantize.py): how it
# divides, where it adds the zero point, how it saturates with a negative scale, how it
# converts to each float8 type ("float8 float8e4m3fn saturate=0"), how it rounds quotients near
# a tie to each 16-bit output ("near ties int16")
NEAR_TIES = "near ties"
QUANTIZE_PROBES = ("division", "rounding", "negative scale", "float8", NEAR_TIES)


def quantize_parts(f) -> tuple | None:
    """What the key of a QuantizeLinear's probes (``quantize_key_of``) reads of the node,
    whatever is probed: (domain name, op, version, x's type, the scale's type, granularity,
    precision); None for a node no probe of QUANTIZE_PROBES describes (``NodeSite`` keeps
    it for the five codes that ask)."""
    from . import nodes

    if f.spec is None or f.domain not in (schema.AI_ONNX, schema.MICROSOFT):
        return None
    if nodes.kind(f) != nodes.QUANTIZE:
        return None
    x, scale = nodes.x_type(f), nodes.scale_type(f)
    if x is None or scale is None:
        return None
    return f.spec.domain_name, f.op, f.spec.since, x, scale, _granularity(f), nodes.precision_type(f)


def quantize_key_of(what: str, parts: tuple | None) -> str | None:
    """The probe of ``what`` (QUANTIZE_PROBES) for a QuantizeLinear (ai.onnx or com.microsoft)
    of those ``quantize_parts``: the op and its version, x's and the scale's types, the
    granularity and the precision. The output type is in the key only through ``what``
    ("float8 float8e4m3fn saturate=0", "near ties int16"): the other probes quantize to int8
    and to uint8 (but an int32 scale's division probes, to float8), and the kernels divide,
    round and add before they convert to the output type. Division probes exist only for nodes whose
    division the page puts in float16 or bfloat16 (the scale's type, or ``precision``'s), in
    int32 (an int32 scale: its quotient is an integer, which shows in a float8 output) or
    that name a ``precision``. None for any other node."""
    if parts is None or (what == "division" and parts[6] is None
                         and parts[4] not in DIVIDED + INTEGER_DIVIDED):
        return None
    return quantize_probe(what, *parts)


DEQUANTIZE = "dequantize"  # the probes of a DequantizeLinear's product rounded to float16 / bfloat16
SCALE_FIRST = "rounds the scale to {out} first"  # what a runtime may do instead (dequantize probes)
PAIR = "pair arithmetic"  # the probes of a Q -> DQ pair between two other ops
REMOVED = "removes the pair"  # what a runtime may do with it instead: compute its reader on x


def dequantize_key(f, constant: bool) -> str | None:
    """The probe of a DequantizeLinear (ai.onnx or com.microsoft) whose output is float16 or
    bfloat16: the op and its version, the scale's type, the output type, whether x is a
    constant (weights: runtimes may compute those when they load the model, otherwise) (x's
    type and the granularity are left out: the probes dequantize int8 per tensor); None for
    any other node."""
    from . import nodes

    if f.spec is None or f.domain not in (schema.AI_ONNX, schema.MICROSOFT):
        return None
    if nodes.kind(f) != nodes.DEQUANTIZE:
        return None
    scale, out = nodes.scale_type(f), nodes.out_type(f)
    if scale is None or out not in DIVIDED:
        return None
    return dequantize_probe(f.spec.domain_name, f.op, f.spec.since, scale, out, constant)


def dequantize_probe(domain_name: str, op: str, since: int, scale: str, out: str, constant: bool) -> str:
    """The key of a dequantize probe (``dequantize_key``'s, from its parts)."""
    key = f"{DEQUANTIZE} {domain_name}:{op}-{since}({scale}) -> {out}"
    return key + " constant x" if constant else key


def pair_arithmetic_key(quant_type: str | None, blocked: bool) -> str | None:
    """The probe of a Q -> DQ pair of that quantized type between two other ops (ai.onnx,
    opset 21, per tensor, or ``blocked`` along axis 1), which a runtime may compute as one
    fused op, or remove."""
    return None if quant_type is None else f"{PAIR} {quant_type}" + (" blocked" if blocked else "")


# what a runtime may do instead of the page's rounding (the rounding probes' names for it)
ADDED_FIRST = "adds the zero point before rounding"
TOWARD_ZERO = "rounds toward zero"
# what a runtime may do instead of the page's rounding of a quotient near a tie to a 16-bit
# output (the near-ties probes' name for it: openvino's FakeQuantize)
OFFSET_FIRST = "adds 32768 to x / y_scale in float32 before rounding"
# what a runtime may do instead of the page's conversion to float8 (the float8 probes' name)
THROUGH_FLOAT16 = "rounds twice (through float16), saturates and turns NaN into the negative largest value"
FLOAT16_CASTS = "float16 between nodes"  # the probe of two float16 nodes without float16 kernels
KEEPS_FLOAT32 = "keeps float32 between the nodes"  # what a runtime may do there (drop the Casts)


def float16_casts_key(f) -> str | None:
    """The probe of a float16 value between two nodes a runtime may compute in float32
    (QT409): a DequantizeLinear of float16 output feeding a QuantizeLinear of float16 x, both
    of the node's domain (ai.onnx or com.microsoft) and version (tools/probe_quantize.py). It
    measures how the runtime carries a float16 value from node to node: one key for every Q /
    DQ of that version with a float16 x or y; None for any other node."""
    from . import nodes

    if f.spec is None or f.domain not in (schema.AI_ONNX, schema.MICROSOFT) or not schema.is_linear(f.spec):
        return None
    value = nodes.x_type(f) if nodes.kind(f) == nodes.QUANTIZE else nodes.out_type(f)
    return float16_casts_probe(f.spec.domain_name, f.spec.since) if value == "float16" else None


def float16_casts_probe(domain_name: str, since: int) -> str:
    """The key of a float16-casts probe (``float16_casts_key``'s, from its parts)."""
    return f"{FLOAT16_CASTS} {domain_name}:DequantizeLinear-{since} -> {domain_name}:QuantizeLinear-{since}"


MISSING_AXIS = "missing axis"  # what the probe of a vendor Q/DQ without ``axis`` measures
ALONG_AXIS_1 = "reads along axis 1"  # what a runtime may do with it (the probe's name for it)


def missing_axis_key(f) -> str | None:
    """The probe of a com.microsoft QuantizeLinear / DequantizeLinear without ``axis``
    (tools/probe_quantize.py gives it a 1-D scale, which its schema forbids: "If it's not
    specified, it means per-tensor quantization and input 'x_scale' and 'x_zero_point'
    must be scalars"); None for any other node."""
    if f.spec is None or f.domain != schema.MICROSOFT or not schema.is_linear(f.spec) or f.has("axis"):
        return None
    return missing_axis_probe(f.op, f.spec.since)


def missing_axis_probe(op: str, since: int) -> str:
    """The key of a missing-axis probe (``missing_axis_key``'s, from its parts)."""
    return f"{MISSING_AXIS} {schema.domain_name(schema.MICROSOFT)}:{op}-{since}"


def quantize_probe(what: str, domain_name: str, op: str, since: int, x: str, scale: str,
                   granularity: str | tuple[str, ...], precision: str | None = None) -> Key:
    """The key of a probe of ``what`` (``quantize_key_of``'s, from its parts; the
    granularity as ``_granularity`` gives it, or its text)."""
    gran = (granularity,) if isinstance(granularity, str) else granularity
    asked = (f"precision={precision}",) if precision is not None else ()
    return Key(f"{what} {domain_name}:{op}-{since}({x},{scale})", (*gran, *asked))


# Attributes a runtime decides on at load, past the input types: onnxruntime 1.18 loads
# MatMulNBits with 4 bits only, and openvino 2026.4 compiles 2-bit MatMulNBits with blocks of
# 16 and fails most with blocks of 32 or more on an AVX-512 CPU; 1.32 refuses a QuantizeLinear
# precision other than float; 1.24 fails a DequantizeLinear-24 whose output_dtype is float16; a
# QuantizeLinear without zero point has its output type in output_dtype, and openvino 2025.3
# to 2026.3 load a float8e4m3fnuz one with saturate=0. The key names one only when it is set to
# another value than its default in the op's schema (schema.SPECS).
DECIDING = {"MatMulNBits": ("bits", "block_size"),
            "QuantizeLinear": ("precision", "output_dtype", "saturate"),
            "DequantizeLinear": ("output_dtype",)}
# Ops whose scales come in more than one layout: MatMulNBits' scales are [N * blocks] in
# onnxruntime's operator document and [N, blocks] as its quantizer writes them; openvino 2024.6
# and 2025.0 convert the second only when K equals N ("Argument shapes are inconsistent").
RANKED_SCALES = ("MatMulNBits",)
TYPE_ATTRIBUTES = ("precision", "output_dtype")  # element types: named, not numbered


def _deciding(f) -> tuple[str, ...]:
    out: tuple[str, ...] = ()
    for name in DECIDING.get(f.op, ()):
        if not f.has(name):
            continue
        default = f.spec.attributes.get(name)
        value = f.attrs.get(name, default)
        if value == default or not isinstance(value, int):
            continue
        if name in TYPE_ATTRIBUTES:
            from ..schema import dtypes

            value = dtypes.name_of(value)
        out += (f"{name}={value}",)
    return out


def _layout(f) -> tuple[str, ...]:
    """MatMulNBits: the rank of its scales, and whether one block spans K (openvino 2025.1 and
    2025.2 read 4-bit zero points unpacked: [N * blocks] codes, which packed ones only match
    with one block)."""
    if f.op not in RANKED_SCALES:
        return ()
    out: tuple[str, ...] = ()
    shape = f.scale_shape
    if shape is not None and len(shape) >= 2:
        out += (f"scales rank={len(shape)}",)
    k, block = f.attrs.get("K"), f.attrs.get("block_size")
    if isinstance(k, int) and isinstance(block, int) and 0 < k <= block:
        out += ("one block",)
    return out


def _granularity(f) -> tuple[str, ...]:
    """The granularity's details of a key, most general first ("blocked", "axis=1",
    "rank=2", "one block"; "per-tensor", "[1]")."""
    if schema.is_linear(f.spec):
        gran = f.granularity or schema.PER_TENSOR
        if gran == schema.BLOCKED and f.normalized_axis() is not None:
            # openvino before 2026.0 runs blocks along axis 0 only ("Axis != 0 isn't supported"),
            # and 2025.x refuses one block over the whole axis and blocks of a 3-D tensor
            axis = f.normalized_axis()
            one = f.scale_shape is not None and len(f.scale_shape) > axis and f.scale_shape[axis] == 1
            return (gran, f"axis={axis}", f"rank={f.x_rank}", *(("one block",) if one else ()))
        return (gran, "[1]") if gran == schema.PER_TENSOR and f.scale_shape == (1,) else (gran,)
    for i, p in enumerate(f.spec.inputs):
        if p.role not in (schema.SCALE, schema.ZERO_POINT) or not f.present_at(i):
            continue
        shape = f.in_shape(i)
        if shape is not None and None not in shape and math.prod(shape) > 1:
            return (PER_CHANNEL,)
    return (schema.PER_TENSOR,)


# Float ops probed because a runtime release mishandles them in quantized models: from opset 18
# the Reduce ops below read their axes from an input instead of an attribute, and openvino
# 2024.0 ignores that input (ReduceMean over [1, 8, 4, 4] with axes [2, 3] gives [1, 1, 1, 1]),
# so the MatMul after it fails to compile; 2024.1 to 2024.4 read it for more ops each.
FLOAT_OPS = ("ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
             "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare")


def _since(op: str, opset: int | None) -> int | None:
    """The version of ai.onnx ``op`` in force at ``opset`` (``schema.ai_onnx_since``); None
    when onnx has none."""
    return None if opset is None else schema.ai_onnx_since(op, opset)


@cache
def axes_input_since(op: str) -> int | None:
    """The first version of ``op`` whose axes are an input (onnx.defs: 18 for every op of
    FLOAT_OPS); None when they never are."""
    from ..convert import opsteps

    for version in opsteps.history(op):
        if any(i.name == "axes" for i in opsteps.schema_at(op, version).inputs):
            return version
    return None


def float_key(node: onnx.NodeProto, opset: int | None) -> str | None:
    """The probe of a float op of FLOAT_OPS reading its axes from an input; None for any
    other node."""
    if node.domain not in ("", "ai.onnx") or node.op_type not in FLOAT_OPS or opset is None:
        return None
    since = axes_input_since(node.op_type)
    if since is None or opset < since or len(node.input) < 2 or not node.input[1]:
        return None
    return f"float {node.op_type}-{_since(node.op_type, opset)} with axes as an input"


# com.microsoft binary ops whose operand A a QuantizeLinear writes, probed with a constant B
# of each form (tools/probe_models.py): openvino 2025.3 and 2025.4 crash (a segmentation
# fault) compiling x -> QuantizeLinear -> QLinearAdd with a scalar B, and run either alone.
BINARY_OPS = ("QLinearAdd", "QLinearMul")


def operand_key(site) -> str | None:
    """The probe of ``site``'s node when it is a BINARY_OPS node after a QuantizeLinear (the
    probes' B is a constant; a B computed at run time is judged by them too); None otherwise."""
    f = site.facts
    if f.op not in BINARY_OPS or f.domain != schema.MICROSOFT:
        return None
    if site.x_from != ("QuantizeLinear", schema.AI_ONNX):
        return None
    key = site.node_key
    b, a = f.in_shape(f.spec.role_index(schema.X, group=1)), f.in_shape(0)  # B, A
    if key is None or b is None:
        return None
    form = "a scalar" if not b else "of A's shape" if b == a else "broadcast"
    return f"{key} after QuantizeLinear, B {form}"


def pair_key(quant_type: str) -> str:
    """The probe of a Q -> DQ pair of that type linking a graph input to a graph output (a
    pattern runtimes rewrite as a whole)."""
    return f"Q -> DQ {quant_type} from graph input to graph output"


# the ai.onnx ops a 16-bit Q -> DQ pair ending at a graph output is probed after (QT308;
# what each release does is its probes', docs/targets.md)
PAIR_AFTER_OPS = ("AveragePool", "MaxPool", "Sigmoid", "Transpose")


def pair_after_key(quant_type: str, op: str) -> str:
    """The probe of ai.onnx ``op`` -> Q -> DQ of that type -> a graph output."""
    return f"Q -> DQ {quant_type} after {op} to graph output"


def opset_key(opset: int) -> str:
    """The probe of loading an ai.onnx opset (a Relu model importing it)."""
    return f"opset {opset}"


def ir_key(ir_version: int) -> str:
    """The probe of loading an IR version (a Relu model at opset 13 with that IR)."""
    return f"ir {ir_version}"


# The ops a DequantizeLinear of an activation (fed by a QuantizeLinear) is probed into, as a
# chain Q -> DQ -> op -> (QuantizeLinear or another op): runtimes rewrite such chains when they
# load a model (onnxruntime's default graph optimizations move the DQ past Transpose, Reshape
# and the like, or fold DQ -> op -> Q into the op on quantized values), so the op may end up
# running on a quantized type the single-node probes never show.
CHAIN_OPS = ("Transpose", "Reshape", "Squeeze", "Unsqueeze", "Flatten", "MaxPool", "Slice", "Gather",
             "Identity", "Resize", "Concat", "Split", "Expand", "Tile", "DepthToSpace", "SpaceToDepth",
             "AveragePool", "Relu", "Pad", "ArgMax", "Clip", "Sigmoid", "LeakyRelu", "Softmax", "Add", "Mul")
CHAIN_TAILS = ("QuantizeLinear", "other")


def chain_key(dq_key: str | None, op: str, opset: int | None, tail: str) -> str | None:
    """The probe of a chain Q -> DQ -> ``op`` -> ``tail`` (``dq_key``: the DQ's node key;
    ``tail``: "QuantizeLinear" when one reads the op's output, else "other"); None for an op
    not probed so."""
    since = _since(op, opset) if op in CHAIN_OPS else None
    if dq_key is None or since is None:
        return None
    return ChainKey(dq_key, op, since, "", tail)


def weight_key(dq_key: str | None, op: str, opset: int | None, slot: int, along_blocks: bool) -> str | None:
    """The probe of a blocked DequantizeLinear read by a MatMul or Gemm as input ``slot``,
    which sums over the axis its blocks run along (``along_blocks``) or over the other one."""
    since = _since(op, opset) if op in ("MatMul", "Gemm") else None
    if dq_key is None or since is None:
        return None
    return f"{dq_key} -> {op}-{since} input {slot} summed {'along' if along_blocks else 'across'} its blocks"


def paired_key(dq_key: str | None, opset: int | None, weight: str | None, tail: str) -> str | None:
    """The probe of Q -> DQ -> MatMul whose other operand a DequantizeLinear of type
    ``weight`` makes, then ``tail``: the QDQ MatMul onnxruntime fuses into QLinearMatMul at
    load (1.29 also fuses float16 ones, which no QLinearMatMul kernel takes)."""
    since = _since("MatMul", opset)
    if dq_key is None or since is None or weight is None:
        return None
    return ChainKey(dq_key, "MatMul", since, f"with a {weight} DQ operand", tail)


def transposed_key(dq_key: str | None, opset: int | None) -> str | None:
    """The probe of a DequantizeLinear of a weight read by MatMul through a Transpose (what
    onnxruntime's n-bits quantizer writes in QDQ form): onnxruntime 1.19 moves the Transpose
    above the DQ when it loads the model and fails on the int4 QuantizeLinear it makes."""
    since, matmul = _since("Transpose", opset), _since("MatMul", opset)
    if dq_key is None or since is None or matmul is None:
        return None
    return ChainKey(dq_key, "Transpose", since, "", f"MatMul-{matmul}")


def site_chains(site) -> list[tuple[str, str, str | None, str | None]]:
    """(probe key, how a message names the chain, the key of the chain the way out leads to
    and that way out, or None and None) of each op a DequantizeLinear reads into: a chain Q -> DQ -> op
    when a QuantizeLinear feeds the DQ, a blocked DQ -> MatMul / Gemm, a per-axis or blocked
    DQ -> Transpose -> MatMul (targets.base.NodeSite)."""
    f = site.facts
    if f.op != "DequantizeLinear" or f.domain != schema.AI_ONNX:
        return []
    opset = schema.opset_of(dict(site.opsets), schema.AI_ONNX)
    dq = site.node_key
    thens = site.then or ((),) * len(site.consumers)
    reduced = site.reduced or (None,) * len(site.consumers)
    partners = site.partners or (None,) * len(site.consumers)
    blocked = f.granularity == schema.BLOCKED and f.normalized_axis() is not None
    weighted = site.producer is None and f.granularity in (schema.BLOCKED, schema.PER_AXIS)
    found = []
    for (op, domain, slot), then, axis, partner in zip(site.consumers, thens, reduced, partners,
                                                       strict=False):
        if domain != schema.AI_ONNX:
            continue
        tail = "QuantizeLinear" if "QuantizeLinear" in then else "other"
        if site.producer is not None and op == "MatMul":
            key = paired_key(dq, opset, partner, tail)
            if key is not None:
                found.append((key, f"Q -> DQ -> MatMul whose other operand is dequantized from {partner}",
                              None, None))
        if site.producer is not None:
            key = chain_key(dq, op, opset, tail)
            if key is not None:
                after = "a QuantizeLinear" if tail == "QuantizeLinear" else "no QuantizeLinear"
                with_q = None if tail == "QuantizeLinear" else chain_key(dq, op, opset, "QuantizeLinear")
                found.append((key, f"Q -> DQ -> {op} with {after} after it", with_q,
                              f"quantize the output of {op} (the chain with a QuantizeLinear after it runs)"))
        if weighted and op == "Transpose" and "MatMul" in then:
            key = transposed_key(dq, opset)
            if key is not None:
                found.append((key, "a DQ weight read by MatMul through a Transpose", None, None))
        if blocked and axis is not None:
            along = axis == f.normalized_axis()
            key = weight_key(dq, op, opset, slot, along)
            if key is not None:
                found.append((key, f"a blocked DQ read by {op} (input {slot}), which sums "
                                   f"{'along' if along else 'across'} its blocks",
                              None if along else weight_key(dq, op, opset, slot, True),
                              f"block the weight along the axis {op} sums over"))
    return found
