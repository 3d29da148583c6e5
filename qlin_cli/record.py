"""Frozen records: what ``@dataclass(frozen=True)`` gives a class of plain values, without
generating and compiling its methods each time the module defining it is imported (0.4-0.6 ms
a class, on every start). The rules' fix edits and violations (rules/base.py) and the targets'
values (targets/records.py, which adds fields left out of equality) are such records;
tests/test_rule_records.py and tests/test_target_records.py hold each to the dataclass it
stands for."""

from __future__ import annotations

from dataclasses import FrozenInstanceError


class Record:
    """A frozen record of the fields its class lists in ``__slots__``, made by position or
    keyword (``_defaults``: the last fields' defaults), equal when of one class with equal
    fields, hashed, shown as a dataclass shows itself."""

    __slots__ = ()
    _defaults: tuple = ()

    def __init__(self, *args, **kwargs):
        names = self.__slots__
        if len(args) > len(names):
            raise TypeError(f"{type(self).__name__}() takes {len(names)} arguments, {len(args)} given")
        values = dict(zip(names[len(names) - len(self._defaults):], self._defaults, strict=True))
        values.update(zip(names, args, strict=False))  # (fewer arguments than fields)
        for name, value in kwargs.items():
            if name not in names or name in values and names.index(name) < len(args):
                raise TypeError(f"{type(self).__name__}() got an unexpected or repeated argument {name!r}")
            values[name] = value
        missing = [n for n in names if n not in values]
        if missing:
            raise TypeError(f"{type(self).__name__}() missing argument(s): {', '.join(missing)}")
        for name in names:
            object.__setattr__(self, name, values[name])

    def _values(self) -> tuple:
        return tuple(getattr(self, n) for n in self.__slots__)

    def __reduce__(self):  # (pickled to and from --jobs workers: made again by position)
        return type(self), self._values()

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
        return f"{type(self).__qualname__}({', '.join(f'{n}={getattr(self, n)!r}' for n in self.__slots__)})"
