"""Android NNAPI through onnxruntime's NNAPI execution provider: from the provider's source.

Read in github.com/microsoft/onnxruntime, not measured here (no Android device):

* ``onnxruntime/core/providers/nnapi/nnapi_builtin/builders/op_builder_helpers.cc``
  (``IsQuantizedIOSupported``, ``IsQuantizationScaleSupported``,
  ``IsQuantizationZeroPointSupported``, commit bc9f2c2): quantized inputs and outputs must
  be uint8 ("We only support u8 for most of the inputs and all outputs, with the exception
  for Quantized MatMul and Conv, which allows s8 weight"); the scale and the zero point
  must be constant initializers; only per-tensor scales ("does not support per-channel
  quantization, for now, only u8s8 QlinearConv supports per-channel quantization on API
  29+"); an int8 weight must have all-zero zero points; QLinearMatMul / QDQ MatMul take no
  per-channel weights.
* ``.../impl/quantizelinear_op_builder.cc`` (commit 3ae6b75): QuantizeLinear needs NNAPI
  feature level 3 (Android API 29); ``.../impl/dequantizelinear_op_builder.cc`` (commit
  22e0180): DequantizeLinear writes float32.

NNAPI is an execution provider: onnxruntime runs the nodes it refuses on the CPU
provider instead. An error of this profile therefore means "this node does not run on
NNAPI" (the model still runs, partly on the CPU), which is what onnxruntime's
mobile-usability checker is meant to report.
"""

from __future__ import annotations

from .. import schema
from . import nodes
from .base import SOURCE, NodeSite, Source, Target

NOT_MEASURED = "read in the source, not measured here"
ORT = "github.com/microsoft/onnxruntime onnxruntime/core/providers/nnapi/nnapi_builtin/builders/"
HELPERS = ORT + "op_builder_helpers.cc @ bc9f2c2"
Q_BUILDER = ORT + "impl/quantizelinear_op_builder.cc @ 3ae6b75"
DQ_BUILDER = ORT + "impl/dequantizelinear_op_builder.cc @ 22e0180"

# Ops whose weight (input 1) may be an int8 DequantizeLinear: u8s8 QLinearConv / QDQ Conv,
# and QLinearMatMul / QDQ MatMul / Gemm (per-tensor only for the latter).
CONV_WEIGHT = frozenset({"Conv", "QLinearConv"})
MATMUL_WEIGHT = frozenset({"MatMul", "QLinearMatMul", "Gemm"})


class Nnapi(Target):
    name = "nnapi"
    title = "NNAPI (onnxruntime NNAPI execution provider)"
    versions = ("onnxruntime main",)
    aliases = ("onnxruntime-nnapi",)
    qdq_domains = ("",)
    quantized_types = ("uint8", "int8 (Conv / MatMul weights only)")
    float_types = ("float",)
    granularities = (
        schema.PER_TENSOR,
        f"{schema.PER_AXIS} (int8 Conv weights along axis 0, Android API 29+)",
    )
    measured = False
    notes = (
        NOT_MEASURED,
        "nodes NNAPI refuses run on onnxruntime's CPU provider: an error means the node leaves NNAPI",
        "uint8 only, except int8 Conv / MatMul weights with zero point 0; scales and zero points constant; "
        "per-tensor only, except int8 Conv weights per output channel",
        "QuantizeLinear needs Android API 29 (NNAPI feature level 3)",
    )
    sources = (
        Source(
            "quantized inputs and outputs are uint8, except int8 Conv / MatMul weights",
            SOURCE,
            HELPERS,
            NOT_MEASURED,
        ),
        Source("scale and zero point are constant initializers", SOURCE, HELPERS, NOT_MEASURED),
        Source(
            "per-tensor only; per-channel only for int8 Conv weights (API 29+), along the output channel, "
            "with zero points 0; none for MatMul",
            SOURCE,
            HELPERS,
            NOT_MEASURED,
        ),
        Source(
            "QuantizeLinear needs NNAPI feature level 3 (Android API 29)", SOURCE, Q_BUILDER, NOT_MEASURED
        ),
        Source("DequantizeLinear writes float32", SOURCE, DQ_BUILDER, NOT_MEASURED),
    )

    def node_findings(self, site: NodeSite):
        f = site.facts
        if not nodes.is_linear(f):
            return
        if f.domain != schema.AI_ONNX:
            yield self.finding(
                "QT104",
                f"NNAPI runs only ai.onnx {_ai_onnx_op(nodes.kind(f))}, not {f.domain_name} {f.op}; the node "
                "stays on the CPU provider",
                convertible=True,
            )
            return
        q = nodes.quant_type(f)
        weight_of = {op for op, domain, i in site.consumers if domain == schema.AI_ONNX and i == 1}
        is_weight = nodes.kind(f) == nodes.DEQUANTIZE and q == "int8" and bool(weight_of)
        conv_weight = is_weight and weight_of <= CONV_WEIGHT
        matmul_weight = is_weight and weight_of <= CONV_WEIGHT | MATMUL_WEIGHT
        if q != "uint8" and not matmul_weight:
            yield self.finding(
                "QT202",
                f"NNAPI takes uint8 quantized tensors (int8 only as Conv / MatMul weights), "
                f"not {q}: the node stays on the CPU provider",
                fix="quantize activations to uint8",
            )
        yield from self._constants(site)
        yield from self._granularity(f, conv_weight, matmul_weight)

    def _constants(self, site: NodeSite):
        """The scale and zero point must be constant initializers."""
        f = site.facts
        if site.scale_is_graph_input or nodes.scale_values(f) is None:
            yield self.finding(
                "QT305",
                "the scale must be a constant initializer: the node stays on the CPU provider",
                fix="store the scale as an initializer",
            )
        if nodes.has_zero_point(f) and nodes.zero_point_values(f) is None:
            yield self.finding(
                "QT305",
                "the zero point must be a constant initializer: the node stays on the CPU provider",
                fix="store the zero point as an initializer",
            )

    def _granularity(self, f, conv_weight: bool, matmul_weight: bool):
        """Per-tensor scales, per-channel only for int8 Conv weights along axis 0; weights
        symmetric."""
        g = f.granularity
        zp = nodes.zero_point_values(f) if conv_weight or matmul_weight else None
        asymmetric = zp is not None and (zp != 0).any()
        if g == schema.PER_AXIS and conv_weight:
            if f.normalized_axis() != 0:
                yield self.finding(
                    "QT301",
                    "per-channel weights must be quantized along axis 0 (the output channel)",
                    fix="quantize the weight per output channel",
                )
            if asymmetric:
                yield self.finding(
                    "QT306",
                    "an int8 per-channel weight needs zero points 0",
                    fix="requantize the weight symmetrically",
                )
        elif g in (schema.PER_AXIS, schema.BLOCKED):
            yield self.finding(
                "QT301",
                f"NNAPI takes per-tensor scales only here, not {g} (per-channel only "
                "for int8 Conv weights): the node stays on the CPU provider",
                fix="use a per-tensor scale",
            )
        elif asymmetric:
            yield self.finding(
                "QT306", "an int8 weight needs zero point 0", fix="requantize the weight symmetrically"
            )


TARGET = Nnapi()
TARGETS = (TARGET,)  # what targets/registry.py registers when it imports this module


def _ai_onnx_op(kind: str) -> str:
    """The ai.onnx op of a Q/DQ kind ("quantize": QuantizeLinear), as the schema table has it."""
    return next(s.op_type for s in schema.SPECS if s.domain == schema.AI_ONNX and s.kind == kind)
