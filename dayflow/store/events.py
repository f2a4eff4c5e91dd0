"""The event log: an ordered list of what happened to each run, for `show` and `trace`."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from dayflow.models import Event
from dayflow.store.context import StoreContext
from dayflow.store.rows import dump


class EventLog:
    def __init__(self, ctx: StoreContext) -> None:
        self._ctx = ctx

    def add(self, run_id: str, kind: str, detail: dict[str, Any] | None = None) -> None:
        """Append an event to the run's log (inside the caller's transaction when there is one:
        a single INSERT needs no savepoint of its own)."""
        db = self._ctx.db
        if not db.in_transaction:
            with db.transaction():
                # MAX(seq) + 1 below is safe under concurrent writers because each writer of a
                # run's events holds the run row locked: this lock, a lease check (an UPDATE of
                # the row) or the lock a claim, gc or fork takes.
                db.execute("SELECT 1 FROM runs WHERE id = ?" + db.dialect.lock_row, (run_id,))
                self.add(run_id, kind, detail)
            return
        owner = self._ctx.owner
        db.execute(
            """INSERT INTO events (run_id, seq, kind, detail_json, pid, host, at)
               SELECT ?, COALESCE(MAX(seq), 0) + 1, ?, ?, ?, ?, ? FROM events
               WHERE run_id = ?""",
            (run_id, kind, dump(detail or {}), owner.pid, owner.host, self._ctx.now(), run_id),
        )

    def add_many(self, run_id: str, items: Sequence[tuple[str, dict[str, Any]]]) -> None:
        """Append several events in order with one statement (inside the caller's write
        transaction): a step's events cost one round trip, however many calls it made."""
        if not items:
            return
        owner = self._ctx.owner
        rows = ", ".join(f"({i}, ?, ?)" for i in range(1, len(items) + 1))
        args: list[Any] = [v for kind, detail in items for v in (kind, dump(detail))]
        self._ctx.db.execute(
            f"""WITH k(i, kind, detail) AS (VALUES {rows})
               INSERT INTO events (run_id, seq, kind, detail_json, pid, host, at)
               SELECT ?, (SELECT COALESCE(MAX(seq), 0) FROM events WHERE run_id = ?) + k.i,
               k.kind, k.detail, ?, ?, ? FROM k""",
            (*args, run_id, run_id, owner.pid, owner.host, self._ctx.now()),
        )

    def of(self, run_id: str) -> list[Event]:
        rows = self._ctx.db.execute("SELECT * FROM events WHERE run_id = ? ORDER BY seq", (run_id,))
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
