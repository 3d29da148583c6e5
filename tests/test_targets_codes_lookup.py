"""targets/codes: a code's module found from one listing of the folder, and the codes each
kind of fact is judged by written down (``JUDGING``), both as the modules themselves say."""

from __future__ import annotations

import pkgutil

import pytest

from qlin_cli.code import Table
from qlin_cli.targets import codes


def test_every_code_is_found_as_the_table_finds_it():
    table = Table(codes.__path__, codes.__name__, "qt")
    every = table.all_codes()
    assert len(every) > 30
    for c in every:
        assert codes.get(c.code) is table.get(c.code) is c
        assert codes.find(c.code.lower()) is c


@pytest.mark.parametrize("code", ["QT999", "QT40", "QL001", "qt-01", ""])
def test_an_unknown_code_is_none(code):
    assert codes.find(code) is None
    with pytest.raises(KeyError):
        codes.get(code)


def test_judging_is_what_the_modules_declare():
    declared = {c.judges for c in codes.all_codes() if c.judges}
    assert declared == set(codes.JUDGING)
    for what, found in codes.JUDGING.items():
        assert codes.judged(what) == found
        assert codes.judging(what) == found


def test_every_code_package_is_listed_as_pkgutil_lists_it():
    """(code.module_names' one listing of a folder, for the convert codes too)"""
    from qlin_cli import code
    from qlin_cli.convert import codes as convert_codes

    for package in (codes, convert_codes):
        listed = code.module_names(tuple(package.__path__))
        assert listed == tuple(sorted(m.name for m in pkgutil.iter_modules(package.__path__)))
        assert any(name.startswith(("qt", "qc")) for name in listed)
