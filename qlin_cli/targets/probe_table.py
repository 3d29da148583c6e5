"""What one runtime version did with each probe model, as measured (the data file
qlin_cli/targets/data/<runtime>_probes.json.gz written by tools/gen_target_data.py, read
through probe_store.py).

Each key (targets/probe_keys.py) holds how many of its probes ran, how many failed and the
runtime's first error, summed over the CPUs measured (``hosts``); a key whose outcome
differs between CPUs also holds each CPU's. A key is refused when none of its probes ran:
probes that differ in what the key leaves out (a block size that does not divide, say) may
fail where others run, and those are the hand-written rules' business, not the table's.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping
from functools import cache
from itertools import takewhile

from .. import schema
from . import probe_keys, probe_store, releases
from .records import Record


class Outcome(Record):
    __slots__ = ("runs", "fails", "error", "hosts")
    _defaults = ("", ())
    runs: int
    fails: int
    error: str
    # (CPU, what it did: "ok" or "N of M failed: error") for a key whose outcome differs
    # between the CPUs measured; () when every CPU saw the same
    hosts: tuple[tuple[str, str], ...]

    @property
    def refused(self) -> bool:
        return self.runs == 0 and self.fails > 0

    @property
    def stage(self) -> str:
        """Where the first failure happened: "load", "run", or "differs" (an arithmetic
        probe's result other than the page's); "" when none failed."""
        return _parts(self.error)[0]

    @property
    def message(self) -> str:
        """The runtime's own wording of the first failure (or what it computed instead)."""
        return _parts(self.error)[1]

    @property
    def stage_and_error(self) -> tuple[str, str]:
        """(``stage``, ``message``)."""
        return _parts(self.error)

    @property
    def differs(self) -> str | None:
        """A probe of a QuantizeLinear's arithmetic (tools/probe_quantize.py): what the
        runtime computed where it did not give the page's result ("divides in float", "got
        127 where the page gives -128"); None when it did, or when the probe did not run."""
        stage, said = _parts(self.error)
        return said if stage == "differs" else None

    @property
    def divided_in(self) -> str | None:
        """A division probe's: the type the runtime divided in where it is not the page's."""
        said, _, done_in = (self.differs or "").partition("divides in ")
        return done_in if not said and done_in else None

    @property
    def varies_by_cpu(self) -> bool:
        return any(status != "ok" for _, status in self.hosts) and any(s == "ok" for _, s in self.hosts)


def _outcome(entry: dict) -> Outcome:
    """A key's stored entry as an Outcome."""
    return Outcome(entry["runs"], entry["fails"], entry.get("error", ""), _per_cpu(entry.get("hosts", {})))


@cache
def _parts(error: str) -> tuple[str, str]:
    """(stage, message) of a stored error ("load: ..."): split once per distinct error."""
    stage, _, said = error.partition(": ")
    return stage, said


class ProbeTable:
    def __init__(self, data: dict):
        self.runtime: str = data["runtime"]
        self.version: str = data["version"]
        self.source: str = data["source"]
        self.probes: int = int(data["probes"])
        self.hosts: tuple[str, ...] = tuple(data.get("hosts", ()))  # the CPUs measured on
        self._entries: Mapping[str, dict] = data["keys"]  # key -> its entry, made an Outcome when asked
        self._keys: dict[str, Outcome | None] = {}
        # the answers for keys no probe has, each worked out once (a scan of every key)
        self._coarser: dict[str, Outcome | None] = {}
        self._chains: dict[str, Outcome | None] = {}  # chain() of keys no probe has
        self._sorted: list[str] | None = None  # the keys in order, made when first needed
        self._all: dict[str, Outcome] | None = None  # keys(), made when first asked for
        self._limits: dict[str, int | None] = {}  # max_opset, max_ir: worked out when first asked

    @property
    def max_opset(self) -> int | None:
        """The newest ai.onnx opset the release loads (``_highest`` of its opset probes)."""
        if "opset" not in self._limits:
            self._limits["opset"] = self._highest(probe_keys.opset_key, probe_keys.PROBED_OPSETS)
        return self._limits["opset"]

    @property
    def max_ir(self) -> int | None:
        """The newest IR version the release loads (``_highest`` of its IR probes)."""
        if "ir" not in self._limits:
            self._limits["ir"] = self._highest(probe_keys.ir_key, probe_keys.PROBED_IR)
        return self._limits["ir"]

    def outcome(self, key: str | None) -> Outcome | None:
        """The outcome of ``key``; for a key no probe has, that of the nearest coarser key
        (a probe_keys.Key's details dropped from the end one by one: "blocked axis=0 rank=2
        one block", then "blocked axis=0 rank=2" ...), summed over the probed keys it
        covers. A key given as text only has no coarser keys."""
        if key is None:
            return None
        found = self.exact(key)
        if found is not None or not isinstance(key, probe_keys.Key):
            return found
        if key not in self._coarser:  # (keyed by the text: only typed keys come here)
            self._coarser[key] = self._nearest(key)
        return self._coarser[key]

    def _nearest(self, key: probe_keys.Key) -> Outcome | None:
        for prefix in key.coarser():
            covered = []
            for k in self._candidates(prefix):
                if len(k) == len(prefix) or k[len(prefix)] == " ":
                    found = self.exact(k)
                    if found is not None:  # not a key of another release
                        covered.append(found)
            if covered:
                return _summed(covered)
        return None

    def exact(self, key: str | None) -> Outcome | None:
        """The outcome of ``key`` itself (None: no probe has it)."""
        if key is None:
            return None
        try:
            return self._keys[key]
        except KeyError:  # first asked: a key this release has no probe of is kept as None
            e = self._entries.get(key)
            found = self._keys[key] = None if e is None else _outcome(e)
            return found

    def chain(self, key: str | None) -> Outcome | None:
        """The outcome of a chain key (probe_keys.ChainKey); for one no probe has, the sum
        over the probed chains that differ from it only in the op's version (a DQ-21 before a
        MaxPool-22 is probed as DQ-21 -> MaxPool-12 at opset 21 and DQ-23 -> MaxPool-22 at 23)."""
        found = self.exact(key)
        if found is not None or not isinstance(key, probe_keys.ChainKey):
            return found
        if key not in self._chains:
            # the same chain through each other version of the op: one run of the file's
            # keys (they start alike), matched by text
            others = {str(key.versioned(v)) for v in _versions(key.op) if v != key.since}
            alike = [self.exact(k) for k in self._candidates(f"{key.dq} -> {key.op}-") if k in others]
            alike = [o for o in alike if o is not None]  # keys no probe of this release has left out
            self._chains[key] = _summed(alike) if alike else None
        return self._chains[key]

    def refused(self, key: str | None) -> Outcome | None:
        """The outcome when every probe of the key failed, else None."""
        found = self.outcome(key)
        return found if found is not None and found.refused else None

    def _candidates(self, prefix: str):
        """The keys starting with ``prefix`` this release may have, in order (its entries'
        ``candidates`` where they have some)."""
        more = getattr(self._entries, "candidates", None)
        if more is not None:
            return more(prefix)
        keys = self._sorted
        if keys is None:
            keys = self._sorted = sorted(self._entries)  # the keys a prefix covers are a run of this list
        return takewhile(lambda k: k.startswith(prefix), keys[bisect_left(keys, prefix):])

    def ran(self) -> list[str]:
        """The keys whose probes ran at least once, sorted (read without making an outcome of
        every key where the store can: probe_store.ReleaseKeys.ran)."""
        fast = getattr(self._entries, "ran", None)
        found = fast() if fast is not None else (k for k, o in self.keys().items() if o.runs)
        return sorted(found)

    def keys(self) -> dict[str, Outcome]:
        """Every key of the release and its outcome (read once: the release never changes)."""
        if self._all is None:
            walk = getattr(self._entries, "entries", None)  # probe_store.ReleaseKeys: one walk
            if walk is None:
                self._all = {k: self.exact(k) for k in self._entries}
            else:
                kept, found = self._keys, {}
                for k, e in walk():
                    o = kept.get(k)
                    found[k] = kept[k] = _outcome(e) if o is None else o
                self._all = found
        return dict(self._all)

    def _highest(self, key_of, versions) -> int | None:
        """The newest version loaded, every older probed one loading too; None when the
        newest probed loads (no limit found)."""
        top = None
        for v in versions:
            found = self.exact(key_of(v))
            if found is None:
                continue
            if found.refused:
                return top
            top = v
        return None


@cache
def _versions(op: str) -> tuple[int, ...]:
    """The versions of ai.onnx ``op``, oldest first, as onnx.defs has them: walked down from
    the newest one schema at a time (convert.opsteps.history lists every op's schemas
    first, 13 ms for the one op a check asks about; tests/test_data_runs.py holds the two
    equal)."""
    import onnx.defs

    found: list[int] = []
    opset = onnx.defs.onnx_opset_version()
    while opset >= 1:
        since = schema.ai_onnx_since(op, opset)
        if since is None:
            break
        found.append(since)
        opset = since - 1
    return tuple(reversed(found))


def _summed(outcomes: list[Outcome]) -> Outcome:
    """One outcome for several keys: their runs and failures added, the first error."""
    return Outcome(sum(o.runs for o in outcomes), sum(o.fails for o in outcomes),
                   next((o.error for o in outcomes if o.error), ""))


def arithmetic(probes: ProbeTable | None, what: str, site) -> Outcome | None:
    """The release's outcome of the probes of ``what`` for the node of ``site``
    (NodeSite.arithmetic_key; tools/probe_quantize.py); None when no probe tells (none of
    the node's kind)."""
    return None if probes is None else probes.outcome(site.arithmetic_key(what))


def chain_findings(target, probes: ProbeTable, site):
    """QT205 for each chain Q -> DQ -> op this release failed every probe of, though it runs
    the DQ alone (probe_keys.site_chains; tools/probe_chains.py), and for a QLinearAdd /
    QLinearMul after a QuantizeLinear whose probes all failed (probe_keys.operand_key)."""
    mine = probes.refused(probe_keys.operand_key(site))
    if mine is not None:
        stage, error = mine.stage_and_error
        f = site.facts
        yield target.finding(
            "QT205",
            f"every probe of QuantizeLinear -> {f.op} with B of this shape failed in "
            f"{probes.runtime} {probes.version} at {stage}, though it runs {f.op} alone: {error}",
            fix=f"write QuantizeLinear -> {f.op} as DequantizeLinear -> {f.op.removeprefix('QLinear')} "
                "-> QuantizeLinear (a QDQ graph), or use another release",
        )
    for key, chain, other, way_out in probe_keys.site_chains(site):
        mine = probes.chain(key)
        if mine is not None and mine.refused:
            stage, error = mine.stage_and_error
            theirs = probes.chain(other)
            fix = way_out if theirs is not None and theirs.runs and not theirs.fails else (
                "quantize to another type" + (", or load with graph optimizations off"
                                              if probes.runtime == "onnxruntime" else ""))
            yield target.finding(
                "QT205",
                f"every probe of {chain} failed in {probes.runtime} {probes.version} at {stage}, "
                f"though it runs the DQ alone: {error}",
                convertible=True,  # the chain at another opset may run (int8 at 19, not 21)
                fix=fix,
            )


def float_findings(target, probes: ProbeTable, info):
    """QT205 for each float op (probe_keys.float_key) this release failed every probe of."""
    for key, op, label in info.float_ops:
        mine = probes.refused(key)
        if mine is not None:
            before = probe_keys.axes_input_since(op) - 1  # the last opset with the axes an attribute
            stage, error = mine.stage_and_error
            yield target.finding(
                "QT205",
                f"every probe of {key.removeprefix('float ')} failed in {probes.runtime} {probes.version} "
                f"at {stage} (first such node: {label!r}): {error}",
                fix=f"give the axes as an attribute (ai.onnx opset {before}: qlin convert --to-opset "
                    f"{before}), or use a newer release",
            )


def _per_cpu(hosts: dict) -> tuple[tuple[str, str], ...]:
    """(CPU, "ok" or "N of M failed: error") of each CPU a key's outcome differs on."""
    out = []
    for cpu, c in hosts.items():
        n = c["runs"] + c["fails"]
        out.append((cpu, "ok" if not c["fails"] else f"{c['fails']} of {n} failed: {c.get('error', '')}"))
    return tuple(out)


def available_versions(runtime: str) -> list[str]:
    """Measured versions of ``runtime``, oldest first."""
    return list(releases.measured(runtime))


def maybe_load(runtime: str, version: str) -> ProbeTable | None:
    """The probe outcomes of one release, or None when it was not probed."""
    try:
        return load(runtime, version)
    except LookupError:
        return None


@cache
def load(runtime: str, version: str) -> ProbeTable:
    """One release's probe outcomes (probe_store.py: one file per runtime, facts stored
    with the range of releases they hold for)."""
    try:
        return ProbeTable(probe_store.version_data(runtime, version, lazy=True))
    except LookupError:
        have = ", ".join(available_versions(runtime))
        raise LookupError(f"no {runtime} probe data for version {version!r} (measured: {have})") from None


def installed_version(runtime: str) -> str | None:
    """The version of ``runtime`` installed beside qlin, or None."""
    return releases.installed((runtime,))


def default_version(runtime: str) -> str:
    """What the plain runtime name judges: the installed version when its minor version was
    measured (that measurement's newest patch), else the newest measured."""
    return releases.pick(available_versions(runtime), installed_version(runtime))
