"""The store's face: small protocols, one per kind of caller.

- `RunLog`: what the loop reads and writes while it drives one run (agent.py).
- `TaskBook`: the tasks (the `create_task` and `read_tasks` tools, `dayflow tasks`).
- `Archive`: what the history commands read and rewrite (runs, show, trace, fork, gc, doctor).
- `Upkeep`: what only one engine knows how to do (its size, reclaiming space, its own integrity
  checks, file permissions), so `gc` and `doctor` work on any backend.

`Store` is all of them, as `open_store` returns it; callers ask for the narrowest they need.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

from dayflow.models import Event, Message, ModelResponse, Run, Step, Task, ToolEffect, Usage
from dayflow.store.sql import Database
from dayflow.store.values import Lease, NewRun, UpkeepFinding


class RunLog(Protocol):
    """The runs, steps, effects and events one driver writes, each write fenced by its lease."""

    def create_run(self, spec: NewRun, *, sole_for_day: bool = False) -> tuple[Run, Lease]: ...

    def claim(self, run_id: str) -> Lease: ...

    def release(
        self, lease: Lease, status: str, reason: str | None = None, request_id: str | None = None
    ) -> None: ...

    def update_limits(
        self,
        lease: Lease,
        *,
        max_steps: int | None = None,
        budget: int | None = None,
        max_tokens: int | None = None,
    ) -> None: ...

    def add_event(self, run_id: str, kind: str, detail: dict[str, Any] | None = None) -> None: ...

    def keep_alive(self, lease: Lease) -> AbstractContextManager[None]:
        """Keep the lease from expiring during the block (a model call), where leases are
        short; never a transaction across it."""
        ...

    def get_run(self, run_id: str) -> Run: ...

    def steps(self, run_id: str, *, after: int = 0) -> list[Step]: ...

    def last_step(self, run_id: str) -> Step | None: ...

    def conversation(self, run_id: str, *, after: int = 0) -> list[Message]: ...

    def begin_step(
        self, lease: Lease, n: int, response: ModelResponse, duration_ms: int
    ) -> None: ...

    def complete_step(
        self,
        lease: Lease,
        n: int,
        tool_results: list[dict[str, Any]] | None,
        *,
        events: Sequence[tuple[str, dict[str, Any]]] = (),
        effects: bool = True,
        final_text: str | None = None,
        discard: bool = False,
        note: str | None = None,
    ) -> None: ...

    def effects_of_step(self, run_id: str, n: int) -> dict[str, ToolEffect]: ...

    def get_effect(self, run_id: str, key: str) -> ToolEffect | None: ...

    def save_effect(
        self,
        lease: Lease,
        step_n: int,
        key: str,
        name: str,
        produce: Callable[[], tuple[str, bool]],
        idempotency_key: str | None = None,
    ) -> ToolEffect: ...

    def count_errors(self, run_id: str, tool_name: str, prefix: str) -> int: ...

    def add_compaction(
        self,
        lease: Lease,
        *,
        before_step: int,
        through_step: int,
        summary: Message,
        tokens_before: int,
        tokens_after: int,
    ) -> None: ...

    def latest_compaction(self, run_id: str) -> tuple[int, Message] | None: ...


class TaskBook(Protocol):
    """Tasks, each once per idempotency key."""

    def create_task(
        self,
        *,
        title: str,
        idempotency_key: str,
        run_id: str | None,
        due: str | None = None,
        source_id: str | None = None,
        notes: str | None = None,
    ) -> tuple[Task, bool]: ...

    def task_exists(self, idempotency_key: str) -> bool: ...

    def count_tasks_created_by(self, run_id: str) -> int: ...

    def list_tasks(self, *, include_done: bool = False) -> list[Task]: ...

    def find_task(self, prefix: str) -> Task: ...

    def mark_task_done(self, task_id: str) -> Task: ...

    def delete_tasks_with_key_prefix(self, prefix: str) -> int:
        """Delete the tasks whose key starts with `prefix` (the sample's `sample:`)."""
        ...


class Upkeep(Protocol):
    """What only the engine behind the store knows how to do."""

    location: str  # what to show the user: a path, or a URL without its password

    def schema_version(self) -> str | None: ...

    def latest_schema(self) -> str: ...

    def size_bytes(self) -> int: ...

    def reclaim(self) -> None: ...

    def integrity_problems(self) -> list[str]: ...

    def recovery_hint(self) -> str: ...

    def exposure(self, *, fix: bool) -> list[UpkeepFinding]: ...


class Archive(Protocol):
    """Finished and unfinished runs as the history commands see them."""

    @property
    def upkeep(self) -> Upkeep: ...

    def list_runs(
        self, *, status: str | None = None, since: str | None = None, limit: int | None = 20
    ) -> list[Run]: ...

    def find_run(self, prefix: str) -> Run: ...

    def get_run(self, run_id: str) -> Run: ...

    def latest_unfinished(self, brief_date: str | None = None) -> Run | None: ...

    def steps(self, run_id: str, *, after: int = 0) -> list[Step]: ...

    def effects(self, run_id: str) -> list[ToolEffect]: ...

    def events(self, run_id: str) -> list[Event]: ...

    def compactions(self, run_id: str) -> list[dict[str, Any]]: ...

    def create_fork(
        self,
        parent_id: str,
        from_step: int,
        *,
        model: str,
        max_steps: int | None = None,
        budget: int | None = None,
    ) -> tuple[Run, Lease]: ...

    def prune_run(self, run_id: str, *, unfinished: bool = False, note: Any = None) -> bool: ...

    def redact_run(
        self, run_id: str, tools: Collection[str], *, unfinished: bool = False, note: Any = None
    ) -> bool: ...

    def totals_mismatches(self) -> list[tuple[str, Usage, Usage]]: ...

    def stale_leases(self) -> list[Run]: ...

    def release_stale(self, run_id: str) -> bool: ...

    def recompute_totals(self, run_id: str) -> tuple[Usage, Usage]: ...


class Store(RunLog, TaskBook, Archive, Protocol):
    """Everything, as `open_store` returns it. A context manager that closes the connection."""

    @property
    def db(self) -> Database: ...

    def close(self) -> None: ...

    def __enter__(self) -> Store: ...

    def __exit__(self, *exc: object) -> None: ...
