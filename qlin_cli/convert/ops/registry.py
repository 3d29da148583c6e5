"""Hand-written adapters for non-Q/DQ ops, keyed by (op, from_since, to_since).

An adapter takes an ``OpStep`` and either rewrites ``step.node`` (adding constants
with ``step.add_const``) or returns a ``Refusal``. Registering one for a step replaces
the generic handling (convert/ops/generic.py) and the onnx.version_converter fallback.
"""

from __future__ import annotations

from collections.abc import Callable

from .step import OpStep, Refusal

Adapter = Callable[[OpStep], "Refusal | None"]
ADAPTERS: dict[tuple[str, int, int], Adapter] = {}


def adapter(ops: tuple[str, ...] | str, a: int, b: int, *, both: bool = True):
    """Register ``fn`` for the step a -> b of each op (and b -> a when ``both``)."""
    names = (ops,) if isinstance(ops, str) else ops

    def add(fn: Adapter) -> Adapter:
        for op in names:
            ADAPTERS[(op, a, b)] = fn
            if both:
                ADAPTERS[(op, b, a)] = fn
        return fn
    return add
