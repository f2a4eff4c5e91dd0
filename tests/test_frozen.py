"""`Frozen` value classes behave as the frozen dataclasses they replaced (issue 13: they cost
no start-up time), each field declared once, as an annotation, its slot and `__init__`
parameter derived from it (issue 18)."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle
import re
from typing import Any, ClassVar

import pytest

# Every module that defines a Frozen class, so that `Frozen.__subclasses__()` sees them all.
import dayflow.cli_sources  # noqa: F401
import dayflow.config  # noqa: F401
import dayflow.store.values  # noqa: F401
from dayflow.frozen import Frozen, replace
from dayflow.models import Run, RunSettings, Usage

CLASSES = sorted(Frozen.__subclasses__(), key=lambda c: c.__qualname__)


def _distinct(cls: type[Frozen]) -> tuple[Frozen, dict[str, Any]]:
    """An instance whose every field holds its own object, and those objects by field."""
    values: dict[str, Any] = {name: object() for name in cls._fields}
    return cls(**values), values


def test_the_listing_paths_value_classes_are_all_frozen_classes() -> None:
    names = {c.__name__ for c in CLASSES}
    assert {"Usage", "Run", "RunSettings", "Task", "Step", "Event", "Settings", "Lease"} <= names
    assert {"Dialect", "StoreContext"} <= names  # the store's, on the same paths
    assert not any(dataclasses.is_dataclass(c) for c in CLASSES)


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__qualname__)
def test_init_takes_each_field_under_its_name_in_order(cls: type[Frozen]) -> None:
    params = list(inspect.signature(cls).parameters)
    assert params == list(cls._fields) == list(cls.__annotations__)  # what mypy sees exists
    assert cls.__slots__ == cls._fields
    made, values = _distinct(cls)
    assert cls(*values.values()) == made  # by position too
    assert all(getattr(made, name) is value for name, value in values.items())
    assert not hasattr(made, "__dict__")


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__qualname__)
def test_equality_hash_and_repr_are_a_frozen_dataclass_s(cls: type[Frozen]) -> None:
    """Compared with a frozen dataclass of the same name and fields."""
    twin: Any = dataclasses.make_dataclass(cls.__name__, list(cls._fields), frozen=True)
    twin.__qualname__ = cls.__qualname__
    values = {name: (i, f"v{i}") for i, name in enumerate(cls._fields)}
    ours, theirs = cls(**values), twin(**values)
    assert repr(ours) == repr(theirs)
    assert ours == cls(**values) and hash(ours) == hash(cls(**values)) == hash(theirs)
    other = cls(**{**values, cls._fields[-1]: "changed"})
    assert ours != other
    assert ours != theirs  # another class is never equal, as with dataclasses


def test_fields_cannot_be_assigned_or_deleted() -> None:
    usage = Usage(1, 2)
    with pytest.raises(AttributeError, match="frozen Usage"):
        usage.input_tokens = 5  # type: ignore[misc]
    with pytest.raises(AttributeError, match="frozen Usage"):
        del usage.output_tokens  # type: ignore[misc]
    with pytest.raises(AttributeError):
        usage.other = 1  # type: ignore[attr-defined]
    assert usage == Usage(1, 2)


def test_copy_deepcopy_and_pickle_keep_every_field() -> None:
    settings = RunSettings(tz="Europe/Berlin", sources={"config": "/x.toml"}, deliver=("file",))
    twins = [copy.copy(settings), copy.deepcopy(settings), pickle.loads(pickle.dumps(settings))]
    assert all(twin == settings and twin is not settings for twin in twins)
    deep = copy.deepcopy(settings)
    assert deep.sources is not settings.sources  # deep means deep


def test_replace_changes_only_the_named_fields() -> None:
    usage = Usage(1, 2, 3, 4)
    assert replace(usage, output_tokens=9) == Usage(1, 9, 3, 4)
    assert usage == Usage(1, 2, 3, 4)
    with pytest.raises(TypeError, match="no field tokens"):
        replace(usage, tokens=1)


def test_defaults_are_the_dataclass_defaults_they_were() -> None:
    assert RunSettings() == RunSettings.from_json({})
    run_params = inspect.signature(Run).parameters
    assert run_params["settings"].default == RunSettings()
    assert run_params["host"].default is None
    _, values = _distinct(Run)
    del values["settings"], values["host"]
    made = Run(**values)
    assert made.settings == RunSettings() and made.host is None


def test_a_class_states_its_fields_once_and_gets_slots_and_init_from_them() -> None:
    class Point(Frozen):
        limit: ClassVar[int] = 3  # a class variable, not a field
        x: int
        y: int = 0
        label: str | None = None

    assert Point._fields == ("x", "y", "label") and Point.__slots__ == Point._fields
    assert Point(1) == Point(x=1, y=0, label=None) == Point(1, 0, None)
    assert repr(Point(1, label="a")).endswith("Point(x=1, y=0, label='a')")
    assert Point.limit == 3 and not hasattr(Point(1), "__dict__")
    assert list(inspect.signature(Point).parameters) == ["x", "y", "label"]


def test_a_subclass_of_a_value_class_adds_its_fields_after_its_bases() -> None:
    class Base(Frozen):
        a: int

    class Child(Base):
        b: str = "b"

    assert Child._fields == ("a", "b") and Child(1) == Child(a=1, b="b")
    assert Child(1) != Base(1)


@pytest.mark.parametrize(
    ("args", "kwargs", "error"),
    [
        ((), {}, "needs a value for 'x'"),
        ((1, 2, 3, 4), {}, "takes 3 arguments but 4 were given"),
        ((1,), {"x": 2}, "got two values for 'x'"),
        ((1,), {"z": 2}, "has no field z"),
    ],
)
def test_a_wrong_call_is_a_type_error_as_for_a_dataclass(
    args: tuple[Any, ...], kwargs: dict[str, Any], error: str
) -> None:
    class Point(Frozen):
        x: int
        y: int = 0
        label: str | None = None

    with pytest.raises(TypeError, match=re.escape(error)):
        Point(*args, **kwargs)


def test_slots_a_mutable_default_or_a_field_without_default_after_one_are_refused() -> None:
    """Slots listed by hand would say the fields twice; a list default would be shared by
    every instance; a field without a default after one could not be passed by position."""
    with pytest.raises(TypeError, match="declare its fields as annotations"):

        class Listed(Frozen):
            __slots__ = ("name",)
            name: str

    with pytest.raises(TypeError, match="mutable default would be shared"):

        class Shared(Frozen):
            items: list[str] = []  # noqa: RUF012

    with pytest.raises(TypeError, match="without a default follows one with"):

        class Unordered(Frozen):
            a: int = 0
            b: int  # type: ignore[misc]  # mypy refuses it too


def test_making_a_value_class_compiles_no_source_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """The start-up gain over dataclasses: they exec generated source for every class made."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("compiled source text")

    monkeypatch.setattr("builtins.exec", refuse)
    monkeypatch.setattr("builtins.compile", refuse)

    class Lease(Frozen):
        run_id: str
        token: str = "t"

    assert Lease("r") == Lease("r", "t") and hash(Lease("r")) == hash(Lease("r", "t"))
    with pytest.raises(AssertionError, match="compiled source text"):
        dataclasses.make_dataclass("Twin", ["run_id"], frozen=True)
