"""The rule registry. Each rule lives in its own module here, named after its code.

Codes: QL1xx structure (inputs, attributes, domains), QL2xx types, QL3xx
attribute values, QL4xx granularity and shapes, QL5xx tensor values.

The registry is built once, under a lock, the first time it is asked for: any
number of threads may ask at once and each sees every rule.
"""

from __future__ import annotations

import importlib
import pkgutil
import threading

from .base import Rule

_REGISTRY: dict[str, Rule] = {}
_LOCK = threading.Lock()


def _build() -> dict[str, Rule]:
    found: dict[str, Rule] = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("ql"):
            module = importlib.import_module(f"{__name__}.{info.name}")
            for obj in vars(module).values():
                if isinstance(obj, type) and issubclass(obj, Rule) and obj.code:
                    if obj.code in found:
                        raise RuntimeError(f"rule code {obj.code} defined twice")
                    found[obj.code] = obj()
    return found


def _load() -> dict[str, Rule]:
    if not _REGISTRY:
        with _LOCK:
            if not _REGISTRY:
                _REGISTRY.update(_build())  # one update: readers see all rules or none
    return _REGISTRY


def all_rules() -> list[Rule]:
    return [r for _, r in sorted(_load().items())]


def get(code: str) -> Rule | None:
    return _load().get(code.upper())


__all__ = ["Rule", "all_rules", "get"]
