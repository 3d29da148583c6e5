"""The targets by name: each profile module lists its targets (``TARGETS``), registered here
when the module is first imported through ``get``, ``names`` or ``all_targets``;
``get`` imports only the module a name points to, or resolves a versioned name
("onnxruntime@1.20", "openvino>=2025.0": targets/versions.py)."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .base import Target

_TARGETS: dict[str, Target] = {}
_ALIASES: dict[str, str] = {}
_LOCK = threading.Lock()
_LOADED = False

# The modules that define targets, imported on first use (each lists its ``TARGETS``).
_MODULES = ("onnxruntime", "openvino", "tensorrt", "nnapi")


def register(target: Target) -> Target:
    """Add a target; its name and aliases must be new."""
    for key in (target.name, *target.aliases):
        if key in _TARGETS or key in _ALIASES:
            raise ValueError(f"target name {key!r} registered twice")
    _TARGETS[target.name] = target
    for alias in target.aliases:
        _ALIASES[alias] = target.name
    return target


_IMPORTED: set[str] = set()


def _import(module: str) -> None:
    """Import a profile module and register its ``TARGETS`` (once; under _LOCK)."""
    if module in _IMPORTED:
        return
    import importlib

    for target in importlib.import_module(f"{__package__}.{module}").TARGETS:
        register(target)
    _IMPORTED.add(module)


def _load() -> None:
    global _LOADED
    if _LOADED:
        return
    with _LOCK:
        if not _LOADED:
            for module in _MODULES:
                _import(module)
            _LOADED = True


def _load_module_of(key: str) -> None:
    """Import only the module whose name starts ``key`` ("onnxruntime-cpu" -> onnxruntime.py):
    asking for one target does not read the others' data (openvino's probe table, say)."""
    for module in _MODULES:
        if key.startswith(module):
            with _LOCK:
                _import(module)
            return


def names() -> list[str]:
    """Every target's name, sorted."""
    _load()
    return sorted(_TARGETS)


def all_targets() -> list[Target]:
    _load()
    return [_TARGETS[n] for n in sorted(_TARGETS)]


def get(name: str) -> Target:
    """The target called ``name`` (or one of its aliases, e.g. "onnxruntime@1.31.1").

    Raises ``UnknownTarget`` (a ``LookupError``) naming the known targets."""
    key = name.strip().lower()
    if key not in _TARGETS and key not in _ALIASES:
        _load_module_of(key)
    found = _TARGETS.get(_ALIASES.get(key, key))
    if found is None:
        from . import versions

        try:
            found = versions.resolve(key)  # "onnxruntime@1.20", "openvino>=2025.0"
        except LookupError as e:
            raise UnknownTarget(name, names()) from e
    if found is None:
        _load()  # a name no module's prefix gives away
        found = _TARGETS.get(_ALIASES.get(key, key))
    if found is None:
        raise UnknownTarget(name, names())
    return found


class UnknownTarget(LookupError):
    def __init__(self, name: str, known: list[str]):
        self.name, self.known = name, known
        super().__init__(f"unknown target {name!r}; known targets: {', '.join(known)}")
