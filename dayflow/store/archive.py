"""Fork, gc and doctor: the writes that act on a run's history rather than drive it."""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any

from dayflow.errors import RunPruned, StoreError
from dayflow.models import (
    DONE,
    FAILED,
    INTERRUPTED,
    NO_LIMITS,
    RUNNING,
    STOPPED,
    Limits,
    Run,
    Usage,
)
from dayflow.store.context import StoreContext
from dayflow.store.events import EventLog
from dayflow.store.leases import Leases
from dayflow.store.rows import dump, run_select
from dayflow.store.runs import Runs
from dayflow.store.sql import Row, one, scalar
from dayflow.store.values import PRUNED_MARK, REDACTED_MARK, Lease, NewRun, not_continuable


class Archive:
    """Fork, gc and doctor over the runs, leases and events."""

    def __init__(self, ctx: StoreContext, runs: Runs, leases: Leases, events: EventLog) -> None:
        self._ctx, self._runs, self._leases, self._events = ctx, runs, leases, events

    def fork(
        self,
        parent_id: str,
        from_step: int,
        *,
        model: str,
        limits: Limits = NO_LIMITS,
    ) -> tuple[Run, Lease]:
        """Create a run claimed by this process whose history is the parent's first
        `from_step` steps, with their saved tool effects and the compactions made before them,
        all in one transaction. The copies count 0 tokens: the fork did not pay for them, so
        its totals still equal the sum of its steps and its budget counts only its own calls.
        `limits`' steps and budget replace the parent's where given."""
        db = self._ctx.db
        with db.transaction():
            # Lock the parent row: its event log gets a `run_forked` below.
            db.execute("SELECT 1 FROM runs WHERE id = ?" + db.dialect.lock_row, (parent_id,))
            parent = self._runs.get(parent_id)
            if from_step and (parent.pruned_at or parent.redacted_at):
                raise RunPruned(not_continuable(parent.id, parent.pruned_at, parent.redacted_at))
            copied = scalar(
                db,
                "SELECT COUNT(*) FROM steps WHERE run_id = ? AND n <= ? AND state != 'pending'",
                (parent.id, from_step),
            )
            if copied != from_step:
                raise StoreError(f"run {parent.id} has no committed step {from_step}")
            run, lease = self._runs.create(
                NewRun(
                    model=model,
                    brief_date=parent.brief_date,
                    system=parent.system,
                    tools=parent.tools,
                    user_msg=parent.user_msg,
                    max_tokens=parent.max_tokens,
                    max_steps=parent.max_steps if limits.max_steps is None else limits.max_steps,
                    budget=parent.budget if limits.budget is None else limits.budget,
                    task_cap=parent.task_cap,
                    settings=parent.settings,
                    parent_run_id=parent.id,
                    forked_at_step=from_step,
                )
            )
            args = (run.id, parent.id, from_step)
            db.execute(
                """INSERT INTO steps (run_id, n, state, stop_reason, assistant_json,
                   tool_results_json, stop_details_json, input_tokens, output_tokens,
                   cache_creation_tokens, cache_read_tokens, request_id, duration_ms, pid,
                   created_at, completed_at)
                   SELECT ?, n, state, stop_reason, assistant_json, tool_results_json,
                   stop_details_json, 0, 0, 0, 0, request_id, NULL, NULL, created_at,
                   completed_at FROM steps WHERE run_id = ? AND n <= ?""",
                args,
            )
            db.execute(
                """INSERT INTO tool_effects (run_id, tool_use_id, step_n, tool_name,
                   idempotency_key, content, is_error, refused_by, created_at)
                   SELECT ?, tool_use_id, step_n, tool_name, idempotency_key, content, is_error,
                   refused_by, created_at FROM tool_effects WHERE run_id = ? AND step_n <= ?""",
                args,
            )
            # Only compactions made before a call the fork keeps: the fork decides its own next.
            db.execute(
                """INSERT INTO compactions (run_id, seq, before_step, through_step, summary_json,
                   tokens_before, tokens_after, created_at)
                   SELECT ?, seq, before_step, through_step, summary_json, tokens_before,
                   tokens_after, created_at FROM compactions
                   WHERE run_id = ? AND before_step <= ?""",
                args,
            )
            self._events.add(
                run.id, "run_forked", {"parent": parent.id, "step": from_step, "model": model}
            )
            self._events.add(parent.id, "run_forked", {"fork": run.id, "step": from_step})
        return self._runs.get(run.id), lease

    def prune(self, run_id: str, *, unfinished: bool = False, note: Any = None) -> bool:
        """Blank a finished run's payloads and keep its tombstone: the runs row (status, dates,
        totals, brief), one row per step (state, stop reason, usage, timing, and each tool_use's
        id and name, its input replaced by PRUNED_MARK), one effect per call without its content
        (name, ok or error, a task's idempotency key),
        the events without their details. Tasks and idempotency keys are never touched.
        Returns False, changing nothing, when the run no longer qualifies (pruned already, or
        being driven; or unfinished and `unfinished` is not set)."""
        db = self._ctx.db
        with db.transaction():
            row = self._prunable(run_id, unfinished)
            if row is None or row["pruned_at"]:
                return False
            self._blank_events(run_id)  # first: the log is drawn from the rows blanked below
            for n, assistant, results, completed_at in db.execute(
                "SELECT n, assistant_json, tool_results_json, completed_at FROM steps "
                "WHERE run_id = ?",
                (run_id,),
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
                # A read's ok/error lived only in the results: keep it as a contentless effect.
                names = {u["id"]: u["name"] for u in skeleton}
                for block in json.loads(results) if results else []:
                    if isinstance(block, dict) and block.get("tool_use_id") in names:
                        db.execute(
                            """INSERT INTO tool_effects (run_id, tool_use_id, step_n, tool_name,
                               content, is_error, created_at) VALUES (?,?,?,?,'',?,?)
                               ON CONFLICT (run_id, tool_use_id) DO NOTHING""",
                            (
                                run_id,
                                block["tool_use_id"],
                                n,
                                names[block["tool_use_id"]] or "",
                                int(bool(block.get("is_error"))),
                                completed_at or self._ctx.now(),
                            ),
                        )
                db.execute(
                    "UPDATE steps SET assistant_json = ?, tool_results_json = NULL, "
                    "stop_details_json = NULL WHERE run_id = ? AND n = ?",
                    (dump(skeleton), run_id, n),
                )
            db.execute("UPDATE tool_effects SET content = '' WHERE run_id = ?", (run_id,))
            db.execute(
                "UPDATE compactions SET summary_json = ? WHERE run_id = ?",
                (dump({"role": "user", "content": PRUNED_MARK}), run_id),
            )
            self._tombstone(row, "pruned_at")
            self._events.add(run_id, "run_pruned", {"gc": note})
        return True

    def _blank_events(self, run_id: str) -> None:
        """Keep the run's log without its details. The events its step rows recorded would be
        gone with the payloads (a read's ok/error, which calls were reads), so the whole log is
        stored as shown, in the same order, before the step rows lose what it was drawn from."""
        db = self._ctx.db
        log = self._events.of(run_id)
        db.execute("DELETE FROM events WHERE run_id = ?", (run_id,))
        for e in log:
            db.execute(
                "INSERT INTO events (run_id, seq, kind, detail_json, pid, host, at) "
                "VALUES (?, ?, ?, '{}', ?, ?, ?)",
                (run_id, e.seq, e.kind, e.pid, e.host, e.at),
            )
        db.execute(
            "UPDATE steps SET begun_after_seq = NULL, completed_after_seq = NULL WHERE run_id = ?",
            (run_id,),
        )

    def redact(
        self, run_id: str, tools: Collection[str], *, unfinished: bool = False, note: Any = None
    ) -> bool:
        """Replace the content of every result of `tools` (in the step rows and the saved
        effects) with REDACTED_MARK, keeping everything else. False when the run does not
        qualify (pruned or redacted already, being driven, or unfinished)."""
        db = self._ctx.db
        with db.transaction():
            row = self._prunable(run_id, unfinished)
            if row is None or row["pruned_at"] or row["redacted_at"]:
                return False
            for n, assistant, results in db.execute(
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
                db.execute(
                    "UPDATE steps SET tool_results_json = ? WHERE run_id = ? AND n = ?",
                    (dump(blocks), run_id, n),
                )
            marks = ",".join("?" * len(tools))
            db.execute(
                f"UPDATE tool_effects SET content = ? WHERE run_id = ? AND tool_name IN ({marks})",
                (REDACTED_MARK, run_id, *tools),
            )
            self._tombstone(row, "redacted_at")
            self._events.add(run_id, "run_redacted", {"gc": note, "tools": sorted(tools)})
        return True

    def _prunable(self, run_id: str, unfinished: bool) -> Row | None:
        db = self._ctx.db
        sql = "SELECT * FROM runs WHERE id = ? AND profile = ?" + db.dialect.lock_row
        row = one(db, sql, (run_id, self._ctx.profile))
        if row is None or (row["status"] == RUNNING and self._leases.owner_alive(row)):
            return None
        if row["status"] not in (DONE, FAILED, STOPPED) and not unfinished:
            return None
        return row

    def _tombstone(self, row: Row, column: str) -> None:
        # A run whose driver is gone is left 'interrupted' with no lease: nothing may claim it.
        status = INTERRUPTED if row["status"] == RUNNING else row["status"]
        self._ctx.db.execute(
            f"UPDATE runs SET {column} = ?, status = ?, lease_token = NULL, "
            "lease_expires_at = NULL WHERE id = ?",
            (self._ctx.now(), status, row["id"]),
        )

    def totals_mismatches(self) -> list[tuple[str, Usage, Usage]]:
        """(run id, the run's totals, the sum of its step rows) wherever the two differ."""
        rows = self._ctx.db.execute(
            """SELECT r.id, r.input_tokens, r.output_tokens, r.cache_creation_tokens,
               r.cache_read_tokens, COALESCE(SUM(s.input_tokens), 0),
               COALESCE(SUM(s.output_tokens), 0), COALESCE(SUM(s.cache_creation_tokens), 0),
               COALESCE(SUM(s.cache_read_tokens), 0)
               FROM runs r LEFT JOIN steps s ON s.run_id = r.id WHERE r.profile = ?
               GROUP BY r.id ORDER BY r.created_at""",
            (self._ctx.profile,),
        )
        out = []
        for r in rows:
            totals = Usage(*(int(v) for v in tuple(r)[1:5]))
            sums = Usage(*(int(v) for v in tuple(r)[5:9]))
            if totals != sums:
                out.append((r[0], totals, sums))
        return out

    def stale_leases(self) -> list[Run]:
        """Runs stored as running whose driving process is gone (lease expired, or the
        process no longer exists on this host)."""
        sql = run_select(self._ctx.db.dialect) + " WHERE r.status = 'running' AND r.profile = ?"
        rows = self._ctx.db.execute(sql, (self._ctx.profile,)).fetchall()
        return [self._leases.run(r) for r in rows if not self._leases.owner_alive(r)]

    def release_stale(self, run_id: str) -> bool:
        """Mark a run whose driver is gone 'interrupted' and drop its lease; False (and no
        change) if a live process drives it by now."""
        db = self._ctx.db
        with db.transaction():
            sql = "SELECT * FROM runs WHERE id = ? AND profile = ?" + db.dialect.lock_row
            row = one(db, sql, (run_id, self._ctx.profile))
            if row is None or row["status"] != RUNNING or self._leases.owner_alive(row):
                return False
            db.execute(
                "UPDATE runs SET status = 'interrupted', lease_token = NULL, "
                "lease_expires_at = NULL, updated_at = ? WHERE id = ?",
                (self._ctx.now(), run_id),
            )
            self._events.add(
                run_id, "lease_released", {"from_pid": row["owner_pid"], "by": "doctor"}
            )
        return True

    def recompute_totals(self, run_id: str) -> tuple[Usage, Usage]:
        """Set a run's totals to the sum of its steps; the old totals go into the event log
        (`totals_recomputed`) so the evidence of the disagreement is kept."""
        db = self._ctx.db
        with db.transaction():
            found = [m for m in self.totals_mismatches() if m[0] == run_id]
            old, new = (found[0][1], found[0][2]) if found else (Usage(), Usage())
            if found:
                db.execute(
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
                self._events.add(
                    run_id, "totals_recomputed", {"old": old.to_json(), "new": new.to_json()}
                )
        return old, new
