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
            found = versions.resolve(key)  # "onnxruntime@1.20", "openvino>=2025.0", "onnxruntime~=1.20"
        except LookupError as e:
            raise UnknownTarget(name, names(), str(e)) from e
    if found is None:
        _load()  # a name no module's prefix gives away
        found = _TARGETS.get(_ALIASES.get(key, key))
    if found is None:
        raise UnknownTarget(name, names())
    return found


class UnknownTarget(LookupError):
    """A name no target has; ``reason`` says why when the name was a runtime's version or
    specifier that no measured release answers (which releases were measured)."""

    def __init__(self, name: str, known: list[str], reason: str | None = None):
        self.name, self.known, self.reason = name, known, reason
        super().__init__(f"unknown target {name!r}; known targets: {', '.join(known)}" if reason is None
                         else f"target {name!r}: {reason}")

    @property
    def why(self) -> str:
        """What the commands print after the flag: the reason, else the known names."""
        if self.reason is not None:
            return f"{self.name!r}: {self.reason}"
        return f"unknown target {self.name!r} (known: {', '.join(self.known)})"


def why(name: str, error: LookupError) -> str:
    """The message for ``name`` that ``get`` refused with ``error``."""
    return error.why if isinstance(error, UnknownTarget) else f"unknown target {name!r} ({error})"


SPECIFIER_START = "<>=!~"  # a piece of a comma-separated list that goes on the specifier before it


def split_names(values) -> list[str]:
    """Target names from comma-separated strings, where a runtime's PEP 440 specifier set
    keeps its own commas: "onnxruntime>=1.18,<1.21,openvino" is two names."""
    if isinstance(values, str):
        values = [values]
    out: list[str] = []
    for v in values:
        for piece in (p.strip() for p in v.split(",")):
            if not piece:
                continue
            if piece[0] in SPECIFIER_START and out:
                out[-1] += "," + piece
            else:
                out.append(piece)
    return out
