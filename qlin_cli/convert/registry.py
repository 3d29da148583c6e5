"""Every version step convert makes, one adapter each, keyed by (domain, op, from_since,
to_since); "" is ai.onnx.

* A Q/DQ op's adapter takes a ``QNode`` and returns the node at the neighbouring version or a
  ``Refusal``. Every step between two neighbouring versions of the schema table has one: by
  default ``retarget`` to the neighbour's schema (convert/adapters.py registers them), so what a
  step rewrites or refuses follows from the two schemas.
* Any other ai.onnx op's adapter takes an ``OpStep``, rewrites ``step.node`` in place and
  returns None, or returns a ``Refusal``. Only hand-written ones are registered
  (convert/ops/adapters.py); a step without one is handled by the generic rules read from
  onnx.defs, then by onnx.version_converter with a proof (convert/ops/node.py).

tests/test_convert_adapters.py holds the registry against onnx.defs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .. import schema

Adapter = Callable  # QNode -> QNode | Refusal (Q/DQ ops); OpStep -> Refusal | None (other ops)
REGISTRY: dict[tuple[str, str, int, int], Adapter] = {}


def register(ops: str | tuple[str, ...], a: int, b: int, *, domain: str = "", both: bool = False,
             default: bool = False):
    """Register the decorated adapter for the step a -> b of each op (and b -> a when
    ``both``). A ``default`` one does not replace an adapter already registered."""
    names = (ops,) if isinstance(ops, str) else ops
    d = schema.normalize_domain(domain)

    def add(fn: Adapter) -> Adapter:
        for op in names:
            for key in [(d, op, a, b)] + ([(d, op, b, a)] if both else []):
                if default:
                    REGISTRY.setdefault(key, fn)
                else:
                    REGISTRY[key] = fn
        return fn
    return add


def adapter(domain: str, op: str, a: int, b: int) -> Adapter | None:
    """The adapter of one step (None: none registered)."""
    return REGISTRY.get((schema.normalize_domain(domain), op, a, b))


def path(versions: Sequence[int], from_since: int, to_since: int) -> list[tuple[int, int]]:
    """The steps from one since_version to another through each version between (``versions``:
    the op's since_versions, oldest first), in walking order."""
    i, j = versions.index(from_since), versions.index(to_since)
    walk = versions[i:j + 1] if i <= j else versions[j:i + 1][::-1]
    return list(zip(walk, walk[1:], strict=False))


__all__ = ["REGISTRY", "Adapter", "adapter", "path", "register"]
