"""`Frozen`, the base of the value objects the listing commands import (runs, steps, tasks,
settings, leases), and `replace()` for them.

Why not `@dataclass(frozen=True)`: a dataclass writes its `__init__`, `__eq__`, `__repr__`,
`__hash__` and `__setattr__` as source text and compiles them each time its module is imported,
0.3-2.7 ms a class on a two-core machine. `dayflow runs` imported fifteen of them: more than
anything else it adds to `import typer, rich` (issue 13). A `Frozen` subclass keeps what a frozen
dataclass gives (equality and hash over the fields, a dataclass-like repr, no assignment after
`__init__`, copy and pickle) from methods compiled once, into the `.pyc`:

    class Lease(Frozen):
        __slots__ = ("run_id", "token")  # the fields, in order

        run_id: str
        token: str

        def __init__(self, run_id: str, token: str) -> None:
            set_field(self, "run_id", run_id)
            set_field(self, "token", token)

`__init__` takes each field under its own name (`replace()` relies on it, and
tests/test_frozen.py checks it for every subclass). `typing.dataclass_transform` tells mypy the
subclasses are frozen, so an assignment to a field is a type error as it was. They are not
dataclasses: `dataclasses.replace` and `asdict` raise TypeError on them (mypy does not see it),
so use `replace` below.
"""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar, dataclass_transform

_F = TypeVar("_F", bound="Frozen")

# How `__init__` assigns a field: a plain assignment is refused, the class being frozen.
set_field = object.__setattr__


@dataclass_transform(frozen_default=True)
class Frozen:
    """Equality, hash, repr, copy and immutability over the fields named in `__slots__`."""

    __slots__: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # Without its own __slots__ a subclass would compare and hash over no field at all.
        if "__slots__" not in cls.__dict__:
            raise TypeError(f"{cls.__name__} must list its fields in __slots__")
        super().__init_subclass__(**kwargs)

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__qualname__}({fields})"

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field {name!r} of a frozen {type(self).__name__}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r} of a frozen {type(self).__name__}")

    # copy, deepcopy and pickle: the fields in order (the default would assign them one by one).
    def __getstate__(self) -> tuple[Any, ...]:
        return self._values()

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        for name, value in zip(self.__slots__, state, strict=True):
            set_field(self, name, value)


def replace(value: _F, /, **changes: Any) -> _F:
    """A copy of `value` with `changes` (field name -> new value), as `dataclasses.replace`."""
    fields = {name: getattr(value, name) for name in value.__slots__}
    unknown = changes.keys() - fields.keys()
    if unknown:
        raise TypeError(f"{type(value).__name__} has no field {', '.join(sorted(unknown))}")
    return type(value)(**(fields | changes))
