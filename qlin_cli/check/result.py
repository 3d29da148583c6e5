"""What `qlin check` gives for one file (``FileResult``) and for a run (``summarize``):
plain data, importable without the rules or onnx (the results cache reads them back)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..finding import Finding as Diagnostic
from ..severity import ERROR, INFO, WARNING


@dataclass
class FileResult:
    path: str
    error: str | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    nodes: int = 0  # quantization nodes checked (those of an op qlin has a schema for)
    types: dict | None = None  # inference's types (Analysis.inferred), kept for --fix
    # the external data files the model names, as paths (the results cache stats them)
    data_files: tuple[str, ...] = ()

    @property
    def findings(self) -> list[Diagnostic]:
        """The findings (the Python API's name for ``diagnostics``)."""
        return self.diagnostics

    def count(self, severity: str) -> int:
        return sum(1 for d in self.diagnostics if d.severity == severity)

    def to_json(self) -> dict:
        return {
            "path": self.path,
            "error": self.error,
            "nodes": self.nodes,
            "diagnostics": [d.to_json() for d in self.diagnostics],
        }


def summarize(results: list[FileResult]) -> dict:
    """The counts of a run (JSON contract version 2): files given, files that could not
    be checked, quantization nodes checked, and findings by severity."""
    return {
        "files": len(results),
        "unchecked": sum(1 for r in results if r.error is not None),
        "nodes": sum(r.nodes for r in results),
        "errors": sum(r.count(ERROR) for r in results),
        "warnings": sum(r.count(WARNING) for r in results),
        "infos": sum(r.count(INFO) for r in results),
    }
