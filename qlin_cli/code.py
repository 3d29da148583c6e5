"""What a code module defines, for the codes that are not rules: the deployment targets' QT
codes (``targets/codes/``) and convert's QC refusals (``convert/codes/``). One module per code,
named by code and name (``qt401_division_in_float32.py``), holding one ``Code`` subclass
documented like a rule (What it checks / Why is this bad? / Example / Fix). Imports nothing
heavy: `qlin rules` lists every code without onnx."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterable

from .severity import ERROR, cleandoc


class Code:
    code: str = ""
    name: str = ""
    severity: str = ERROR
    summary: str = ""

    @classmethod
    def doc(cls) -> str:
        return cleandoc(cls.__doc__ or "")

    @staticmethod
    def check(target, facts) -> Iterable:
        """The findings of this code on one node (``model.facts.NodeFacts``) for ``target``,
        for a code whose module holds its logic and reads the target's facts as data (the
        QT4xx codes several runtimes share); the others are reported by the target's module.
        Imports what it needs when called: listing the codes loads no onnx."""
        return ()

    @classmethod
    def to_json(cls) -> dict:
        return {"code": cls.code, "name": cls.name, "severity": cls.severity, "summary": cls.summary}


def discover(path: list[str], package: str, prefix: str) -> dict[str, type[Code]]:
    """Code -> class of every module of ``package`` (at ``path``) whose name starts with
    ``prefix``; a module must hold the code its name says."""
    found: dict[str, type[Code]] = {}
    for info in pkgutil.iter_modules(path):
        if not info.name.startswith(prefix):
            continue
        module = importlib.import_module(f"{package}.{info.name}")
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, Code) and value is not Code:
                if not info.name.startswith(value.code.lower() + "_"):
                    raise RuntimeError(f"{info.name} holds {value.code}")
                found[value.code] = value
    return found


__all__ = ["Code", "discover"]
