"""The event log: an ordered list of what happened to each run, for `show` and `trace`."""

from __future__ import annotations

import json
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
                self.add(run_id, kind, detail)
            return
        owner = self._ctx.owner
        db.execute(
            """INSERT INTO events (run_id, seq, kind, detail_json, pid, host, at)
               SELECT ?, COALESCE(MAX(seq), 0) + 1, ?, ?, ?, ?, ? FROM events
               WHERE run_id = ?""",
            (run_id, kind, dump(detail or {}), owner.pid, owner.host, self._ctx.now(), run_id),
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
