"""TensorRT 10 and 11: from NVIDIA's documentation and the onnx-tensorrt parser's Q/DQ helper.

Documented, not measured here: TensorRT needs an NVIDIA GPU, which the test machine
does not have. Every fact names its source:

* the ONNX operator support matrix, onnx-tensorrt ``docs/operators.md`` ("TensorRT 10.15
  supports operators in the inclusive range of opset 9 to opset 24"; QuantizeLinear takes
  FP32, FP16, BF16 with ``y_zero_point`` 0; DequantizeLinear INT8, FP8, FP4, INT4 with
  ``x_zero_point`` 0; QLinearConv, QLinearMatMul, MatMulInteger, ConvInteger and
  DynamicQuantizeLinear not supported);
* NVIDIA's "ONNX Opset Guide" for TensorRT 11.x (maximum opset 25);
* the developer guide, "Working with Quantized Types" (symmetric quantization only;
  INT8, INT4 weight-only, FP8E4M3, FP4E2M1);
* the developer guide, "Working with Quantized Types" (10.11): "Weight-only quantization is
  supported for INT4." (QT202: a QuantizeLinear to int4 of an activation);
* the developer guide, "Explicit Quantization", "Quantized Weights": "When using
  pre-quantized weights, an IDequantizeLayer is required between the weights and the linear
  operator that uses them." (QT502: a weight stored quantized and made float by a Cast);
* the Quantize operator reference and the IQuantizeLayer API (scale a build-time
  constant with strictly positive values; zero point all zeros; FP8 clamped to ±448;
  block quantization for INT4 only and 2-D scales in TensorRT 10, for INT4, FP4, FP8 and
  INT8 in the current reference);
* onnx-tensorrt ``onnxOpImporters.cpp``, ``QuantDequantLinearHelper`` (commit dd0a3a9):
  "Scale coefficients must all be positive", "Non-zero zero point is not supported",
  "TensorRT only allows FP8, INT8, INT4, and FP4 quantization" (UINT8 only with the DLA
  flag), "Only a single blocking dimension is allowed", "Inferred block size is not an
  integer", 4-bit (INT4, FP4) tensors with an even number of elements, and a warning that
  ``precision`` is not supported (the scale's type is used).

Older TensorRT 10 releases were stricter (onnx-tensorrt 10.1: INT4 needs an even last
dimension; no FP4); the profile follows the newest 10.x.
"""

from __future__ import annotations

from .. import schema
from . import nodes, weights
from .base import DOCUMENTED, SOURCE, Float8Quantize, ModelInfo, NodeSite, Source, Target, coded

NOT_MEASURED = "documented, not measured here"
OPERATORS_MD = "github.com/onnx/onnx-tensorrt docs/operators.md (TensorRT 10.15)"
OPSET_GUIDE = "https://docs.nvidia.com/deeplearning/tensorrt/latest/reference/onnx-opset-guide.html"
DEV_GUIDE = "https://docs.nvidia.com/deeplearning/tensorrt/latest/inference-library/work-quantized-types.html"
DEV_GUIDE_10_11 = "https://docs.nvidia.com/deeplearning/tensorrt/10.11.0/inference-library/work-quantized-types.html"
EXPLICIT = ("https://docs.nvidia.com/deeplearning/tensorrt/latest/inference-library/"
            "quantized-types-explicit-quantization.html")
QUANTIZE_OP = "https://docs.nvidia.com/deeplearning/tensorrt/latest/_static/operators/Quantize.html"
QUANTIZE_OP_10 = "https://docs.nvidia.com/deeplearning/tensorrt/operators/docs/Quantize.html"
IQUANTIZE = "https://docs.nvidia.com/deeplearning/tensorrt/api/c_api/classnvinfer1_1_1_i_quantize_layer.html"
HELPER = "github.com/onnx/onnx-tensorrt onnxOpImporters.cpp QuantDequantLinearHelper @ dd0a3a9"

QUANTIZED = ("int8", "float8e4m3fn", "int4", "float4e2m1")
FLOATS = ("float", "float16", "bfloat16")
UNSUPPORTED_OPS = frozenset(
    {"QLinearConv", "QLinearMatMul", "MatMulInteger", "ConvInteger", "DynamicQuantizeLinear"}
)


class TensorRt(Target):
    qdq_domains = ("",)
    min_opset = 9
    quantized_types = QUANTIZED
    float_types = FLOATS
    measured = False
    # documented: FP8 outputs are clamped to [-448, 448]
    float8_quantize = Float8Quantize(("float8e4m3fn",), True,
                                     "FP8 outputs are always clamped to ±448: saturate=0 is not honoured",
                                     "keep x / y_scale within ±448")
    blocked_types: tuple[str, ...] = ()
    blocked_max_rank: int | None = None

    def model_findings(self, info: ModelInfo):
        opset = info.ai_onnx_opset
        if opset is None:
            return
        if opset > self.max_opset:
            yield self.finding(
                "QT101",
                f"ai.onnx opset {opset} is newer than the {self.max_opset} {self.title} parses",
                convertible=True,
            )
        elif opset < self.min_opset:
            yield self.finding(
                "QT102",
                f"ai.onnx opset {opset} is older than the {self.min_opset} {self.title} parses",
                convertible=True,
            )

    def node_findings(self, site: NodeSite):
        f = site.facts
        linear = nodes.is_linear(f)
        if f.domain != schema.AI_ONNX and schema.knows(f.domain, f.op):
            yield self.finding(
                "QT104",
                f"{self.title}'s ONNX parser has no {f.domain_name} {f.op}",
                convertible=linear,
                fix=None if linear else "express it with ai.onnx ops",
            )
            return
        if f.domain == schema.AI_ONNX and f.op in UNSUPPORTED_OPS:
            yield self.finding(
                "QT201",
                f"{self.title} does not support {f.op}",
                fix="use the QDQ format (QuantizeLinear / DequantizeLinear around float ops)",
            )
            return
        if site.weight_cast is not None:
            yield self.finding(
                "QT502",
                f"this {f.op}'s weight is the {site.weight_cast}, not a DequantizeLinear: "
                f"{self.title} requires a DequantizeLinear between pre-quantized weights and the "
                f"{f.op}, and builds it with float weights",
                fix="dequantize the weight with a DequantizeLinear (its scale and zero point) instead",
            )
        if not linear or f.domain != schema.AI_ONNX:
            return
        yield from self._types(f)
        yield from self._weight_only(site)
        yield from self._values(site)
        yield from self._shapes(f)
        yield from coded(self, ("QT402", "QT403"), site)

    def _types(self, f):
        k = nodes.kind(f)
        q, st = nodes.quant_type(f), nodes.scale_type(f)
        if q is not None and q not in QUANTIZED:
            extra = (
                " (uint8 only on DLA, with kENABLE_UINT8_AND_ASYMMETRIC_QUANTIZATION_DLA)"
                if q == "uint8"
                else ""
            )
            yield self.finding(
                "QT202",
                f"{self.title} quantizes only to {', '.join(QUANTIZED)}, not {q}{extra}",
                fix="requantize to int8, float8e4m3fn, int4 or float4e2m1",
            )
        if k == nodes.QUANTIZE and nodes.x_type(f) not in (None, *FLOATS):
            yield self.finding(
                "QT202",
                f"QuantizeLinear takes float, float16 or bfloat16 x, not {nodes.x_type(f)}",
                fix="cast x to float first",
            )
        if st is not None and st not in FLOATS:
            yield self.finding(
                "QT202",
                f"scales must be float, float16 or bfloat16, not {st}",
                fix="store the scale as float",
            )

    def _weight_only(self, site: NodeSite):
        """Documented: "Weight-only quantization is supported for INT4." A QuantizeLinear to int4
        whose x is a graph input or the output of an op that makes no constant (not a Constant,
        nor a Cast, arithmetic or reshape that could be a weight's, targets/weights.py) quantizes
        an activation."""
        f = site.facts
        if nodes.kind(f) != nodes.QUANTIZE or nodes.quant_type(f) != "int4":
            return
        made = site.x_from
        if site.x_is_graph_input or (made is not None and made[0] not in weights.THROUGH | {"Constant"}):
            source = "a graph input" if site.x_is_graph_input else f"the output of a {made[0]}"
            yield self.finding(
                "QT202",
                f"{self.title} supports INT4 for weights only (weight-only quantization); this "
                f"QuantizeLinear quantizes an activation ({source}) to int4",
                fix="quantize activations to int8, float8e4m3fn or float4e2m1; keep int4 for weights",
            )

    def _values(self, site: NodeSite):
        f = site.facts
        if site.scale_is_graph_input:
            yield self.finding(
                "QT305",
                "the scale is a graph input; it must be a build-time constant",
                fix="store the scale as an initializer",
            )
        s = nodes.scale_values(f)
        if s is not None and s.size and not (s > 0).all():
            bad = float(s[~(s > 0)][0])
            yield self.finding(
                "QT304",
                f"scale value {bad!r}: every scale coefficient must be strictly positive",
                fix="negate that scale entry and the values it scales",
            )
        q = nodes.quant_type(f)
        if not nodes.is_float8(q):
            zp = nodes.zero_point_values(f)
            if zp is not None and (zp != 0).any():
                yield self.finding(
                    "QT306",
                    "the zero point is not all zeros: TensorRT quantizes symmetrically only",
                    fix="requantize with zero point 0",
                )

    def _shapes(self, f):
        q = nodes.quant_type(f)
        if f.granularity == schema.BLOCKED:
            if self.blocked_types and q not in self.blocked_types:
                yield self.finding(
                    "QT301",
                    f"{self.title} supports block quantization only for "
                    f"{', '.join(self.blocked_types)}, not {q}",
                    fix="use per-axis or per-tensor scales",
                )
            elif (
                self.blocked_max_rank is not None
                and f.x_rank is not None
                and f.x_rank > self.blocked_max_rank
            ):
                yield self.finding(
                    "QT301",
                    f"{self.title} supports block quantization of 2-D tensors only (x has rank {f.x_rank})",
                    fix="reshape to 2-D around the node",
                )
            elif f.block_size == 1:
                yield self.finding(
                    "QT301",
                    "block_size 1 leaves no blocking dimension the parser recognises",
                    fix="use per-axis scales",
                )
            dim = nodes.blocked_dim(f)
            if dim is not None and f.block_size and dim % f.block_size:
                yield self.finding(
                    "QT302",
                    f"block_size {f.block_size} does not divide the quantized dimension "
                    f"({dim}): the inferred block size is not an integer",
                    fix="choose a block size that divides it",
                )
        if q in ("int4", "float4e2m1"):
            n = nodes.element_count(nodes.x_shape(f))
            if n is not None and n % 2:
                yield self.finding(
                    "QT307",
                    f"the {q} tensor has {n} elements; 4-bit tensors need an even count",
                    fix="pad the tensor to an even size",
                )

    def division(self, site):
        """Documented: the parser "does not support setting quantization precision"; the
        scale's type is used."""
        f = site.facts
        return nodes.scale_type(f) if nodes.precision_type(f) is not None else None


_COMMON = (
    Source(
        "only symmetric quantization; INT8, INT4 (weight-only), FP8E4M3, FP4E2M1",
        DOCUMENTED,
        DEV_GUIDE,
        NOT_MEASURED,
    ),
    Source(
        "QuantizeLinear takes FP32, FP16, BF16; DequantizeLinear INT8, FP8, FP4, INT4; zero points must be "
        "zero; QLinearConv, QLinearMatMul, MatMulInteger, ConvInteger, DynamicQuantizeLinear unsupported",
        DOCUMENTED,
        OPERATORS_MD,
        NOT_MEASURED,
    ),
    Source(
        "the scale is a build-time constant with strictly positive values; FP8 clamped to ±448",
        DOCUMENTED,
        IQUANTIZE,
        NOT_MEASURED,
    ),
    Source(
        "scale coefficients positive; zero points zero; quantized types FP8/INT8/INT4/FP4 (UINT8 on DLA "
        "only); one blocking dimension with an integral block; 4-bit tensors of even size; precision "
        "ignored",
        SOURCE,
        HELPER,
        NOT_MEASURED,
    ),
    Source(
        "ONNX ops only (the support matrix lists no vendor-domain op)", DOCUMENTED, OPERATORS_MD, NOT_MEASURED
    ),
    Source(
        "INT4 quantizes weights only (weight-only quantization); INT8, FP8 and FP4 activations and weights",
        DOCUMENTED,
        DEV_GUIDE_10_11,
        NOT_MEASURED,
    ),
    Source(
        "pre-quantized weights need an IDequantizeLayer (a DequantizeLinear) before the linear op; "
        "a Cast of a quantized constant gives it float weights",
        DOCUMENTED,
        EXPLICIT,
        NOT_MEASURED,
    ),
)


class TensorRt10(TensorRt):
    name = "tensorrt-10"
    title = "TensorRT 10"
    versions = ("10.15",)
    aliases = ("tensorrt@10", "tensorrt10")
    max_opset = 24
    granularities = (schema.PER_TENSOR, schema.PER_AXIS, f"{schema.BLOCKED} (INT4, 2-D only)")
    blocked_types = ("int4",)
    blocked_max_rank = 2
    notes = (
        NOT_MEASURED,
        "opset 9 to 24; ai.onnx Q/DQ only; INT8, FP8 (e4m3fn), INT4, FP4 (e2m1); zero points 0; "
        "scales constant and > 0",
        "block quantization: INT4 on 2-D tensors, blocks dividing the axis; 4-bit tensors of even size",
        "TensorRT 10.0/10.1 were stricter (INT4 needs an even last dimension, no FP4)",
    )
    sources = _COMMON + (
        Source("opset 9 to 24", DOCUMENTED, OPERATORS_MD, NOT_MEASURED),
        Source("block quantization for INT4 only, 2-D scale", DOCUMENTED, QUANTIZE_OP_10, NOT_MEASURED),
    )


class TensorRt11(TensorRt):
    name = "tensorrt-11"
    title = "TensorRT 11"
    versions = ("11.x",)
    aliases = ("tensorrt@11", "tensorrt11", "tensorrt")
    max_opset = 25
    granularities = (schema.PER_TENSOR, schema.PER_AXIS, f"{schema.BLOCKED} (INT4, FP4, FP8, INT8)")
    blocked_types = ("int4", "float4e2m1", "float8e4m3fn", "int8")
    notes = (
        NOT_MEASURED,
        "opset 9 to 25; ai.onnx Q/DQ only; INT8, FP8 (e4m3fn), INT4, FP4 (e2m1); zero points 0; "
        "scales constant and > 0",
        "block quantization for INT4, FP4, FP8, INT8, blocks dividing the axis; 4-bit tensors of even size",
    )
    sources = _COMMON + (
        Source("maximum opset 25 (TensorRT 11.x, ONNX 1.20)", DOCUMENTED, OPSET_GUIDE, NOT_MEASURED),
        Source("block quantization for INT4, FP4, FP8 and INT8", DOCUMENTED, QUANTIZE_OP, NOT_MEASURED),
    )


TENSORRT_10 = TensorRt10()
TENSORRT_11 = TensorRt11()
TARGETS = (TENSORRT_10, TENSORRT_11)  # what targets/registry.py registers when it imports this module
