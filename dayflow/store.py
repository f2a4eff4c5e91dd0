"""The only module that reads and writes rows. Everything it returns is a plain dataclass.

Why the writes look the way they do (each is one short transaction, never open across a model
or network call):

- `begin_step` commits the model's response (assistant blocks, stop_reason, usage, added to the
  run's totals) the moment it arrives and before any tool runs: a paid response is never lost.
- `save_effect` commits one executed tool call's result, together with the local effect itself
  (creating a task) when there is one: a kill either leaves neither or both, and a resume reuses
  the saved result instead of running the tool again.
- `complete_step` commits the step's tool results (or, for the last turn, the brief and the run's
  end) once they are all assembled. From then on the results live in the step row only: a
  successful effect keeps its name, key and ok flag, its content blanked in the same
  transaction (each result is stored once); an error keeps its (short) message.

Every write made by a driver carries its lease token, checked in the same transaction (and
the lease renewed by the writes of the step itself); a write whose token no longer owns the run
raises `LeaseLost` and changes nothing.
A run's driver is alive if its lease is unexpired and, on this host, its process still exists.

`Store` is built in layers, one concept a module: `store_runs` (the runs table, leases and the
event log), `store_history` (fork, gc and doctor) and `store_rows` (rows to dataclasses); this
module adds the steps, tool effects, compactions and tasks. Import every name from here.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from typing import Any

from dayflow.errors import AmbiguousRunId, LeaseLost, RunNotFound, StoreError
from dayflow.models import (
    COMPLETE,
    DISCARDED,
    PENDING,
    Message,
    ModelResponse,
    Step,
    Task,
    ToolEffect,
)
from dayflow.store_history import PRUNED_MARK, REDACTED_MARK, HistoryMixin
from dayflow.store_rows import _dump, _effect, _like_prefix, _step, _task
from dayflow.store_runs import (
    LEASE_TTL,
    NewRun,
    Owner,
    not_continuable,
    process_alive,
    process_start,
)

__all__ = [
    "LEASE_TTL",
    "PRUNED_MARK",
    "REDACTED_MARK",
    "NewRun",
    "Owner",
    "Store",
    "not_continuable",
    "process_alive",
    "process_start",
    "task_id",
]


class Store(HistoryMixin):
    """Runs, steps, tool effects, tasks and events in one SQLite file."""

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ----------------------------------------------------------------------------- steps

    def steps(self, run_id: str, *, after: int = 0) -> list[Step]:
        """The run's steps in order (only those after step `after`, when given)."""
        rows = self.conn.execute(
            "SELECT * FROM steps WHERE run_id = ? AND n > ? ORDER BY n", (run_id, after)
        ).fetchall()
        return [_step(r) for r in rows]

    def last_step(self, run_id: str) -> Step | None:
        """The run's newest step (one seek, whatever the length of the run)."""
        row = self.conn.execute(
            "SELECT * FROM steps WHERE run_id = ? ORDER BY n DESC LIMIT 1", (run_id,)
        ).fetchone()
        return None if row is None else _step(row)

    def iter_step_payloads(
        self, run_id: str, after: int = 0
    ) -> Iterator[tuple[int, str, str, str | None]]:
        """(n, state, assistant JSON, tool results JSON) of the steps after step `after`, in
        order: the rebuild path."""
        yield from self.conn.execute(
            "SELECT n, state, assistant_json, tool_results_json FROM steps "
            "WHERE run_id = ? AND n > ? ORDER BY n",
            (run_id, after),
        )

    def begin_step(
        self, run_id: str, token: str, n: int, response: ModelResponse, duration_ms: int
    ) -> None:
        """Commit a model response as pending step `n` and add its usage to the run."""
        u = response.usage
        now = self._now()
        with self._tx():
            # The totals and the lease renewal in one UPDATE, fenced by the token.
            cur = self.conn.execute(
                """UPDATE runs SET input_tokens = input_tokens + ?,
                   output_tokens = output_tokens + ?,
                   cache_creation_tokens = cache_creation_tokens + ?,
                   cache_read_tokens = cache_read_tokens + ?,
                   estimated = MAX(estimated, ?), lease_expires_at = ?, updated_at = ?
                   WHERE id = ? AND lease_token = ? AND status = 'running'""",
                (
                    u.input_tokens,
                    u.output_tokens,
                    u.cache_creation_input_tokens,
                    u.cache_read_input_tokens,
                    int(response.estimated),
                    self._lease_expiry(),
                    now,
                    run_id,
                    token,
                ),
            )
            if cur.rowcount != 1:
                raise LeaseLost(f"run {run_id} was taken over by another process; stopping here")
            self.conn.execute(
                """INSERT INTO steps (run_id, n, state, stop_reason, assistant_json,
                   input_tokens, output_tokens, cache_creation_tokens, cache_read_tokens,
                   request_id, duration_ms, pid, created_at)
                   VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)""",
                (
                    run_id,
                    n,
                    PENDING,
                    response.stop_reason,
                    _dump(response.content),
                    u.input_tokens,
                    u.output_tokens,
                    u.cache_creation_input_tokens,
                    u.cache_read_input_tokens,
                    response.request_id,
                    duration_ms,
                    self.owner.pid,
                    now,
                ),
            )
            self.add_event(
                run_id,
                "response_committed",
                {
                    "step": n,
                    "stop_reason": response.stop_reason,
                    "request_id": response.request_id,
                    **({"stop_details": response.stop_details} if response.stop_details else {}),
                },
            )

    def complete_step(
        self,
        run_id: str,
        token: str,
        n: int,
        tool_results: list[dict[str, Any]] | None,
        *,
        final_text: str | None = None,
        discard: bool = False,
        note: str | None = None,
    ) -> None:
        """Mark step `n` complete with its tool results; with `final_text` also finish the run
        (`note` is kept as the run's reason: something a finished run should still say)."""
        with self._tx():
            self._renew(run_id, token)
            cur = self.conn.execute(
                """UPDATE steps SET state = ?, tool_results_json = ?, completed_at = ?
                   WHERE run_id = ? AND n = ? AND state = 'pending'""",
                (
                    DISCARDED if discard else COMPLETE,
                    None if tool_results is None else _dump(tool_results),
                    self._now(),
                    run_id,
                    n,
                ),
            )
            if cur.rowcount != 1:
                raise StoreError(f"run {run_id}: step {n} is not pending")
            if tool_results:
                # The results now live in the step row, byte for byte; the saved effects were
                # only needed until here (to resume a pending step), so keep each result once.
                self.conn.execute(
                    "UPDATE tool_effects SET content = '' "
                    "WHERE run_id = ? AND step_n = ? AND is_error = 0",
                    (run_id, n),
                )
            self.add_event(run_id, "step_discarded" if discard else "step_committed", {"step": n})
            if final_text is not None:
                now = self._now()
                self.conn.execute(
                    """UPDATE runs SET status = 'done', final_text = ?, finished_at = ?,
                       reason = ?, lease_token = NULL, lease_expires_at = NULL,
                       updated_at = ? WHERE id = ?""",
                    (final_text, now, note, now, run_id),
                )
                self.add_event(run_id, "run_finished", {"step": n})

    # ----------------------------------------------------------------------- compaction

    def add_compaction(
        self,
        run_id: str,
        token: str,
        *,
        before_step: int,
        through_step: int,
        summary: Message,
        tokens_before: int,
        tokens_after: int,
    ) -> None:
        """Record that calls from `before_step` on send `summary` in place of steps
        1..`through_step`. The step rows themselves are never touched."""
        with self._tx():
            self._renew(run_id, token)
            self.conn.execute(
                """INSERT INTO compactions (run_id, seq, before_step, through_step, summary_json,
                   tokens_before, tokens_after, created_at)
                   SELECT ?, COALESCE(MAX(seq), 0) + 1, ?, ?, ?, ?, ?, ? FROM compactions
                   WHERE run_id = ?""",
                (
                    run_id,
                    before_step,
                    through_step,
                    _dump(summary),
                    tokens_before,
                    tokens_after,
                    self._now(),
                    run_id,
                ),
            )
            self.add_event(
                run_id,
                "compacted",
                {
                    "before_step": before_step,
                    "through_step": through_step,
                    "tokens_before": tokens_before,
                    "tokens_after": tokens_after,
                },
            )

    def latest_compaction(self, run_id: str) -> tuple[int, Message] | None:
        """(through_step, summary message) of the run's newest compaction, if any."""
        row = self.conn.execute(
            "SELECT through_step, summary_json FROM compactions WHERE run_id = ? "
            "ORDER BY seq DESC LIMIT 1",
            (run_id,),
        ).fetchone()
        return None if row is None else (row[0], json.loads(row[1]))

    def compactions(self, run_id: str) -> list[dict[str, Any]]:
        rows = self.conn.execute(
            "SELECT * FROM compactions WHERE run_id = ? ORDER BY seq", (run_id,)
        )
        return [
            {
                k: r[k]
                for k in (
                    "seq",
                    "before_step",
                    "through_step",
                    "tokens_before",
                    "tokens_after",
                    "created_at",
                )
            }
            for r in rows
        ]

    # ---------------------------------------------------------------------- tool effects

    def get_effect(self, run_id: str, tool_use_id: str) -> ToolEffect | None:
        row = self.conn.execute(
            "SELECT * FROM tool_effects WHERE run_id = ? AND tool_use_id = ?",
            (run_id, tool_use_id),
        ).fetchone()
        return None if row is None else _effect(row)

    def save_effect(
        self,
        run_id: str,
        token: str,
        step_n: int,
        tool_use_id: str,
        tool_name: str,
        produce: Callable[[Store], tuple[str, bool]],
        idempotency_key: str | None = None,
    ) -> ToolEffect:
        """Run `produce` (a local effect, or the return of an already-read result) and save
        what it returns as the call's result, all in one transaction."""
        with self._tx():
            self._fence(run_id, token)
            content, is_error = produce(self)
            now = self._now()
            self.conn.execute(
                """INSERT INTO tool_effects (run_id, tool_use_id, step_n, tool_name,
                   idempotency_key, content, is_error, created_at) VALUES (?,?,?,?,?,?,?,?)""",
                (
                    run_id,
                    tool_use_id,
                    step_n,
                    tool_name,
                    idempotency_key,
                    content,
                    int(is_error),
                    now,
                ),
            )
            self.add_event(
                run_id,
                "tool_executed",
                {"step": step_n, "tool": tool_name, "tool_use_id": tool_use_id, "ok": not is_error},
            )
        return ToolEffect(run_id, tool_use_id, step_n, tool_name, content, is_error, now)

    def count_errors(self, run_id: str, tool_name: str, prefix: str) -> int:
        """How many of the run's `tool_name` calls failed with a message starting `prefix`."""
        row = self.conn.execute(
            "SELECT COUNT(*) FROM tool_effects WHERE run_id = ? AND tool_name = ? "
            "AND is_error = 1 AND content LIKE ? ESCAPE '\\'",
            (run_id, tool_name, "Error: " + _like_prefix(prefix)),
        )
        return int(row.fetchone()[0])

    def effects(self, run_id: str) -> list[ToolEffect]:
        rows = self.conn.execute(
            "SELECT * FROM tool_effects WHERE run_id = ? ORDER BY step_n, created_at", (run_id,)
        )
        return [_effect(r) for r in rows]

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
        """Insert a task unless its idempotency key exists; the UNIQUE constraint decides."""
        with self._tx():
            cur = self.conn.execute(
                """INSERT INTO tasks (id, title, due, source_id, notes, idempotency_key,
                   run_id, created_at) VALUES (?,?,?,?,?,?,?,?)
                   ON CONFLICT(idempotency_key) DO NOTHING""",
                (
                    task_id(idempotency_key),
                    title,
                    due,
                    source_id,
                    notes,
                    idempotency_key,
                    run_id,
                    self._now(),
                ),
            )
            created = cur.rowcount == 1
            row = self.conn.execute(
                "SELECT * FROM tasks WHERE idempotency_key = ?", (idempotency_key,)
            ).fetchone()
        return _task(row), created

    def count_tasks_created_by(self, run_id: str) -> int:
        row = self.conn.execute("SELECT COUNT(*) FROM tasks WHERE run_id = ?", (run_id,))
        return int(row.fetchone()[0])

    def list_tasks(self, *, include_done: bool = False) -> list[Task]:
        sql = "SELECT * FROM tasks"
        if not include_done:
            sql += " WHERE status = 'open'"
        sql += " ORDER BY status, due IS NULL, due, created_at, id"
        return [_task(r) for r in self.conn.execute(sql)]

    def find_task(self, prefix: str) -> Task:
        rows = self.conn.execute(
            "SELECT * FROM tasks WHERE id = ? OR id LIKE ? ESCAPE '\\' ORDER BY id LIMIT 6",
            (prefix, _like_prefix(prefix)),
        ).fetchall()
        exact = [r for r in rows if r["id"] == prefix]
        if exact:
            return _task(exact[0])
        if not rows:
            raise RunNotFound(f"no task matches {prefix!r} (see `dayflow tasks --all`)")
        if len(rows) > 1:
            ids = ", ".join(r["id"] for r in rows[:5]) + (", ..." if len(rows) > 5 else "")
            raise AmbiguousRunId(f"{prefix!r} matches several tasks ({ids}); give more characters")
        return _task(rows[0])

    def mark_task_done(self, task_id: str) -> Task:
        with self._tx():
            self.conn.execute(
                "UPDATE tasks SET status = 'done', done_at = COALESCE(done_at, ?) WHERE id = ?",
                (self._now(), task_id),
            )
        return _task(self.conn.execute("SELECT * FROM tasks WHERE id = ?", (task_id,)).fetchone())


def task_id(idempotency_key: str) -> str:
    """A task's id, derived from its key: the same key names the same task in any database,
    so a resumed or replayed run shows the very ids an uncrashed one would."""
    return "t_" + hashlib.sha256(idempotency_key.encode()).hexdigest()[:12]
