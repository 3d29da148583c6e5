"""The rule base classes, what rules yield (violations with optional fixes), and helpers.

A node rule (``Rule``) reads one ``NodeFacts`` and yields ``Violation``s: a message
that says what is wrong with the values involved and the way out, without naming the
node (the check engine adds the location), and optionally a ``Fix``: a precise model
edit. A model rule (``ModelRule``) reads the whole model once through a
``model.view.ModelView`` and yields violations that carry their own location
(``Violation.at``, a ``model.view.Site``).
"""

from __future__ import annotations

from collections.abc import Iterable

from .. import schema
from ..finding import Fix  # noqa: F401 (the rules import it here)
from ..record import Record
from ..severity import ERROR, INFO, SEVERITIES, WARNING, cleandoc  # noqa: F401 (the rules import them here)

SECTIONS = ("What it checks", "Why is this bad?", "Example", "Fix")


# ---- fixes: precise edits of the node a finding is about ---------------------------
class SetAttribute(Record):
    __slots__ = ("name", "value")
    name: str
    value: int

    def describe(self) -> str:
        return f"set attribute {self.name}={self.value}"


class RemoveAttribute(Record):
    __slots__ = ("name",)
    name: str

    def describe(self) -> str:
        return f"remove attribute {self.name}"


class ReshapeConstant(Record):
    __slots__ = ("input_index", "shape")
    input_index: int  # which input of the node
    shape: tuple

    def describe(self) -> str:
        return f"store input {self.input_index} with shape {list(self.shape)}"


class AddOpsetImport(Record):
    __slots__ = ("domain", "version")
    domain: str
    version: int

    def describe(self) -> str:
        return f"import {schema.domain_name(self.domain)} version {self.version}"


class RemoveOpsetImport(Record):
    __slots__ = ("domain",)
    domain: str

    def describe(self) -> str:
        return f"remove the opset import of {schema.domain_name(self.domain)}"


class SortNodes(Record):
    __slots__ = ("graph",)
    graph: str  # the body's path ("main", "main/if.then_branch", "function local.F")

    def describe(self) -> str:
        return f"sort the nodes of {self.graph} topologically"


class SetIrVersion(Record):
    __slots__ = ("version",)
    version: int

    def describe(self) -> str:
        return f"set ir_version to {self.version}"


class Violation(Record):
    __slots__ = ("message", "fix", "at")
    _defaults = (None, None)
    message: str
    fix: Fix | None
    at: object  # a model.view.Site: where a model rule's finding is (None: the node checked)


class Rule:
    """A rule: one check, one code. Subclasses set the class attributes and `check`.

    The docstring is the rule's documentation (`qlin rule CODE`); it has the
    sections listed in SECTIONS, each as a Markdown heading ``## <section>``.
    """

    code: str = ""
    name: str = ""
    severity: str = ERROR
    summary: str = ""
    needs_spec: bool = True  # run only when the node's schema is known
    fixable: bool = False  # the rule attaches a Fix to its violations
    # Whether the rule runs when nothing is selected (ruff's default set): a rule with False
    # runs only where a select (``--select``, config ``select``, the API's ``select``) names it
    # or a prefix of it (check/suppress.py); `qlin rules` marks it "off".
    default: bool = True
    # `qlin convert` mends what the rule finds (e.g. it raises the IR version), so a
    # finding of this rule does not stop a conversion.
    mended_by_convert: bool = False
    # The op families the rule reads (schema.ops LINEAR_*): a rule runs only on nodes
    # of these families. Rules that read no schema (needs_spec False) run on every op.
    families: frozenset[str] = frozenset({schema.LINEAR_QUANTIZE, schema.LINEAR_DEQUANTIZE})

    # Whether ``check`` reads a constant's value (``NodeFacts.value`` or ``values``). The
    # engine asks a rule that reads none once per distinct ``NodeFacts.shape_key`` (every
    # compared field but the values): its verdict on one node is that on all of them.
    # tests/test_rules_values.py holds every rule that says False to it.
    reads_values: bool = False

    def applies_to(self, facts) -> bool:
        if facts.spec is None:
            return not self.needs_spec
        return facts.spec.family in self.families

    def wants_values(self, n) -> bool:
        """(A rule that reads values) Whether ``check`` can report anything on a node with
        ``n``'s shape key: False only when it cannot, whatever the values. Read from the
        fields ``shape_key`` covers alone; asked once per shape key."""
        return True

    def clean_values(self, nodes: list) -> list[bool] | None:
        """(A rule that reads values) For many nodes at once, True where ``check`` is known
        to report nothing on the node (a look at all their values together, cheaper than
        one per node); None, or False for a node: ``check`` it."""
        return None

    def check(self, n) -> Iterable[Violation | str]:  # pragma: no cover - interface
        """Yield one Violation (or a plain message) per problem found on NodeFacts ``n``."""
        raise NotImplementedError

    def violations(self, n) -> list[Violation]:
        return [v if isinstance(v, Violation) else Violation(v) for v in self.check(n)]

    @classmethod
    def doc(cls) -> str:
        return cleandoc(cls.__doc__ or "")


class ModelRule(Rule):
    """A rule that reads the whole model once: ``check_model(view)`` gets the
    ``model.view.ModelView`` and yields ``Violation``s whose ``at`` says where each
    finding is (``view.node_site(body, index)`` for a node). It never runs per node."""

    needs_spec = False
    families: frozenset[str] = frozenset()

    def applies_to(self, facts) -> bool:
        return False

    def check(self, n):  # pragma: no cover - model rules have no per-node check
        return ()

    def check_model(self, view) -> Iterable[Violation]:  # pragma: no cover - interface
        raise NotImplementedError


class FamilyRule(Rule):
    """A node rule of the op families other than linear Q/DQ."""

    families = schema.OTHER_FAMILIES


def finite_non_zero(consts: list) -> list[bool]:
    """For each constant (``model.facts.Const``, or None), True when its value is known to
    hold only finite non-zero numbers (``Const.summary``: the float constants whose bytes
    numpy reads as they are, looked at together). False: not known so (another kind of
    constant, no value, or a bad value)."""
    from ..model.facts import summarize

    summarize(consts)
    return [c is not None and c.summary is not None and c.summary[0] for c in consts]


def scale_consts(nodes: list) -> list[tuple[int | None, object]]:
    """(the scale's input position, its constant: ``model.facts.Const`` or None) of each node
    (``NodeFacts``), the position asked once per schema: what a rule that looks at many
    nodes' scales together (``Rule.clean_values``) reads."""
    at: dict = {}  # schema -> its scale's position
    out = []
    for n in nodes:
        si = at.get(n.spec, -1)
        if si == -1:
            si = at[n.spec] = n.scale_index
        values = n.values
        out.append((si, values[si] if si is not None and si < len(values) else None))
    return out


def magnitudes(consts: list) -> list[tuple[float, float] | None]:
    """For each constant (``model.facts.Const``, or None), (smallest, largest) |v| of its
    finite non-zero values ((inf, 0) when it has none), from ``Const.summary``. None: not
    known (another kind of constant, no value, or no constant)."""
    from ..model.facts import summarize

    summarize(consts)
    return [None if c is None or c.summary is None else c.summary[1:3] for c in consts]


def first_ai_onnx(kind: str, pred) -> int | None:
    """The first ai.onnx version of the quantize or dequantize op satisfying ``pred``:
    where a vendor node's missing feature can be found."""
    return schema.first_version(schema.AI_ONNX, schema.op_for(schema.AI_ONNX, kind), pred)


def raise_hint(n, pred, otherwise: str) -> str:
    """'raise the DOMAIN opset to V or later' when a later version of the node's op
    satisfies ``pred``, else ``otherwise``."""
    spec = n.spec
    since = schema.first_version(spec.domain, spec.op_type, pred)
    if since and since > spec.since:
        how = f" (`qlin convert --to-opset {since}`)" if spec.domain == schema.AI_ONNX else ""
        return f"raise the {spec.domain_name} opset to {since} or later{how}"
    return otherwise


def fmt_types(types) -> str:
    return ", ".join(sorted(types))


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def attr_value(n, name: str):
    """An attribute's value of any type (strings decoded), the schema's default when
    absent, None when it refers to a function attribute or has no default."""
    for a_name, _kind, v in n.attr_items:
        if a_name != name:
            continue
        if isinstance(v, tuple):
            return None
        if isinstance(v, int):
            return v
        from onnx import AttributeProto, helper

        value = helper.get_attribute_value(AttributeProto.FromString(v))
        return value.decode("utf-8", "replace") if isinstance(value, bytes) else value
    return n.spec.attributes.get(name) if n.spec else None
