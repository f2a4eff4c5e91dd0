"""Steps, their saved effects and the run's compactions: what the loop writes as it goes.

A step is two transactions, plus one per call with a local effect; each is short, never
open across a model or network call, and fenced by the driver's lease (a write whose lease was
taken over changes nothing and raises LeaseLost):

- `begin` commits the model's response (assistant blocks, stop_reason, stop_details, usage,
  added to the run's totals, the lease renewed by the same UPDATE) the moment it arrives and
  before any tool runs: a paid response is never lost.
- `steps.save_effect` commits the result of one call that changes something outside the step
  (`create_task`, a delivery), together with that change: a kill leaves both or neither, and a
  resume reuses the saved result instead of doing it again. Read-only calls save nothing: their
  results wait in memory for `complete`, so a kill before it runs such a read again on resume
  (its result had not been sent to the model yet, so nothing the model saw changes).
- `complete` commits the step's tool results (or, for the last turn, the brief and the run's
  end): one UPDATE of the step whose WHERE also checks the lease (`Leases.fence`; on
  PostgreSQL it locks the run row), since `begin` renewed the lease moments before (SQLite's
  lasts 15 minutes; PostgreSQL's short one is kept alive by a heartbeat while the run is
  driven). From then on the results live in the step row only: a saved effect keeps its name,
  key and ok flag, its content blanked in the same transaction (each result is stored once);
  an error keeps its (short) message. Unless it ends the run, it does not wait for a server's
  disk (`Database.batch(flush=False)`; PostgreSQL with durability NORMAL): a crash of the
  server, never of this process, can lose it, which costs only redoing it (the reads run
  again, saved effects are reused), and the next `begin` refuses to follow a step left
  pending, so no step is ever stored after a completion that was lost.

Neither transaction reads a result before its COMMIT (each check is `Database.execute_one`), so
on PostgreSQL each is one round trip, and usually one statement (`Database.batch`).

What the step row records is not stored again as events: the response (`response_committed`),
the reads (`tool_executed` without a key) and the completion (`step_committed`,
`step_discarded`) are shown in the run's log from the row (`events.py`), in the place the
row's `begun_after_seq` and `completed_after_seq` give them. Effects, reused results, resumes,
take-overs, compactions and failures are stored as events.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from dayflow.errors import StoreError
from dayflow.models import COMPLETE, DISCARDED, PENDING, Message, ModelResponse, Step, ToolEffect
from dayflow.store.context import StoreContext
from dayflow.store.events import EventLog
from dayflow.store.leases import Leases
from dayflow.store.rows import dump, effect_row, step_row, stored_json
from dayflow.store.sql import Unless, one
from dayflow.store.values import BatchItem, Lease

# The seq of the run's newest stored event (the run is the first argument): where a step's
# own events, which are not stored, appear in its log.
LAST_SEQ = "(SELECT COALESCE(MAX(seq), 0) FROM events WHERE run_id = ?)"


def derivable(kind: str, detail: dict[str, Any]) -> bool:
    """Whether the event is recorded by the step row itself: a read's `tool_executed` (a call
    that saved no effect has no key), whose tool_use block and result the row holds."""
    return kind == "tool_executed" and "key" not in detail


class _Unsettled(StoreError):
    """`begin` found the step before it still pending."""


class Steps:
    def __init__(self, ctx: StoreContext, leases: Leases, events: EventLog) -> None:
        self._ctx, self._leases, self._events = ctx, leases, events
        # The newest completion this process wrote without waiting for the disk, by run: what
        # `begin` writes again should the database have lost it (see `complete`).
        self._unflushed: dict[str, tuple[Lease, int, dict[str, Any]]] = {}

    # ----------------------------------------------------------------------------- steps

    def of(self, run_id: str, *, after: int = 0) -> list[Step]:
        """The run's steps in order (only those after step `after`, when given)."""
        rows = self._ctx.db.execute(
            "SELECT * FROM steps WHERE run_id = ? AND n > ? ORDER BY n", (run_id, after)
        ).fetchall()
        return [step_row(r) for r in rows]

    def conversation(self, run_id: str, *, after: int = 0) -> list[Message]:
        """The messages the run's steps after step `after` contribute to the next request,
        decoded: each committed step's assistant turn and, when it has them, its tool results
        as the user turn. Pending and discarded steps send nothing. (Only the two payload
        columns are read: this is the resume path.)"""
        rows = self._ctx.db.execute(
            "SELECT assistant_json, tool_results_json FROM steps "
            "WHERE run_id = ? AND n > ? AND state = 'complete' ORDER BY n",
            (run_id, after),
        )
        messages: list[Message] = []
        where = f"run {run_id}"
        for assistant, results in rows:
            messages.append({"role": "assistant", "content": stored_json(assistant, where)})
            if results is not None:
                messages.append({"role": "user", "content": stored_json(results, where)})
        return messages

    def last(self, run_id: str) -> Step | None:
        """The run's newest step (one seek, whatever the length of the run)."""
        row = one(
            self._ctx.db, "SELECT * FROM steps WHERE run_id = ? ORDER BY n DESC LIMIT 1", (run_id,)
        )
        return None if row is None else step_row(row)

    def begin(self, lease: Lease, n: int, response: ModelResponse, duration_ms: int) -> None:
        """Commit a model response as pending step `n` and add its usage to the run.

        Step `n - 1` must be complete: its request was built on it. When a crash of the database
        server lost that completion (written without waiting for the disk), this process still
        holds what it wrote: it writes it again, waiting for the disk this time, with an event
        saying so, then the response; so the run goes on and the paid response is kept. Another
        process (a resume) finds the step pending and redoes it."""
        try:
            self._begin(lease, n, response, duration_ms)
            return
        except _Unsettled:
            kept = self._unflushed.pop(lease.run_id, None)
            if kept is None or kept[0] != lease or kept[1] != n - 1:
                raise
        self.complete(lease, n - 1, **kept[2], rewrite=True)
        self._begin(lease, n, response, duration_ms)

    def _begin(self, lease: Lease, n: int, response: ModelResponse, duration_ms: int) -> None:
        u = response.usage
        ctx = self._ctx
        run_id = lease.run_id
        guard: Unless | None = None
        if ctx.db.lazy_commits:
            # A server's crash may have lost the completion of the step before (`complete`),
            # on which this step's request was built: it must be there.
            guard = (
                "NOT EXISTS (SELECT 1 FROM steps WHERE run_id = ? AND n = ? AND state = 'pending')",
                (run_id, n - 1),
                _Unsettled(
                    f"run {run_id}: step {n - 1} is not complete in the database, so step {n} "
                    "cannot follow it (a crash of the database server lost its completion)"
                ),
            )
        # On PostgreSQL one statement: the two writes do not read each other's.
        with ctx.db.batch(independent=True):
            # The totals and the lease renewal in one UPDATE, fenced by the token (and the
            # guard).
            self._leases.hold(
                lease,
                """input_tokens = input_tokens + ?, output_tokens = output_tokens + ?,
                   cache_creation_tokens = cache_creation_tokens + ?,
                   cache_read_tokens = cache_read_tokens + ?,
                   estimated = CASE WHEN ? = 1 THEN 1 ELSE estimated END, """,
                (
                    u.input_tokens,
                    u.output_tokens,
                    u.cache_creation_input_tokens,
                    u.cache_read_input_tokens,
                    int(response.estimated),
                ),
                guard=guard,
            )
            ctx.db.execute(
                """INSERT INTO steps (run_id, n, state, stop_reason, assistant_json,
                   stop_details_json, input_tokens, output_tokens, cache_creation_tokens,
                   cache_read_tokens, request_id, duration_ms, pid, host, created_at,
                   batch_id, begun_after_seq)
                   VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,"""
                + LAST_SEQ
                + ")",
                (
                    run_id,
                    n,
                    PENDING,
                    response.stop_reason,
                    dump(response.content),
                    None if response.stop_details is None else dump(response.stop_details),
                    u.input_tokens,
                    u.output_tokens,
                    u.cache_creation_input_tokens,
                    u.cache_read_input_tokens,
                    response.request_id,
                    duration_ms,
                    ctx.owner.pid,
                    ctx.owner.host,
                    ctx.now(),
                    response.batch_id,
                    run_id,
                ),
            )
            # No event: the step row is the record of the response (the log shows it as
            # `response_committed`, placed after the event numbered `begun_after_seq`).

    def complete(
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
        rewrite: bool = False,
    ) -> None:
        """Mark step `n` complete with its tool results, logging `events` (the calls made)
        before its own; with `final_text` also finish the run (`note` is kept as the run's
        reason: something a finished run should still say). `effects`: whether any call of the
        step saved an effect (its content, now in the step row, is blanked). `rewrite`: the
        database lost this completion, written again by `begin`."""
        ctx = self._ctx
        run_id = lease.run_id
        db = ctx.db
        if rewrite:
            events = [*events, _rewritten(n)]
        # On PostgreSQL one round trip (one statement, unless it ends the run or saved an
        # effect). Only the run's end waits for the server's disk: the rest can be redone (the
        # reads run again, the saved effects are reused), and the next step's `begin` checks
        # that this completion is there. What was paid for is flushed: the response (`begin`),
        # each saved effect, and the end of the run with the brief.
        lazy = final_text is None and not rewrite
        with db.batch(flush=not lazy):
            fence = self._finish_or_fence(lease, final_text, note)
            # Only what the step row does not record is stored (a reused result's event); the
            # reads' `tool_executed` and the step's completion are shown from the row, after
            # the event numbered `completed_after_seq`, so these go first.
            kept = [(kind, detail) for kind, detail in events if not derivable(kind, detail)]
            self._events.add_many(run_id, kept)
            db.execute_one(
                """UPDATE steps SET state = ?, tool_results_json = ?, completed_at = ?,
                   completed_after_seq = """
                + LAST_SEQ
                + " WHERE run_id = ? AND n = ? AND state = 'pending'"
                + fence[0],
                (
                    DISCARDED if discard else COMPLETE,
                    None if tool_results is None else dump(tool_results),
                    ctx.now(),
                    run_id,
                    run_id,
                    n,
                    *fence[1],
                ),
                StoreError(f"run {run_id}: step {n} is not pending"),
                fence[2],
            )
            if tool_results and effects:
                # The results now live in the step row, byte for byte; the saved effects were
                # only needed until here (to resume a pending step), so keep each result once.
                db.execute(
                    "UPDATE tool_effects SET content = '' "
                    "WHERE run_id = ? AND step_n = ? AND is_error = 0 "
                    # A draft's marks are not a tool's result: later runs read them.
                    "AND tool_use_id NOT LIKE 'draft:%'",
                    (run_id, n),
                )
            if final_text is not None:
                self._events.add(run_id, "run_finished", {"step": n})
        self._unflushed.pop(run_id, None)
        if lazy and db.lazy_commits:
            again = {"tool_results": tool_results, "events": events, "effects": effects}
            self._unflushed[run_id] = (lease, n, again | {"discard": discard})

    def _finish_or_fence(
        self, lease: Lease, final_text: str | None, note: str | None
    ) -> tuple[str, tuple[Any, ...], Unless | None]:
        """With `final_text`, finish the run (its lease checked by that write) and return no
        fence; else the fence the step's own UPDATE carries: `begin` renewed the lease moments
        ago (and on PostgreSQL, whose lease is short, the heartbeat keeps renewing it while the
        run is driven), and on PostgreSQL that UPDATE also locks the run row."""
        if final_text is None:
            return self._leases.fence(lease)
        self._leases.hold(
            lease,
            "status = 'done', final_text = ?, finished_at = ?, reason = ?, "
            "lease_token = NULL, lease_expires_at = NULL, ",
            (final_text, self._ctx.now(), note),
            renew=False,
        )
        return ("", (), None)

    # ----------------------------------------------------------------------- compaction

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
        """Record that calls from `before_step` on send `summary` in place of steps
        1..`through_step`. The step rows themselves are never touched."""
        ctx = self._ctx
        run_id = lease.run_id
        with ctx.db.transaction():
            self._leases.hold(lease)
            ctx.db.execute(
                """INSERT INTO compactions (run_id, seq, before_step, through_step, summary_json,
                   tokens_before, tokens_after, created_at)
                   SELECT ?, COALESCE(MAX(seq), 0) + 1, ?, ?, ?, ?, ?, ? FROM compactions
                   WHERE run_id = ?""",
                (
                    run_id,
                    before_step,
                    through_step,
                    dump(summary),
                    tokens_before,
                    tokens_after,
                    ctx.now(),
                    run_id,
                ),
            )
            self._events.add(
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
        row = one(
            self._ctx.db,
            "SELECT through_step, summary_json FROM compactions WHERE run_id = ? "
            "ORDER BY seq DESC LIMIT 1",
            (run_id,),
        )
        return None if row is None else (row[0], json.loads(row[1]))

    def compactions(self, run_id: str) -> list[dict[str, Any]]:
        rows = self._ctx.db.execute(
            "SELECT seq, before_step, through_step, tokens_before, tokens_after, created_at "
            "FROM compactions WHERE run_id = ? ORDER BY seq",
            (run_id,),
        )
        keys = ("seq", "before_step", "through_step", "tokens_before", "tokens_after")
        return [{k: r[k] for k in (*keys, "created_at")} for r in rows]

    # ------------------------------------------------------------------- batch requests

    def record_batch(self, batch_id: str, items: Sequence[BatchItem]) -> None:
        """Record, in one transaction, that each item's step was submitted in `batch_id` (the
        write right after the Batches API accepted it). The first record of a step wins: a
        record is not fenced by a lease, since a driver that lost its run can only make the
        next driver poll the batch it paid for instead of paying again."""
        ctx = self._ctx
        now = ctx.now()
        with ctx.db.transaction():
            for item in items:
                made = ctx.db.execute(
                    """INSERT INTO batch_requests (run_id, step_n, batch_id, custom_id, digest,
                       created_at) VALUES (?,?,?,?,?,?) ON CONFLICT DO NOTHING""",
                    (item.run_id, item.step_n, batch_id, item.custom_id, item.digest, now),
                )
                if made.rowcount == 1:
                    self._events.add(
                        item.run_id, "batch_submitted", {"step": item.step_n, "batch_id": batch_id}
                    )

    def batch_of(self, run_id: str, step_n: int) -> tuple[str, BatchItem] | None:
        """The batch step `step_n` of the run was submitted in, and its record, if any."""
        row = one(
            self._ctx.db,
            "SELECT * FROM batch_requests WHERE run_id = ? AND step_n = ?",
            (run_id, step_n),
        )
        if row is None:
            return None
        return row["batch_id"], BatchItem(run_id, step_n, row["custom_id"], row["digest"])

    # ---------------------------------------------------------------------- tool effects

    def effects_of_step(self, run_id: str, n: int) -> dict[str, ToolEffect]:
        """The saved effects of step `n` by key: what a resume of a pending step reuses."""
        rows = self._ctx.db.execute(
            "SELECT * FROM tool_effects WHERE run_id = ? AND step_n = ?", (run_id, n)
        )
        return {r["tool_use_id"]: effect_row(r) for r in rows}

    def get_effect(self, run_id: str, key: str) -> ToolEffect | None:
        """The saved effect of the call (or other effect) `key` of the run, if any."""
        row = one(
            self._ctx.db,
            "SELECT * FROM tool_effects WHERE run_id = ? AND tool_use_id = ?",
            (run_id, key),
        )
        return None if row is None else effect_row(row)

    def save_effect(
        self,
        lease: Lease,
        step_n: int,
        key: str,
        name: str,
        produce: Callable[[], tuple[str, bool] | tuple[str, bool, str | None]],
        idempotency_key: str | None = None,
    ) -> ToolEffect:
        """Run `produce` (a local effect, which writes through this same store, or the return of
        an already-read result) and save what it returns as the outcome of effect `key` (a
        tool_use id, or any key unique within the run), all in one transaction: a kill leaves
        the local write and its saved outcome both or neither. `produce` gives the content and
        whether it is an error, and may add which rule refused the call (`refused_by`)."""
        ctx = self._ctx
        run_id = lease.run_id
        with ctx.db.transaction():
            self._leases.hold(lease)
            produced = produce()
            content, is_error = produced[0], produced[1]
            refused_by = produced[2] if len(produced) == 3 else None
            now = ctx.now()
            ctx.db.execute(
                """INSERT INTO tool_effects (run_id, tool_use_id, step_n, tool_name,
                   idempotency_key, content, is_error, refused_by, created_at)
                   VALUES (?,?,?,?,?,?,?,?,?)""",
                (run_id, key, step_n, name, idempotency_key, content, int(is_error),
                 refused_by, now),
            )  # fmt: skip
            self._events.add(
                run_id,
                "tool_executed",
                {"step": step_n, "tool": name, "key": key, "ok": not is_error},
            )
        return ToolEffect(run_id, key, step_n, name, content, is_error, now)

    def marks_elsewhere(self, run_id: str, keys: Sequence[str]) -> list[tuple[str, str, str]]:
        """(run id, key, content) of the saved effects named `keys` (a draft's marks) in the
        profile's runs other than `run_id`, oldest first."""
        marks = ", ".join("?" for _ in keys)
        rows = self._ctx.db.execute(
            "SELECT e.run_id, e.tool_use_id, e.content FROM tool_effects e "
            "JOIN runs r ON r.id = e.run_id "
            f"WHERE r.profile = ? AND e.run_id <> ? AND e.tool_use_id IN ({marks}) "
            "ORDER BY e.created_at",
            (self._ctx.profile, run_id, *keys),
        )
        return [(str(r[0]), str(r[1]), str(r[2])) for r in rows]

    def count_refused(self, run_id: str, tool_name: str, refusal: str) -> int:
        """How many of the run's `tool_name` calls the rule `refusal` refused (`refused_by`)."""
        row = one(
            self._ctx.db,
            "SELECT COUNT(*) FROM tool_effects WHERE run_id = ? AND tool_name = ? "
            "AND refused_by = ?",
            (run_id, tool_name, refusal),
        )
        return 0 if row is None else int(row[0])

    def effects(self, run_id: str) -> list[ToolEffect]:
        rows = self._ctx.db.execute(
            "SELECT * FROM tool_effects WHERE run_id = ? ORDER BY step_n, created_at", (run_id,)
        )
        return [effect_row(r) for r in rows]


def _rewritten(n: int) -> tuple[str, dict[str, Any]]:
    """The event saying step `n`'s completion was written again after the server lost it."""
    return (
        "step_completion_rewritten",
        {
            "step": n,
            "reason": "the database server lost this step's completion (a crash before it "
            "reached the disk); written again by the process driving the run",
        },
    )
