"""The indexes that spare a check importing every QT code module are held to the modules."""

from __future__ import annotations

from qlin_cli import codes


def test_the_index_of_codes_off_by_default_is_the_modules():
    for prefix, indexed in codes.OFF_BY_DEFAULT_INDEX.items():
        assert indexed == codes.off_by_default_of_modules(prefix), prefix


def test_off_by_default_reads_the_index_not_the_modules(monkeypatch):
    monkeypatch.setattr(codes, "_OFF", {})
    monkeypatch.setitem(codes.OFF_BY_DEFAULT_INDEX, "QT", frozenset({"QT999"}))
    assert codes.off_by_default("QT") == frozenset({"QT999"})

