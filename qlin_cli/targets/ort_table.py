"""onnxruntime CPU execution provider: which kernels exist, read from a generated table.

The tables live in ``qlin_cli/targets/data/onnxruntime_kernels.json.gz`` (every release in
one file, targets/kernel_store.py) and are produced by ``python tools/gen_ort_kernels.py``
from the kernel registry of an installed onnxruntime.  This module only reads JSON; it
never imports onnxruntime, so a check can target a runtime that is not installed.

How a node is matched to a kernel (``OrtTable.kernel``)
-------------------------------------------------------
onnxruntime does not compare the model's opset with a kernel's range directly.  It
first resolves the node against its own operator schemas, which gives the
*schema version in force*: the largest ``since_version`` of that operator that is
<= the opset the model imports for the node's domain.  A kernel registered for
``since..until`` then matches when either

* ``since == schema_version`` (the usual case), or
* ``since < schema_version <= until`` and ``until`` is a real bound.

A kernel registered open-ended (``until`` is null in the JSON, INT_MAX inside
onnxruntime) matches only the schema version it starts at.  Example from 1.31.1:
GlobalLpPool has one CPU kernel, ``since=2, until=null``; its schema versions are
1, 2 and 22.  Opset 21 resolves to schema 2 and runs; opset 22 resolves to schema
22, for which no kernel exists, and onnxruntime reports "Could not find an
implementation" even though 22 lies inside ``2..open``.  ``kernel`` reproduces
this, so it needs the schema versions, which the table records.

One (op, since, until) range is usually registered several times with different
type constraints (e.g. one registration per quantized type).  ``Kernel`` groups
them: ``Kernel.registrations`` keeps each registration's constraints, because
onnxruntime requires *one* registration to accept all the node's types at once.

float16 without a float16 kernel (``OrtTable.match``)
-----------------------------------------------------
When no registration accepts a node that has float16 inputs or outputs,
onnxruntime rewrites every float16 argument of the node to float, inserts Cast
nodes around it and looks again (this happens even with graph optimisations
disabled).  So a float16
node runs, computing in float32, whenever the float version has a kernel: e.g.
com.microsoft QuantizeLinear with float16 x (its CPU kernel lists only float).
bfloat16 gets no such rescue.  ``match`` applies this rule; ``Kernel.accepts`` and
``allows`` describe the registry alone.

What the table cannot tell
--------------------------
* ``kernel`` returning None does not always mean the node fails: when an
  operator's ONNX schema has a function body, onnxruntime inlines it (e.g.
  HardSwish and Mish have no CPU kernel yet run).
* A kernel that accepts the node's types can still fail at run time for reasons
  the registry does not express (mixed x / scale types, attribute values, shapes);
  see docs/targets-onnxruntime-notes.md.
* The ONNX schema's own type constraints still apply; a kernel only narrows them.
* Whether the model loads at all: compare the model's ai.onnx opset with
  ``max_opset`` and its IR version with ``max_ir`` separately.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from types import MappingProxyType

from . import kernel_store, releases
from .records import Record

__all__ = [
    "Kernel", "Match", "OrtTable", "Signature", "available_versions", "from_json", "load", "normalise_type",
]

RUNTIME = "onnxruntime"
_SUPPORTED_FORMATS = (1, 2)  # 2 adds each schema version's signature


def normalise_domain(domain: str) -> str:
    return "" if domain in ("", "ai.onnx") else domain


def normalise_type(type_name: str) -> str:
    """Accept "float" or "tensor(float)"; other type strings are returned unchanged."""
    if type_name.startswith("tensor(") and type_name.endswith(")"):
        return type_name[len("tensor(") : -1]
    return type_name


class Kernel(Record):
    """All CPU registrations of one operator for one ``since..until`` range.

    ``until`` is inclusive; None means onnxruntime registered it open-ended.
    ``registrations`` holds one mapping per registration: constraint name ->
    frozenset of type names ("float", "int8", "float8e4m3fn", "seq(tensor(float))").
    """
    __slots__ = ("domain", "op", "since", "until", "registrations")
    _hidden = ('registrations',)

    domain: str
    op: str
    since: int
    until: int | None
    registrations: tuple[Mapping[str, frozenset[str]], ...]

    @property
    def constraints(self) -> dict[str, tuple[str, ...]]:
        """Union over registrations: every type some registration accepts, per name."""
        merged: dict[str, set[str]] = {}
        for reg in self.registrations:
            for name, types in reg.items():
                merged.setdefault(name, set()).update(types)
        return {name: tuple(sorted(types)) for name, types in sorted(merged.items())}

    def constrains(self, constraint_name: str) -> bool:
        """True if some registration lists types for this name (onnxruntime checks only those)."""
        return any(constraint_name in reg for reg in self.registrations)

    def accepts(self, types: Mapping[str, str]) -> bool:
        """True if one registration accepts all of ``types`` together.

        ``types`` maps constraint names to the node's type for that name; leave out
        names bound only to absent optional inputs (onnxruntime skips those).  A name
        a registration does not constrain is not checked by onnxruntime either.
        """
        wanted = {name: normalise_type(t) for name, t in types.items()}
        return any(
            all(name not in reg or t in reg[name] for name, t in wanted.items())
            for reg in self.registrations
        )


class Match(Record):
    """How onnxruntime would run a node: with ``kernel``, natively or after float16 -> float casts."""
    __slots__ = ("kernel", "float16_cast")

    kernel: Kernel
    float16_cast: bool  # True: float16 arguments are cast to float and the node computes in float32


class Signature(Record):
    """The formal inputs and outputs of one onnxruntime schema version: (name, type
    string, option) each, the type string being the constraint name kernels use ("T1")
    or a fixed type ("tensor(int64)"); option "single", "optional" or "variadic".
    ``function``: onnx's schema has a function body, which onnxruntime inlines when no
    kernel exists."""
    __slots__ = ("inputs", "outputs", "function")
    _defaults = (False,)

    inputs: tuple[tuple[str, str, str], ...]
    outputs: tuple[tuple[str, str, str], ...]
    function: bool

    def bind(self, in_types, out_types) -> dict[str, str]:
        """{constraint name: type} for the known types of a node's inputs and outputs
        (None for an absent or unknown one). A constraint bound to two different types
        keeps the first; fixed types are left out."""
        bound: dict[str, str] = {}
        for formals, types in ((self.inputs, in_types), (self.outputs, out_types)):
            for i, t in enumerate(types):
                if t is None or not formals:
                    continue
                if i < len(formals):
                    name = formals[i][1]
                elif formals[-1][2] == "variadic":
                    name = formals[-1][1]
                else:
                    continue
                if name.startswith("tensor(") or name.startswith("seq(") or "(" in name:
                    continue
                bound.setdefault(name, t)
        return bound


class OrtTable:
    """One generated table: limits of the runtime plus its CPU kernels."""

    def __init__(self, data: Mapping, rows=None):
        """``data``: a table as tools/gen_ort_kernels.py writes it; with ``rows``, a
        function giving the (schema entries, kernel entries) of a (domain, op), read when
        the op is first asked for, in place of ``data``'s two lists (kernel_store.release_rows)."""
        fmt = data.get("format")
        if fmt not in _SUPPORTED_FORMATS:
            raise ValueError(f"unsupported onnxruntime table format {fmt!r}")
        self.version: str = data["onnxruntime_version"]
        self.provider: str = data["provider"]
        self.max_opset: int = int(data["max_opset"])
        self.max_ir: int = int(data["max_ir"])
        self.source: str = data["source"]

        # per (domain, op): the schema versions; the table's entries, read into Signatures and
        # Kernels when the op is first asked for (a model asks for a few dozen of 1,500 kernels)
        self._schemas: dict[tuple[str, str], tuple[int, ...]] = {}
        # (schema entries, (since, until, kernel entry or its text) of each kernel registration)
        self._raw: dict[tuple[str, str], tuple[list, list]] = {}
        self._rows = rows
        if rows is None:
            for e in data["schemas"]:
                self._raw.setdefault((normalise_domain(e["domain"]), e["op"]), ([], []))[0].append(e)
            for e in data["kernels"]:
                entry = (int(e["since"]), e["until"], e)
                self._raw.setdefault((normalise_domain(e["domain"]), e["op"]), ([], []))[1].append(entry)
        self.domains: tuple[str, ...] = tuple(normalise_domain(d) for d in data.get("domains", ()))
        self._signatures: dict[tuple[str, str], dict[int, Signature]] = {}
        self._kernels: dict[tuple[str, str], tuple[Kernel, ...]] = {}
        self._ranges: dict[tuple, Kernel] = {}  # (domain, op, since, until) -> its kernel
        self._span_lists: dict[tuple[str, str], list[tuple[int, int | None]]] = {}
        self._matches: dict[tuple, Match | None] = {}  # match()'s answers: the table never changes

    def __repr__(self) -> str:
        return f"OrtTable(version={self.version!r}, max_opset={self.max_opset}, max_ir={self.max_ir})"

    def _entries(self, key: tuple[str, str]) -> tuple[list, list]:
        """(schema entries, (since, until, entry) of each kernel registration) of the (domain,
        op) ``key``; a registration's entry may be its unparsed text (kernel_store.release_rows)."""
        found = self._raw.get(key)
        if found is None:
            found = self._raw[key] = self._rows(*key) if self._rows is not None else ([], [])
        return found

    def schema_versions(self, domain: str, op: str) -> tuple[int, ...]:
        """The operator's schema ``since_version`` values known to this onnxruntime."""
        key = (normalise_domain(domain), op)
        found = self._schemas.get(key)
        if found is None:
            versions = (v for e in self._entries(key)[0] for v in e["versions"])
            found = self._schemas[key] = tuple(sorted(versions))
        return found

    def signature(self, domain: str, op: str, version: int) -> Signature | None:
        """The formal parameters of one schema version (None: the table has none, format 1)."""
        key = (normalise_domain(domain), op)
        found = self._signatures.get(key)
        if found is None:
            entries = self._entries(key)[0]
            found = self._signatures[key] = {
                int(v): Signature(tuple(map(tuple, sig["inputs"])), tuple(map(tuple, sig["outputs"])),
                                  bool(sig.get("function", False)))
                for entry in entries for v, sig in entry.get("signatures", {}).items()}
        return found.get(version)

    def schema_version(self, domain: str, op: str, opset: int) -> int | None:
        """The schema version in force for ``op`` when the model imports ``domain`` at ``opset``."""
        in_force = [v for v in self.schema_versions(domain, op) if v <= opset]
        return max(in_force) if in_force else None

    def kernels(self, domain: str, op: str) -> tuple[Kernel, ...]:
        """The op's kernels, oldest first: one per version range, with every registration of it."""
        key = (normalise_domain(domain), op)
        found = self._kernels.get(key)
        if found is None:
            found = self._kernels[key] = tuple(self._range_kernel(key, *r) for r in self._spans(key))
        return found

    def _spans(self, key: tuple[str, str]) -> list[tuple[int, int | None]]:
        """The (since, until) ranges of the op's kernels, oldest first (in the table's order
        where two start together)."""
        found = self._span_lists.get(key)
        if found is None:
            spans = dict.fromkeys((since, until) for since, until, _ in self._entries(key)[1])
            found = self._span_lists[key] = sorted(spans, key=lambda r: r[0])
        return found

    def _range_kernel(self, key: tuple[str, str], since: int, until: int | None) -> Kernel:
        """The kernel of one range: its registrations, in the table's order, parsed when the
        range is first asked for."""
        found = self._ranges.get((*key, since, until))
        if found is None:
            entries = [e for s, u, e in self._entries(key)[1] if s == since and u == until]
            if entries and isinstance(entries[0], bytes):
                entries = kernel_store.parsed_rows(entries)
            regs = tuple(MappingProxyType({name: frozenset(ts) for name, ts in k["constraints"].items()})
                         for k in entries)
            found = self._ranges[(*key, since, until)] = Kernel(key[0], key[1], since, until, regs)
        return found

    def kernel(self, domain: str, op: str, opset: int) -> Kernel | None:
        """The CPU kernel onnxruntime would pick for a node of ``op`` under ``opset``.

        ``opset`` is the version the model imports for ``domain`` (for com.microsoft
        usually 1).  See the module docstring for the matching rule.  Types are not
        considered here; use ``match`` for the full answer, or ``allows`` /
        ``Kernel.accepts`` on the result for the registry alone.
        """
        schema = self.schema_version(domain, op, opset)
        if schema is None:
            return None
        key = (normalise_domain(domain), op)
        for since, until in self._spans(key):  # (only the range that matches is parsed)
            if since == schema or (until is not None and since < schema <= until):
                return self._range_kernel(key, since, until)
        return None

    def allows(self, kernel: Kernel, constraint_name: str, type_name: str) -> bool:
        """True if some registration of ``kernel`` accepts ``type_name`` for ``constraint_name``.

        This looks at one constraint alone.  When the node binds several names (T1
        and T2 of QLinearConv, say), use ``kernel.accepts({...})``: onnxruntime needs
        a single registration that accepts every type together.  A name the kernel
        does not constrain returns True, as onnxruntime does not check it (the ONNX
        schema still does).
        """
        return kernel.accepts({constraint_name: type_name})

    def match(self, domain: str, op: str, opset: int, types: Mapping[str, str]) -> Match | None:
        """Whether the CPU EP can run the node, and how (None: "Could not find an implementation").

        ``types`` maps constraint names to the node's types, as for ``Kernel.accepts``.
        Besides the registry, this applies onnxruntime's float16 fallback described in
        the module docstring.
        """
        key = (domain, op, opset, tuple(sorted(types.items())))
        found = self._matches.get(key, False)
        if found is False:
            found = self._matches[key] = self._match(domain, op, opset, types)
        return found

    def _match(self, domain: str, op: str, opset: int, types: Mapping[str, str]) -> Match | None:
        kernel = self.kernel(domain, op, opset)
        if kernel is None:
            return None
        wanted = {name: normalise_type(t) for name, t in types.items()}
        if kernel.accepts(wanted):
            return Match(kernel, float16_cast=False)
        if "float16" in wanted.values():
            as_float = {name: "float" if t == "float16" else t for name, t in wanted.items()}
            if kernel.accepts(as_float):
                return Match(kernel, float16_cast=True)
        return None


def available_versions() -> list[str]:
    """onnxruntime versions with a bundled table, oldest first."""
    return list(releases.measured(RUNTIME))


def installed_version() -> str | None:
    """The onnxruntime installed beside qlin (any of its builds), or None."""
    return releases.installed(("onnxruntime", "onnxruntime-gpu", "onnxruntime-openvino",
                               "onnxruntime-directml"))


def default_version() -> str:
    """The version plain `onnxruntime` names: the installed one when a table of its minor
    version is bundled (the newest patch of that minor), else the newest bundled."""
    return releases.pick(available_versions(), installed_version())


minor = releases.minor


def load(version: str | None = None) -> OrtTable:
    """Load the table for ``version`` (e.g. "1.31.1"); None picks the newest bundled one."""
    have = kernel_store.releases(RUNTIME)
    if not have:
        raise FileNotFoundError("no onnxruntime tables are bundled with qlin_cli.targets")
    if version is None:
        version = available_versions()[-1]
    if version not in have:
        raise LookupError(f"no onnxruntime table for version {version!r} (available: {', '.join(have)})")
    return _load_cached(version)


@cache
def _load_cached(version: str) -> OrtTable:
    return OrtTable(*kernel_store.release_rows(RUNTIME, version))


def from_json(text: str | bytes) -> OrtTable:
    """Build a table from JSON text (for tables kept outside the package)."""
    return OrtTable(json.loads(text))
