"""Leases: which process drives a run, and the one check every driver's write makes.

A run's driver is alive if its lease is unexpired and, on this host, its process still exists.
Every write a driver makes goes through `Leases.hold` in the same transaction: one UPDATE that
both checks that the lease's token still owns the run and renews it (on PostgreSQL the UPDATE
also locks the run row to the end of the transaction, so a takeover waits for the write in
flight). A write whose token no longer owns the run raises `LeaseLost` and changes nothing.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from dayflow.errors import LeaseLost, RunAlreadyDone, RunBusy, RunNotFound, RunPruned, StoreError
from dayflow.models import DONE, INTERRUPTED, RUNNING, Run
from dayflow.store.context import StoreContext
from dayflow.store.events import EventLog
from dayflow.store.rows import run_row
from dayflow.store.sql import Database, Row, Unless, one
from dayflow.store.values import Lease, not_continuable, process_alive


class Leases:
    def __init__(self, ctx: StoreContext, events: EventLog) -> None:
        self._ctx, self._events = ctx, events

    def hold(
        self,
        lease: Lease,
        assignments: str = "",
        args: Sequence[Any] = (),
        *,
        renew: bool = True,
        guard: Unless | None = None,
    ) -> None:
        """Raise LeaseLost unless `lease` still owns its run, renewing it (unless not `renew`);
        `assignments` ("col = ?, ", fixed text) are made by the same UPDATE. `guard`: a further
        condition the write needs (SQL, its arguments, the error when it is false, raised only
        while the lease holds). Call inside a write transaction."""
        ctx = self._ctx
        renewal = "lease_expires_at = ?, " if renew else ""
        sql = (
            f"UPDATE runs SET {assignments}{renewal}updated_at = ? "
            "WHERE id = ? AND lease_token = ? AND status = 'running'"
        )
        values = (
            *args,
            *([ctx.lease_expiry()] if renew else []),
            ctx.now(),
            lease.run_id,
            lease.token,
        )
        if guard is None:
            ctx.db.execute_one(sql, values, lost(lease))
            return
        condition, condition_args, error = guard
        _, _, held = self.fence(lease)
        ctx.db.execute_one(f"{sql} AND {condition}", (*values, *condition_args), error, held)

    def fence(self, lease: Lease) -> tuple[str, tuple[Any, ...], Unless]:
        """What a write adds to its WHERE ("AND EXISTS ...", with its arguments) to change
        nothing unless `lease` still owns its run, without renewing it (on PostgreSQL the run
        row is locked to the end of the transaction, as by `hold`, so a take-over waits for the
        write); and, for `Database.execute_one`, the check that tells a lost lease from the
        write's own condition when it changed no row."""
        # Locked in the explanation too: on PostgreSQL only a locking read sees a take-over
        # that committed while the write waited for the row (READ COMMITTED re-checks the
        # rows it locks; a plain read keeps the statement's snapshot).
        lock = self._ctx.db.dialect.lock_row
        held = (
            "EXISTS (SELECT 1 FROM runs WHERE id = ? AND lease_token = ? "
            f"AND status = 'running'{lock})"
        )
        args = (lease.run_id, lease.token)
        return f" AND {held}", args, (held, args, lost(lease))

    def claim(self, run_id: str) -> Lease:
        """Take the run for this process, or raise RunBusy (or why it cannot be driven).

        The check and the take-over happen in one write transaction, and the UPDATE is
        conditional on the version read, so of N processes claiming at once exactly one wins.
        """
        ctx = self._ctx
        import secrets  # here: start-up time of `runs`

        token = secrets.token_hex(8)
        with ctx.db.transaction():
            locked = "SELECT * FROM runs WHERE id = ? AND profile = ?" + ctx.db.dialect.lock_row
            row = one(ctx.db, locked, (run_id, ctx.profile))
            if row is None:
                raise RunNotFound(f"no run {run_id!r}")
            if row["status"] == DONE:
                raise RunAlreadyDone(f"run {run_id} is already done")
            if row["status"] == RUNNING and self.owner_alive(row):
                raise RunBusy(
                    f"run {run_id} is being driven by pid {row['owner_pid']} on host "
                    f"{row['owner_host']}; wait for it to finish"
                )
            if row["pruned_at"] or row["redacted_at"]:
                raise RunPruned(not_continuable(run_id, row["pruned_at"], row["redacted_at"]))
            previous = row["owner_pid"] if row["status"] == RUNNING else None
            owner = ctx.owner
            cur = ctx.db.execute(
                """UPDATE runs SET status = 'running', owner_pid = ?, owner_host = ?,
                   owner_started = ?, lease_token = ?, lease_expires_at = ?, updated_at = ?,
                   version = version + 1
                   WHERE id = ? AND version = ?""",
                (
                    owner.pid,
                    owner.host,
                    owner.started,
                    token,
                    ctx.lease_expiry(),
                    ctx.now(),
                    run_id,
                    row["version"],
                ),
            )
            if cur.rowcount != 1:  # pragma: no cover - the write lock makes this unreachable
                raise RunBusy(f"run {run_id} was claimed by another process")
            if previous is not None:
                self._events.add(run_id, "lease_taken_over", {"from_pid": previous})
        return Lease(run_id, token)

    def release(
        self,
        lease: Lease,
        status: str,
        reason: str | None = None,
        request_id: str | None = None,
    ) -> None:
        """End this process's claim, leaving the run `status` (failed/stopped/interrupted)."""
        with self._ctx.db.transaction():
            self.hold(
                lease,
                "status = ?, reason = ?, request_id = ?, lease_token = NULL, "
                "lease_expires_at = NULL, ",
                (status, reason, request_id),
                renew=False,
            )
            kind = {"failed": "run_failed", "stopped": "run_stopped"}.get(status, "run_released")
            self._events.add(lease.run_id, kind, {"reason": reason, "request_id": request_id})

    @contextlib.contextmanager
    def keep_alive(self, lease: Lease) -> Iterator[None]:
        """Keep `lease` from expiring while the block runs (a model call, which may take
        minutes), where the backend's leases are short: a thread renews it every third of the
        TTL through a connection of its own, one autocommit UPDATE each time, so no transaction
        is ever held across the call. When the process dies, so do the renewals, and the run is
        free one TTL later. A renewal that finds the lease taken stops; the driver's next write
        then raises LeaseLost."""
        db = self._ctx.db
        opener: Callable[[], Database] | None = getattr(db, "sibling", None)
        if not db.dialect.heartbeat or opener is None:
            yield
            return
        stop = threading.Event()
        interval = db.dialect.lease_ttl.total_seconds() / 3
        ctx = self._ctx

        def beat() -> None:
            other: Database | None = None
            try:
                while not stop.wait(interval):
                    try:
                        other = other or opener()
                        cur = other.execute(
                            "UPDATE runs SET lease_expires_at = ? "
                            "WHERE id = ? AND lease_token = ? AND status = 'running'",
                            (ctx.lease_expiry(), lease.run_id, lease.token),
                        )
                    except StoreError:
                        other = None  # the server is away: try again next beat
                        continue
                    if cur.rowcount != 1:
                        return
            finally:
                if other is not None:
                    with contextlib.suppress(StoreError):
                        other.close()

        thread = threading.Thread(target=beat, name=f"lease-{lease.run_id}", daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()

    def owner_alive(self, row: Row) -> bool:
        """Whether the process named in a runs row still drives it."""
        if row["lease_token"] is None or row["lease_expires_at"] is None:
            return False
        if row["lease_expires_at"] < self._ctx.lease_now():
            return False
        if row["owner_host"] == self._ctx.owner.host and row["owner_pid"] is not None:
            return process_alive(row["owner_pid"], row["owner_started"])
        return True

    def run(self, row: Row) -> Run:
        """The run in a `run_select` row, shown `interrupted` when stored running with its
        driver gone."""
        status = row["status"]
        if status == RUNNING and not self.owner_alive(row):
            status = INTERRUPTED
        return run_row(row, status)


def lost(lease: Lease) -> LeaseLost:
    return LeaseLost(f"run {lease.run_id} was taken over by another process; stopping here")
