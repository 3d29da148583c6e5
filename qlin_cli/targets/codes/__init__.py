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

from ...code import QUANTIZE_ARITHMETIC, Table

_TABLE = Table(__path__, __name__, "qt")
all_codes = _TABLE.all_codes
get = _TABLE.get
find = _TABLE.find


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
