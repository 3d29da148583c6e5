"""openvino, CPU plugin: read_model + compile_model + infer, measured with the openvino package.

Two kinds of facts. The probe table of the version judged (probe_table.py; one data file per
measured version, tools/gen_target_data.py): which ai.onnx opsets and IR versions load, and
which quantized nodes of every family (by op, schema version, input types, granularity) are
refused, with openvino's own error (QT101, QT103, QT205). And the rules below, which say why
and what differs in the numbers: every one was measured with openvino 2026.4 on the generated matrix of
tests/test_targets_matrix.py (load: ``Core.read_model``, compile: ``compile_model(...,
"CPU")``, run: one inference) and the probes of tests/test_targets_divergence.py; the
error messages name the frontend source each comes from
(src/frontends/onnx/frontend/src/op/quantize_linear.cpp, dequantize_linear.cpp,
src/common/low_precision_transformations/src/qdq_stripping.cpp).

The rules check Q/DQ nodes (ai.onnx and com.microsoft, which openvino's ONNX frontend
converts), the domains qlin knows, and the element types openvino cannot read anywhere in the
model; the probes add the other quantized op families. Ops outside the quantized families are
not checked: openvino's general operator coverage is not part of this profile.
"""

from __future__ import annotations

from .. import schema
from ..schema import dtypes
from . import base, block_store, fusion, nodes, probe_keys, probe_table
from .base import DOCUMENTED, GENERATED, MEASURED, ModelInfo, NodeSite, Source, Target

RUNTIME = "openvino"
MATRIX_TEST = "tests/test_targets_matrix.py"
DIVERGENCE_TEST = "tests/test_targets_divergence.py"
OV_SRC = "github.com/openvinotoolkit/openvino"

# Element types openvino's ONNX reader refuses wherever they appear ("Unsupported type").
UNREADABLE = frozenset({"float8e4m3fnuz", "float8e5m2fnuz", "int2", "uint2", "float6e2m3", "float6e3m2"})
SIXTEEN_BIT = frozenset({"int16", "uint16"})


class OpenVinoCpu(Target):
    name = "openvino"
    title = "openvino, CPU plugin"
    aliases = ("openvino-cpu",)

    def __init__(self, table: probe_table.ProbeTable | None = None, name: str = "openvino",
                 aliases: tuple[str, ...] | None = None):
        self.table = table or probe_table.load(RUNTIME, probe_table.default_version(RUNTIME))
        self.probe_data = self.table
        self.name = name
        if aliases is not None:
            self.aliases = aliases
        self.versions = (self.table.version,)

    @property
    def max_opset(self) -> int | None:
        """The newest ai.onnx opset the release loads (None: the newest probed, 28, loads): its
        opset probes, read when first asked (a plan's candidates, `qlin targets`); a check
        reads the model's own opset's probe (QT101), not the 31 probes of every opset and IR
        version (7 M instructions of a check naming openvino when the target was made)."""
        return self.table.max_opset

    @property
    def max_ir(self) -> int | None:
        """The newest IR version the release loads, read when first asked (``max_opset``)."""
        return self.table.max_ir

    qdq_domains = ("", schema.MICROSOFT)
    quantized_types = (
        "int8",
        "uint8",
        "int16",
        "uint16",
        "int4",
        "uint4",
        "int32 (dequantize)",
        "float8e4m3fn",
        "float8e5m2",
        "float4e2m1 (dequantize only)",
    )
    float_types = ("float", "float16", "bfloat16 (computed in float32)")
    granularities = (schema.PER_TENSOR, schema.PER_AXIS, f"{schema.BLOCKED} (blocks dividing the axis)")
    measured = True
    # measured, tests/test_targets_divergence.py; how each release divides is its division
    # probes' (``division``)
    blocked_scale = base.BlockedScale(True, "the conversion of the node fails")  # 1 off the axis repeats
    float8_quantize = base.Float8Quantize(
        tuple(sorted(dtypes.SATURATE_APPLIES)), False, "conversion to {q} " + probe_keys.THROUGH_FLOAT16,
        "validate float8 outputs on openvino", said=probe_keys.THROUGH_FLOAT16)
    unreadable_types = UNREADABLE
    float16_why = ("openvino computes float16 values in float32 (its CPU plugin converts them): next to "
                   "{ops}")
    float16_fix = ("run the model in float32 on openvino, or validate its outputs there: a float16 value "
                   "is rounded only where it leaves the model")
    # 65536-level FakeQuantize nodes are what qdq_stripping.cpp removes; whether a release
    # removes a pair between two ops is its pair probe's ("removes the pair"), whether a pair
    # ending at a graph output fails to load its pair probes' (from a graph input, and after
    # each op of probe_keys.PAIR_AFTER_OPS: ``pair_failure``); a pair ending at a graph
    # output that another op also reads runs (2026.4.1, the matrix, tests/test_producers.py)
    pair_stripping = base.PairStripping(
        tuple(sorted(SIXTEEN_BIT)),
        "is removed by the CPU plugin: its consumers see the unquantized input")
    notes = (
        "cannot read fnuz float8, int2/uint2 or float6 tensors anywhere in the model",
        "no float4e2m1 quantize; blocks must divide the axis; a blocked quantize needs a zero point; "
        "no blocked dequantize of a 1-D tensor",
        "16-bit Q -> DQ pairs are removed by the CPU plugin from 2026.1, fused before (and fail to compile "
        "between a graph input and a graph output)",
        "quantize rounds after adding the zero point, converts to float8 through float16, miscomputes "
        "negative scales; float16/bfloat16 arithmetic in float32",
        "a com.microsoft 1-D scale without axis is read along axis 1",
        "com.amd.quark has no conversion rule",
        "other ops are not checked by this profile",
    )
    @property
    def sources(self) -> tuple[Source, ...]:
        v = self.table.version
        return (Source(
            f"which opsets and IR versions load, which quantized nodes of every family are refused "
            f"({self.table.probes} probe models)",
            GENERATED,
            f"python tools/gen_target_data.py openvino {v} (qlin_cli/targets/data/openvino_probes.json.gz, "
            f"release {v})",
        ), Source(
            "whole models of onnxruntime's quantizers each release failed to compile, cut to their "
            "smallest failing block, per CPU (QT211)",
            GENERATED,
            "python tools/blocks_openvino.py --write (qlin_cli/targets/data/openvino_blocks.json.gz); "
            "tests/test_targets_blocks.py",
        )) + self._rule_sources

    _rule_sources = (
        Source(
            "fnuz float8, int2/uint2 and float6 tensors: 'Unsupported type' at read_model",
            MEASURED,
            MATRIX_TEST,
        ),
        Source("com.amd.quark: 'No conversion rule found for operations'", MEASURED, MATRIX_TEST),
        Source(
            "float4e2m1 quantize: 'Bad format for f8 conversion type: f4e2m1' (FakeConvert)",
            MEASURED,
            f"{MATRIX_TEST}; {OV_SRC} src/core/src/op/fake_convert.cpp",
        ),
        Source(
            "blocks must divide the axis (quantize and dequantize)",
            MEASURED,
            f"{MATRIX_TEST}; {OV_SRC} src/frontends/onnx/frontend/src/op/quantize_linear.cpp, "
            "dequantize_linear.cpp",
        ),
        Source(
            "blocked quantize without zero point fails to convert (Reshape of the default zero point)",
            MEASURED,
            MATRIX_TEST,
        ),
        Source("blocked dequantize of a 1-D tensor is read as per-axis and refused", MEASURED, MATRIX_TEST),
        Source(
            "16-bit Q -> DQ pairs are stripped; between a graph input and output 'FQ stripping failed'",
            MEASURED,
            f"{MATRIX_TEST}; {OV_SRC} src/common/low_precision_transformations/src/qdq_stripping.cpp",
        ),
        Source("opset 28 and IR 14 load (openvino 2026.4)", MEASURED, MATRIX_TEST),
        Source(
            "float16 values are computed in float32: not rounded between nodes (QT409)",
            DOCUMENTED,
            "https://docs.openvino.ai/2024/openvino-workflow/running-inference/inference-devices-and-modes/"
            "cpu-device.html (Floating Point Data Types Specifics)",
        ),
        Source(
            "a float16 value between a DequantizeLinear and a QuantizeLinear stays float32 (QT409)",
            MEASURED,
            f"tools/probe_quantize.py (float16 between nodes) in every release; "
            f"{DIVERGENCE_TEST}::test_openvino_keeps_float32_between_float16_nodes",
        ),
        Source(
            "quantize adds the zero point before rounding",
            MEASURED,
            f"{DIVERGENCE_TEST}::test_openvino_rounds_after_zero_point",
        ),
        Source(
            "float8 quantize: double rounding through float16, saturate=0 ignored, NaN to -max (QT403)",
            MEASURED,
            f"tools/probe_quantize.py (float8, its codes named '{probe_keys.THROUGH_FLOAT16}') in every "
            f"release; {DIVERGENCE_TEST}::test_openvino_float8_conversion",
        ),
        Source(
            "a com.microsoft 1-D scale without axis is read along axis 1 (QT404)",
            MEASURED,
            f"tools/probe_quantize.py (missing axis) in every release; {DIVERGENCE_TEST}::"
            "test_reads_missing_axis_as_1",
        ),
        Source(
            "precision is ignored (float32 division)",
            MEASURED,
            f"{DIVERGENCE_TEST}::test_openvino_ignores_precision",
        ),
        Source(
            "negative scales: quantize results are wrong",
            MEASURED,
            f"{DIVERGENCE_TEST}::test_openvino_negative_scale_quantize",
        ),
        Source(
            "float16 / bfloat16 quantize divided in float32; float16 / bfloat16 dequantize outputs "
            "rounded otherwise; Q -> DQ pairs computed as one op that rounds otherwise (QT406)",
            MEASURED,
            f"tools/probe_quantize.py (division, dequantize, pair arithmetic) in every release; "
            f"{DIVERGENCE_TEST}::test_openvino_dequantize_arithmetic",
        ),
        Source(
            "supported ONNX frontend operators",
            DOCUMENTED,
            "https://docs.openvino.ai/2024/about-openvino/compatibility-and-support/"
            "supported-operations-inference-devices.html",
            note="the profile checks Q/DQ nodes only",
        ),
    )

    def model_findings(self, info: ModelInfo):
        v = self.table.version
        opset = info.ai_onnx_opset
        refused = None if opset is None else self.table.refused(probe_keys.opset_key(opset))
        if refused is not None:
            yield self.finding("QT101", f"ai.onnx opset {opset} does not load in openvino {v} "
                                        f"(measured: {refused.error})", convertible=True)
        refused = self.table.refused(probe_keys.ir_key(info.ir_version))
        if refused is not None:
            yield self.finding("QT103", f"IR version {info.ir_version} does not load in openvino {v} "
                                        f"(measured: {refused.error})", convertible=True)
        yield from probe_table.float_findings(self, self.table, info)
        bad = sorted({t for t in info.graph_input_types if t in UNREADABLE})
        if bad:
            yield self.finding(
                "QT204",
                f"graph inputs of type {nodes.fmt(bad)} cannot be read",
                fix="feed those inputs in a type openvino reads",
            )

    def node_findings(self, site: NodeSite):
        """``_node_findings``, and QT211 where they hold no error and the judged release failed
        to compile a block like the node's on a CPU it was measured on (block_store.findings)."""
        found = list(self._node_findings(site))
        if not any(x.severity == "error" for x in found):
            found += block_store.findings(self, RUNTIME, self.table.version, site)
        return found

    def _node_findings(self, site: NodeSite):
        """The rules' findings, then the probes': a node whose every probe this version
        refused gets QT205 unless a rule already says why, and so does a node of a kind
        this version failed some probes of, for a reason no rule decides from the node's
        own values (``explained``; the node's own kind only). A rule's error that the
        node's kind alone decides (KIND_DECIDED) gives way where the release ran every probe
        of the kind (2026.1 runs a QuantizeLinear to float4e2m1 that 2026.4 refuses). Every
        answer is the judged release's own: no other release's outcome is read. A QDQ group's
        op the release was measured to run in float gets QT501 (``fusion_table``)."""
        if site.group is not None:
            yield from base.coded(self, ("QT501",), site)
        found = list(self._rules(site))
        key = site.node_key
        exact = self.table.exact(key)
        if exact is not None and exact.runs and not exact.fails:  # the release ran every probe of the kind
            found = [x for x in found if x.severity != "error" or x.code not in KIND_DECIDED]
        mine = exact if exact is not None else self.table.outcome(key)
        errors = any(x.severity == "error" for x in found)
        if not errors:
            found += base.coded(self, ("QT207",), site)
        yield from found
        if mine is None or errors:
            return
        stage, error = mine.stage_and_error
        v = self.table.version
        linear = nodes.is_linear(site.facts)
        if mine.refused:
            fact = f"every probe of this kind failed in openvino {v} at {stage}: {error}"
            yield self.finding("QT205", fact, convertible=linear)
            return
        yield from probe_table.chain_findings(self, self.table, site)
        if mine.varies_by_cpu:
            seen = "; ".join(f"{cpu}: {status}" for cpu, status in mine.hosts)
            yield self.finding("QT206", f"openvino {v} ran this kind on some CPUs only ({seen})",
                               fix="test on the deployment CPU, or use uint8 activations or a QDQ graph")
            return
        if mine is exact and mine.fails and explained(mine.error) is None:
            # the probes of a kind differ in what its key leaves out (shapes, block sizes,
            # values); a failure no rule decides from the node's own values may be this node's.
            # (A kind not measured is judged by its nearest measured kinds summed, QT207: their
            # split failures are other kinds' - other output types, say - and only a refusal
            # of every one of them speaks for the node.)
            fact = (f"{mine.fails} of {mine.runs + mine.fails} probes of this kind failed in openvino {v} "
                    f"at {stage}: {error}")
            yield self.finding("QT205", fact, convertible=linear)

    def _rules(self, site: NodeSite):
        f = site.facts
        if f.domain == schema.QUARK:
            yield self.finding(
                "QT104",
                f"openvino has no conversion rule for {f.domain_name} {f.op}",
                convertible=nodes.is_linear(f),
            )
            return
        if not nodes.is_linear(f) or f.domain not in self.qdq_domains:
            return
        misfit = list(base.coded(self, ("QT309",), site))
        if misfit:
            yield from misfit
            return
        refused = list(self._types(site)) or list(self._blocked(f))
        if refused:
            yield from refused
            return
        yield from base.coded(self, ("QT308", "QT408"), site)
        if nodes.kind(f) == nodes.QUANTIZE:
            yield from base.coded(self, base.arithmetic_codes(), site)
        else:
            yield from base.coded(self, ("QT406",), site)
        yield from base.coded(self, ("QT404", "QT409"), site)

    def _types(self, site: NodeSite):
        """QT410, QT204, QT202: the node's element types (one finding at most)."""
        ignored = list(base.coded(self, ("QT410",), site))
        if ignored:
            yield from ignored
            return
        f = site.facts
        bad = sorted({t for t in (*f.resolved_types, nodes.out_type(f)) if t} & UNREADABLE)
        if bad:
            yield self.finding(
                "QT204",
                f"openvino cannot read {nodes.fmt(bad)} tensors",
                fix="use int8/uint8, int4/uint4, int16/uint16 or float8e4m3fn/float8e5m2",
            )
            return
        if nodes.kind(f) == nodes.QUANTIZE and nodes.quant_type(f) == "float4e2m1":
            yield self.finding(
                "QT202",
                "openvino cannot quantize to float4e2m1 (its FakeConvert takes float8 "
                "types only); it dequantizes float4e2m1",
                fix="quantize to float8e4m3fn or int4",
            )

    def _blocked(self, f):
        """QT302, QT303, QT301: a blocked node openvino refuses (one finding at most)."""
        if f.granularity != schema.BLOCKED:
            return
        k = nodes.kind(f)
        dim = nodes.blocked_dim(f)
        if dim is not None and f.block_size and dim % f.block_size:
            yield self.finding(
                "QT302",
                f"block_size {f.block_size} does not divide the quantized dimension ({dim})",
                fix="choose a block size that divides it",
            )
        elif k == nodes.QUANTIZE and not nodes.has_zero_point(f):
            yield self.finding(
                "QT303",
                "a blocked quantize without zero point does not load",
                fix=f"add an all-zero {nodes.quant_type(f)} zero point of the scale's shape",
            )
        elif k == nodes.DEQUANTIZE and f.x_rank == 1:
            yield self.finding(
                "QT301",
                "a blocked dequantize of a 1-D tensor is read as per-axis and refused",
                fix="reshape x to 2-D, or use per-tensor",
            )

    probes_arithmetic = True

    @property
    def fusion_table(self):
        """Which QDQ groups the release runs in an integer precision, measured
        (tools/probe_fusion_openvino.py; None where the release was not measured): QT501."""
        return fusion.table(RUNTIME, self.table.version)

    def arithmetic(self, what, site):
        return probe_table.arithmetic(self.table, what, site)

    def float16_in_float32(self, op, domain, opset, f=None):
        """Every float16 value: the CPU plugin converts float16 to float32 and computes in
        float32 (its CPU device page, "Floating Point Data Types Specifics"). Whether a release
        then leaves the value between two nodes unrounded is its float16-casts probe's (QT409,
        ``keeps_float32_between``): so from 2025.3, ai.onnx and com.microsoft (a float16-scale
        DequantizeLinear does not load before)."""
        return True

    def runs_lowered(self, quant_type, opset):
        """The primitive ops run wherever openvino reads the type (measured on the matrix)."""
        return quant_type is not None and quant_type not in UNREADABLE

    def ran_exactly(self, site):
        ran = self.table.exact(site.node_key)
        return ran is not None and ran.runs > 0 and not ran.fails

    def pair_failure(self, quant_type, after=None):
        found = self.table.outcome(probe_keys.pair_key(quant_type) if after is None
                                   else probe_keys.pair_after_key(quant_type, after))
        return found.stage_and_error[1] if found is not None and found.fails else None


# The rules' errors the node's probe key decides (its op, version, types, granularity, rank,
# zero point present or not): the release's own probes of the kind overrule them. QT302 (a
# block size that does not divide) and QT309 (a scale shape that does not fit) are values
# and shapes a key leaves out.
KIND_DECIDED = frozenset({"QT104", "QT202", "QT204", "QT301", "QT303"})

TARGET = OpenVinoCpu()
TARGETS = (TARGET,)  # what targets/registry.py registers when it imports this module


# The refusals a rule decides from the node's own values, by their wording in the releases
# measured (the probes of one key differ in those values: some divide, some do not): a
# release that failed some probes of a kind with one of these has said nothing more about
# a node than the rule does for the node's values.
VALUE_DECIDED = {
    "QT302": ("cannot be divided by block_size", "must be divisible by the block size"),
}


def explained(error: str) -> str | None:
    """The code of the rule that decides the refusal ``error`` (a probe's "stage: message")
    from a node's values; None for any other failure."""
    return next((code for code, said in VALUE_DECIDED.items() if any(s in error for s in said)), None)
