"""The event log: an ordered list of what happened to each run, for `show` and `trace`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dayflow.models import Event
from dayflow.store.context import StoreContext
from dayflow.store.rows import dump, stored_json


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
        """The run's log in order, numbered from 1: the stored events, and the events its step
        rows record (see `steps.py`) in their places."""
        db = self._ctx.db
        stored = [
            Event(
                r["run_id"],
                r["seq"],
                r["kind"],
                stored_json(r["detail_json"], f"run {run_id}"),
                r["pid"],
                r["host"],
                r["at"],
            )
            for r in db.execute("SELECT * FROM events WHERE run_id = ? ORDER BY seq", (run_id,))
        ]
        rows = db.execute(
            "SELECT n, state, assistant_json, tool_results_json, pid, host, created_at, "
            "completed_at, begun_after_seq, completed_after_seq FROM steps WHERE run_id = ? "
            "AND (begun_after_seq IS NOT NULL OR completed_after_seq IS NOT NULL) ORDER BY n",
            (run_id,),
        ).fetchall()
        if not rows:
            return stored
        return _merge(stored, _from_steps(run_id, rows, stored))


# (the stored event it follows, step, phase, index): the order of the events a step row records
_Place = tuple[int, int, int, int]


def _from_steps(
    run_id: str, rows: Sequence[Any], stored: list[Event]
) -> list[tuple[_Place, Event]]:
    """The events recorded by the step rows: `response_committed` where the step was begun;
    where it was completed, `tool_executed` for each call that has no stored event (a read),
    then `step_committed` or `step_discarded`. A completion is shown under the process of the
    stored event it follows (a resume's `run_resumed` precedes what the resuming process
    completes), a response under the process that made the call."""
    by_seq = {e.seq: e for e in stored}
    keyed = {
        (e.detail.get("step"), e.detail.get("key"))
        for e in stored
        if e.kind in ("tool_executed", "tool_reused") and "key" in e.detail
    }
    out: list[tuple[_Place, Event]] = []
    for r in rows:
        n = r["n"]
        if r["begun_after_seq"] is not None:
            event = Event(
                run_id, 0, "response_committed", {"step": n}, r["pid"], r["host"], r["created_at"]
            )
            out.append(((r["begun_after_seq"], n, 0, 0), event))
        after = r["completed_after_seq"]
        if after is None or r["completed_at"] is None:
            continue
        near = by_seq.get(after)
        pid, host = (near.pid, near.host) if near is not None else (r["pid"], r["host"])
        errors = {
            b.get("tool_use_id"): bool(b.get("is_error"))
            for b in stored_json(r["tool_results_json"] or "[]", f"run {run_id}")
            if isinstance(b, dict)
        }
        kinds: list[tuple[str, dict[str, Any]]] = [
            ("tool_executed", {"step": n, "tool": b.get("name"), "ok": not errors[b.get("id")]})
            for b in stored_json(r["assistant_json"], f"run {run_id}")
            if isinstance(b, dict)
            and b.get("type") == "tool_use"
            and b.get("id") in errors
            and (n, b.get("id")) not in keyed
        ]
        kinds.append(
            ("step_discarded" if r["state"] == "discarded" else "step_committed", {"step": n})
        )
        for i, (kind, detail) in enumerate(kinds):
            out.append(
                ((after, n, 1, i), Event(run_id, 0, kind, detail, pid, host, r["completed_at"]))
            )
    return out


def _merge(stored: list[Event], derived: list[tuple[_Place, Event]]) -> list[Event]:
    """Each derived event right after the stored event it follows (in step order among
    themselves), all numbered from 1."""
    derived.sort(key=lambda pe: pe[0])
    merged: list[Event] = []
    i = 0
    for e in stored:
        while i < len(derived) and derived[i][0][0] < e.seq:
            merged.append(derived[i][1])
            i += 1
        merged.append(e)
    merged.extend(e for _, e in derived[i:])
    return [
        Event(e.run_id, k, e.kind, e.detail, e.pid, e.host, e.at) for k, e in enumerate(merged, 1)
    ]
