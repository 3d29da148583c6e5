"""The QT codes: every reason a deployment target refuses a model or computes something
else than the spec, one module each (``qt401_division_in_float32.py``), named by code and
name like the rules' modules; ``get(code)`` and ``all_codes()`` find them.

QT1xx the model as a whole (opset, IR version, domains), QT2xx kernels and element types,
QT3xx granularity, shapes and values, QT4xx semantic divergences: the runtime runs the node
but computes something else than the spec (always warnings).

Which targets emit a code, and from which fact, is in each target module and in
docs/targets.md. Nothing here imports onnx: `qlin rules` lists the codes without it.
"""

from __future__ import annotations

import importlib
import os
from functools import cache

from ...code import QUANTIZE_ARITHMETIC, Code, Table

_TABLE = Table(__path__, __name__, "qt")
all_codes = _TABLE.all_codes
_ONE: dict[str, type[Code]] = {}


def get(code: str) -> type[Code]:
    """``Table.get``: the code's class (its own module imported, no other); KeyError for a
    code that does not exist. Its module is found in one listing of the folder (``_listed``)."""
    found = _ONE.get(code)
    if found is None:
        names = _listed()
        found = _ONE[code] = _TABLE.get(code) if names is None else _imported(code.upper(), names)
    return found


def _imported(code: str, names: tuple[str, ...]) -> type[Code]:
    """The class of ``code`` from the module whose name starts with it (as ``code.discover``
    finds it: the module must hold the code its name says)."""
    if not code.isalnum() or not code.lower().startswith("qt"):
        raise KeyError(code)
    prefix = code.lower() + "_"
    found = None
    for name in names:
        if not name.startswith(prefix):
            continue
        for value in vars(importlib.import_module(f"{__name__}.{name}")).values():
            if isinstance(value, type) and issubclass(value, Code) and value is not Code:
                if not name.startswith(value.code.lower() + "_"):
                    raise RuntimeError(f"{name} holds {value.code}")
                if value.code == code:
                    found = value
    if found is None:
        raise KeyError(code)
    return found


@cache
def _listed() -> tuple[str, ...] | None:
    """The code modules' names, from one listing of the package's folder of sources (the
    listing ``Table`` makes, pkgutil's, cost 0.6 ms of a check naming a target); None where
    the package is not such a folder (a zip, compiled files alone): ``Table`` finds them."""
    try:
        entries = os.listdir(__path__[0])
    except OSError:
        return None
    names = tuple(sorted(e[:-3] for e in entries if e.endswith(".py") and e[:-3].isidentifier()
                         and e != "__init__.py"))
    return names if any(n.startswith("qt") for n in names) else None


def find(code: str) -> type[Code] | None:
    """``get``, None for a code that does not exist."""
    try:
        return get(code)
    except KeyError:
        return None


# Only a divergence (QT4xx, above) judges a kind of fact: ``judging`` reads those modules
# alone (a check naming a target imported the 42 code modules for it, about 6 ms);
# tests/test_report_codes.py holds every code that judges anything to the prefix.
JUDGING_PREFIX = "qt4"
_JUDGES = Table(__path__, __name__, JUDGING_PREFIX)

# What ``judged`` gives, written down: a check naming a target imports the modules of the
# codes it runs, not the other QT4xx modules to find them (tests/test_report_codes.py holds
# this equal to what the modules declare).
JUDGING = {QUANTIZE_ARITHMETIC: ("QT401", "QT402", "QT403", "QT405", "QT407", "QT411", "QT412")}


@cache
def judging(what: str) -> tuple[str, ...]:
    """The codes whose module declares it judges ``what`` (``Code.judges``), in code order:
    a new QT4xx code of a QuantizeLinear's arithmetic is one module, which every target
    probing that arithmetic then runs (once it is in ``JUDGING``, which a test asks)."""
    found = JUDGING.get(what)
    return judged(what) if found is None else found


def judged(what: str) -> tuple[str, ...]:
    """``judging`` read from every QT4xx module."""
    return tuple(c.code for c in _JUDGES.all_codes() if c.judges == what)


__all__ = ["Code", "all_codes", "find", "get", "judged", "judging"]
