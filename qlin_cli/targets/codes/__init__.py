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

from functools import cache

from ...severity import ERROR, INFO, WARNING

# What a code's own logic judges (``Code.judges``), for the targets that run every code of a
# kind without listing them: a QuantizeLinear's arithmetic, from a release's probes. Here,
# not in qlin_cli.code, so that a check whose sites need no code's module imports neither
# qlin_cli.code nor the code table (about 1 M instructions of a check naming a target).
QUANTIZE_ARITHMETIC = "quantize arithmetic"


@cache
def _table(prefix: str):
    """The codes of this package's modules whose names start with ``prefix`` (code.Table),
    made when first asked for."""
    from ...code import Table

    return Table(__path__, __name__, prefix)


def all_codes() -> list:
    """Every code's class, sorted by code."""
    return _table("qt").all_codes()


def get(code: str):
    """The code's class (its own module imported, no other); KeyError for no such code."""
    return _table("qt").get(code)


def find(code: str):
    """``get``, None for a code that does not exist."""
    return _table("qt").find(code)


# Each code's severity, written down: a target makes a finding of a code without importing
# the code's module (about 0.5 M instructions a module); tests/test_targets_code_needs.py
# holds this equal to what the modules declare.
_ERRORS = ("QT101", "QT102", "QT103", "QT104", "QT201", "QT202", "QT203", "QT204", "QT205",
           "QT208", "QT211", "QT301", "QT302", "QT303", "QT304", "QT305", "QT306", "QT307",
           "QT308", "QT309")
_INFOS = ("QT207", "QT210")
SEVERITIES: dict[str, str] = {
    **dict.fromkeys(_ERRORS, ERROR),
    **dict.fromkeys(_INFOS, INFO),
    **dict.fromkeys(("QT100", "QT206", "QT209", "QT401", "QT402", "QT403", "QT404", "QT405",
                     "QT406", "QT407", "QT408", "QT409", "QT410", "QT411", "QT412", "QT501",
                     "QT502"), WARNING),
}


def severity(code: str) -> str:
    """The severity of ``code`` (``SEVERITIES``; a code not written there: its module's)."""
    found = SEVERITIES.get(code)
    return get(code).severity if found is None else found


# Only a divergence (QT4xx, above) judges a kind of fact: ``judging`` reads those modules
# alone (a check naming a target imported the 42 code modules for it, about 6 ms);
# tests/test_report_codes.py holds every code that judges anything to the prefix.
JUDGING_PREFIX = "qt4"

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
    return tuple(c.code for c in _table(JUDGING_PREFIX).all_codes() if c.judges == what)


__all__ = ["QUANTIZE_ARITHMETIC", "all_codes", "find", "get", "judged", "judging", "severity"]
