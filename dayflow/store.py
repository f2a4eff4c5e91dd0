"""The only module that reads and writes rows. Everything it returns is a plain dataclass.

Why the writes look the way they do (each is one short transaction, never open across a model
or network call):

- `begin_step` commits the model's response (assistant blocks, stop_reason, usage, added to the
  run's totals) the moment it arrives and before any tool runs: a paid response is never lost.
- `save_effect` commits one executed tool call's result, together with the local effect itself
  (creating a task) when there is one: a kill either leaves neither or both, and a resume reuses
  the saved result instead of running the tool again.
- `complete_step` commits the step's tool results (or, for the last turn, the brief and the run's
  end) once they are all assembled.

Every write made by a driver carries its lease token and renews the lease in the same
transaction; a write whose token no longer owns the run raises `LeaseLost` and changes nothing.
A run's driver is alive if its lease is unexpired and, on this host, its process still exists.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import socket
import sqlite3
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any, TypeVar

from dayflow import db
from dayflow.clock import Clock, SystemClock, iso
from dayflow.errors import (
    AmbiguousRunId,
    LeaseLost,
    RunAlreadyDone,
    RunBusy,
    RunNotFound,
    RunPruned,
    StoreError,
)
from dayflow.migrations import migrate, schema_version
from dayflow.models import (
    COMPLETE,
    DISCARDED,
    DONE,
    FAILED,
    INTERRUPTED,
    PENDING,
    RUNNING,
    STOPPED,
    Event,
    Message,
    ModelResponse,
    Run,
    Step,
    Task,
    ToolEffect,
    Usage,
)

LEASE_TTL = timedelta(minutes=15)
PRUNED_MARK = "(pruned by gc)"
REDACTED_MARK = "[redacted]"
T = TypeVar("T")


@dataclass(frozen=True)
class Owner:
    """The process driving a run: pid, host and the process's start time (guards pid reuse)."""

    pid: int
    host: str
    started: str | None

    @classmethod
    def current(cls) -> Owner:
        pid = os.getpid()
        return cls(pid, socket.gethostname(), process_start(pid))


@dataclass(frozen=True)
class NewRun:
    """What a run is started with; stored so a resume sends the same request prefix."""

    model: str
    brief_date: str
    system: str
    tools: list[dict[str, Any]]
    user_msg: Message
    max_tokens: int
    max_steps: int
    budget: int | None
    task_cap: int
    settings: dict[str, Any]
    parent_run_id: str | None = None
    forked_at_step: int | None = None


def process_start(pid: int) -> str | None:
    """The kernel's start time of `pid` (clock ticks since boot), or None where unknown."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            stat = fh.read()
    except OSError:
        return None
    # Field 22; the command name (field 2) may hold spaces, so split after its closing ')'.
    return stat.rsplit(")", 1)[1].split()[19]


def process_alive(pid: int, started: str | None) -> bool:
    """Whether the process `pid` that started at `started` still exists on this host."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    if started is None:
        return True
    now = process_start(pid)
    return now is None or now == started


class Store:
    """Runs, steps, tool effects, tasks and events in one SQLite file."""

    def __init__(
        self,
        path: Path | str,
        *,
        clock: Clock | None = None,
        synchronous: str = "NORMAL",
        owner: Owner | None = None,
    ) -> None:
        self.path = str(path)
        self.clock = clock or SystemClock()
        self.owner = owner or Owner.current()
        self.conn = db.connect(path, synchronous=synchronous)
        try:
            migrate(self.conn, self.path)
        except BaseException:
            self.conn.close()
            raise

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _now(self) -> str:
        return iso(self.clock.now())

    def _tx(self) -> Any:
        return db.transaction(self.conn)

    def schema_version(self) -> str | None:
        return schema_version(self.conn)

    # ----------------------------------------------------------------------------- runs

    def create_run(self, spec: NewRun) -> tuple[Run, str]:
        """Insert a new run already claimed by this process; returns it and its lease token."""
        now = self._now()
        token = secrets.token_hex(8)
        with self._tx():
            run_id = self._new_run_id()
            self.conn.execute(
                """INSERT INTO runs (id, status, model, brief_date, created_at, updated_at,
                   system, tools_json, user_msg_json, max_tokens, max_steps, budget, task_cap,
                   settings_json, parent_run_id, forked_at_step, owner_pid, owner_host,
                   owner_started, lease_token, lease_expires_at, version)
                   VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,1)""",
                (
                    run_id,
                    RUNNING,
                    spec.model,
                    spec.brief_date,
                    now,
                    now,
                    spec.system,
                    _dump(spec.tools),
                    _dump(spec.user_msg),
                    spec.max_tokens,
                    spec.max_steps,
                    spec.budget,
                    spec.task_cap,
                    _dump(spec.settings),
                    spec.parent_run_id,
                    spec.forked_at_step,
                    self.owner.pid,
                    self.owner.host,
                    self.owner.started,
                    token,
                    self._lease_expiry(),
                ),
            )
            self.add_event(run_id, "run_started", {"model": spec.model, "date": spec.brief_date})
        return self.get_run(run_id), token

    def _new_run_id(self) -> str:
        while True:
            run_id = secrets.token_hex(6)
            if not self.conn.execute("SELECT 1 FROM runs WHERE id = ?", (run_id,)).fetchone():
                return run_id

    def get_run(self, run_id: str) -> Run:
        row = self.conn.execute(_RUN_SELECT + " WHERE r.id = ?", (run_id,)).fetchone()
        if row is None:
            raise RunNotFound(f"no run {run_id!r}")
        return self._run(row)

    def find_run(self, prefix: str) -> Run:
        """The run whose id is `prefix` or starts with it; errors on none or several."""
        prefix = prefix.strip().lower()
        if not prefix or not all(c in "0123456789abcdef" for c in prefix):
            raise RunNotFound(f"{prefix!r} is not a run id (run ids are hex, see `dayflow runs`)")
        rows = self.conn.execute(
            "SELECT id FROM runs WHERE id >= ? AND id < ? ORDER BY id LIMIT 6",
            (prefix, prefix + "g"),
        ).fetchall()
        if not rows:
            raise RunNotFound(f"no run matches {prefix!r} (see `dayflow runs`)")
        if len(rows) > 1:
            ids = ", ".join(r[0] for r in rows[:5])
            raise AmbiguousRunId(f"{prefix!r} matches several runs ({ids}); give more characters")
        return self.get_run(rows[0][0])

    def list_runs(
        self, *, status: str | None = None, since: str | None = None, limit: int | None = 20
    ) -> list[Run]:
        """Runs newest first. `status` filters on the effective status."""
        where: list[str] = []
        args: list[Any] = []
        if since:
            where.append("r.created_at >= ?")
            args.append(since)
        if status in (RUNNING, INTERRUPTED):
            where.append("r.status IN ('running','interrupted')")
        elif status:
            where.append("r.status = ?")
            args.append(status)
        sql = _RUN_SELECT + (" WHERE " + " AND ".join(where) if where else "")
        sql += " ORDER BY r.created_at DESC, r.rowid DESC"
        if status in (RUNNING, INTERRUPTED):
            runs = [self._run(r) for r in self.conn.execute(sql, args)]
            runs = [r for r in runs if r.status == status]
            return runs[:limit] if limit else runs
        if limit:
            sql += " LIMIT ?"
            args.append(limit)
        return [self._run(r) for r in self.conn.execute(sql, args)]

    def latest_unfinished(self, brief_date: str | None = None) -> Run | None:
        """The newest run that is not done and not being driven right now."""
        sql = _RUN_SELECT + " WHERE r.status != 'done' AND r.pruned_at IS NULL"
        sql += " AND r.redacted_at IS NULL"
        args: list[Any] = []
        if brief_date:
            sql += " AND r.brief_date = ?"
            args.append(brief_date)
        for row in self.conn.execute(sql + " ORDER BY r.created_at DESC, r.rowid DESC", args):
            run = self._run(row)
            if run.status != RUNNING:
                return run
        return None

    def _run(self, row: sqlite3.Row) -> Run:
        stored = row["status"]
        status = stored
        if stored == RUNNING and not self._owner_alive(row):
            status = INTERRUPTED
        return Run(
            id=row["id"],
            status=status,
            stored_status=stored,
            model=row["model"],
            brief_date=row["brief_date"],
            created_at=row["created_at"],
            updated_at=row["updated_at"],
            finished_at=row["finished_at"],
            system=row["system"],
            tools=json.loads(row["tools_json"]),
            user_msg=json.loads(row["user_msg_json"]),
            max_tokens=row["max_tokens"],
            max_steps=row["max_steps"],
            budget=row["budget"],
            task_cap=row["task_cap"],
            steps=row["step_count"],
            usage=Usage(
                row["input_tokens"],
                row["output_tokens"],
                row["cache_creation_tokens"],
                row["cache_read_tokens"],
            ),
            model_calls=row["step_count"],
            final_text=row["final_text"],
            reason=row["reason"],
            request_id=row["request_id"],
            estimated=bool(row["estimated"]),
            owner_pid=row["owner_pid"],
            owner_host=row["owner_host"],
            lease_expires_at=row["lease_expires_at"],
            version=row["version"],
            settings=json.loads(row["settings_json"]),
            parent_run_id=row["parent_run_id"],
            forked_at_step=row["forked_at_step"],
            pruned_at=row["pruned_at"],
            redacted_at=row["redacted_at"],
        )

    def _owner_alive(self, row: sqlite3.Row) -> bool:
        if row["lease_token"] is None or row["lease_expires_at"] is None:
            return False
        if row["lease_expires_at"] < self._now():
            return False
        if row["owner_host"] == self.owner.host and row["owner_pid"] is not None:
            return process_alive(row["owner_pid"], row["owner_started"])
        return True

    # ---------------------------------------------------------------------------- leases

    def claim(self, run_id: str) -> str:
        """Take the run for this process and return the lease token, or raise RunBusy.

        The check and the take-over happen in one IMMEDIATE transaction, and the UPDATE is
        conditional on the version read, so of N processes claiming at once exactly one wins.
        """
        token = secrets.token_hex(8)
        with self._tx():
            row = self.conn.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
            if row is None:
                raise RunNotFound(f"no run {run_id!r}")
            if row["status"] == DONE:
                raise RunAlreadyDone(f"run {run_id} is already done")
            if row["status"] == RUNNING and self._owner_alive(row):
                raise RunBusy(
                    f"run {run_id} is being driven by pid {row['owner_pid']} on host "
                    f"{row['owner_host']}; wait for it to finish"
                )
            if row["pruned_at"] or row["redacted_at"]:
                raise RunPruned(not_continuable(run_id, row["pruned_at"], row["redacted_at"]))
            previous = row["owner_pid"] if row["status"] == RUNNING else None
            cur = self.conn.execute(
                """UPDATE runs SET status = 'running', owner_pid = ?, owner_host = ?,
                   owner_started = ?, lease_token = ?, lease_expires_at = ?, updated_at = ?,
                   version = version + 1
                   WHERE id = ? AND version = ?""",
                (
                    self.owner.pid,
                    self.owner.host,
                    self.owner.started,
                    token,
                    self._lease_expiry(),
                    self._now(),
                    run_id,
                    row["version"],
                ),
            )
            if cur.rowcount != 1:  # pragma: no cover - IMMEDIATE makes this unreachable
                raise RunBusy(f"run {run_id} was claimed by another process")
            if previous is not None:
                self.add_event(run_id, "lease_taken_over", {"from_pid": previous})
        return token

    def _lease_expiry(self) -> str:
        return iso(self.clock.now() + LEASE_TTL)

    def _renew(self, run_id: str, token: str) -> None:
        cur = self.conn.execute(
            "UPDATE runs SET lease_expires_at = ?, updated_at = ? "
            "WHERE id = ? AND lease_token = ? AND status = 'running'",
            (self._lease_expiry(), self._now(), run_id, token),
        )
        if cur.rowcount != 1:
            raise LeaseLost(f"run {run_id} was taken over by another process; stopping here")

    def release(
        self,
        run_id: str,
        token: str,
        status: str,
        reason: str | None = None,
        request_id: str | None = None,
    ) -> None:
        """End this process's claim, leaving the run `status` (failed/stopped/interrupted)."""
        with self._tx():
            self._renew(run_id, token)
            self.conn.execute(
                """UPDATE runs SET status = ?, reason = ?, request_id = ?, lease_token = NULL,
                   lease_expires_at = NULL, updated_at = ? WHERE id = ?""",
                (status, reason, request_id, self._now(), run_id),
            )
            kind = {"failed": "run_failed", "stopped": "run_stopped"}.get(status, "run_released")
            self.add_event(run_id, kind, {"reason": reason, "request_id": request_id})

    def update_limits(
        self,
        run_id: str,
        token: str,
        *,
        max_steps: int | None = None,
        budget: int | None = None,
        max_tokens: int | None = None,
    ) -> None:
        """Raise (or set) a run's guards when it is resumed with new limits."""
        changes = {"max_steps": max_steps, "budget": budget, "max_tokens": max_tokens}
        with self._tx():
            self._renew(run_id, token)
            for column, value in changes.items():
                if value is not None:  # column names come from the fixed dict above
                    self.conn.execute(f"UPDATE runs SET {column} = ? WHERE id = ?", (value, run_id))
            self.add_event(run_id, "limits_changed", changes)

    # ----------------------------------------------------------------------------- steps

    def steps(self, run_id: str) -> list[Step]:
        rows = self.conn.execute(
            "SELECT * FROM steps WHERE run_id = ? ORDER BY n", (run_id,)
        ).fetchall()
        return [_step(r) for r in rows]

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
        with self._tx():
            self._renew(run_id, token)
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
                    self._now(),
                ),
            )
            self.conn.execute(
                """UPDATE runs SET input_tokens = input_tokens + ?,
                   output_tokens = output_tokens + ?,
                   cache_creation_tokens = cache_creation_tokens + ?,
                   cache_read_tokens = cache_read_tokens + ?,
                   estimated = MAX(estimated, ?) WHERE id = ?""",
                (
                    u.input_tokens,
                    u.output_tokens,
                    u.cache_creation_input_tokens,
                    u.cache_read_input_tokens,
                    int(response.estimated),
                    run_id,
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
            self._renew(run_id, token)
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
            "SELECT * FROM tasks WHERE id = ? OR id LIKE ? ESCAPE '\\' ORDER BY id LIMIT 3",
            (prefix, _like_prefix(prefix)),
        ).fetchall()
        exact = [r for r in rows if r["id"] == prefix]
        if exact:
            return _task(exact[0])
        if not rows:
            raise RunNotFound(f"no task matches {prefix!r} (see `dayflow tasks --all`)")
        if len(rows) > 1:
            raise AmbiguousRunId(f"{prefix!r} matches several tasks; give more characters")
        return _task(rows[0])

    def mark_task_done(self, task_id: str) -> Task:
        with self._tx():
            self.conn.execute(
                "UPDATE tasks SET status = 'done', done_at = COALESCE(done_at, ?) WHERE id = ?",
                (self._now(), task_id),
            )
        return _task(self.conn.execute("SELECT * FROM tasks WHERE id = ?", (task_id,)).fetchone())

    # ---------------------------------------------------------------------------- events

    def add_event(self, run_id: str, kind: str, detail: dict[str, Any] | None = None) -> None:
        """Append an event to the run's log (inside the caller's transaction when there is one)."""
        with self._tx():
            self.conn.execute(
                """INSERT INTO events (run_id, seq, kind, detail_json, pid, host, at)
                   SELECT ?, COALESCE(MAX(seq), 0) + 1, ?, ?, ?, ?, ? FROM events
                   WHERE run_id = ?""",
                (
                    run_id,
                    kind,
                    _dump(detail or {}),
                    self.owner.pid,
                    self.owner.host,
                    self._now(),
                    run_id,
                ),
            )

    def events(self, run_id: str) -> list[Event]:
        rows = self.conn.execute("SELECT * FROM events WHERE run_id = ? ORDER BY seq", (run_id,))
        return [
            Event(
                r["run_id"],
                r["seq"],
                r["kind"],
                json.loads(r["detail_json"]),
                r["pid"],
                r["host"],
                r["at"],
            )
            for r in rows
        ]

    # ---- history: fork, gc, doctor

    def create_fork(
        self,
        parent_id: str,
        from_step: int,
        *,
        model: str,
        max_steps: int | None = None,
        budget: int | None = None,
    ) -> tuple[Run, str]:
        """Create a run claimed by this process whose history is the parent's first
        `from_step` steps, with their saved tool effects and the compactions made before them,
        all in one transaction. The copies count 0 tokens: the fork did not pay for them, so
        its totals still equal the sum of its steps and its budget counts only its own calls."""
        with self._tx():
            parent = self.get_run(parent_id)
            if from_step and (parent.pruned_at or parent.redacted_at):
                raise RunPruned(not_continuable(parent.id, parent.pruned_at, parent.redacted_at))
            copied = self.conn.execute(
                "SELECT COUNT(*) FROM steps WHERE run_id = ? AND n <= ? AND state != 'pending'",
                (parent.id, from_step),
            ).fetchone()[0]
            if copied != from_step:
                raise StoreError(f"run {parent.id} has no committed step {from_step}")
            run, token = self.create_run(
                NewRun(
                    model=model,
                    brief_date=parent.brief_date,
                    system=parent.system,
                    tools=parent.tools,
                    user_msg=parent.user_msg,
                    max_tokens=parent.max_tokens,
                    max_steps=parent.max_steps if max_steps is None else max_steps,
                    budget=parent.budget if budget is None else budget,
                    task_cap=parent.task_cap,
                    settings=parent.settings,
                    parent_run_id=parent.id,
                    forked_at_step=from_step,
                )
            )
            args = (run.id, parent.id, from_step)
            self.conn.execute(
                """INSERT INTO steps (run_id, n, state, stop_reason, assistant_json,
                   tool_results_json, input_tokens, output_tokens, cache_creation_tokens,
                   cache_read_tokens, request_id, duration_ms, pid, created_at, completed_at)
                   SELECT ?, n, state, stop_reason, assistant_json, tool_results_json, 0, 0, 0, 0,
                   request_id, NULL, NULL, created_at, completed_at
                   FROM steps WHERE run_id = ? AND n <= ?""",
                args,
            )
            self.conn.execute(
                """INSERT INTO tool_effects (run_id, tool_use_id, step_n, tool_name,
                   idempotency_key, content, is_error, created_at)
                   SELECT ?, tool_use_id, step_n, tool_name, idempotency_key, content, is_error,
                   created_at FROM tool_effects WHERE run_id = ? AND step_n <= ?""",
                args,
            )
            # Only compactions made before a call the fork keeps: the fork decides its own next.
            self.conn.execute(
                """INSERT INTO compactions (run_id, seq, before_step, through_step, summary_json,
                   tokens_before, tokens_after, created_at)
                   SELECT ?, seq, before_step, through_step, summary_json, tokens_before,
                   tokens_after, created_at FROM compactions
                   WHERE run_id = ? AND before_step <= ?""",
                args,
            )
            self.add_event(
                run.id, "run_forked", {"parent": parent.id, "step": from_step, "model": model}
            )
            self.add_event(parent.id, "run_forked", {"fork": run.id, "step": from_step})
        return self.get_run(run.id), token

    def prune_run(self, run_id: str, *, unfinished: bool = False, note: Any = None) -> bool:
        """Blank a finished run's payloads and keep its tombstone: the runs row (status, dates,
        totals, brief), one row per step (state, stop reason, usage, timing, and each tool_use's
        id and name, its input replaced by PRUNED_MARK), the tool effects without their content,
        the events without their details. Tasks and idempotency keys are never touched.
        Returns False, changing nothing, when the run no longer qualifies (pruned already, or
        being driven; or unfinished and `unfinished` is not set)."""
        with self._tx():
            row = self._prunable(run_id, unfinished)
            if row is None or row["pruned_at"]:
                return False
            for n, assistant in self.conn.execute(
                "SELECT n, assistant_json FROM steps WHERE run_id = ?", (run_id,)
            ).fetchall():
                skeleton: list[dict[str, Any]] = [
                    {
                        "type": "tool_use",
                        "id": b.get("id"),
                        "name": b.get("name"),
                        "input": PRUNED_MARK,
                    }
                    for b in json.loads(assistant)
                    if isinstance(b, dict) and b.get("type") == "tool_use"
                ]
                self.conn.execute(
                    "UPDATE steps SET assistant_json = ?, tool_results_json = NULL "
                    "WHERE run_id = ? AND n = ?",
                    (_dump(skeleton), run_id, n),
                )
            self.conn.execute("UPDATE tool_effects SET content = '' WHERE run_id = ?", (run_id,))
            self.conn.execute("UPDATE events SET detail_json = '{}' WHERE run_id = ?", (run_id,))
            self.conn.execute(
                "UPDATE compactions SET summary_json = ? WHERE run_id = ?",
                (_dump({"role": "user", "content": PRUNED_MARK}), run_id),
            )
            self._tombstone(row, "pruned_at")
            self.add_event(run_id, "run_pruned", {"gc": note})
        return True

    def redact_run(
        self, run_id: str, tools: Collection[str], *, unfinished: bool = False, note: Any = None
    ) -> bool:
        """Replace the content of every result of `tools` (in the step rows and the saved
        effects) with REDACTED_MARK, keeping everything else. False when the run does not
        qualify (pruned or redacted already, being driven, or unfinished)."""
        with self._tx():
            row = self._prunable(run_id, unfinished)
            if row is None or row["pruned_at"] or row["redacted_at"]:
                return False
            for n, assistant, results in self.conn.execute(
                "SELECT n, assistant_json, tool_results_json FROM steps "
                "WHERE run_id = ? AND tool_results_json IS NOT NULL",
                (run_id,),
            ).fetchall():
                names = {
                    b.get("id"): b.get("name")
                    for b in json.loads(assistant)
                    if isinstance(b, dict) and b.get("type") == "tool_use"
                }
                blocks = json.loads(results)
                for block in blocks:
                    if isinstance(block, dict) and names.get(block.get("tool_use_id")) in tools:
                        block["content"] = REDACTED_MARK
                self.conn.execute(
                    "UPDATE steps SET tool_results_json = ? WHERE run_id = ? AND n = ?",
                    (_dump(blocks), run_id, n),
                )
            marks = ",".join("?" * len(tools))
            self.conn.execute(
                f"UPDATE tool_effects SET content = ? WHERE run_id = ? AND tool_name IN ({marks})",
                (REDACTED_MARK, run_id, *tools),
            )
            self._tombstone(row, "redacted_at")
            self.add_event(run_id, "run_redacted", {"gc": note, "tools": sorted(tools)})
        return True

    def _prunable(self, run_id: str, unfinished: bool) -> sqlite3.Row | None:
        row = self.conn.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None or (row["status"] == RUNNING and self._owner_alive(row)):
            return None
        if row["status"] not in (DONE, FAILED, STOPPED) and not unfinished:
            return None
        return row

    def _tombstone(self, row: sqlite3.Row, column: str) -> None:
        # A run whose driver is gone is left 'interrupted' with no lease: nothing may claim it.
        status = INTERRUPTED if row["status"] == RUNNING else row["status"]
        self.conn.execute(
            f"UPDATE runs SET {column} = ?, status = ?, lease_token = NULL, "
            "lease_expires_at = NULL WHERE id = ?",
            (self._now(), status, row["id"]),
        )

    def vacuum(self) -> None:
        """Rewrite the file without its free pages and fold the WAL back into it (no
        transaction may be open: VACUUM cannot run inside one)."""
        self.conn.execute("VACUUM")
        self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def integrity_problems(self) -> list[str]:
        """What SQLite's integrity and foreign-key checks report; empty when both pass."""
        found = [str(r[0]) for r in self.conn.execute("PRAGMA integrity_check")]
        problems = [] if found == ["ok"] else found
        for r in self.conn.execute("PRAGMA foreign_key_check"):
            problems.append(f"{r[0]} row {r[1]} points at a missing {r[2]} row")
        return problems

    def totals_mismatches(self) -> list[tuple[str, Usage, Usage]]:
        """(run id, the run's totals, the sum of its step rows) wherever the two differ."""
        rows = self.conn.execute(
            """SELECT r.id, r.input_tokens, r.output_tokens, r.cache_creation_tokens,
               r.cache_read_tokens, COALESCE(SUM(s.input_tokens), 0),
               COALESCE(SUM(s.output_tokens), 0), COALESCE(SUM(s.cache_creation_tokens), 0),
               COALESCE(SUM(s.cache_read_tokens), 0)
               FROM runs r LEFT JOIN steps s ON s.run_id = r.id GROUP BY r.id
               ORDER BY r.created_at"""
        )
        out = []
        for r in rows:
            totals, sums = Usage(*r[1:5]), Usage(*r[5:9])
            if totals != sums:
                out.append((r[0], totals, sums))
        return out

    def stale_leases(self) -> list[Run]:
        """Runs stored as running whose driving process is gone (lease expired, or the
        process no longer exists on this host)."""
        rows = self.conn.execute(_RUN_SELECT + " WHERE r.status = 'running'").fetchall()
        return [self._run(r) for r in rows if not self._owner_alive(r)]

    def release_stale(self, run_id: str) -> bool:
        """Mark a run whose driver is gone 'interrupted' and drop its lease; False (and no
        change) if a live process drives it by now."""
        with self._tx():
            row = self.conn.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
            if row is None or row["status"] != RUNNING or self._owner_alive(row):
                return False
            self.conn.execute(
                "UPDATE runs SET status = 'interrupted', lease_token = NULL, "
                "lease_expires_at = NULL, updated_at = ? WHERE id = ?",
                (self._now(), run_id),
            )
            self.add_event(run_id, "lease_released", {"from_pid": row["owner_pid"], "by": "doctor"})
        return True

    def recompute_totals(self, run_id: str) -> tuple[Usage, Usage]:
        """Set a run's totals to the sum of its steps; the old totals go into the event log
        (`totals_recomputed`) so the evidence of the disagreement is kept."""
        with self._tx():
            found = [m for m in self.totals_mismatches() if m[0] == run_id]
            old, new = (found[0][1], found[0][2]) if found else (Usage(), Usage())
            if found:
                self.conn.execute(
                    """UPDATE runs SET input_tokens = ?, output_tokens = ?,
                       cache_creation_tokens = ?, cache_read_tokens = ? WHERE id = ?""",
                    (
                        new.input_tokens,
                        new.output_tokens,
                        new.cache_creation_input_tokens,
                        new.cache_read_input_tokens,
                        run_id,
                    ),
                )
                self.add_event(
                    run_id, "totals_recomputed", {"old": _usage_dict(old), "new": _usage_dict(new)}
                )
        return old, new


_RUN_SELECT = (
    "SELECT r.*, (SELECT COUNT(*) FROM steps s WHERE s.run_id = r.id) AS step_count FROM runs r"
)


def task_id(idempotency_key: str) -> str:
    """A task's id, derived from its key: the same key names the same task in any database,
    so a resumed or replayed run shows the very ids an uncrashed one would."""
    return "t_" + hashlib.sha256(idempotency_key.encode()).hexdigest()[:12]


def _dump(value: Any) -> str:
    # Compact and key-order preserving: the stored text is what goes back on the wire.
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _like_prefix(prefix: str) -> str:
    escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return escaped + "%"


def not_continuable(run_id: str, pruned_at: str | None, redacted_at: str | None) -> str:
    """Why a run that gc pruned or redacted cannot be resumed or forked, in one line."""
    if pruned_at:
        what = f"was pruned by `dayflow gc` at {pruned_at}: its steps are gone"
    else:
        what = f"was redacted by `dayflow gc --redact` at {redacted_at}: its reads are blanked"
    return f"run {run_id} {what}, so it can be shown but not resumed or forked"


def _usage_dict(u: Usage) -> dict[str, int]:
    return {
        "input_tokens": u.input_tokens,
        "output_tokens": u.output_tokens,
        "cache_creation_input_tokens": u.cache_creation_input_tokens,
        "cache_read_input_tokens": u.cache_read_input_tokens,
    }


def _step(r: sqlite3.Row) -> Step:
    return Step(
        run_id=r["run_id"],
        n=r["n"],
        state=r["state"],
        stop_reason=r["stop_reason"],
        assistant=json.loads(r["assistant_json"]),
        tool_results=None if r["tool_results_json"] is None else json.loads(r["tool_results_json"]),
        usage=Usage(
            r["input_tokens"],
            r["output_tokens"],
            r["cache_creation_tokens"],
            r["cache_read_tokens"],
        ),
        request_id=r["request_id"],
        duration_ms=r["duration_ms"],
        pid=r["pid"],
        created_at=r["created_at"],
        completed_at=r["completed_at"],
    )


def _effect(r: sqlite3.Row) -> ToolEffect:
    return ToolEffect(
        r["run_id"],
        r["tool_use_id"],
        r["step_n"],
        r["tool_name"],
        r["content"],
        bool(r["is_error"]),
        r["created_at"],
    )


def _task(r: sqlite3.Row) -> Task:
    return Task(
        id=r["id"],
        title=r["title"],
        due=r["due"],
        status=r["status"],
        source_id=r["source_id"],
        notes=r["notes"],
        idempotency_key=r["idempotency_key"],
        run_id=r["run_id"],
        created_at=r["created_at"],
        done_at=r["done_at"],
    )
