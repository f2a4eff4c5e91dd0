"""`dayflow fleet status`: the day's briefs of every profile by state, from the runs the store
holds and the jobs the queue holds, and the job that has waited longest.

States: `done`; `uncertain` (done, but a delivery may or may not have been made: `dayflow show`
says which); `running` (a live driver has it, or a live worker holds its job); `lost` (a
worker holds its job but is gone: its run's lease expired, or its driver's process exited, or,
before the run began, its worker stopped beating; the next worker retakes it, and `detail`
says since when); `failed` (failed or stopped: `dayflow runs --profile NAME` says why); `due`
(its time has passed, or its job is queued, and nothing drives it yet); `missed` (due on a day
that is over in its zone, with no job queued: workers queue each profile's today only, so
only `fleet enqueue --date DAY` writes it); `later` (not yet its time today); `off` (not one
of its days). Without a day, each profile's brief of its own today (its zone's date).

Times of leases and of the queue's heartbeats are the database server's (`store.db`'s clock),
as the store and the queue compare them.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING, Any

from dayflow.clock import iso
from dayflow.fleet.profiles import due_at, local_today
from dayflow.frozen import Frozen
from dayflow.models import DONE, FAILED, INTERRUPTED, RUNNING, STOPPED, Run

if TYPE_CHECKING:
    from dayflow.fleet.queue import Waiting
    from dayflow.store import Store
    from dayflow.store.values import Profile

STATES = ("due", "running", "lost", "done", "uncertain", "failed", "missed", "later", "off")
# How long a held job may go without its worker's beat before it is shown lost: a worker's
# default --heartbeat (its beats come every half of it).
STALE_AFTER = timedelta(seconds=10)


class Line(Frozen):
    """One profile's brief of the day."""

    profile: str
    state: str
    due_at: str  # when it is (was) due, aware, in the profile's zone (its UTC offset)
    tz: str  # the profile's zone
    run_id: str | None = None
    queued_at: str | None = None  # when its job was queued, if one is (UTC)
    detail: str | None = None  # what a state needs said (`lost`: since when, and what next)
    day: str = ""  # the day of its brief (without --date: its today, in its zone)


class Board(Frozen):
    """The day's briefs, and the oldest job not yet taken by a worker. `day`: the day every
    line is of (None: each profile's today, and they are not all the same day)."""

    day: str | None
    lines: tuple[Line, ...]
    oldest_waiting: Line | None

    def counts(self) -> dict[str, int]:
        return {s: sum(1 for line in self.lines if line.state == s) for s in STATES}

    def to_json(self) -> dict[str, Any]:
        def one(line: Line) -> dict[str, Any]:
            return {name: getattr(line, name) for name in Line._fields}  # in field order

        oldest = self.oldest_waiting
        return {
            "date": self.day,
            "counts": self.counts(),
            "oldest_waiting": None if oldest is None else one(oldest),
            "profiles": [one(line) for line in self.lines],
        }


def board(
    store: Store,
    waiting: Iterable[Waiting],
    day: date | None,
    now: datetime,
    *,
    stale_after: timedelta = STALE_AFTER,
) -> Board:
    """Every profile's brief of `day` (None: each profile's today, in its own zone) as of
    `now`; a held job whose worker has not beaten for `stale_after` (the workers'
    --heartbeat) is shown lost."""
    server_now = store.db.server_clock.now() if store.db.server_clock else now
    profiles = store.profiles.list()
    days = {p.name: day or local_today(p, now) for p in profiles}
    runs: dict[tuple[str, date], Run] = {}
    for each in sorted(set(days.values())):
        for name, found in store.profiles.day_runs(each.isoformat()):
            runs[(name, each)] = found  # oldest first: the newest wins
    jobs = {(w.job.profile, w.job.day): w for w in waiting}
    lines = []
    for profile in profiles:
        its_day = days[profile.name]
        run, job = runs.get((profile.name, its_day)), jobs.get((profile.name, its_day))
        state = _state(store, profile, run, job is not None and job.picked, its_day, now)
        detail = None
        if job is not None and state in ("later", "off"):
            state = "due"  # queued by `fleet enqueue`, whatever the clock says
        if job is not None and job.picked:
            state, detail = _held(state, run, job, server_now, stale_after)
        if job is None and state == "due" and its_day < local_today(profile, now):
            # A worker queues only each profile's today: nothing will drive this one.
            state, detail = "missed", _missed(its_day, run)
        elif state == "due" and detail is None:
            detail = _why_due(run, job, server_now)
        queued = None if job is None else iso(job.created)
        due = due_at(profile, its_day).isoformat(timespec="milliseconds")
        run_id = run.id if run else None
        shown = its_day.isoformat()
        lines.append(Line(profile.name, state, due, profile.tz, run_id, queued, detail, shown))
    # Waiting: a job no live worker drives, for a brief not done (a done day's job only
    # finds it done).
    busy = ("running", "done", "uncertain")
    idle = [line for line in lines if line.queued_at and line.state not in busy]
    oldest = min(idle, key=lambda line: line.queued_at or "", default=None)
    every = {line.day for line in lines}
    one_day = day.isoformat() if day else (every.pop() if len(every) == 1 else None)
    return Board(one_day, tuple(lines), oldest)


def _why_due(run: Run | None, job: Waiting | None, now: datetime) -> str:
    """Why a brief that is due is not being written (what `due` alone leaves unsaid)."""
    resumed = "" if run is None else f"run {run.id} was left {run.status}; "
    if job is None:
        return resumed + "no job is queued for it yet: a running `dayflow worker` queues it"
    if job.deferred(now) and job.execute_after is not None:
        return (
            f"{resumed}put back with a delay after {job.attempts} attempt(s) (a rate limit "
            f"or an overloaded API): due again in {_span(job.execute_after - now)}, at "
            f"{iso(job.execute_after)}"
        )
    return resumed + f"queued at {iso(job.created)}, waiting for a worker to take it"


def _span(span: timedelta) -> str:
    seconds = max(0, int(span.total_seconds()))
    return f"{seconds} s" if seconds < 120 else f"{seconds // 60} min"


def _missed(day: date, run: Run | None) -> str:
    what = "no brief was written" if run is None else f"run {run.id} was left {run.status}"
    return (
        f"{what} and its day is over (workers queue each profile's today only): "
        f"`dayflow fleet enqueue --date {day.isoformat()}` writes it"
    )


def _state(
    store: Store, profile: Profile, run: Run | None, picked: bool, day: date, now: datetime
) -> str:
    if run is not None:
        if run.status == DONE:
            return "uncertain" if store.profiles.uncertain_deliveries(run.id) else "done"
        if run.status == RUNNING or picked:
            return "running"  # (a held job whose run's driver is gone: `_held` says lost)
        if run.status in (FAILED, STOPPED):
            return "failed"
        return "due"  # interrupted: the next worker to take its job resumes it
    if picked:
        return "running"
    if str(day.isoweekday()) not in profile.weekdays:
        return "off"
    return "due" if now >= due_at(profile, day) else "later"


def _held(
    state: str, run: Run | None, job: Waiting, now: datetime, stale_after: timedelta
) -> tuple[str, str | None]:
    """The state of a brief whose job a worker holds: `lost` when that worker is gone (the
    run's lease expired or its driver exited; before any run, no beat for `stale_after`)."""
    retaken = "the next worker retakes it"
    if run is not None and run.status == INTERRUPTED:
        expires = run.lease_expires_at
        if expires is not None and datetime.fromisoformat(expires) <= now:
            return "lost", f"lease expired {_ago(now - datetime.fromisoformat(expires))}, {retaken}"
        return "lost", f"its driver (pid {run.owner_pid} on {run.owner_host}) exited, {retaken}"
    if run is None and now - job.heartbeat > stale_after:
        return "lost", f"its worker stopped beating {_ago(now - job.heartbeat)}, {retaken}"
    return state, None


def _ago(span: timedelta) -> str:
    seconds = max(0, int(span.total_seconds()))
    if seconds < 120:
        return f"{seconds} s ago"
    if seconds < 2 * 3600:
        return f"{seconds // 60} min ago"
    return f"{seconds // 3600} h ago"
