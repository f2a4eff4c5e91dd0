"""`Frozen` value classes behave as the frozen dataclasses they replaced (issue 13: they cost
no start-up time), and every subclass's fields, `__init__` and annotations agree."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle
from typing import Any

import pytest

# Every module that defines a Frozen class, so that `Frozen.__subclasses__()` sees them all.
import dayflow.cli_sources  # noqa: F401
import dayflow.config  # noqa: F401
import dayflow.store.values  # noqa: F401
from dayflow.frozen import Frozen, replace
from dayflow.models import Run, RunSettings, Usage

CLASSES = sorted(Frozen.__subclasses__(), key=lambda c: c.__qualname__)


def _distinct(cls: type[Frozen]) -> tuple[Frozen, dict[str, object]]:
    """An instance whose every field holds its own object, and those objects by field."""
    values: dict[str, object] = {name: object() for name in cls.__slots__}
    return cls(**values), values


def test_the_listing_paths_value_classes_are_all_frozen_classes() -> None:
    names = {c.__name__ for c in CLASSES}
    assert {"Usage", "Run", "RunSettings", "Task", "Step", "Event", "Settings", "Lease"} <= names
    assert not any(dataclasses.is_dataclass(c) for c in CLASSES)


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__qualname__)
def test_init_takes_each_field_under_its_name_in_order(cls: type[Frozen]) -> None:
    params = list(inspect.signature(cls).parameters)
    assert params == list(cls.__slots__)
    assert list(cls.__annotations__) == list(cls.__slots__)  # what mypy sees is what exists
    made, values = _distinct(cls)
    assert all(getattr(made, name) is value for name, value in values.items())
    assert not hasattr(made, "__dict__")


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__qualname__)
def test_equality_hash_and_repr_are_a_frozen_dataclass_s(cls: type[Frozen]) -> None:
    """Compared with a frozen dataclass of the same name and fields."""
    twin: Any = dataclasses.make_dataclass(cls.__name__, list(cls.__slots__), frozen=True)
    twin.__qualname__ = cls.__qualname__
    values = {name: (i, f"v{i}") for i, name in enumerate(cls.__slots__)}
    ours, theirs = cls(**values), twin(**values)
    assert repr(ours) == repr(theirs)
    assert ours == cls(**values) and hash(ours) == hash(cls(**values)) == hash(theirs)
    other = cls(**{**values, cls.__slots__[-1]: "changed"})
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
    assert run_params["settings"].default is None  # None gives a fresh RunSettings()
    made, _ = _distinct(Run)
    assert replace(made, settings=None).settings == RunSettings()


def test_a_subclass_without_slots_is_refused() -> None:
    """It would have a __dict__ and compare equal to any other instance (no fields)."""
    with pytest.raises(TypeError, match="must list its fields in __slots__"):

        class Loose(Frozen):
            name: str
