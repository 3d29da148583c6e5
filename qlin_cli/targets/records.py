"""Frozen records of the targets' plain values (a finding, a fact's source, a model's facts, a
fusion group's slot, a probe's outcome ...): what ``@dataclass(frozen=True)`` gave these
classes, without generating and compiling their methods each time the targets are imported
(about 0.6 ms a class, 15 classes, on every `qlin check --target`). The rules' own records
(rules/base.py ``_Record``) are the same idea; tests/test_target_records.py holds each of
these to the frozen dataclass it stands for.

A class lists its fields in ``__slots__``, the last ones' defaults in ``_defaults``, and the
fields left out of equality, hashing and ``repr`` in ``_hidden`` (``field(compare=False,
repr=False)``). ``replace(record, **changes)`` is ``dataclasses.replace``.
"""

from __future__ import annotations

from dataclasses import FrozenInstanceError


class Record:
    """A frozen record made by position or keyword, equal when of one class with equal
    compared fields, hashed as a frozen dataclass hashes (a tuple of the compared fields),
    shown as a dataclass shows itself."""

    __slots__ = ()
    _defaults: tuple = ()
    _hidden: tuple = ()  # fields neither compared, hashed nor shown

    def __init__(self, *args, **kwargs):
        names = self.__slots__
        setter = object.__setattr__
        if not kwargs and len(args) == len(names):
            for name, value in zip(names, args, strict=True):
                setter(self, name, value)
            return
        if len(args) > len(names):
            raise TypeError(f"{type(self).__name__}() takes {len(names)} arguments, {len(args)} given")
        values = dict(zip(names[len(names) - len(self._defaults):], self._defaults, strict=True))
        values.update(zip(names, args, strict=False))  # (fewer arguments than fields)
        for name, value in kwargs.items():
            if name not in names or names.index(name) < len(args):
                raise TypeError(f"{type(self).__name__}() got an unexpected or repeated argument {name!r}")
            values[name] = value
        missing = [n for n in names if n not in values]
        if missing:
            raise TypeError(f"{type(self).__name__}() missing argument(s): {', '.join(missing)}")
        for name in names:
            setter(self, name, values[name])

    def _values(self) -> tuple:
        """The compared fields' values, in order."""
        hidden = self._hidden
        return tuple([getattr(self, n) for n in self.__slots__ if n not in hidden])

    def _all(self) -> tuple:
        return tuple([getattr(self, n) for n in self.__slots__])

    def __reduce__(self):  # (pickled: made again by position)
        return type(self), self._all()

    def __setattr__(self, name, value):
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name):
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __eq__(self, other):
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

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
