"""How rows become the plain values the store returns, and how values are stored."""

from __future__ import annotations

import json
from functools import cache
from typing import Any, TypeVar

from dayflow.errors import StoreError
from dayflow.frozen import Frozen
from dayflow.models import Run, RunSettings, Step, Task, ToolEffect, Usage
from dayflow.store.sql import Dialect, Row

_V = TypeVar("_V", bound=Frozen)

# Steps are numbered 1..n without gaps, so MAX(n) (one seek on the primary key) is the count.
# The usage of its steps answered by Message Batches: a partial index holds only those steps,
# so a run that never used a batch costs four empty seeks (`Dialect.batched_steps`: SQLite's
# planner takes the primary key instead, and reads every step of the run four times).
_BATCH_PARTS = ("input_tokens", "output_tokens", "cache_creation_tokens", "cache_read_tokens")


@cache
def run_select(dialect: Dialect) -> str:
    """SELECT of runs (as `r`) with their step counts, last host and batched usage."""
    return (
        "SELECT r.*, COALESCE((SELECT MAX(n) FROM steps s WHERE s.run_id = r.id), 0)"
        " AS step_count,"
        " (SELECT s.host FROM steps s WHERE s.run_id = r.id ORDER BY s.n DESC LIMIT 1)"
        " AS last_host"
        + "".join(
            f", (SELECT COALESCE(SUM(b.{part}), 0) FROM {dialect.batched_steps}"
            f" WHERE b.run_id = r.id AND b.batch_id IS NOT NULL) AS batch_{part}"
            for part in _BATCH_PARTS
        )
        + " FROM runs r"
    )


def dump(value: Any) -> str:
    """Compact and key-order preserving: the stored text is what goes back on the wire."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def like_prefix(prefix: str) -> str:
    """A LIKE pattern (with ESCAPE '\\') matching strings that start with `prefix`."""
    escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return escaped + "%"


def run_row(row: Row, status: str) -> Run:
    """The run in `row` (selected with `run_select`), showing `status` as its status."""
    return _value(
        Run,
        row,
        status=status,
        stored_status=row["status"],
        tools=stored_json(row["tools_json"], f"run {row['id']}"),
        user_msg=stored_json(row["user_msg_json"], f"run {row['id']}"),
        steps=row["step_count"],
        usage=usage(row),
        model_calls=row["step_count"],
        estimated=bool(row["estimated"]),
        settings=RunSettings.from_json(stored_json(row["settings_json"], f"run {row['id']}")),
        host=row["last_host"] or row["owner_host"],
        batch_usage=Usage(*(row[f"batch_{part}"] for part in _BATCH_PARTS)),
    )


def _value(cls: type[_V], row: Row, **computed: Any) -> _V:
    """A `cls` whose fields are the row's columns of the same names, but for the `computed`
    ones (a value's fields name its columns unless the stored form differs)."""
    return cls(**{f: computed[f] if f in computed else row[f] for f in cls._fields})


def usage(row: Row) -> Usage:
    """A run's totals or a step's usage: both rows name the four parts alike."""
    return Usage(
        row["input_tokens"],
        row["output_tokens"],
        row["cache_creation_tokens"],
        row["cache_read_tokens"],
    )


def stored_json(text: str | bytes, where: str) -> Any:
    """A JSON column's value. One nested past what Python's reader follows (written by hand,
    or by a version that did not check answers) is a StoreError naming `where`, not a
    RecursionError."""
    try:
        return json.loads(text)
    except RecursionError:
        raise StoreError(
            f"{where}: a stored value is nested too deeply to read (`dayflow doctor` checks "
            "the database)"
        ) from None


def step_row(r: Row) -> Step:
    details, results = r["stop_details_json"], r["tool_results_json"]
    where = f"run {r['run_id']} step {r['n']}"
    return _value(
        Step,
        r,
        assistant=stored_json(r["assistant_json"], where),
        tool_results=None if results is None else stored_json(results, where),
        usage=usage(r),
        stop_details=None if details is None else stored_json(details, where),
    )


def effect_row(r: Row) -> ToolEffect:
    return _value(ToolEffect, r, is_error=bool(r["is_error"]))


def task_row(r: Row) -> Task:
    return _value(Task, r)
