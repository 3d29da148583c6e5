"""onnxruntime, CPU execution provider: the generated kernel table plus measured facts.

What the profile checks, for every node of the model (not only Q/DQ):

* the model's ai.onnx opset and IR version against the limits the generator measured
  (QT101, QT103);
* the node's domain is one onnxruntime registers operators for (QT104);
* a CPU kernel exists for the schema version in force (QT201), unless onnx gives the
  op a function body, which onnxruntime inlines;
* one kernel registration accepts the node's known types together, with onnxruntime's
  float16 -> float fallback (QT202, through ``ort_table.OrtTable.match``);
* QuantizeLinear-23+ with x and scale of different types: loads, fails at the first
  run (QT203, measured);
* a blocked scale whose shape is not x's with ceil(Di / block_size) on the axis: fails at
  the first run (QT309, measured);
* chains Q -> DQ -> op the default optimizations rewrite into something that fails (QT205,
  from the release's chain probes, tools/probe_chains.py);

and the measured divergences of its Q/DQ kernels: float16 quantization divided in
float32 and `precision` ignored, in the releases whose division probes show it (QT401,
QT402), float8e4m3fn with `saturate=0` (QT403),
a com.microsoft 1-D scale without `axis` read along axis 1 in the releases whose missing-axis
probes show it (QT404), float16 kept in float32
between nodes without float16 kernels (QT409).

The facts the registry does not show are in docs/targets-onnxruntime-notes.md and are
measured by tests/test_targets_ort_table.py, tests/test_targets_divergence.py and the
generated matrix of tests/test_targets_matrix.py.
"""

from __future__ import annotations

from .. import schema
from ..schema import ir
from ..schema.ops import INT8S
from . import base, block_store, fusion, nodes, ort_table, probe_table
from .base import GENERATED, MEASURED, ModelInfo, NodeSite, Source, Target, TargetFinding

TABLE = ort_table.load(ort_table.default_version())  # the version installed beside qlin, else the newest
# the ops whose QDQ form onnxruntime's default session options fuse into a QLinear op
FUSED = {"MatMul": "QLinearMatMul", "Conv": "QLinearConv"}

# Ops onnxruntime never runs as kernels: its Graph turns each Constant node into an
# initializer when it loads a model (onnxruntime/core/graph/graph.cc), so the registry has
# no CPU kernel for Constant and needs none. Measured: tests/test_producers.py runs a
# Constant + Add model in onnxruntime, which QT201 used to call refused.
FOLDED_AT_LOAD = frozenset({("", "Constant")})

NOTES_DOC = "docs/targets-onnxruntime-notes.md"
MATRIX_TEST = "tests/test_targets_matrix.py"
DIVERGENCE_TEST = "tests/test_targets_divergence.py"
TABLE_TEST = "tests/test_targets_ort_table.py"


class OnnxRuntimeCpu(Target):
    """onnxruntime's CPU execution provider at one released version (``table``: that
    version's kernel registry and measured limits, qlin_cli/targets/data)."""

    name = "onnxruntime"
    title = "onnxruntime, CPU execution provider"
    aliases = ("onnxruntime-cpu",)

    def __init__(self, table=None, name: str = "onnxruntime", aliases: tuple[str, ...] | None = None):
        self.table = table or TABLE
        self.name = name
        if aliases is not None:
            self.aliases = aliases
        self.versions = (self.table.version,)
        self.probes = probe_table.maybe_load("onnxruntime", self.table.version)  # None: not probed
        self.probe_data = self.probes
        self.max_opset = self.table.max_opset
        self.max_ir = self.table.max_ir

    qdq_domains = ("", schema.MICROSOFT)
    quantized_types = (
        "int8",
        "uint8",
        "int16",
        "uint16",
        "int4",
        "uint4",
        "int2",
        "uint2",
        "int32 (dequantize)",
        "float8e4m3fn",
        "float8e4m3fnuz",
        "float8e5m2",
        "float8e5m2fnuz",
    )
    float_types = ("float", "float16 (computed in float32)")
    granularities = (schema.PER_TENSOR, schema.PER_AXIS, schema.BLOCKED)
    measured = True
    # measured on 1.31.1, tests/test_targets_divergence.py: saturate=0 float8e4m3fn outputs
    # from 480 become ±448; how each release divides is its division probes' (``division``)
    blocked_scale = base.BlockedScale(False, "the model loads, then the first run fails ('x_scale and x must "
                                             "have the same shape despite the quantize axis for blocked "
                                             "quantization')")
    float16_why = ("no float16 kernel: the node runs in float32 and, next to {ops} (no float16 kernel "
                   "either), the Casts between them are dropped")
    float16_fix = "use ai.onnx QuantizeLinear/DequantizeLinear-19 or newer (float16 kernels)"
    float8_quantize = base.Float8Quantize(
        ("float8e4m3fn",), True,
        "with saturate=0, values from 480 (and a little beyond) become ±448 instead of NaN",
        "keep x / y_scale within ±464 or use saturate=1",
        said="got 126 where the page gives 127")  # its float8 probe's 480: code 0x7E, the page's NaN 0x7F
    notes = (
        "opset 27 loads only with ALLOW_RELEASED_ONNX_OPSET_ONLY=0; opset 28 never",
        "QuantizeLinear-23+ with x and scale of different types loads, then fails at the first run",
        "the type float16 quantization is divided in, and whether precision is honoured, differ "
        "between releases (measured by the division probes of each)",
        "a com.microsoft 1-D scale without axis is read along axis 1",
        "no kernel for bfloat16 or int32 quantize, float4e2m1, float6, float8e8m0 scales, "
        "bfloat16 dequantize outputs; com.amd.quark has no operators",
    )
    @property
    def sources(self) -> tuple[Source, ...]:
        table = self.table
        return (Source(
            "CPU kernels: op, domain, versions, type constraints per registration",
            GENERATED,
            f"python tools/gen_target_data.py onnxruntime {table.version} "
            f"(qlin_cli/targets/data/onnxruntime_kernels.json.gz, release {table.version})",
        ),
        Source(
            f"max opset {table.max_opset}, max IR {table.max_ir}",
            MEASURED,
            "python tools/gen_ort_kernels.py (measure_limits: an Identity model at rising versions)",
        )) + self._shared_sources

    _shared_sources = (
        Source(
            "schema versions and formal parameters onnxruntime knows; which ops have a function body",
            GENERATED,
            "python tools/gen_ort_kernels.py",
        ),
        Source(
            "a kernel open-ended from version v covers only schema version v",
            MEASURED,
            f"{TABLE_TEST}::test_table_prediction_matches_onnxruntime (GlobalLpPool-22)",
        ),
        Source(
            "float16 nodes without a float16 kernel run through inserted Casts",
            MEASURED,
            f"{TABLE_TEST}::test_float16_without_kernel_runs_through_casts",
        ),
        Source(
            "QuantizeLinear-23+ with x and scale of different types fails at the first run",
            MEASURED,
            f"{TABLE_TEST}::test_mixed_x_and_scale_types_pass_the_registry_but_fail_at_run",
        ),
        Source("com.amd.quark ops are not registered (load fails)", MEASURED, MATRIX_TEST),
        Source(
            "Constant nodes become initializers at load and need no kernel",
            MEASURED,
            "tests/test_producers.py::test_targets_agree_with_onnxruntime (onnxruntime/core/graph/graph.cc)",
        ),
        Source(
            "float16 quantization is divided in float32",
            MEASURED,
            f"{DIVERGENCE_TEST}::test_onnxruntime_divides_float16_in_float32",
        ),
        Source("precision is ignored", MEASURED, f"{DIVERGENCE_TEST}::test_onnxruntime_ignores_precision"),
        Source(
            "float8e4m3fn with saturate=0 gives 448 for 480 and 481",
            MEASURED,
            f"{DIVERGENCE_TEST}::test_onnxruntime_float8_saturate_0",
        ),
        Source(
            "a com.microsoft 1-D scale without axis is read along axis 1 (QT404)",
            MEASURED,
            f"tools/probe_quantize.py (missing axis) in every release; "
            f"{DIVERGENCE_TEST}::test_reads_missing_axis_as_1",
        ),
        Source(
            "float16 between nodes without float16 kernels is not rounded to float16 (QT409)",
            MEASURED,
            "tools/probe_quantize.py (float16 between nodes) in every release; "
            f"{DIVERGENCE_TEST}::test_onnxruntime_keeps_float32_between_com_microsoft_float16_nodes",
        ),
        Source(
            "a blocked scale of another shape than the kernel reads fails at the first run (QT309)",
            MEASURED,
            "tests/test_producers.py::test_a_blocked_scale_of_the_wrong_shape_is_refused_as_the_runtimes_refuse_it",
        ),
        Source(
            "chains Q -> DQ -> op that the default optimizations break (QT205)",
            MEASURED,
            "tools/probe_chains.py in every release; tests/test_targets_ort_probes.py::"
            "test_chains_the_runtime_rewrites_agree_with_onnxruntime",
        ),
        Source("every fact above, against load + run of the generated matrix", MEASURED, MATRIX_TEST),
    )

    # ---- the model --------------------------------------------------------------------
    def model_findings(self, info: ModelInfo):
        if self.probes is not None:
            yield from probe_table.float_findings(self, self.probes, info)
        opset = info.ai_onnx_opset
        if opset is not None and opset > self.max_opset:
            extra = (
                " (opset 27 loads only with ALLOW_RELEASED_ONNX_OPSET_ONLY=0)"
                if opset == self.max_opset + 1
                else ""
            )
            yield self.finding(
                "QT101",
                f"ai.onnx opset {opset} is newer than the {self.max_opset} onnxruntime "
                f"{self.versions[0]} loads{extra}",
                convertible=True,
            )
        if info.ir_version > self.max_ir:
            needs = _ir_of_types(info)
            if needs > self.max_ir:
                yield self.finding(
                    "QT103",
                    f"IR version {info.ir_version} is newer than the {self.max_ir} "
                    f"onnxruntime loads, and the model stores types that need IR {needs}",
                    fix="store those tensors in other types",
                )
            else:
                yield self.finding(
                    "QT103",
                    f"IR version {info.ir_version} is newer than the {self.max_ir} onnxruntime loads",
                    convertible=True,
                )

    @property
    def fusion_table(self):
        """The release's measured QDQ fusion (targets/fusion.py; None where it was not measured): QT501."""
        return fusion.table("onnxruntime", self.table.version)

    # ---- one node -----------------------------------------------------------------------
    def node_findings(self, site: NodeSite):
        """``_node_findings``, and QT211 where they hold no error and the judged release failed
        a block like the node's on a CPU it was measured on (block_store.findings)."""
        found = list(self._node_findings(site))
        if not any(x.severity == "error" for x in found):
            found += block_store.findings(self, "onnxruntime", self.table.version, site)
        return found

    def _node_findings(self, site: NodeSite):
        """The kernel registry's and the hand-written checks' findings, then the probes'
        (tools/gen_target_data.py runs every probe model in the release): a node whose every
        probe of its kind failed gets QT205 unless a check already says why. A check decided
        by the node's kind alone (its op, version, types, granularity and deciding
        attributes: what its probe key holds) gives way to the release's own probes of the
        kind: where the release ran every one, its error is dropped (1.32 runs a
        QuantizeLinear-23 whose x and scale types differ, which 1.31 fails at run). A kind
        the release was not measured on is said so (QT207)."""
        if site.group is not None:
            yield from base.coded(self, ("QT501",), site)
        found, by_kind = [], []
        for finding, kind_only in self._checks(site):
            found.append(finding)
            by_kind.append(kind_only)
        if self.probes is None:
            yield from found
            return
        exact = self.probes.exact(site.node_key)
        if exact is not None and exact.runs and not exact.fails:
            found = [x for x, k in zip(found, by_kind, strict=True) if x.severity != "error" or not k]
        mine = exact if exact is not None else self.probes.outcome(site.node_key)
        errors = any(x.severity == "error" for x in found)
        if not errors:
            found += base.coded(self, ("QT207",), site)
        yield from found
        if mine is None:
            return
        since = site.facts.spec.since if site.facts.spec is not None else 0
        if self.table.max_opset is not None and since > self.table.max_opset:
            return  # its probes failed for the opset they import, which QT101 reports
        if not errors and mine.refused:
            stage, error = mine.stage_and_error
            fact = f"every probe of this kind failed in onnxruntime {self.table.version} at {stage}: {error}"
            yield self.finding("QT205", fact, convertible=nodes.is_linear(site.facts))
        elif not errors:
            yield from probe_table.chain_findings(self, self.probes, site)

    def _checks(self, site: NodeSite):
        """(finding, whether the node's kind alone decides it) of the registry's and the
        hand-written checks: a DequantizeLinear fused with the op it feeds (the ops around it
        decide) and a scale's shape that does not fit x (QT309) are more than the kind."""
        registry: list[TargetFinding] = []
        match = self._registry(site, registry.append)
        for x in registry:
            yield x, True
        if match is None or not nodes.is_linear(site.facts):
            return
        if match.float16_cast:
            for x in base.coded(self, ("QT409",), site):
                yield x, True
        fused = self._fused_without_kernel(site)
        if fused is not None:
            yield fused, False
            return
        for x in self._linear(site):
            yield x, x.code != "QT309"

    def _registry(self, site: NodeSite, say):
        """The kernel registry's findings on the node, each given to ``say``; the kernel
        match of its types (None where there is none, or none is needed)."""
        f = site.facts
        domain, op = f.domain, f.op
        linear = nodes.is_linear(f)
        if (domain, op) in FOLDED_AT_LOAD:
            return None  # no kernel runs it: onnxruntime makes it an initializer when it loads the graph
        if domain not in self.table.domains:
            say(self.finding(
                "QT104",
                f"onnxruntime registers no operators in domain {f.domain_name} "
                f"(unless a custom-op library for it is registered with the session)",
                convertible=linear,
                fix=None if linear else "register the vendor's custom-op library, or rewrite the node",
            ))
            return None
        version = self.table.schema_version(domain, op, f.opset)
        if version is None:
            say(self.finding(
                "QT201",
                f"onnxruntime knows no {op} in {f.domain_name} at opset {f.opset}",
                convertible=linear,
                fix=None if linear else "use an op onnxruntime has",
            ))
            return None
        kernel = self.table.kernel(domain, op, f.opset)
        signature = self.table.signature(domain, op, version)
        if kernel is None:
            if signature is not None and signature.function:
                return None  # inlined from onnx's function body
            have = sorted({k.since for k in self.table.kernels(domain, op)})
            say(self.finding(
                "QT201",
                f"no CPU kernel for {op}-{version} ({f.domain_name}); kernels exist for versions "
                f"{', '.join(map(str, have)) or 'none'}",
                convertible=linear,
                fix="import an opset whose version of the op has a kernel",
            ))
            return None
        types = _bound_types(f, signature)
        match = self.table.match(domain, op, f.opset, types)
        if match is None:
            accepted = "; ".join(f"{name}: {', '.join(ts)}" for name, ts in kernel.constraints.items())
            given = ", ".join(f"{name}={t}" for name, t in sorted(types.items()))
            say(self.finding(
                "QT202",
                f"no CPU kernel of {op}-{version} ({f.domain_name}) takes {given} "
                f"(the kernels take {accepted})",
                fix="store the tensors in types a kernel takes",
            ))
            return None
        return match

    def _fused_without_kernel(self, site: NodeSite) -> TargetFinding | None:
        """onnxruntime's default session options fuse the DequantizeLinear of an activation
        (after its QuantizeLinear) into the op it feeds (FUSED): a release with no kernel for
        the fused op at the model's opset, or none that takes the type, fails to load the
        model. Measured: 1.18 and 1.19 have no QLinearMatMul-21 kernel ("Failed to find
        kernel for QLinearMatMul(21)"); 1.31 fuses float8 into QLinearConv (Conv followed by
        a QuantizeLinear) and into the MatMul fusions ("Type 'tensor(float8e4m3fn)' of input
        parameter ... of operator (QLinearConv) ... is invalid"); 16-bit activations are
        not fused, nor a node whose other operand (the weight) no 8-bit or float8
        DequantizeLinear makes (1.19 runs a uint8 activation with int4 weights at opset 21)."""
        f, q = site.facts, site.producer
        t = nodes.quant_type(f)
        if f.domain != schema.AI_ONNX or nodes.kind(f) != nodes.DEQUANTIZE or q is None or t is None:
            return None
        float8 = nodes.is_float8(t)
        if not (float8 or t in INT8S) or nodes.quant_type(q) != t:
            return None
        n = len(site.consumers)
        thens, partners = site.then or ((),) * n, site.partners or (None,) * n
        for (op, dom, _), then, other in zip(site.consumers, thens, partners, strict=False):
            if dom not in ("", "ai.onnx") or op not in FUSED:
                continue
            if not (other in INT8S or nodes.is_float8(other)):
                continue  # fused only with an 8-bit DQ weight (measured: 1.19 runs int4 weights unfused)
            if op == "Conv" and float8 and "QuantizeLinear" not in then:
                continue  # measured: a float8 Conv without a QuantizeLinear after it is left alone
            fused = FUSED[op]
            version = self.table.schema_version("", fused, f.opset)
            if version is None:
                continue
            kernel = self.table.kernel("", fused, f.opset)
            if kernel is None:
                why = f"onnxruntime {self.table.version} has no kernel for {fused}-{version}"
            elif float8 and not kernel.accepts({"T1": t}):
                why = f"no {fused}-{version} kernel takes {t}: the graph is invalid at load"
            else:
                continue
            return self.finding(
                "QT201" if kernel is None else "QT202",
                f"the DequantizeLinear -> {op} it feeds is fused into {fused}-{version} when the model "
                f"loads (default session options), and {why}",
                convertible=kernel is None,
                fix="or load with graph_optimization_level below ORT_ENABLE_EXTENDED",
            )
        return None

    def float16_in_float32(self, op, domain, opset, f=None):
        """A float16 node runs in float32 between inserted Casts where no CPU kernel takes
        float16 (``f``: its kernel match for the node's types needs the float16 fallback,
        ort_table.Match.float16_cast; else: the op has a kernel and none of its registrations
        takes float16), read from the release's kernel registry. Whether the release then drops
        the Cast pair between two such nodes is its float16-casts probe's (QT409,
        ``keeps_float32_between``)."""
        if opset is None:
            return False
        if f is not None:
            version = self.table.schema_version(domain, op, opset)
            signature = None if version is None else self.table.signature(domain, op, version)
            match = self.table.match(domain, op, opset, _bound_types(f, signature))
            return match is not None and match.float16_cast
        kernel = self.table.kernel(domain, op, opset)
        return kernel is not None and not any("float16" in types for types in kernel.constraints.values())

    @property
    def probes_arithmetic(self) -> bool:
        return self.probes is not None

    def arithmetic(self, what, site):
        return probe_table.arithmetic(self.probes, what, site)


    def runs_lowered(self, quant_type, opset):
        """Cast from float to the quantized type and back has a CPU kernel at that opset."""
        cast = self.table.kernel("", "Cast", opset)
        if cast is None or quant_type is None:
            return False
        return cast.accepts({"T1": "float", "T2": quant_type}) and cast.accepts(
            {"T1": quant_type, "T2": "float"}
        )

    def _linear(self, site: NodeSite):
        misfit = list(base.coded(self, ("QT309",), site))
        if misfit:
            yield from misfit
            return
        f = site.facts
        xt, st = nodes.x_type(f), nodes.scale_type(f)
        if nodes.kind(f) == nodes.QUANTIZE:
            if f.domain == schema.AI_ONNX and f.spec.since >= 23 and xt and st and xt != st:
                yield self.finding(
                    "QT203",
                    f"x is {xt} and y_scale {st}: the model loads, then the first run fails with "
                    f"'Tensor type mismatch' (the kernel reads the scale as x's type)",
                    fix=f"store y_scale as {xt}",
                )
                return
            yield from base.coded(self, base.arithmetic_codes(), site)
        yield from base.coded(self, ("QT404",), site)


def _bound_types(f, signature) -> dict[str, str]:
    """The node's known types under the kernel's constraint names."""
    if signature is None:
        return {}
    ins = [t if f.present_at(i) else None for i, t in enumerate(f.resolved_types)]
    outs = list(f.out_types)
    if nodes.is_linear(f):
        outs = [nodes.out_type(f)] + outs[1:]
    return signature.bind(ins, outs)


def _ir_of_types(info: ModelInfo) -> int:
    need = ir.OLDEST_IR
    for t in set(info.initializer_types) | {t for t in info.graph_input_types if t}:
        need = max(need, ir.TYPE_MIN_IR.get(t, ir.OLDEST_IR))
    return need


TARGET = OnnxRuntimeCpu()
TARGETS = (TARGET,)  # what targets/registry.py registers when it imports this module
