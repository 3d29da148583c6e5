"""What a code module defines, for the codes that are not rules: the deployment targets' QT
codes (``targets/codes/``) and convert's QC refusals (``convert/codes/``). One module per code,
named by code and name (``qt401_division_in_float32.py``), holding one ``Code`` subclass
documented like a rule (What it checks / Why is this bad? / Example / Fix). Imports nothing
heavy: `qlin rules` lists every code without onnx."""

from __future__ import annotations

import functools
import importlib
import os
import pkgutil
from collections.abc import Iterable

from .severity import ERROR, cleandoc


class Code:
    code: str = ""
    name: str = ""
    severity: str = ERROR
    summary: str = ""
    # a kind of fact every code of which a target runs (targets/codes QUANTIZE_ARITHMETIC), or ""
    judges = ""
    fixable = False  # no code of a target or of convert carries a fix; `qlin rules` lists it so

    @classmethod
    def doc(cls) -> str:
        return cleandoc(cls.__doc__ or "")

    @staticmethod
    def check(target, site) -> Iterable:
        """The findings of this code on one node (``targets.base.NodeSite``: its facts and
        neighbours) for ``target``, for a code whose module holds its logic and reads the
        target's facts as data (QT308, QT309, every QT4xx); the others are reported by the
        target's module. Imports what it needs when called: listing the codes loads no onnx."""
        return ()

    @classmethod
    def to_json(cls) -> dict:
        return {"code": cls.code, "name": cls.name, "severity": cls.severity, "summary": cls.summary}


def discover(path: list[str], package: str, prefix: str) -> dict[str, type[Code]]:
    """Code -> class of every module of ``package`` (at ``path``) whose name starts with
    ``prefix``; a module must hold the code its name says."""
    found: dict[str, type[Code]] = {}
    for name in module_names(tuple(path)):
        if not name.startswith(prefix):
            continue
        module = importlib.import_module(f"{package}.{name}")
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, Code) and value is not Code:
                if not name.startswith(value.code.lower() + "_"):
                    raise RuntimeError(f"{name} holds {value.code}")
                found[value.code] = value
    return found


@functools.cache
def module_names(path: tuple[str, ...]) -> tuple[str, ...]:
    """The modules of a package's folder, listed once (a code found by its prefix lists them
    again otherwise: 8 codes asked for, 8 listings of 250 files): from one listing of a folder
    of sources (pkgutil's listing cost 0.6 ms of a check naming a target), else as pkgutil
    lists them (a zip, compiled files alone)."""
    if len(path) == 1:
        try:
            entries = os.listdir(path[0])
        except OSError:
            entries = []
        names = tuple(sorted(e[:-3] for e in entries
                             if e.endswith(".py") and e[:-3].isidentifier() and e != "__init__.py"))
        if names:
            return names
    return tuple(info.name for info in pkgutil.iter_modules(list(path)))


class Table:
    """The codes of one package of code modules (``prefix`` "qt": ``qt401_*.py`` ...)."""

    def __init__(self, path: list[str], package: str, prefix: str):
        self._path, self._package, self._prefix = path, package, prefix
        self._all: dict[str, type[Code]] | None = None
        self._one: dict[str, type[Code]] = {}

    def all_codes(self) -> list[type[Code]]:
        """Every code's class, sorted by code."""
        if self._all is None:
            self._all = discover(self._path, self._package, self._prefix)
        return [self._all[k] for k in sorted(self._all)]

    def find(self, code: str) -> type[Code] | None:
        """``get``, None for a code that does not exist."""
        try:
            return self.get(code)
        except KeyError:
            return None

    def get(self, code: str) -> type[Code]:
        """The code's class (its own module imported, no other); KeyError for a code that
        does not exist."""
        code = code.upper()
        found = self._one.get(code)
        if found is None:
            if not code.isalnum() or not code.lower().startswith(self._prefix):
                raise KeyError(code)
            found = self._one[code] = discover(self._path, self._package, code.lower() + "_")[code]
        return found


__all__ = ["Code", "Table", "discover", "module_names"]
