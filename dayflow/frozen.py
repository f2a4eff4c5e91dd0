"""`Frozen`, the base of the value objects the listing commands import (runs, steps, tasks,
settings, leases), and `replace()` for them.

A value class states its fields once, as annotations (defaults as in a dataclass):

    class Lease(Frozen):
        run_id: str
        token: str
        renewed: bool = False

Its `__slots__`, its field order and an `__init__` taking each field by position or by name
are derived from those annotations when the class is made; `typing.dataclass_transform` tells
mypy the same (the `__init__` it checks calls against, and that assigning a field is an error).

Why not `@dataclass(frozen=True)`: a dataclass writes its `__init__`, `__eq__`, `__repr__`,
`__hash__` and `__setattr__` as source text and compiles them each time its module is imported,
0.3-2.7 ms a class on a two-core machine. `dayflow runs` imported fifteen of them: more than
anything else it adds to `import typer, rich` (issue 13). A `Frozen` class keeps what a frozen
dataclass gives (equality and hash over the fields, a dataclass-like repr, no assignment after
`__init__`, copy and pickle) from methods compiled once, into the `.pyc`: making a class only
reads its annotations' names (never evaluates them) and pops its defaults. They are not
dataclasses: `dataclasses.replace` and `asdict` raise TypeError on them (mypy does not see it),
so use `replace` below. A default is shared by every instance, so it must be immutable (a
tuple, a frozen value, None), as a dataclass insists for lists and dicts.
"""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar, dataclass_transform

_F = TypeVar("_F", bound="Frozen")

# How `__init__` assigns a field: a plain assignment is refused, the class being frozen.
set_field = object.__setattr__

_NO_DEFAULT: Any = object()
_MUTABLE = (list, dict, set)


class _FrozenType(type):
    """Derives a `Frozen` class's slots, fields and defaults from its annotations."""

    _fields: tuple[str, ...]
    _defaults: dict[str, Any]
    _fill: tuple[Any, ...]  # per field, its default or _NO_DEFAULT

    def __new__(
        mcls, name: str, bases: tuple[type, ...], ns: dict[str, Any], **kwargs: Any
    ) -> _FrozenType:
        inherited = [b for b in bases if isinstance(b, _FrozenType)]
        fields: list[str] = [f for b in inherited for f in b._fields]
        defaults: dict[str, Any] = {k: v for b in inherited for k, v in b._defaults.items()}
        if inherited:
            if "__slots__" in ns:
                raise TypeError(f"{name}: declare its fields as annotations, not in __slots__")
            own = [f for f, kind in ns.get("__annotations__", {}).items() if not _classvar(kind)]
            for field in own:
                if field in fields:
                    raise TypeError(f"{name}: field {field!r} is already one of its base's")
                value = ns.pop(field, _NO_DEFAULT)
                if value is not _NO_DEFAULT:
                    if isinstance(value, _MUTABLE):
                        raise TypeError(f"{name}.{field}: a mutable default would be shared")
                    defaults[field] = value
                elif fields and fields[-1] in defaults:
                    raise TypeError(f"{name}: field {field!r} without a default follows one with")
                fields.append(field)
            ns["__slots__"] = tuple(own)
        ns["_fields"], ns["_defaults"] = tuple(fields), defaults
        ns["_fill"] = tuple(defaults.get(f, _NO_DEFAULT) for f in fields)
        return super().__new__(mcls, name, bases, ns, **kwargs)

    @property
    def __signature__(cls) -> Any:
        """What `inspect.signature(cls)` shows (made on demand: `inspect` costs start-up time)."""
        import inspect

        kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
        return inspect.Signature(
            [
                inspect.Parameter(f, kind, default=cls._defaults.get(f, inspect.Parameter.empty))
                for f in cls._fields
            ]
        )


def _refuse(cls: type, positional: tuple[str, ...], kwargs: dict[str, Any]) -> None:
    twice = [f for f in positional if f in kwargs]
    if twice:
        raise TypeError(f"{cls.__name__} got two values for {twice[0]!r}")
    unknown = ", ".join(sorted(kwargs.keys() - set(cls._fields)))  # type: ignore[attr-defined]
    raise TypeError(f"{cls.__name__} has no field {unknown}")


def _classvar(annotation: Any) -> bool:
    text = annotation if isinstance(annotation, str) else repr(annotation)
    return text.startswith(("ClassVar", "typing.ClassVar"))


@dataclass_transform(frozen_default=True)
class Frozen(metaclass=_FrozenType):
    """Equality, hash, repr, copy and immutability over the fields its annotations declare."""

    __slots__ = ()
    _fields: ClassVar[tuple[str, ...]]
    _defaults: ClassVar[dict[str, Any]]
    _fill: ClassVar[tuple[Any, ...]]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        fields = self._fields
        given = len(args)
        if given > len(fields):
            raise TypeError(
                f"{type(self).__name__} takes {len(fields)} arguments but {given} were given"
            )
        for field, value in zip(fields, args, strict=False):
            set_field(self, field, value)
        if kwargs and not kwargs.keys() <= set(fields[given:]):
            _refuse(type(self), fields[:given], kwargs)
        for field, default in zip(fields[given:], self._fill[given:], strict=True):
            value = kwargs.get(field, default) if kwargs else default
            if value is _NO_DEFAULT:
                raise TypeError(f"{type(self).__name__} needs a value for {field!r}")
            set_field(self, field, value)

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self._fields)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__qualname__}({fields})"

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field {name!r} of a frozen {type(self).__name__}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r} of a frozen {type(self).__name__}")

    # copy, deepcopy and pickle: the fields in order (the default would assign them one by one).
    def __getstate__(self) -> tuple[Any, ...]:
        return self._values()

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        for name, value in zip(self._fields, state, strict=True):
            set_field(self, name, value)


def fields_of(value: Frozen) -> dict[str, Any]:
    """`value`'s fields by name, in their declared order (a shallow `dataclasses.asdict`)."""
    return {name: getattr(value, name) for name in value._fields}


def replace(value: _F, /, **changes: Any) -> _F:
    """A copy of `value` with `changes` (field name -> new value), as `dataclasses.replace`."""
    fields = fields_of(value)
    unknown = changes.keys() - fields.keys()
    if unknown:
        raise TypeError(f"{type(value).__name__} has no field {', '.join(sorted(unknown))}")
    return type(value)(**(fields | changes))
