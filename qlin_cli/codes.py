"""Every code qlin reports, in one table: the rules' QL codes (read by ``rule_docs`` from the
rule modules' source, so listing them loads no onnx) and the deployment targets' QT codes
(``targets/codes/``, one module per code) and convert's QC refusals (``convert/codes/``).
`qlin rules`, `qlin rule`, config validation, `--statistics` and every output format read this
table; nothing joins the lists anywhere else."""

from __future__ import annotations

from dataclasses import dataclass

KINDS = ("rule", "target", "convert")  # the order `qlin rules` lists them in
CHECKED = ("rule", "target")  # the kinds `qlin check` reports (and its select / ignore name)


@dataclass(frozen=True)
class CodeDoc:
    """One code: what `qlin rules` lists and SARIF describes."""

    code: str
    name: str
    severity: str
    summary: str
    fixable: bool
    text: str  # its documentation: What it checks / Why is this bad? / Example / Fix
    kind: str  # "rule" (QL, `qlin check`), "target" (QT, `qlin check --target`), "convert" (QC)

    def doc(self) -> str:
        return self.text


def all_codes() -> list[CodeDoc]:
    """Every code: the QL codes, then QT, then QC, each sorted."""
    from . import rule_docs
    from .convert import codes as convert_codes  # neither imports onnx
    from .targets import codes as target_codes

    found = [CodeDoc(r.code, r.name, r.severity, r.summary, r.fixable, r.doc(), "rule")
             for r in rule_docs.all_docs()]
    found += [CodeDoc(c.code, c.name, c.severity, c.summary, False, c.doc(), "target")
              for c in target_codes.all_codes()]
    found += [CodeDoc(c.code, c.name, c.severity, c.summary, False, c.doc(), "convert")
              for c in convert_codes.all_codes()]
    return sorted(found, key=lambda c: (KINDS.index(c.kind), c.code))


def get(code: str) -> CodeDoc | None:
    """The code's entry (any case), or None."""
    code = code.upper()
    return next((c for c in all_codes() if c.code == code), None)


def known(kinds: tuple[str, ...] = KINDS) -> list[str]:
    """The codes of those kinds (all by default)."""
    return [c.code for c in all_codes() if c.kind in kinds]


def names() -> dict[str, str]:
    return {c.code: c.name for c in all_codes()}


__all__ = ["CodeDoc", "all_codes", "get", "known", "names"]
