"""The rule registry. Each rule lives in its own module here, named after its code.

Codes: QL1xx structure (inputs, attributes, domains), QL2xx types, QL3xx
attribute values, QL4xx granularity and shapes, QL5xx tensor values.
"""

from __future__ import annotations

import importlib
import pkgutil

from .base import Rule

_REGISTRY: dict[str, Rule] = {}


def _load() -> dict[str, Rule]:
    if not _REGISTRY:
        for info in pkgutil.iter_modules(__path__):
            if info.name.startswith("ql"):
                module = importlib.import_module(f"{__name__}.{info.name}")
                for obj in vars(module).values():
                    if isinstance(obj, type) and issubclass(obj, Rule) and obj.code:
                        if obj.code in _REGISTRY:
                            raise RuntimeError(f"rule code {obj.code} defined twice")
                        _REGISTRY[obj.code] = obj()
    return _REGISTRY


def all_rules() -> list[Rule]:
    return [r for _, r in sorted(_load().items())]


def get(code: str) -> Rule | None:
    return _load().get(code.upper())


__all__ = ["Rule", "all_rules", "get"]
