"""The targets' records (targets/records.py) behave as the frozen dataclasses they stand for:
made by position or keyword, defaults, equality and hash over the compared fields, repr,
no assignment, ``replace``, pickling; ``Plan`` as a mutable dataclass (equal, unhashable)."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

from qlin_cli.targets import base, confirm, fusion, ort_table, predict, probe_table, records

RECORDS = [
    base.Source("fact", "measured", "tests/x.py"), base.Source("f", "documented", "page", "note"),
    base.TargetFinding("QT201", "error", "no kernel"),
    base.TargetFinding("QT201", "error", "no kernel", True, "onnxruntime", "fix", "label", "way"),
    base.ModelInfo(10, {"": 21}, frozenset({""}), frozenset()),
    base.Float8Quantize(("float8e4m3fn",), True, "what", "fix"), base.BlockedScale(True, "fails"),
    base.PairStripping(("int8",), "removed"),
    fusion.Slot("float"), fusion.Slot("int8", "channel", 1, None, True, True, "dq"),
    fusion.Group("MatMul", (fusion.Slot("float"),), "Q uint8"),
    probe_table.Outcome(1, 0), probe_table.Outcome(0, 2, "load: no", (("x86", "ok"),)),
    ort_table.Kernel("", "Relu", 14, None, ({"T": frozenset({"float"})},)),
    ort_table.Signature((("X", "T", "single"),), (("Y", "T", "single"),)),
    confirm.Outcome(), confirm.Outcome(False, "load", "bad"),
    predict.Choice(21, None, 10, False),
]
HIDDEN = {"registrations"}


def _twin(record):
    """The frozen dataclass of the record's fields and defaults, with the record's values."""
    names = type(record).__slots__
    defaults = dict(zip(names[len(names) - len(record._defaults):], record._defaults, strict=True))
    specs = []
    for n in names:
        kw = {"compare": False, "repr": False} if n in record._hidden else {}
        if n in defaults:
            kw["default"] = defaults[n]
        specs.append((n, object, dataclasses.field(**kw)) if kw else (n, object))
    cls = dataclasses.make_dataclass(type(record).__name__, specs, frozen=True)
    cls.__qualname__ = type(record).__qualname__
    return cls(*[getattr(record, n) for n in names])


@pytest.mark.parametrize("record", RECORDS, ids=repr)
def test_a_record_behaves_as_its_frozen_dataclass(record):
    twin = _twin(record)
    assert repr(record) == repr(twin)
    names = type(record).__slots__
    again = type(record)(**{n: getattr(record, n) for n in names})
    assert again == record
    try:
        want = hash(twin)
    except TypeError:  # a field that is not hashable (ModelInfo's opsets): neither is the record
        with pytest.raises(TypeError):
            hash(record)
    else:
        assert hash(record) == want and hash(again) == want
    assert record != twin  # (another class: as two dataclasses of other classes)
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.__setattr__(names[0], "x")
    assert pickle.loads(pickle.dumps(record)) == record
    first = names[0]
    changed = records.replace(record, **{first: "other"})
    assert repr(changed) == repr(dataclasses.replace(twin, **{first: "other"})) and changed != record
    if record._defaults:
        short = type(record)(*[getattr(record, n) for n in names[:len(names) - len(record._defaults)]])
        assert repr(short) == repr(type(twin)(*[getattr(record, n) for n in names[:len(names)
                                                                                 - len(record._defaults)]]))


def test_hidden_fields_are_not_compared():
    a = ort_table.Kernel("", "Relu", 14, None, ())
    b = ort_table.Kernel("", "Relu", 14, None, ({"T": frozenset({"float"})},))
    assert a == b and hash(a) == hash(b) and "registrations" not in repr(a)


def test_wrong_arguments_raise_as_a_dataclass_does():
    with pytest.raises(TypeError):
        base.Source("fact")
    with pytest.raises(TypeError):
        base.Source("f", "k", "w", "n", "extra")
    with pytest.raises(TypeError):
        base.Source("f", "k", "w", fact="again")
    with pytest.raises(TypeError):
        records.replace(base.Source("f", "k", "w"), nothing=1)


def test_plan_is_a_mutable_record():
    p = predict.Plan("onnxruntime", True, None)
    assert p.blocking == [] and p.tried == 0 and p.blocking is not predict.Plan("x", True, None).blocking
    assert p == predict.Plan("onnxruntime", True, None, [], 0)
    assert repr(p) == "Plan(target='onnxruntime', needed=True, choice=None, blocking=[], tried=0)"
    p.tried = 3
    assert p.tried == 3
    with pytest.raises(TypeError):
        hash(p)


def test_node_site_methods_are_those_a_dataclass_generates():
    """NodeSite's written-out __init__, __repr__, __eq__ and __hash__ (targets/base.py) behave
    as @dataclass(unsafe_hash=True) makes them, over the same fields and defaults."""
    fields = dataclasses.fields(base.NodeSite)
    assert tuple(f.name for f in fields) == base._SITE_FIELDS
    twin_cls = dataclasses.make_dataclass("NodeSite", [
        (f.name, object, dataclasses.field(default=f.default)) if f.default is not dataclasses.MISSING
        else (f.name, object) for f in fields], unsafe_hash=True)
    args = [("f",), {"consumers": (("MatMul", "", 0),), "group": "g", "opsets": (("", 21),)}]
    site, twin = base.NodeSite(*args[0], **args[1]), twin_cls(*args[0], **args[1])
    assert repr(site) == repr(twin) and hash(site) == hash(twin)
    assert site == base.NodeSite(*args[0], **args[1]) and site != base.NodeSite("f")
    values = [getattr(site, f.name) for f in fields]
    assert base.NodeSite(*values) == site and values == [getattr(twin, f.name) for f in fields]
    moved = dataclasses.replace(site, facts="g")
    assert moved.facts == "g" and moved.group == "g" and moved != site
