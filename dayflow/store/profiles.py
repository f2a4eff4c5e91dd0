"""Profiles: the people a fleet briefs.

A profile's own rows (runs, tasks and the keys they are filed under) are scoped by the store
it is opened as (`open_store(target, profile=NAME)`): every query of `runs`, `tasks`, `leases`
and `archive` names it. This part is the fleet's view across profiles: the profile rows
themselves, the day's runs of everyone (for `fleet status`), and purging one person's history.
"""

from __future__ import annotations

from typing import Any

from dayflow.errors import ProfileNotFound, RunBusy, UsageError
from dayflow.models import RUNNING, Run
from dayflow.store.context import StoreContext
from dayflow.store.leases import Leases
from dayflow.store.rows import run_select
from dayflow.store.sql import IntegrityError, one, scalar
from dayflow.store.values import DEFAULT_PROFILE, Profile

# A run's own tables, each holding rows of one run (`run_id`): deleted before the run rows.
_RUN_TABLES = ("tasks", "tool_effects", "compactions", "events", "batch_requests", "steps")


def _profile(row: Any) -> Profile:
    return Profile(row["name"], row["config"], row["tz"], row["at"], row["weekdays"])


class Profiles:
    def __init__(self, ctx: StoreContext, leases: Leases) -> None:
        self._ctx, self._leases = ctx, leases

    def add(self, profile: Profile) -> Profile:
        """Record a new profile; UsageError if the name is taken, or is the default
        profile's (the history of everyone who never gave --profile: a row of that name
        would put another config on it, and `remove --purge` would delete it)."""
        if profile.name == DEFAULT_PROFILE:
            raise UsageError(
                f"{DEFAULT_PROFILE!r} is the default profile (the history without --profile): "
                "choose another name"
            )
        db = self._ctx.db
        try:
            with db.transaction():
                db.execute(
                    "INSERT INTO profiles (name, config, tz, at, weekdays, created_at) "
                    "VALUES (?,?,?,?,?,?)",
                    (
                        *(profile.name, profile.config, profile.tz, profile.at),
                        profile.weekdays,
                        self._ctx.now(),
                    ),
                )
        except IntegrityError:
            raise UsageError(
                f"a profile named {profile.name!r} exists (`dayflow profiles remove` it first)"
            ) from None
        return profile

    def get(self, name: str) -> Profile:
        row = one(self._ctx.db, "SELECT * FROM profiles WHERE name = ?", (name,))
        if row is None:
            raise ProfileNotFound(f"no profile {name!r} (see `dayflow profiles list`)")
        return _profile(row)

    def remove(self, name: str, *, purge: bool = False) -> int:
        """Forget a profile; its runs and tasks stay (a profile added again under the name
        sees them) unless `purge`, which deletes them too. Returns how many runs went."""
        db = self._ctx.db
        with db.transaction():
            # The row first, locked to the end: a run being made for the profile (which locks
            # it too, `runs.create`) is either done, and seen below, or refused after.
            sql = "SELECT name FROM profiles WHERE name = ?" + db.dialect.lock_row
            if one(db, sql, (name,)) is None:
                self.get(name)  # raises ProfileNotFound
            runs = 0
            if purge:
                live = [r for r in self._runs_where("r.profile = ?", name) if r.status == RUNNING]
                if live:
                    raise RunBusy(
                        f"run {live[0].id} of {name!r} is being driven right now; "
                        "stop its worker first"
                    )
                mine = "SELECT id FROM runs WHERE profile = ?"
                for table in _RUN_TABLES:
                    # Table names come from the fixed tuple above; the profile is a parameter.
                    db.execute(f"DELETE FROM {table} WHERE run_id IN ({mine})", (name,))
                db.execute("DELETE FROM tasks WHERE profile = ?", (name,))
                runs = db.execute("DELETE FROM runs WHERE profile = ?", (name,)).rowcount
            db.execute("DELETE FROM profiles WHERE name = ?", (name,))
        return runs

    def day_runs(self, brief_date: str) -> list[tuple[str, Run]]:
        """Every profile's runs for `brief_date` (not pruned), as (profile, run), oldest first."""
        sql = run_select(self._ctx.db.dialect) + " WHERE r.brief_date = ? AND r.pruned_at IS NULL"
        sql += f" ORDER BY r.created_at, r.{self._ctx.db.dialect.insertion_order}"
        rows = self._ctx.db.execute(sql, (brief_date,)).fetchall()
        return [(r["profile"], self._leases.run(r)) for r in rows]

    def uncertain_deliveries(self, run_id: str) -> int:
        """How many of a run's deliveries are recorded as uncertain (dayflow.delivery)."""
        return int(
            scalar(
                self._ctx.db,
                "SELECT COUNT(*) FROM tool_effects WHERE run_id = ? AND is_error = 1 "
                "AND tool_use_id LIKE 'deliver:%' AND tool_use_id NOT LIKE '%#%'",
                (run_id,),
            )
        )

    def _runs_where(self, condition: str, *args: Any) -> list[Run]:
        sql = run_select(self._ctx.db.dialect) + " WHERE " + condition
        rows = self._ctx.db.execute(sql, args).fetchall()
        return [self._leases.run(r) for r in rows]

    # Last: below it, `list` in an annotation would name this method.
    def list(self) -> list[Profile]:
        return [_profile(r) for r in self._ctx.db.execute("SELECT * FROM profiles ORDER BY name")]
