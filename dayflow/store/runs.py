"""The runs table: creating, finding and listing runs, and changing a driven run's limits."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from datetime import timedelta
from typing import Any

from dayflow.clock import iso
from dayflow.errors import AmbiguousRunId, DayTaken, ProfileNotFound, RunNotFound
from dayflow.models import INTERRUPTED, RUNNING, Limits, Run, RunSettings
from dayflow.store.context import StoreContext
from dayflow.store.events import EventLog
from dayflow.store.leases import Leases
from dayflow.store.rows import dump, run_select
from dayflow.store.sql import one
from dayflow.store.values import DEFAULT_PROFILE, Lease, NewRun, command_hint

# A run for a day is created within a day or so of it in any timezone (`briefday.latest_for`
# looks back as far).
DAY_LOOKBACK_DAYS = 3
# Rows read at a time while looking back through runs (`latest_done_before`, `ids_newest_first`).
EARLIER_PAGE = 50


class Runs:
    def __init__(self, ctx: StoreContext, leases: Leases, events: EventLog) -> None:
        self._ctx, self._leases, self._events = ctx, leases, events

    def create(self, spec: NewRun, *, sole_for_day: bool = False) -> tuple[Run, Lease]:
        """Insert a new run already claimed by this process. With `sole_for_day`, only if no
        run for its brief date (created in the last few days, not pruned) exists, else raise
        DayTaken naming it: decided under the day's lock, so of two processes on any hosts
        creating the day's run at once, one does and the other is told which it is."""
        ctx = self._ctx
        now = ctx.now()
        import secrets  # here: start-up time of `runs`

        token = secrets.token_hex(8)
        with ctx.db.transaction():
            self._check_registered()
            if sole_for_day:
                self._check_day_free(spec.brief_date, spec.settings.reads_sample)
            run_id = self._new_id()
            ctx.db.execute(
                """INSERT INTO runs (id, status, model, brief_date, created_at, updated_at,
                   system, tools_json, user_msg_json, max_tokens, max_steps, budget, task_cap,
                   settings_json, parent_run_id, forked_at_step, owner_pid, owner_host,
                   owner_started, lease_token, lease_expires_at, version, profile)
                   VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,1,?)""",
                (
                    run_id,
                    RUNNING,
                    spec.model,
                    spec.brief_date,
                    now,
                    now,
                    spec.system,
                    dump(spec.tools),
                    dump(spec.user_msg),
                    spec.max_tokens,
                    spec.max_steps,
                    spec.budget,
                    spec.task_cap,
                    dump(spec.settings.to_json()),
                    spec.parent_run_id,
                    spec.forked_at_step,
                    ctx.owner.pid,
                    ctx.owner.host,
                    ctx.owner.started,
                    token,
                    ctx.lease_expiry(),
                    ctx.profile,
                ),
            )
            self._events.add(run_id, "run_started", {"model": spec.model, "date": spec.brief_date})
        return self.get(run_id), Lease(run_id, token)

    def _check_registered(self) -> None:
        """ProfileNotFound when this store's profile is a registered one whose row is gone. The
        row is locked to the end of the run's creation, as `profiles.remove` locks it first: a
        purge either waits for the new run (then sees it running and refuses) or goes first (the
        run is refused), never deletes the profile's runs while one is being made."""
        ctx = self._ctx
        if not ctx.registered or ctx.profile == DEFAULT_PROFILE:
            return
        sql = "SELECT name FROM profiles WHERE name = ?" + ctx.db.dialect.lock_row
        if one(ctx.db, sql, (ctx.profile,)) is None:
            raise ProfileNotFound(f"no profile {ctx.profile!r} (see `dayflow profiles list`)")

    def _check_day_free(self, brief_date: str, sample: bool) -> None:
        """DayTaken when the day has a run; a run of the bundled sample does not count against
        one that reads the user's own mail (a sample run is never the day's brief)."""
        db, profile = self._ctx.db, self._ctx.profile
        if db.dialect.day_lock:
            # The default profile's lock key is a database's without profiles (the date alone).
            key = brief_date if profile == DEFAULT_PROFILE else f"{brief_date}@{profile}"
            db.execute(db.dialect.day_lock, (key,))
        since = iso(self._ctx.clock.now() - timedelta(days=DAY_LOOKBACK_DAYS))
        rows = db.execute(
            "SELECT id, status, settings_json FROM runs WHERE profile = ? AND brief_date = ? "
            "AND created_at >= ? AND pruned_at IS NULL ORDER BY created_at DESC",
            (profile, brief_date, since),
        ).fetchall()
        for row in rows:
            if not sample and RunSettings.from_json(json.loads(row[2])).reads_sample:
                continue
            raise DayTaken(f"the brief for {brief_date} is run {row[0]} ({row[1]})", row[0])

    def _new_id(self) -> str:
        while True:
            import secrets  # here: start-up time of `runs`

            run_id = secrets.token_hex(6)
            if one(self._ctx.db, "SELECT 1 FROM runs WHERE id = ?", (run_id,)) is None:
                return run_id

    def get(self, run_id: str) -> Run:
        sql = run_select(self._ctx.db.dialect) + " WHERE r.id = ? AND r.profile = ?"
        row = one(self._ctx.db, sql, (run_id, self._ctx.profile))
        if row is None:
            raise RunNotFound(f"no run {run_id!r}")
        return self._leases.run(row)

    @property
    def _listed(self) -> str:
        return command_hint(self._ctx.profile, "runs")

    def find(self, prefix: str) -> Run:
        """The run whose id is `prefix` or starts with it; errors on none or several."""
        prefix = prefix.strip().lower()
        if not prefix or not all(c in "0123456789abcdef" for c in prefix):
            raise RunNotFound(f"{prefix!r} is not a run id (run ids are hex, see `{self._listed}`)")
        rows = self._ctx.db.execute(
            "SELECT id FROM runs WHERE id >= ? AND id < ? AND profile = ? ORDER BY id LIMIT 6",
            (prefix, prefix + "g", self._ctx.profile),
        ).fetchall()
        if not rows:
            raise RunNotFound(f"no run matches {prefix!r} (see `{self._listed}`)")
        if len(rows) > 1:
            ids = ", ".join(r[0] for r in rows[:5])
            raise AmbiguousRunId(f"{prefix!r} matches several runs ({ids}); give more characters")
        return self.get(rows[0][0])

    def list(
        self, *, status: str | None = None, since: str | None = None, limit: int | None = 20
    ) -> list[Run]:
        """Runs newest first. `status` filters on the effective status."""
        where: list[str] = ["r.profile = ?"]
        args: list[Any] = [self._ctx.profile]
        if since:
            where.append("r.created_at >= ?")
            args.append(since)
        if status in (RUNNING, INTERRUPTED):
            where.append("r.status IN ('running','interrupted')")
        elif status:
            where.append("r.status = ?")
            args.append(status)
        sql = run_select(self._ctx.db.dialect) + " WHERE " + " AND ".join(where)
        sql += self._newest_first()
        db = self._ctx.db
        if status in (RUNNING, INTERRUPTED):
            runs = [self._leases.run(r) for r in db.execute(sql, args)]
            runs = [r for r in runs if r.status == status]
            return runs[:limit] if limit else runs
        if limit:
            sql += " LIMIT ?"
            args.append(limit)
        return [self._leases.run(r) for r in db.execute(sql, args)]

    def _newest_first(self) -> str:
        return f" ORDER BY r.created_at DESC, r.{self._ctx.db.dialect.insertion_order} DESC"

    def latest_done_before(self, brief_date: str, *, sample: bool) -> Run | None:
        """The finished run, neither pruned nor redacted, of the latest day before `brief_date`
        (of that day, the newest created) that reads the bundled sample if `sample`, else one
        that reads the user's own sources; however many runs were made since. Read in pages
        in that order, from the (profile, brief_date) index: the first that fits is the one,
        and `sample` (a setting in JSON, read the same way on both engines) is checked here."""
        order = self._ctx.db.dialect.insertion_order
        sql = (
            f"SELECT id, brief_date, created_at, {order}, settings_json FROM runs"
            " WHERE profile = ? AND status = 'done' AND brief_date < ?"
            " AND pruned_at IS NULL AND redacted_at IS NULL"
        )
        rows = self._keyset(
            sql, [self._ctx.profile, brief_date], ("brief_date", "created_at", order)
        )
        for row in rows:
            if RunSettings.from_json(json.loads(row[4])).reads_sample == sample:
                return self.get(row[0])
        return None

    def ids_newest_first(self, *, written_since: str | None = None) -> Iterator[str]:
        """The ids of the profile's runs whose steps are whole (neither pruned nor redacted),
        newest first as `list` orders them, however many there are: read in pages from the
        (profile, created_at) index, each after the previous page's last row, so a caller that
        stops at the first that fits reads no further. `written_since` (ISO-8601): only the
        runs written to (a step, a lease renewed: `updated_at`) at or after it."""
        order = self._ctx.db.dialect.insertion_order
        sql = (
            f"SELECT id, created_at, {order} FROM runs"
            " WHERE profile = ? AND pruned_at IS NULL AND redacted_at IS NULL"
        )
        first: list[Any] = [self._ctx.profile]
        if written_since is not None:
            sql += " AND updated_at >= ?"
            first.append(written_since)
        for row in self._keyset(sql, first, ("created_at", order)):
            yield str(row[0])

    def _keyset(self, sql: str, args: Sequence[Any], keys: tuple[str, ...]) -> Iterator[Any]:
        """The rows of `sql` (which selects id, then `keys`, first) newest first by `keys`, in
        pages of EARLIER_PAGE, each after the previous page's last row in the same order: a
        caller that stops at the first row that fits reads no further."""
        columns = ", ".join(keys)
        after = ", ".join("?" for _ in keys)
        order = ", ".join(f"{k} DESC" for k in keys)
        last: tuple[Any, ...] | None = None
        while True:
            page, values = sql, list(args)
            if last is not None:  # after the previous page's last row, in the same order
                page += f" AND {keys[0]} <= ? AND ({columns}) < ({after})"
                values += [last[0], *last]
            page += f" ORDER BY {order} LIMIT ?"
            rows = self._ctx.db.execute(page, [*values, EARLIER_PAGE]).fetchall()
            yield from rows
            if len(rows) < EARLIER_PAGE:
                return
            last = tuple(rows[-1][1 : 1 + len(keys)])

    def latest_unfinished(self, brief_date: str | None = None) -> Run | None:
        """The newest run that is not done and not being driven right now."""
        sql = run_select(self._ctx.db.dialect) + " WHERE r.status != 'done' AND r.pruned_at IS NULL"
        sql += " AND r.redacted_at IS NULL AND r.profile = ?"
        args: list[Any] = [self._ctx.profile]
        if brief_date:
            sql += " AND r.brief_date = ?"
            args.append(brief_date)
        for row in self._ctx.db.execute(sql + self._newest_first(), args):
            run = self._leases.run(row)
            if run.status != RUNNING:
                return run
        return None

    def update_limits(self, lease: Lease, limits: Limits) -> None:
        """Raise (or set) a run's guards when it is resumed with new limits (the given ones;
        a task cap stays the run's own)."""
        changes = {
            "max_steps": limits.max_steps,
            "budget": limits.budget,
            "max_tokens": limits.max_tokens,
        }
        # Column names come from the fixed dict above; the values are parameters.
        given = {k: v for k, v in changes.items() if v is not None}
        with self._ctx.db.transaction():
            self._leases.hold(lease, "".join(f"{k} = ?, " for k in given), list(given.values()))
            self._events.add(lease.run_id, "limits_changed", changes)
