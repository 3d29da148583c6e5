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
    default: bool = True  # runs when nothing is selected; False: only when a select names it

    def doc(self) -> str:
        return self.text


def _tables():
    """(kind, its code prefix, a function from a code to its entry's source or None, a
    function listing every entry's source) of each kind. The sources are rule_docs.RuleDoc
    or a ``Code`` class; neither table imports onnx."""
    from . import rule_docs
    from .convert import codes as convert_codes
    from .targets import codes as target_codes

    return (("rule", "QL", rule_docs.get, rule_docs.all_docs),
            ("target", "QT", target_codes.find, target_codes.all_codes),
            ("convert", "QC", convert_codes.find, convert_codes.all_codes))


def _entry(c, kind: str) -> CodeDoc:
    return CodeDoc(c.code, c.name, c.severity, c.summary, bool(c.fixable), c.doc(), kind,
                   bool(getattr(c, "default", True)))


def all_codes() -> list[CodeDoc]:
    """Every code: the QL codes, then QT, then QC, each sorted."""
    return [_entry(c, kind) for kind, _, _, listed in _tables()
            for c in sorted(listed(), key=lambda c: c.code)]


def get(code: str) -> CodeDoc | None:
    """The code's entry (any case), or None; read from its own table only (`qlin rule QL405`
    reads one rule module and the base modules, not every rule's)."""
    code = code.upper()
    for kind, prefix, find, _ in _tables():
        if code.startswith(prefix):
            c = find(code)
            return None if c is None else _entry(c, kind)
    return None


def known(kinds: tuple[str, ...] = KINDS) -> list[str]:
    """The codes of those kinds (all by default)."""
    return [c.code for c in all_codes() if c.kind in kinds]


_OFF: dict[str, frozenset[str]] = {}  # code prefix -> its codes off by default, read once

# The QT and QC codes off by default (a module's ``default = False``; none today), indexed:
# a check naming a target imported all 42 QT modules to learn that (issue 35: naming a target
# adds at most 10 ms). The modules stay the source: tests/test_code_indexes.py holds this to them.
OFF_BY_DEFAULT_INDEX: dict[str, frozenset[str]] = {"QT": frozenset(), "QC": frozenset()}


def off_by_default(prefix: str | None = None) -> frozenset[str]:
    """The codes that run only when a select names them or a prefix of them (ruff's rules
    outside its default set; ``Rule.default``); ``prefix`` ("QL", "QT", "QC"): that kind's
    only, read from its classes without the others' or any documentation (a check with no
    target imports no target code, and parses no rule's source); read once per process."""
    out: frozenset[str] = frozenset()
    for p in PREFIXES if prefix is None else (prefix,):
        found = _OFF.get(p)
        if found is None:
            found = OFF_BY_DEFAULT_INDEX.get(p)
            if found is None:
                found = off_by_default_of_modules(p)
            _OFF[p] = found
        out |= found
    return out


PREFIXES = ("QL", "QT", "QC")


def off_by_default_of_modules(prefix: str) -> frozenset[str]:
    """The kind's codes off by default, read from its classes (every module imported)."""
    return frozenset(c.code for c in _classes(prefix) if not getattr(c, "default", True))


def _classes(prefix: str) -> list:
    """The kind's code classes: the rules' own objects for QL (their docs are read from the
    source, which costs more than the imported rules), else the table's."""
    if prefix == "QL":
        from . import rules

        return rules.all_rules()
    return next((listed() for _, p, _, listed in _tables() if p == prefix), [])


def names() -> dict[str, str]:
    return {c.code: c.name for c in all_codes()}


__all__ = ["CodeDoc", "all_codes", "get", "known", "names", "off_by_default"]
