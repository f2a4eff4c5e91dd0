"""`SqlStore`: the one composition of the store's parts over a `Database` of any backend.

Each part owns one concept and is handed what it needs: the event log; the leases (claims and
the one lease check every driver's write makes); the runs; the steps with their effects and
compactions; the tasks; the history (fork, gc, doctor). The methods below only route the face's
names to the part that owns them.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from dayflow.clock import Clock
from dayflow.models import Event, Message, ModelResponse, Run, Step, Task, ToolEffect, Usage
from dayflow.store.context import StoreContext
from dayflow.store.events import EventLog
from dayflow.store.face import Upkeep
from dayflow.store.leases import Leases
from dayflow.store.runs import Runs
from dayflow.store.sql import Database
from dayflow.store.steps import Steps
from dayflow.store.tasks import Tasks
from dayflow.store.values import Lease, NewRun, Owner

if TYPE_CHECKING:
    from dayflow.store.archive import History


class SqlStore:
    def __init__(self, db: Database, upkeep: Upkeep, *, clock: Clock, owner: Owner) -> None:
        self._ctx = ctx = StoreContext(db, clock, owner)
        self._upkeep = upkeep
        self._events = EventLog(ctx)
        self._leases = Leases(ctx, self._events)
        self._runs = Runs(ctx, self._leases, self._events)
        self._steps = Steps(ctx, self._leases, self._events)
        self._tasks = Tasks(ctx)
        self._archive: Any = None  # History, made on first use (see `_history`)

    @property
    def _history(self) -> History:
        """fork, gc and doctor: imported on first use, off the start-up path of `runs`."""
        if self._archive is None:
            from dayflow.store.archive import History

            self._archive = History(self._ctx, self._runs, self._leases, self._events)
        return self._archive  # type: ignore[no-any-return]

    @property
    def db(self) -> Database:
        return self._ctx.db

    @property
    def upkeep(self) -> Upkeep:
        return self._upkeep

    @property
    def owner(self) -> Owner:
        return self._ctx.owner

    def close(self) -> None:
        self._ctx.db.close()

    def __enter__(self) -> SqlStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------- runs and leases

    def create_run(self, spec: NewRun, *, sole_for_day: bool = False) -> tuple[Run, Lease]:
        return self._runs.create(spec, sole_for_day=sole_for_day)

    def get_run(self, run_id: str) -> Run:
        return self._runs.get(run_id)

    def find_run(self, prefix: str) -> Run:
        return self._runs.find(prefix)

    def list_runs(
        self, *, status: str | None = None, since: str | None = None, limit: int | None = 20
    ) -> list[Run]:
        return self._runs.list(status=status, since=since, limit=limit)

    def latest_unfinished(self, brief_date: str | None = None) -> Run | None:
        return self._runs.latest_unfinished(brief_date)

    def update_limits(
        self,
        lease: Lease,
        *,
        max_steps: int | None = None,
        budget: int | None = None,
        max_tokens: int | None = None,
    ) -> None:
        self._runs.update_limits(lease, max_steps=max_steps, budget=budget, max_tokens=max_tokens)

    def claim(self, run_id: str) -> Lease:
        return self._leases.claim(run_id)

    def release(
        self, lease: Lease, status: str, reason: str | None = None, request_id: str | None = None
    ) -> None:
        self._leases.release(lease, status, reason, request_id)

    def keep_alive(self, lease: Lease) -> AbstractContextManager[None]:
        return self._leases.keep_alive(lease)

    def add_event(self, run_id: str, kind: str, detail: dict[str, Any] | None = None) -> None:
        self._events.add(run_id, kind, detail)

    def events(self, run_id: str) -> list[Event]:
        return self._events.of(run_id)

    # ------------------------------------------------------------ steps, effects, compaction

    def steps(self, run_id: str, *, after: int = 0) -> list[Step]:
        return self._steps.of(run_id, after=after)

    def last_step(self, run_id: str) -> Step | None:
        return self._steps.last(run_id)

    def conversation(self, run_id: str, *, after: int = 0) -> list[Message]:
        return self._steps.conversation(run_id, after=after)

    def begin_step(self, lease: Lease, n: int, response: ModelResponse, duration_ms: int) -> None:
        self._steps.begin(lease, n, response, duration_ms)

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
    ) -> None:
        self._steps.complete(
            lease,
            n,
            tool_results,
            events=events,
            effects=effects,
            final_text=final_text,
            discard=discard,
            note=note,
        )

    def effects_of_step(self, run_id: str, n: int) -> dict[str, ToolEffect]:
        return self._steps.effects_of_step(run_id, n)

    def get_effect(self, run_id: str, key: str) -> ToolEffect | None:
        return self._steps.get_effect(run_id, key)

    def save_effect(
        self,
        lease: Lease,
        step_n: int,
        key: str,
        name: str,
        produce: Callable[[], tuple[str, bool]],
        idempotency_key: str | None = None,
    ) -> ToolEffect:
        return self._steps.save_effect(lease, step_n, key, name, produce, idempotency_key)

    def count_errors(self, run_id: str, tool_name: str, prefix: str) -> int:
        return self._steps.count_errors(run_id, tool_name, prefix)

    def effects(self, run_id: str) -> list[ToolEffect]:
        return self._steps.effects(run_id)

    def add_compaction(
        self,
        lease: Lease,
        *,
        before_step: int,
        through_step: int,
        summary: Message,
        tokens_before: int,
        tokens_after: int,
    ) -> None:
        self._steps.add_compaction(
            lease,
            before_step=before_step,
            through_step=through_step,
            summary=summary,
            tokens_before=tokens_before,
            tokens_after=tokens_after,
        )

    def latest_compaction(self, run_id: str) -> tuple[int, Message] | None:
        return self._steps.latest_compaction(run_id)

    def compactions(self, run_id: str) -> list[dict[str, Any]]:
        return self._steps.compactions(run_id)

    # ----------------------------------------------------------------------------- tasks

    def create_task(
        self,
        *,
        title: str,
        idempotency_key: str,
        run_id: str | None,
        due: str | None = None,
        source_id: str | None = None,
        notes: str | None = None,
    ) -> tuple[Task, bool]:
        return self._tasks.create(
            title=title,
            idempotency_key=idempotency_key,
            run_id=run_id,
            due=due,
            source_id=source_id,
            notes=notes,
        )

    def task_exists(self, idempotency_key: str) -> bool:
        return self._tasks.exists(idempotency_key)

    def count_tasks_created_by(self, run_id: str) -> int:
        return self._tasks.count_created_by(run_id)

    def list_tasks(self, *, include_done: bool = False) -> list[Task]:
        return self._tasks.list(include_done=include_done)

    def find_task(self, prefix: str) -> Task:
        return self._tasks.find(prefix)

    def mark_task_done(self, task_id: str) -> Task:
        return self._tasks.mark_done(task_id)

    def delete_tasks_with_key_prefix(self, prefix: str) -> int:
        return self._tasks.delete_with_key_prefix(prefix)

    # --------------------------------------------------------------------------- history

    def create_fork(
        self,
        parent_id: str,
        from_step: int,
        *,
        model: str,
        max_steps: int | None = None,
        budget: int | None = None,
    ) -> tuple[Run, Lease]:
        return self._history.create_fork(
            parent_id, from_step, model=model, max_steps=max_steps, budget=budget
        )

    def prune_run(self, run_id: str, *, unfinished: bool = False, note: Any = None) -> bool:
        return self._history.prune_run(run_id, unfinished=unfinished, note=note)

    def redact_run(
        self, run_id: str, tools: Collection[str], *, unfinished: bool = False, note: Any = None
    ) -> bool:
        return self._history.redact_run(run_id, tools, unfinished=unfinished, note=note)

    def totals_mismatches(self) -> list[tuple[str, Usage, Usage]]:
        return self._history.totals_mismatches()

    def stale_leases(self) -> list[Run]:
        return self._history.stale_leases()

    def release_stale(self, run_id: str) -> bool:
        return self._history.release_stale(run_id)

    def recompute_totals(self, run_id: str) -> tuple[Usage, Usage]:
        return self._history.recompute_totals(run_id)
