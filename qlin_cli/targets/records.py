"""Frozen records of the targets' plain values (a finding, a fact's source, a model's facts, a
fusion group's slot, a probe's outcome ...): what ``@dataclass(frozen=True)`` gave these
classes, without generating and compiling their methods each time the targets are imported
(about 0.6 ms a class, 15 classes, on every `qlin check --target`). They are records as the
rules' are (qlin_cli/record.py: made by position or keyword, defaults, equality, hash, repr,
no assignment) with fields left out of equality, hashing and ``repr`` (``_hidden``:
``field(compare=False, repr=False)``) and ``replace``; tests/test_target_records.py holds
each to the frozen dataclass it stands for.

A class lists its fields in ``__slots__``, the last ones' defaults in ``_defaults``.
"""

from __future__ import annotations

from .. import record


class Record(record.Record):
    """A record whose ``_hidden`` fields are neither compared, hashed nor shown."""

    __slots__ = ()
    _hidden: tuple = ()  # fields neither compared, hashed nor shown

    def __init__(self, *args, **kwargs):
        names = self.__slots__
        if kwargs or len(args) != len(names):
            super().__init__(*args, **kwargs)
            return
        setter = object.__setattr__  # (every field given by position: the common case, made quickly)
        for name, value in zip(names, args, strict=True):
            setter(self, name, value)

    def _values(self) -> tuple:
        """The compared fields' values, in order."""
        hidden = self._hidden
        return tuple([getattr(self, n) for n in self.__slots__ if n not in hidden])

    def __reduce__(self):  # (pickled: made again by position, hidden fields too)
        return type(self), tuple([getattr(self, n) for n in self.__slots__])

    def __repr__(self) -> str:
        shown = ", ".join(f"{n}={getattr(self, n)!r}" for n in self.__slots__ if n not in self._hidden)
        return f"{type(self).__qualname__}({shown})"


def replace(record: Record, **changes) -> Record:
    """The record with ``changes`` (``dataclasses.replace``)."""
    names = record.__slots__
    for name in changes:
        if name not in names:
            raise TypeError(f"{type(record).__name__} has no field {name!r}")
    return type(record)(*[changes[n] if n in changes else getattr(record, n) for n in names])
