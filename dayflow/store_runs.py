"""The runs table, who drives each run (its lease) and the run's event log: the base of
`Store`, which adds the write path of a driven run (see `dayflow.store`).
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import sqlite3
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from dayflow import db
from dayflow.clock import Clock, SystemClock, iso
from dayflow.errors import (
    AmbiguousRunId,
    LeaseLost,
    RunAlreadyDone,
    RunBusy,
    RunNotFound,
    RunPruned,
)
from dayflow.migrations import migrate, schema_version
from dayflow.models import DONE, INTERRUPTED, RUNNING, Event, Message, Run
from dayflow.store_rows import _RUN_SELECT, _dump, _run_row

LEASE_TTL = timedelta(minutes=15)


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


class RunStore:
    """Runs, their leases and their events in one SQLite file."""

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
        return _run_row(row, status)

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

    def _fence(self, run_id: str, token: str) -> None:
        """Raise LeaseLost unless `token` still owns the run (a read: no row is rewritten)."""
        row = self.conn.execute(
            "SELECT 1 FROM runs WHERE id = ? AND lease_token = ? AND status = 'running'",
            (run_id, token),
        ).fetchone()
        if row is None:
            raise LeaseLost(f"run {run_id} was taken over by another process; stopping here")

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

    # ---------------------------------------------------------------------------- events

    def add_event(self, run_id: str, kind: str, detail: dict[str, Any] | None = None) -> None:
        """Append an event to the run's log (inside the caller's transaction when there is one:
        a single INSERT needs no savepoint of its own)."""
        if not self.conn.in_transaction:
            with self._tx():
                self.add_event(run_id, kind, detail)
            return
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


def not_continuable(run_id: str, pruned_at: str | None, redacted_at: str | None) -> str:
    """Why a run that gc pruned or redacted cannot be resumed or forked, in one line."""
    if pruned_at:
        what = f"was pruned by `dayflow gc` at {pruned_at}: its steps are gone"
    else:
        what = f"was redacted by `dayflow gc --redact` at {redacted_at}: its reads are blanked"
    return f"run {run_id} {what}, so it can be shown but not resumed or forked"
