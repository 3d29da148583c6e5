"""The fix edits and Violation (rules/base.py) are frozen records made without dataclasses'
code generation: each must behave as the frozen dataclass it stands for (made by position
or keyword, defaults, equality, hash, repr, no assignment) and cross to a worker process."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

from qlin_cli.rules import base

EDITS = [base.SetAttribute("axis", 1), base.RemoveAttribute("saturate"), base.ReshapeConstant(1, ()),
         base.AddOpsetImport("com.microsoft", 1), base.RemoveOpsetImport(""), base.SortNodes("main"),
         base.SetIrVersion(10), base.Violation("m"), base.Violation("m", None, "site")]


def _twin(record):
    """The frozen dataclass of the record's fields and defaults, with the record's values."""
    names = type(record).__slots__
    defaults = dict(zip(names[len(names) - len(record._defaults):], record._defaults, strict=True))
    cls = dataclasses.make_dataclass(type(record).__name__, [
        (n, object, dataclasses.field(default=defaults[n])) if n in defaults else (n, object) for n in names],
        frozen=True)
    return cls(*record._values())


@pytest.mark.parametrize("record", EDITS, ids=repr)
def test_a_record_behaves_as_its_frozen_dataclass(record):
    twin = _twin(record)
    assert repr(record) == repr(twin)
    assert hash(record) == hash(twin)
    again = type(record)(**{n: getattr(record, n) for n in record.__slots__})
    assert again == record and hash(again) == hash(record)
    assert record != twin  # (another class: as two dataclasses of other classes)
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.__setattr__(record.__slots__[0], "x")
    assert pickle.loads(pickle.dumps(record)) == record


def test_records_differ_by_value_and_refuse_wrong_arguments():
    assert base.SetAttribute("axis", 1) != base.SetAttribute("axis", 2)
    assert base.Violation("m", at=3) == base.Violation("m", None, 3)
    for bad in (lambda: base.SetAttribute("axis"), lambda: base.SetAttribute("axis", 1, 2),
                lambda: base.SetAttribute("axis", name="b", value=1), lambda: base.SetIrVersion(other=1)):
        with pytest.raises(TypeError):
            bad()
