"""Which findings a run leaves out, decided here once for the rules' findings and the
targets' alike.

Five things can leave a finding out: ``--select`` / ``select`` (only these codes; without
one, the default set: every code but those whose rule says ``default = False``),
``--ignore`` / ``ignore``, the configuration's per-path-ignores (for the file) and
per-node-ignores (for a node label glob), and a node's own ``qlin:ignore`` mark (its
``metadata_props``; model/analysis.py reads them). Each names codes or code prefixes; an
empty list in per-path-ignores, per-node-ignores or a mark means every code.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from ..codes import off_by_default

if TYPE_CHECKING:
    from ..config import Config
    from .diagnostic import Diagnostic


def selected(code: str, select: Iterable[str] | None, ignore: Iterable[str] | None) -> bool:
    """ruff-style selection: a code is in when a select prefix matches and no ignore does;
    with no select, when it is in the default set (every code but ``codes.off_by_default``:
    those run only when a select names them or a prefix of them, as `--select QL409` or `QL4`)."""
    if select:
        if not any(code.startswith(p.upper()) for p in select):
            return False
    elif code in off_by_default(code[:2]):
        return False
    return not (ignore and any(code.startswith(p.upper()) for p in ignore))


def _drops(codes: list[str] | None, code: str) -> bool:
    """Whether an ignore list (None: none; []: every code) leaves ``code`` out."""
    return codes is not None and (not codes or any(code.startswith(c.upper()) for c in codes))


class Suppression:
    """What one file's check leaves out: flags or their configured defaults, the file's
    per-path-ignores, per-node-ignores and (given to ``kept``) the model's marks."""

    def __init__(self, select: Iterable[str] | None = None, ignore: Iterable[str] | None = None,
                 cfg: Config | None = None, path: str | None = None):
        self.select = list(select) if select else None
        self.ignore = list(ignore) if ignore else None
        self.for_path = cfg.ignored_for(path) if cfg is not None and path is not None else None
        self._cfg = cfg if cfg is not None and cfg.per_node_ignores else None
        self._nodes: dict[str, list[str] | None] = {}  # label -> per-node-ignores' codes

    def runs(self, code: str) -> bool:
        """Whether a finding of ``code`` can be kept at all (rules and target codes that
        cannot are not run)."""
        return selected(code, self.select, self.ignore) and not _drops(self.for_path, code)

    def _for_node(self, label: str) -> list[str] | None:
        if self._cfg is None or not label:
            return None
        if label not in self._nodes:
            self._nodes[label] = self._cfg.ignored_for_node(label)
        return self._nodes[label]

    def keeps(self, d: Diagnostic, marked: Mapping | None = None) -> bool:
        if not self.runs(d.code):
            return False
        if marked and _drops(marked.get((d.graph, d.node)), d.code):
            return False
        return not _drops(self._for_node(d.node), d.code)

    def kept(self, found: Iterable[Diagnostic], marked: Mapping | None = None) -> list[Diagnostic]:
        """``found`` less what this leaves out; ``marked``: the analysis' ``qlin:ignore``
        marks, {(graph, node label): codes}."""
        return [d for d in found if self.keeps(d, marked)]


__all__ = ["Suppression", "selected"]
