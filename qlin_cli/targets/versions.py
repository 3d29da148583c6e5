"""Targets at the runtime versions people run: `onnxruntime@1.20` (a minor version: its
newest measured patch; a full version is accepted), `onnxruntime>=1.18` (every measured
version from 1.18 on: a model runs only if it runs on each, and each finding names the oldest
version it concerns), plain `onnxruntime` (the version installed beside qlin, else the
newest measured; ort_table.default_version).

Each version's facts are its own data (its kernel registry and the opset and IR it loads, in
qlin_cli/targets/data/onnxruntime_kernels.json.gz; its probe outcomes in <runtime>_probes.json.gz),
made by tools/gen_target_data.py from that release installed in a throwaway venv. A version
newer than the data is judged as the newest known, and says so (QT100)."""

from __future__ import annotations

import functools
import re
from bisect import bisect_left

from .. import schema
from ..schema import dtypes
from . import onnxruntime as ort_profile
from . import openvino as ov_profile
from . import ort_table, probe_keys, probe_table, releases
from .base import NodeSite, Target, TargetFinding

RUNTIMES = ("onnxruntime", "openvino")
_SPEC = re.compile(r"^(?P<runtime>[a-z]+)\s*(?P<op>@|>=)\s*(?P<version>\d+(?:\.\d+){1,2})$")
# a runtime and a PEP 440 version specifier set, as pip reads one ("onnxruntime>=1.18,<1.21",
# "openvino~=2025.3", "onnxruntime==1.20.*"): release numbers only (every measured release is one)
_NAMED = re.compile(r"^(?P<runtime>[a-z]+)\s*(?P<spec>(?:==|!=|<=|>=|~=|<|>).*)$")
_CLAUSE = re.compile(r"^(?P<op>==|!=|<=|>=|~=|<|>)\s*(?P<version>\d+(?:\.\d+)*)(?P<star>\.\*)?$")


def known(runtime: str = "onnxruntime") -> list[str]:
    """The measured versions, oldest first: one per minor version (its newest patch)."""
    return list(_known(runtime))


@functools.cache
def _known(runtime: str) -> tuple[str, ...]:
    newest: dict[str, str] = {}
    for v in releases.measured(runtime):
        newest[releases.minor(v)] = v
    return tuple(sorted(newest.values(), key=releases.key))


def resolve(name: str) -> Target | None:
    """The target a versioned name means, or None when the name is not of that form; a
    LookupError (saying why, with the measured releases) for a version or specifier no
    measured release answers."""
    text = name.strip().lower()
    m = _SPEC.match(text)
    if m is not None and m["runtime"] in RUNTIMES:
        if m["op"] == ">=":
            return _range(m["runtime"], m["version"])
        return _single(m["runtime"], m["version"])
    m = _NAMED.match(text)
    if m is None or m["runtime"] not in RUNTIMES:
        return None
    return _specified(m["runtime"], re.sub(r"\s+", "", m["spec"]))


def specifier(text: str) -> list[tuple[str, tuple[int, ...], bool]]:
    """The clauses of a PEP 440 specifier set of release numbers ("">=1.18,<1.21"): (operator,
    release, wildcard) each; ValueError for what is not one."""
    clauses = []
    for part in text.split(","):
        m = _CLAUSE.match(part.strip())
        if m is None:
            raise ValueError(f"{part.strip()!r} is not a version clause (==, !=, <, <=, >, >=, ~= and a "
                             "release number; == and != take a trailing .*)")
        op, release, star = m["op"], tuple(int(x) for x in m["version"].split(".")), bool(m["star"])
        if star and op not in ("==", "!="):
            raise ValueError(f"{part.strip()!r}: only == and != take a trailing .*")
        if op == "~=" and len(release) < 2:
            raise ValueError(f"{part.strip()!r}: ~= needs a release of two parts or more")
        clauses.append((op, release, star))
    return clauses


def matches(clauses, version: str) -> bool:
    """Whether a release number satisfies every clause, as PEP 440 reads them for final
    releases: numbers compared with zero padding (1.20 == 1.20.0), ``==X.*`` a prefix,
    ``~=X.Y`` ">= X.Y and == X.*" (tests/test_targets_specifiers.py holds this to the
    `packaging` library over every measured release)."""
    v = tuple(int(x) for x in re.findall(r"\d+", version))

    def padded(a, b):
        n = max(len(a), len(b))
        return a + (0,) * (n - len(a)), b + (0,) * (n - len(b))

    for op, release, star in clauses:
        if star:
            ok = padded(v, release)[0][:len(release)] == release  # 1.20 is 1.20.0: in 1.20.0.*
            ok = ok if op == "==" else not ok
        elif op == "~=":
            a, b = padded(v, release)
            ok = a >= b and v[:len(release) - 1] == release[:-1]
        else:
            a, b = padded(v, release)
            ok = {"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]
        if not ok:
            return False
    return True


@functools.cache
def _specified(runtime: str, spec: str) -> Target:
    """The measured releases a specifier set admits (the newest patch of each minor version):
    one is that release's target, several a range of them; none is a LookupError naming the
    measured releases. One exact ``==`` version of a measured minor version is judged as
    ``@`` judges it (by that minor's measured patch)."""
    try:
        clauses = specifier(spec)
    except ValueError as e:
        raise LookupError(f"{runtime}{spec}: {e}") from None
    newest: dict[str, str] = {}
    for v in releases.measured(runtime):
        if matches(clauses, v):
            newest[releases.minor(v)] = v
    members = sorted(newest.values(), key=releases.key)
    if not members and len(clauses) == 1 and clauses[0][0] == "==" and not clauses[0][2]:
        return _single(runtime, ".".join(map(str, clauses[0][1])))
    if not members:
        have = known(runtime)
        raise LookupError(f"no measured {runtime} release matches {spec} "
                          f"(measured: {', '.join(have)})")
    if len(members) == 1:
        return _single(runtime, members[0])
    return VersionRange(f"{runtime}{spec}", [_single(runtime, releases.minor(v)) for v in members])


def _measured(runtime: str, version: str) -> tuple[str, bool]:
    """(the measured version that judges ``version``, whether it is newer than the data)."""
    have = known(runtime)
    if version in releases.measured(runtime):
        return version, False
    same = [v for v in have if releases.minor(v) == releases.minor(version)]
    if same:
        return same[-1], False
    if releases.key(version) > releases.key(have[-1]):
        return have[-1], True
    raise LookupError(f"{runtime} {version} was not measured (measured: {', '.join(have)})")


@functools.cache
def _single(runtime: str, version: str) -> Target:
    measured, newer = _measured(runtime, version)
    name, asked = f"{runtime}@{version}", version if newer else None
    if runtime == "onnxruntime":
        return VersionedOnnxRuntime(ort_table.load(measured), name, newer=asked)
    return VersionedOpenVino(probe_table.load(runtime, measured), name, newer=asked)


@functools.cache
def _range(runtime: str, oldest: str) -> Target:
    first = releases.key(_measured(runtime, oldest)[0])
    members = [v for v in known(runtime) if releases.key(v) >= first]
    return VersionRange(f"{runtime}>={oldest}", [_single(runtime, releases.minor(v)) for v in members])


class _Versioned:
    """A runtime at one measured version: warns when the version asked is newer than the
    data (QT100), and each error names the first newer measured version that has no
    such finding ("... onnxruntime 1.19 and newer run it")."""

    runtime = ""

    def model_findings(self, info):
        if self.asked is not None:
            yield self.finding("QT100", f"{self.runtime} {self.asked} is newer than the versions qlin "
                                        f"measured: judged as {self.table.version}",
                               fix=f"measure it: make target-data RUNTIME={self.runtime} "
                                   f"VERSION={self.asked}")
        for f in self._own_model_findings(info):
            yield self._with_fix_version(f, lambda t: t._own_model_findings(info))

    def node_findings(self, site: NodeSite):
        for f in self._own_node_findings(site):
            yield self._with_fix_version(f, lambda t: t._own_node_findings(site))

    def errors_for(self, site: NodeSite) -> list[TargetFinding]:
        """The node's errors without the newer releases that run it (each newer release's
        checks asked again: a plan tries thousands of candidate sites, and names the
        releases only for the candidate it reports, predict.plan_in)."""
        if site.facts.opset is None:
            return []
        return [x for x in self._own_node_findings(site) if x.severity == "error"]

    def model_errors(self, info) -> list[TargetFinding]:
        return [x for x in self._own_model_findings(info) if x.severity == "error"]

    def _own_model_findings(self, info):
        """The profile's checks of this release, without this wrapper's notes."""
        return super().model_findings(info)

    def _own_node_findings(self, site: NodeSite):
        return super().node_findings(site)

    def _with_fix_version(self, found: TargetFinding, again) -> TargetFinding:
        """``found`` noted with the first newer release whose own checks (``again``: the
        profile's, not this wrapper's, so each release is asked once) have no such code,
        and the last of the run of releases from it that have none, when a newer one has it
        again (openvino 2025.3 to 2026.3 load a QuantizeLinear to float8e4m3fnuz that 2026.4
        refuses)."""
        if found.severity != "error":
            return found
        first = last = None
        for v in _newer(self.runtime, self.table.version):
            clear = not any(x.code == found.code for x in again(_single(self.runtime, v)))
            if clear:
                first, last = first or v, v
            elif first is not None:
                span = releases.minor(first) + (f" to {releases.minor(last)}" if last != first else "")
                return found.noted(f"{self.runtime} {span} run it")
        return found.noted(f"{self.runtime} {releases.minor(first)} and newer run it") if first else found


@functools.cache
def _newer(runtime: str, version: str) -> tuple[str, ...]:
    """The known versions of ``runtime`` after ``version``, oldest first."""
    return tuple(v for v in known(runtime) if releases.key(v) > releases.key(version))


class VersionedOnnxRuntime(_Versioned, ort_profile.OnnxRuntimeCpu):
    runtime = "onnxruntime"

    def __init__(self, table, name: str, newer: str | None = None):
        super().__init__(table, name, aliases=())
        self.asked = newer  # a version newer than the data, judged as this one


class VersionedOpenVino(_Versioned, ov_profile.OpenVinoCpu):
    runtime = "openvino"

    def __init__(self, table, name: str, newer: str | None = None):
        super().__init__(table, name, aliases=())
        self.asked = newer


class VersionRange(Target):
    """A model runs only if it runs on every version of the range; a finding is reported
    once, naming the oldest version it concerns and how many of the range share it."""

    def __init__(self, name: str, members: list[Target]):
        self.name = name
        self.members = members
        self.runtime = members[0].runtime
        self.title = f"{members[0].title}, a range of versions"
        self.versions = tuple(m.table.version for m in members)
        self.max_opset = _lowest(m.max_opset for m in members)
        self.max_ir = _lowest(m.max_ir for m in members)
        self.qdq_domains = members[0].qdq_domains

    def model_findings(self, info):
        return self._merged(lambda t: t.model_findings(info))

    def node_findings(self, site: NodeSite):
        return self._merged(lambda t: t.findings_for(site))

    def runs_lowered(self, quant_type, opset):
        return all(m.runs_lowered(quant_type, opset) for m in self.members)

    def _merged(self, each) -> list[TargetFinding]:
        seen: dict[tuple, tuple[TargetFinding, list[str]]] = {}
        for m in self.members:
            for f in each(m):
                key = (f.code, f.fact.replace(m.table.version, "*"))  # the same fact in every version
                if key not in seen:
                    seen[key] = (f, [])
                seen[key][1].append(m.table.version)
        out = []
        for f, versions in seen.values():
            span = versions[0] if len(versions) == 1 else \
                f"{versions[0]} ({len(versions)} of {len(self.members)})"
            out.append(f.relabelled(self.name, f"{self.name}: {self.runtime} {span}"))
        return out


def _lowest(limits) -> int | None:
    """The lowest of the limits (None: no limit)."""
    known_limits = [x for x in limits if x is not None]
    return min(known_limits) if known_limits else None


# The quantized types of ai.onnx QuantizeLinear / DequantizeLinear at any version (the
# schema's), in the order of the dtype table.
QDQ_TYPES = tuple(t for t in dtypes.BY_NAME
                  if any(t in s.quantized_types for s in schema.SPECS if s.domain == schema.AI_ONNX))
_MS = schema.MICROSOFT
FAMILIES = (("", "QLinearConv"), ("", "QLinearMatMul"), ("", "MatMulInteger"), ("", "ConvInteger"),
            ("", "DynamicQuantizeLinear"), (_MS, "QLinearAdd"), (_MS, "QLinearMul"), (_MS, "QGemm"),
            (_MS, "MatMulNBits"), (_MS, "GatherBlockQuantized"), (_MS, "DynamicQuantizeLSTM"))


# The division probes the matrix shows (per-tensor; probe_keys.quantize_probe): a label, then
# the domain, the op's version, x's type, the scale's type and precision
DIVISIONS = (("QuantizeLinear-21 float16", schema.AI_ONNX, 21, "float16", "float16", None),
             ("QuantizeLinear-23 float16", schema.AI_ONNX, 23, "float16", "float16", None),
             ("QuantizeLinear-23 float16 precision=float", schema.AI_ONNX, 23, "float16", "float16", "float"),
             ("QuantizeLinear-23 float precision=float16", schema.AI_ONNX, 23, "float", "float", "float16"),
             ("QuantizeLinear-21 bfloat16", schema.AI_ONNX, 21, "bfloat16", "bfloat16", None),
             ("com.microsoft QuantizeLinear float16", _MS, 1, "float16", "float16", None))


def divisions(probes: probe_table.ProbeTable | None) -> dict[str, str]:
    """{label of DIVISIONS: the type the release divides in} as its division probes measured
    it; "-" where they did not run (no kernel, or the op version is not loaded)."""
    out = {}
    for label, domain, since, x, scale, precision in DIVISIONS:
        key = probe_keys.quantize_probe("division", schema.domain_name(domain), "QuantizeLinear", since, x,
                                        scale, schema.PER_TENSOR, precision)
        found = None if probes is None else probes.exact(key)
        if found is None or (found.fails and found.divided_in is None):
            out[label] = "-"
        else:
            out[label] = found.divided_in or precision or scale  # ran: the page's type
    return out


# The other arithmetic probes the matrix shows: a label, then the probe's key
# (tools/probe_quantize.py); each release's value is what it computed ("as the page", what
# it did instead where a probe names it, "otherwise") or "-" where the probe did not run
_AI = schema.domain_name(schema.AI_ONNX)
COMPUTES = (("DequantizeLinear-23 float -> float16",
             probe_keys.dequantize_probe(_AI, "DequantizeLinear", 23, "float", "float16", False)),
            ("DequantizeLinear-21 bfloat16 (weights)",
             probe_keys.dequantize_probe(_AI, "DequantizeLinear", 21, "bfloat16", "bfloat16", True)),
            ("Q -> DQ pair int8", probe_keys.pair_arithmetic_key("int8", False)),
            ("Q -> DQ pair int16", probe_keys.pair_arithmetic_key("int16", False)),
            ("blocked Q -> DQ pair int16", probe_keys.pair_arithmetic_key("int16", True)),
            ("com.microsoft Q without axis, 1-D scale", probe_keys.missing_axis_probe("QuantizeLinear", 1)),
            ("float16 between com.microsoft DQ -> Q",
             probe_keys.float16_casts_probe(schema.domain_name(schema.MICROSOFT), 1)),
            ("float16 between DQ-21 -> Q-21", probe_keys.float16_casts_probe(_AI, 21)))


def computes(probes: probe_table.ProbeTable | None) -> dict[str, str]:
    """{label of COMPUTES: what the release computed} as its probes measured it."""
    out = {}
    for label, key in COMPUTES:
        found = None if probes is None else probes.exact(key)
        if found is None or (found.fails and found.differs is None):
            out[label] = "-"
        elif found.differs is None:
            out[label] = "as the page"
        else:
            out[label] = "otherwise" if found.differs.startswith("got ") else found.differs
    return out


def features(version: str, runtime: str = "onnxruntime") -> dict:
    """What one measured version runs, read from its kernel registry and measured limits:
    the opset and IR it loads, the types its QuantizeLinear / DequantizeLinear kernels take
    (T2 of quantize, T1 of dequantize), whether a blocked (version 21+) dequantize kernel
    exists, and which other quantized op families have CPU kernels. For a runtime measured by
    probes alone (openvino): the same, read from which probes ran. Both: the type each of
    DIVISIONS is divided in, what each of COMPUTES gives."""
    if runtime != "onnxruntime":
        probes = probe_table.load(runtime, version)
        return _probed_features(probes) | {"divides_in": divisions(probes), "computes": computes(probes)}
    table = ort_table.load(version)
    types: set[str] = set()
    for op, name in (("QuantizeLinear", "T2"), ("DequantizeLinear", "T1")):
        for k in table.kernels("", op):
            types.update(k.constraints.get(name, ()))
    blocked = any(k.since >= 21 or (k.until or 10**9) >= 21 for k in table.kernels("", "DequantizeLinear"))
    return {
        "version": table.version,
        "max_opset": table.max_opset,
        "max_ir": table.max_ir,
        "qdq_types": [t for t in QDQ_TYPES if t in types],
        "blocked": blocked,
        "families": [f"{schema.domain_name(d) + '.' if d else ''}{op}" for d, op in FAMILIES
                     if table.kernels(d, op)],
        "divides_in": divisions(probe_table.maybe_load("onnxruntime", version)),
        "computes": computes(probe_table.maybe_load("onnxruntime", version)),
    }


def _probed_features(table: probe_table.ProbeTable) -> dict:
    """A feature runs when any probe of it ran: a quantized type when a Q or DQ probe of that
    type did, blocked when a blocked DequantizeLinear-21+ probe did, a family when any of its
    probes did."""
    ran = table.ran()  # (sorted: a prefix's keys are a run)
    # the Q / DQ keys as one text: a type's text (no line break in it) is within one key or none
    linear = "\n".join(k for k in ran if "QuantizeLinear-" in k)
    family_names = [f"{schema.domain_name(d) + '.' if d else ''}{op}" for d, op in FAMILIES]
    prefixes = {name: f"{schema.domain_name(d)}:{op}-" for name, (d, op) in zip(family_names, FAMILIES,
                                                                              strict=True)}
    return {
        "version": table.version,
        "max_opset": table.max_opset,
        "max_ir": table.max_ir,
        "qdq_types": [t for t in QDQ_TYPES if f",{t}" in linear or f"({t}," in linear],
        "blocked": any(k.startswith("ai.onnx:DequantizeLinear-") and k.endswith(schema.BLOCKED) for k in ran),
        "families": [name for name in family_names if _starts_some(ran, prefixes[name])],
    }


def _starts_some(ordered: list[str], prefix: str) -> bool:
    """Whether a text of ``ordered`` (sorted) starts with ``prefix``."""
    i = bisect_left(ordered, prefix)
    return i < len(ordered) and ordered[i].startswith(prefix)


def matrix(runtime: str = "onnxruntime") -> list[dict]:
    """``features`` of every measured version, oldest first."""
    return [features(v, runtime) for v in known(runtime)]
