"""Deployment targets: what a runtime accepts and computes, as a profile with sources.

A ``Target`` is one runtime (or one runtime version range): its limits (the newest
ai.onnx opset and IR version it loads), the domains of the Q/DQ ops it runs, the
facts it holds and where each fact comes from (``Source``: a measurement and the
test that repeats it, a documentation page, or a source file of the runtime), and
two checks:

* ``model_findings(info)`` reads the model as a whole (``ModelInfo``: IR version,
  opset imports, the domains its nodes use);
* ``node_findings(site)`` reads one node (``NodeSite``: the node's
  ``model.facts.NodeFacts`` plus where it sits: does it read a graph input, write a
  graph output, which Q feeds it).

Both yield ``TargetFinding``s: a code of the QT family (``codes.py``), the severity
of that code, and a message that names the fact and the way out: ``qlin convert
--target NAME`` where a conversion fixes it (``convertible``), else what to change.

Severities: an *error* means the runtime refuses the model (load, compile or first
run fails); a *warning* means it runs the node but computes something else than the
spec says (a semantic divergence); *info* is a fact worth knowing that changes no
result.

Targets register themselves by name (``register``); ``get("onnxruntime")`` and
``get("onnxruntime@1.31.1")`` find one, ``names()`` lists them. A target module
imports no runtime: profiles are data, checked against the installed runtimes by
tests/test_targets_*.py.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, fields
from functools import cached_property
from operator import attrgetter
from typing import TYPE_CHECKING

from ..severity import ERROR, INFO, SEVERITIES, WARNING
from .codes import get as code_of
from .codes import severity as severity_of
from .records import Record, replace

if TYPE_CHECKING:
    from .probe_table import Outcome

# How a fact is known.
MEASURED = "measured"  # measured here with the runtime installed; ``where`` names the test
DOCUMENTED = "documented"  # stated by the vendor's documentation; ``where`` is the page
SOURCE = "source"  # read in the runtime's source code; ``where`` is repository, file and commit
GENERATED = "generated"  # generated from the installed runtime; ``where`` is the command
KINDS = (MEASURED, DOCUMENTED, SOURCE, GENERATED)


class Source(Record):
    """One fact of a profile and where it comes from."""
    __slots__ = ("fact", "kind", "where", "note")
    _defaults = ("",)

    fact: str
    kind: str  # one of KINDS
    where: str
    note: str  # e.g. "documented, not measured here"

    def to_json(self) -> dict:
        out = {"fact": self.fact, "kind": self.kind, "where": self.where}
        if self.note:
            out["note"] = self.note
        return out


class TargetFinding(Record):
    """One reason a target refuses a model or computes something else.

    ``convertible``: ``qlin convert --target NAME`` can remove it (the message says so).
    ``message`` is "LABEL: FACT: WAY OUT", composed from the fields: ``label`` names who says
    it (the target and the release it judged, "onnxruntime 1.31.1"; the target's name where
    it has no measured release), ``fact`` what is wrong, ``way`` the way out (``fix``, after
    the conversion that removes it where there is one).
    """
    __slots__ = ("code", "severity", "fact", "convertible", "target", "fix", "label", "way")
    _defaults = (False, "", None, "", "")

    code: str
    severity: str
    fact: str
    convertible: bool
    target: str
    fix: str | None
    label: str
    way: str

    @property
    def message(self) -> str:
        return f"{self.label or self.target}: {self.fact}" + (f": {self.way}" if self.way else "")

    def noted(self, note: str) -> TargetFinding:
        """The same finding with ``note`` after its fact ("... (onnxruntime 1.19 and newer run it)")."""
        return replace(self, fact=f"{self.fact} ({note})")

    def relabelled(self, target: str, label: str) -> TargetFinding:
        """The same finding under another target name, said by ``label``."""
        return replace(self, target=target, label=label)

    def without_conversion(self) -> TargetFinding:
        """The same finding when no conversion makes the model run on the target."""
        return replace(self, convertible=False,
                       way=self.fix or f"no conversion makes the model run on {self.target}")


class ModelInfo(Record):
    """What the model-level checks read: nothing is loaded beyond the model proto."""
    __slots__ = ("ir_version", "opsets", "node_domains", "functions", "graph_input_types",
                 "initializer_types", "float_ops")
    _defaults = ((), frozenset(), ())

    ir_version: int
    opsets: Mapping[str, int]  # the model's opset imports, domains normalized ("" is ai.onnx)
    node_domains: frozenset[str]  # normalized domains of every node outside model-local function calls
    functions: frozenset[tuple[str, str]]  # (normalized domain, name) of model-local functions
    graph_input_types: tuple[str | None, ...]  # element types of the main graph's inputs
    initializer_types: frozenset[str]  # element types stored in initializers
    # (probe key, op type, node label) of the float ops a probe describes
    # (probe_keys.float_key), the first node of each key
    float_ops: tuple[tuple[str, str, str], ...]

    @property
    def ai_onnx_opset(self) -> int | None:
        return self.opsets.get("")


# Not frozen (a frozen dataclass sets each field through object.__setattr__, a sixth of
# `check --target` on large models); a site is never changed after predict builds it
# (dataclasses.replace makes a new one), and it hashes its fields as a frozen class would.
# Its __init__, __repr__, __eq__ and __hash__ are written out below, as @dataclass(unsafe_hash=True)
# generates them (tests/test_target_records.py holds them to it): generating and compiling
# them took about 0.8 ms of every `qlin check --target`; the decorator, told to make none,
# still gives the fields dataclasses.replace and dataclasses.fields read.
@dataclass(init=False, repr=False, eq=False)
class NodeSite:
    """One node as the node-level checks see it."""

    facts: object  # model.facts.NodeFacts
    in_main_graph: bool = True
    x_is_graph_input: bool = False  # input 0 is an input of the main graph
    x_is_constant: bool = False  # a DequantizeLinear's input 0 is an initializer or a Constant's (weights)
    y_is_graph_output: bool = False  # output 0 is an output of the main graph
    producer: object | None = None  # the NodeFacts of a linear quantize feeding input 0 (same body)
    producer_site: NodeSite | None = None  # the producer's own site
    scale_is_graph_input: bool = False  # the scale is fed at run time (not a constant)
    consumers: tuple[tuple[str, str, int], ...] = ()  # (op type, domain, input index) reading output 0
    # per consumer above, the op types reading that consumer's output 0 (fusion patterns; a
    # DequantizeLinear's only)
    then: tuple[tuple[str, ...], ...] = ()
    x_from: tuple[str, str] | None = None  # (op type, domain) of the node making input 0 (same body)
    opsets: tuple[tuple[str, int], ...] = ()  # (domain, version) the node's body imports
    # per consumer above, the axis of output 0 that consumer sums over (a MatMul's or Gemm's
    # reduction axis), or None
    reduced: tuple[int | None, ...] = ()
    # per consumer above, the quantized type of the DequantizeLinear making that consumer's
    # other operand (input 1 when output 0 is its input 0, else input 0), or None
    partners: tuple[str | None, ...] = ()
    # the key of the QDQ group whose op the node is (targets/fusion.py), None for any other node
    group: str | None = None
    # a Conv / MatMul / Gemm whose weight is a quantized constant made float without a
    # DequantizeLinear: what makes it (targets/weights.py, QT502), else None
    weight_cast: str | None = None

    def __init__(self, facts, in_main_graph=True, x_is_graph_input=False, x_is_constant=False,
                 y_is_graph_output=False, producer=None, producer_site=None, scale_is_graph_input=False,
                 consumers=(), then=(), x_from=None, opsets=(), reduced=(), partners=(), group=None,
                 weight_cast=None):
        self.facts = facts
        self.in_main_graph = in_main_graph
        self.x_is_graph_input = x_is_graph_input
        self.x_is_constant = x_is_constant
        self.y_is_graph_output = y_is_graph_output
        self.producer = producer
        self.producer_site = producer_site
        self.scale_is_graph_input = scale_is_graph_input
        self.consumers = consumers
        self.then = then
        self.x_from = x_from
        self.opsets = opsets
        self.reduced = reduced
        self.partners = partners
        self.group = group
        self.weight_cast = weight_cast

    def _fields(self) -> tuple:
        return _site_values(self)

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return self._fields() == other._fields()
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        pairs = zip(_SITE_FIELDS, self._fields(), strict=True)
        shown = ", ".join(f"{name}={value!r}" for name, value in pairs)
        return f"{type(self).__qualname__}({shown})"

    # The probe keys of the node, worked out once whichever target and code asks.
    @cached_property
    def node_key(self) -> str | None:
        """``probe_keys.node_key`` of the facts."""
        from . import probe_keys

        return probe_keys.node_key(self.facts)

    def arithmetic_key(self, what: str) -> str | None:
        """The key of the node's probe of ``what``: one of probe_keys.QUANTIZE_PROBES for a
        QuantizeLinear (``quantize_key_of``), DEQUANTIZE for a DequantizeLinear, PAIR for a
        DequantizeLinear after a QuantizeLinear, MISSING_AXIS for a vendor Q/DQ, FLOAT16_CASTS
        for a vendor Q/DQ of float16."""
        from .. import schema
        from . import nodes, probe_keys

        f = self.facts
        if what == probe_keys.DEQUANTIZE:
            return probe_keys.dequantize_key(f, self.x_is_constant)
        if what == probe_keys.PAIR:
            p = self.producer if nodes.kind(f) == nodes.DEQUANTIZE else None
            blocked = p is not None and p.granularity == schema.BLOCKED
            return None if p is None else probe_keys.pair_arithmetic_key(nodes.quant_type(p), blocked)
        if what == probe_keys.FLOAT16_CASTS:
            return probe_keys.float16_casts_key(f)
        if what == probe_keys.MISSING_AXIS:
            return probe_keys.missing_axis_key(f)
        parts = self.__dict__.get("_quantize_parts", False)  # the same for each of the five
        if parts is False:
            parts = self.__dict__["_quantize_parts"] = probe_keys.quantize_parts(f)
        return probe_keys.quantize_key_of(what, parts)


_SITE_FIELDS = tuple(f.name for f in fields(NodeSite))  # (the annotations above, in order)
_site_values = attrgetter(*_SITE_FIELDS)  # a site's fields' values, as a tuple


class Float8Quantize(Record):
    """How a target's QuantizeLinear converts to float8 otherwise than the spec (QT403)."""
    __slots__ = ("types", "saturate_0_only", "what", "fix", "said")
    _defaults = (None,)

    types: tuple[str, ...]  # the float8 output types it concerns
    saturate_0_only: bool  # only nodes with saturate=0
    what: str  # what happens instead ("{q}": the node's type)
    fix: str
    # what a release's float8 probe says where ``what`` describes it (a release whose probe
    # says something else is reported in its probe's words); None: ``what`` is documented,
    # not measured (a target without probes)
    said: str | None


class BlockedScale(Record):
    """How a target fails a blocked node whose scale is not x's shape with ceil(Di /
    block_size) along the axis (QT309)."""
    __slots__ = ("broadcast", "what")

    broadcast: bool  # a scale dimension of 1 off the axis is read as repeated
    what: str  # what happens ("the conversion of the node fails")


class PairStripping(Record):
    """How a target treats a Q -> DQ pair of some quantized types (QT308, QT408): it removes
    the pair and its reader sees the unquantized value, or it fails to compile the model."""
    __slots__ = ("types", "removed")

    # the quantized types of the pairs it may remove (whether a release does: its pair probe
    # of the type, "removes the pair")
    types: tuple[str, ...]
    removed: str  # what happens to a pair the release's pair probe finds removed


def arithmetic_codes() -> tuple[str, ...]:
    """The codes judging a QuantizeLinear's arithmetic (``Code.judges``): what a target
    that probes it runs on each QuantizeLinear, each code deciding from the release's facts."""
    from . import codes

    return codes.judging(codes.QUANTIZE_ARITHMETIC)


def coded(target: Target, codes: Iterable[str], site: NodeSite) -> Iterator[TargetFinding]:
    """The findings of the codes whose modules hold their logic (``Code.check``), in order. A
    code whose need (``NEEDS``) the site lacks finds nothing there: its module is not imported."""
    for code in codes:
        need = NEEDS.get(code)
        if need is None or need(target, site):
            yield from code_of(code).check(target, site)


def _dequantize(site: NodeSite) -> bool:
    from . import nodes

    return nodes.kind(site.facts) == nodes.DEQUANTIZE


def _blocked(site: NodeSite) -> bool:
    from .. import schema

    return site.facts.granularity == schema.BLOCKED


def _microsoft(site: NodeSite) -> bool:
    from .. import schema

    return site.facts.domain == schema.MICROSOFT


def _quant_type(site: NodeSite) -> str | None:
    from . import nodes

    return nodes.quant_type(site.facts)


def _float8_quantize(target: Target, site: NodeSite) -> bool:
    """A float8 QuantizeLinear of a target that converts to float8 otherwise (QT403)."""
    from . import nodes

    f = site.facts
    return (target.float8_quantize is not None and nodes.kind(f) == nodes.QUANTIZE
            and nodes.is_float8(nodes.quant_type(f)))


def _pair_fate(fate: str) -> Callable[[Target, NodeSite], bool]:
    """Whether the target does ``fate`` with the Q -> DQ pair ending at the site (pairs.py:
    "fails" QT308, "removed" QT408)."""
    def need(target: Target, site: NodeSite) -> bool:
        if target.pair_stripping is None or site.producer is None:
            return False
        from . import pairs

        return pairs.pair_fate(target, site) == fate
    return need


def _negative_scale_differs(target: Target, site: NodeSite) -> bool:
    """A negative scale of a target whose release quantizes with one otherwise (QT407)."""
    from . import nodes

    found = target.arithmetic("negative scale", site)
    return found is not None and found.differs is not None and bool(nodes.negative_scale(site.facts))


def _rounds_toward_zero(target: Target, site: NodeSite) -> bool:
    """Whether the target rounds the site's quotient toward zero (QT411)."""
    from . import probe_keys

    return target.rounding(site) == probe_keys.TOWARD_ZERO


def _zero_point_added_first(target: Target, site: NodeSite) -> bool:
    """A zero point that may be odd, which the target adds before it rounds (QT405)."""
    from . import nodes, probe_keys

    return target.rounding(site) == probe_keys.ADDED_FIRST and nodes.odd_zero_point(site.facts) is not False


def _runs_in_float(target: Target, site: NodeSite) -> bool:
    """A QDQ group's op the release's measured fusion leaves in float (QT501)."""
    from . import fusion

    table = getattr(target, "fusion_table", None)
    return site.group is not None and table is not None and table.outcome(site.group) == fusion.FLOAT


# What each of these codes' ``check`` needs of a site before it can find anything there,
# asked without importing the code's module: the first test of its check, or one its tests
# imply. A check naming a target imported 10 of these modules for a one-node model (about
# 0.47 M instructions each) where none found anything. tests/test_targets_code_needs.py holds
# each: wherever it says no, the module's check finds nothing (every site of the fixtures and
# of the target matrix, for every target).
NEEDS: dict[str, Callable[[Target, NodeSite], bool]] = {
    "QT207": lambda t, s: (t.probe_data is not None and s.node_key is not None
                           and t.probe_data.exact(s.node_key) is None),
    "QT308": _pair_fate("fails"),
    "QT309": lambda t, s: t.blocked_scale is not None and _blocked(s),
    "QT401": lambda t, s: t.division(s) is not None,
    "QT402": lambda t, s: t.division(s) is not None,
    "QT403": _float8_quantize,
    "QT404": lambda t, s: _microsoft(s),
    "QT405": _zero_point_added_first,
    "QT406": lambda t, s: _dequantize(s),
    "QT407": _negative_scale_differs,
    "QT408": _pair_fate("removed"),
    "QT409": lambda t, s: t.keeps_float32_between(s),
    "QT410": lambda t, s: _out_type(s) in t.unreadable_types,
    "QT411": _rounds_toward_zero,
    "QT412": lambda t, s: _quant_type(s) in ("int16", "uint16"),
    "QT501": _runs_in_float,
}


def _out_type(site: NodeSite) -> str | None:
    from . import nodes

    return nodes.out_type(site.facts)


class Target:
    """A deployment target. Subclasses set the class attributes and the two checks."""

    name: str = ""  # "onnxruntime"
    title: str = ""  # "onnxruntime, CPU execution provider"
    versions: tuple[str, ...] = ()  # the runtime versions the profile describes
    aliases: tuple[str, ...] = ()  # other names that find it ("onnxruntime@1.31.1")
    max_opset: int | None = None  # newest ai.onnx opset it loads (None: no limit known)
    min_opset: int | None = None  # oldest ai.onnx opset it supports (None: no limit known)
    max_ir: int | None = None  # newest IR version it loads (None: no limit known)
    qdq_domains: tuple[str, ...] = ("",)  # domains whose Q/DQ ops it runs ("" is ai.onnx)
    quantized_types: tuple[str, ...] = ()  # types its quantize produces / dequantize reads
    float_types: tuple[str, ...] = ()  # types of x (quantize), scales, dequantize outputs
    granularities: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    sources: tuple[Source, ...] = ()
    measured: bool = False  # the profile is held against the runtime by the test suite
    # What its QuantizeLinear computes otherwise than the spec, as data the QT4xx code modules
    # read (targets/codes/): how it converts to float8 (QT403), None as the spec says; how it
    # divides is ``division`` (QT401, QT402).
    float8_quantize: Float8Quantize | None = None
    # how its kernels read a blocked scale whose shape is not the page's (QT309); None: no
    # such check known
    blocked_scale: BlockedScale | None = None
    pair_stripping: PairStripping | None = None  # QT308, QT408; None: pairs run as written
    # element types it has no tensor type for (QT204, QT410)
    unreadable_types: frozenset[str] = frozenset()
    # QT409: why a float16 value next to the node ({ops}) stays float32, and the way out;
    # read where ``float16_in_float32`` says so
    float16_why: str = ""
    float16_fix: str = ""

    # ---- the checks ------------------------------------------------------------------
    def model_findings(self, info: ModelInfo) -> Iterable[TargetFinding]:
        return ()

    def node_findings(self, site: NodeSite) -> Iterable[TargetFinding]:
        return ()

    def findings_for(self, site: NodeSite) -> list[TargetFinding]:
        """The node's findings. A node whose domain its scope does not import gets none:
        the spec rules report that (QL103), and no target can run it either way."""
        if site.facts.opset is None:
            return []
        return list(self.node_findings(site))

    def errors_for(self, site: NodeSite) -> list[TargetFinding]:
        """The node's error findings, as ``findings_for`` gives them or without the notes
        that cost more to work out than the errors themselves (a measured release's "... 1.19
        and newer run it"): what a conversion plan weighs its candidates by."""
        return [x for x in self.findings_for(site) if x.severity == "error"]

    def model_errors(self, info: ModelInfo) -> list[TargetFinding]:
        """``model_findings``' errors, as ``errors_for`` gives a node's."""
        return [x for x in self.model_findings(info) if x.severity == "error"]

    probes_arithmetic = False  # ``arithmetic`` answers from the release's probes
    # the release's probe outcomes (probe_table.ProbeTable) where the target is a measured
    # release: QT207 says where a node's kind is not among them
    probe_data = None

    def arithmetic(self, what: str, site: NodeSite) -> Outcome | None:
        """What this target's QuantizeLinear (``site``) computes, as the probes of ``what``
        (probe_keys.QUANTIZE_PROBES: "division", "rounding", "negative scale", "float8 <type>
        saturate=<0|1>") measured it in the release (probe_table.arithmetic); None where
        nothing is measured. Read by QT401, QT402, QT403, QT407, and through ``rounding`` by
        QT405 and QT411; ``what`` may also be probe_keys.DEQUANTIZE, PAIR (QT406), MISSING_AXIS
        (QT404) or FLOAT16_CASTS (QT409)."""
        return None

    def division(self, site: NodeSite) -> str | None:
        """The type this target divides a QuantizeLinear's x by its scale in where that is
        not the page's type (precision's, else the scale's); None when it follows the page or
        nothing is known (QT401, QT402)."""
        found = self.arithmetic("division", site)
        return None if found is None else found.divided_in

    def rounding(self, site: NodeSite) -> str | None:
        """What this target does instead of the page's rounding of x / scale for an integer
        QuantizeLinear (``site``), as the release's rounding probes name it
        (probe_keys.ADDED_FIRST: QT405, probe_keys.TOWARD_ZERO: QT411); None when it rounds as
        the page, the output is not an integer or nothing is measured."""
        from . import nodes

        found = self.arithmetic("rounding", site)
        if found is None or not nodes.is_integer(nodes.quant_type(site.facts)):
            return None
        return found.differs

    def missing_axis(self, site: NodeSite) -> int | None:
        """The axis it reads a com.microsoft Q/DQ along when `axis` is absent and the scale is
        1-D (QT404; the page asks for a scalar then): 1 where the release's missing-axis
        probe says so; None where nothing is measured."""
        from . import probe_keys

        found = self.arithmetic(probe_keys.MISSING_AXIS, site)
        return 1 if found is not None and found.differs == probe_keys.ALONG_AXIS_1 else None

    def ran_exactly(self, site: NodeSite) -> bool:
        """Whether the release ran every probe of exactly this node's kind (QT410); False
        where nothing is measured."""
        return False

    def pair_failure(self, quant_type: str, after: str | None = None) -> str | None:
        """The runtime's error where the release's probe of a Q -> DQ pair of that type ending
        at a graph output failed: the pair from a graph input (``after`` None) or after the
        ai.onnx op ``after`` (probe_keys.PAIR_AFTER_OPS; QT308); None where it ran or nothing
        is measured."""
        return None

    def float16_in_float32(self, op: str, domain: str, opset: int | None, f=None) -> bool:
        """Whether it computes a float16 node of ``op`` (in ``domain`` at ``opset``) in
        float32 between inserted casts (QT409): ``f``, the node's facts, where its types are
        known; False where nothing is known."""
        return False

    def keeps_float32_between(self, site: NodeSite) -> bool:
        """Whether it drops the casts between two float16 nodes it runs in float32, so the
        value between them stays float32 (QT409): where the release's float16-casts probe
        says so; False where nothing is measured."""
        from . import probe_keys

        found = self.arithmetic(probe_keys.FLOAT16_CASTS, site)
        return found is not None and found.differs == probe_keys.KEEPS_FLOAT32

    def runs_lowered(self, quant_type: str | None, opset: int) -> bool:
        """Whether the primitive ops of ``qlin convert --lower`` run here for a node of that
        quantized type at that ai.onnx opset (Cast to and from the type; float
        arithmetic). False unless the target says so: lowering is then never planned."""
        return False

    # ---- helpers for subclasses ----------------------------------------------------
    def finding(
        self, code: str, fact: str, *, fix: str | None = None, convertible: bool = False
    ) -> TargetFinding:
        """A finding of ``code``: the fact, then the way out (``qlin convert --target``
        first when a conversion fixes it, then ``fix`` if given)."""
        ways = []
        if convertible:
            ways.append(f"run `qlin convert --target {self.name}`")
        if fix:
            ways.append(fix)
        return TargetFinding(code, severity_of(code), fact, convertible, self.name, fix,
                             label=self.label, way="; ".join(ways))

    @property
    def label(self) -> str:
        """Who a finding's message says it: the target and the release it judged ("openvino
        2026.4.1", the plain name included), or the name of a target of no measured release."""
        table = getattr(self, "table", None)
        runtime = getattr(self, "runtime", "") or self.name.split("@")[0]
        return f"{runtime} {table.version}" if table is not None else self.name

    # ---- description -----------------------------------------------------------------
    def capability(self) -> dict:
        """One row of the capability matrix (JSON-serialisable)."""
        return {
            "name": self.name,
            "title": self.title,
            "versions": list(self.versions),
            "min_opset": self.min_opset,
            "max_opset": self.max_opset,
            "max_ir": self.max_ir,
            "domains": [_domain_name(d) for d in self.qdq_domains],
            "quantized_types": list(self.quantized_types),
            "float_types": list(self.float_types),
            "granularities": list(self.granularities),
            "measured": self.measured,
            "notes": list(self.notes),
            "sources": [s.to_json() for s in self.sources],
        }


def _domain_name(domain: str) -> str:
    return domain or "ai.onnx"


__all__ = [
    "DOCUMENTED",
    "ERROR",
    "GENERATED",
    "INFO",
    "KINDS",
    "MEASURED",
    "SEVERITIES",
    "SOURCE",
    "WARNING",
    "BlockedScale",
    "Float8Quantize",
    "ModelInfo",
    "NodeSite",
    "Source",
    "Target",
    "TargetFinding",
    "coded",
]
