"""The Rule base class and the helpers rules share."""

from __future__ import annotations

import inspect
from collections.abc import Iterable

from .. import schema
from ..check.diagnostic import ERROR

SECTIONS = ("What it checks", "Why is this bad?", "Example", "Fix")


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

    def check(self, n) -> Iterable[str]:  # pragma: no cover - interface
        """Yield one message per problem found on NodeView ``n``."""
        raise NotImplementedError

    @classmethod
    def doc(cls) -> str:
        return inspect.cleandoc(cls.__doc__ or "")


def op_title(n) -> str:
    """'QuantizeLinear-21 (ai.onnx)' for a node view with a known schema."""
    s = n.spec
    return f"{s.op_type}-{s.since} ({s.domain_name})"


def first_version(domain: str, op_type: str, pred) -> int | None:
    """The first version of an op in a domain whose schema satisfies ``pred``."""
    for spec in schema.versions(domain, op_type):
        if pred(spec):
            return spec.since
    return None


def first_ai_onnx(kind: str, pred) -> int | None:
    """The first ai.onnx version of the quantize or dequantize op satisfying ``pred``:
    where a vendor node's missing feature can be found."""
    op = "QuantizeLinear" if kind == "quantize" else "DequantizeLinear"
    return first_version(schema.AI_ONNX, op, pred)


def fmt_types(types) -> str:
    return ", ".join(sorted(types))


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)
