"""Every code qlin reports, in one table: the rules' QL codes (read by ``rule_docs`` from the
rule modules' source, so listing them loads no onnx) and the deployment targets' QT codes
(``targets/codes/``, one module per code). `qlin rules`, `qlin rule`, config validation,
`--statistics` and every output format read this table; nothing joins the two lists anywhere
else."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CodeDoc:
    """One code: what `qlin rules` lists and SARIF describes."""

    code: str
    name: str
    severity: str
    summary: str
    fixable: bool
    text: str  # its documentation: What it checks / Why is this bad? / Example / Fix
    kind: str  # "rule" (QL, `qlin check`) or "target" (QT, `qlin check --target`)

    def doc(self) -> str:
        return self.text


def all_codes() -> list[CodeDoc]:
    """Every QL and QT code, sorted by code."""
    from . import rule_docs
    from .targets import codes as target_codes  # imports no onnx either

    found = [CodeDoc(r.code, r.name, r.severity, r.summary, r.fixable, r.doc(), "rule")
             for r in rule_docs.all_docs()]
    found += [CodeDoc(c.code, c.name, c.severity, c.summary, False, c.doc(), "target")
              for c in target_codes.all_codes()]
    return sorted(found, key=lambda c: c.code)


def get(code: str) -> CodeDoc | None:
    """The code's entry (any case), or None."""
    code = code.upper()
    return next((c for c in all_codes() if c.code == code), None)


def known() -> list[str]:
    return [c.code for c in all_codes()]


def names() -> dict[str, str]:
    return {c.code: c.name for c in all_codes()}


__all__ = ["CodeDoc", "all_codes", "get", "known", "names"]
