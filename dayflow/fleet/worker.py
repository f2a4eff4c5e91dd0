"""A worker: queue each profile's brief when it is due, take briefs from the queue and drive
them with the normal loop, many at once, beside any number of workers on other machines.

What keeps one brief per (profile, day), however many workers and restarts:
- the queue's de-duplication key (`BriefJob.key`): one job per (profile, day) queued or
  running at a time, and a job is queued only while the day has no run to show for it;
- the day's lock and `DayTaken` in the store: of two drivers starting that day's run at once,
  one creates it and the other is handed it (`--ensure-today`'s behaviour);
- the run's lease: a job picked again after its worker died resumes the run (its committed
  steps are kept, only the call that was in flight is paid again), and a worker that is only
  slow is fenced by the lease, as today.

A brief that fails on a rate limit or an overloaded API (429, 529) is put back in the queue
with a growing delay (it resumes where it stopped); a brief whose sources fail is written
naming the failing source (the loop's own behaviour) and is done: never a retry storm. Every
other failure leaves the run as `dayflow runs --profile NAME` shows it, for a person.

Nothing here parses options or prints: the CLI hands in how one brief is driven (`drive`) and
which API key a profile's calls go to (`entrypoint_of`).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable
from datetime import date, datetime, timedelta

from dayflow.clock import Clock
from dayflow.errors import DayflowError, ModelError, StoreError
from dayflow.fleet import queue
from dayflow.fleet.profiles import BriefJob, due_jobs
from dayflow.frozen import Frozen
from dayflow.models import DONE, FAILED, RUNNING, STOPPED
from dayflow.store import open_store
from dayflow.store.values import Profile

# A run in one of these says the day's brief was taken care of: no job is queued for it again
# (an interrupted run is: its worker died, and the job that would resume it may be gone).
SETTLED = (DONE, FAILED, STOPPED, RUNNING)


class WorkerOptions(Frozen):
    """How a worker runs. `per_key`: briefs in flight at once per API key, across every
    worker (0: no limit); `heartbeat_s`: a job whose worker has not beaten for this long is
    another worker's; `poll_s`: how often due briefs are looked for."""

    concurrency: int = 4
    until_idle: bool = False
    per_key: int = 8
    heartbeat_s: float = 10.0
    poll_s: float = 5.0
    max_attempts: int = 5
    backoff_s: float = 5.0


class WorkerReport:
    """What a worker did, for its last line."""

    def __init__(self) -> None:
        self.queued = 0
        self.driven = 0
        self.retried = 0
        self.failed = 0


Drive = Callable[[BriefJob], object]
EntrypointOf = Callable[[Profile], str]


def run_worker(
    url: str,
    drive: Drive,
    entrypoint_of: EntrypointOf,
    *,
    options: WorkerOptions,
    clock: Clock,
    say: Callable[[str], None],
) -> WorkerReport:
    """Work the queue of the database at `url` until stopped (SIGTERM, Ctrl-C) or, with
    `until_idle`, until nothing is due or queued."""
    report = WorkerReport()
    asyncio.run(_work(url, drive, entrypoint_of, options, clock, say, report))
    return report


def queue_due(url: str, entrypoint_of: EntrypointOf, now: datetime) -> int:
    """Queue the briefs due by `now` that have no run yet; how many were queued."""
    return asyncio.run(_queue_due_once(url, entrypoint_of, now))


def enqueue_day(url: str, entrypoint_of: EntrypointOf, day: date) -> tuple[int, int]:
    """Queue every profile's brief for `day` now, whatever the clock says: (queued, profiles).
    A profile whose job is already queued or running is not queued twice."""

    async def go() -> tuple[int, int]:
        profiles = await asyncio.to_thread(_profiles, url)
        jobs = [(BriefJob(p.name, day), entrypoint_of(p)) for p in profiles]
        async with queue.connect(url) as queries:
            return await queue.enqueue(queries, jobs), len(profiles)

    return asyncio.run(go())


async def _queue_due_once(url: str, entrypoint_of: EntrypointOf, now: datetime) -> int:
    async with queue.connect(url) as queries:
        return await _tick(queries, url, entrypoint_of, now)


async def _work(
    url: str,
    drive: Drive,
    entrypoint_of: EntrypointOf,
    options: WorkerOptions,
    clock: Clock,
    say: Callable[[str], None],
    report: WorkerReport,
) -> None:
    """Work the queue, connecting again (1 s, 2 s, ... 10 s apart) when its connection is
    lost: a server restart costs a worker a pause, not its life. Briefs in flight go on in
    their threads on their own connections (the store reconnects, or fails resumably)."""
    stop = asyncio.Event()
    with contextlib.suppress(NotImplementedError, RuntimeError):
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    slots = asyncio.Semaphore(options.concurrency)
    pause = 1.0
    while True:
        try:
            await _work_once(url, drive, entrypoint_of, options, clock, say, report, stop, slots)
            return
        except queue.QueueLost as exc:
            say(f"{exc}; connecting again in {pause:.0f} s")
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(stop.wait(), pause)
            if stop.is_set():
                return
            pause = min(pause * 2, 10.0)


async def _work_once(
    url: str,
    drive: Drive,
    entrypoint_of: EntrypointOf,
    options: WorkerOptions,
    clock: Clock,
    say: Callable[[str], None],
    report: WorkerReport,
    stop: asyncio.Event,
    slots: asyncio.Semaphore,
) -> None:
    async with queue.connect(url) as queries:
        # Off the event loop: it keeps the jobs' heartbeats.
        profiles = await asyncio.to_thread(_profiles, url)
        names = await asyncio.to_thread(lambda: {entrypoint_of(p) for p in profiles})
        entrypoints = dict.fromkeys(names | {queue.ENTRYPOINT_PREFIX + "default"}, options.per_key)
        report.queued += await _tick(queries, url, entrypoint_of, clock.now())

        async def handle(job: BriefJob, attempts: int) -> None:
            async with slots:
                await _drive_one(job, attempts, drive, options, say, report)

        ticker = None
        if not options.until_idle:
            ticker = asyncio.create_task(
                _ticking(queries, url, entrypoint_of, clock, options, stop, report, say)
            )
        try:
            await queue.work(
                queries,
                entrypoints,
                handle,
                concurrency=options.concurrency,
                until_idle=options.until_idle,
                heartbeat=timedelta(seconds=options.heartbeat_s),
                poll=timedelta(seconds=options.poll_s),
                stop=stop,
            )
        finally:
            if ticker is not None:
                ticker.cancel()


async def _drive_one(
    job: BriefJob,
    attempts: int,
    drive: Drive,
    options: WorkerOptions,
    say: Callable[[str], None],
    report: WorkerReport,
) -> None:
    """One brief, in a thread (the loop is synchronous); what its failure means for its job."""
    try:
        await asyncio.to_thread(drive, job)
        report.driven += 1
    except (ModelError, StoreError) as exc:
        # A rate limit, an overloaded API, a database that went away: later may work.
        again = isinstance(exc, StoreError) or exc.retryable
        if again and attempts + 1 < options.max_attempts:
            delay = timedelta(seconds=options.backoff_s * 2**attempts)
            report.retried += 1
            say(f"{job.key}: {exc}; again in {delay.total_seconds():.0f} s")
            raise queue.RetryRequested(delay=delay, reason=str(exc)) from None
        report.failed += 1
        say(f"{job.key}: {exc}")
    except DayflowError as exc:  # the run says what happened; the job is done
        report.failed += 1
        say(f"{job.key}: {exc}")


async def _ticking(
    queries: queue.Queries,
    url: str,
    entrypoint_of: EntrypointOf,
    clock: Clock,
    options: WorkerOptions,
    stop: asyncio.Event,
    report: WorkerReport,
    say: Callable[[str], None],
) -> None:
    while not stop.is_set():
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(stop.wait(), options.poll_s)
        try:
            report.queued += await _tick(queries, url, entrypoint_of, clock.now())
        except DayflowError as exc:  # the database went away: the next tick tries again
            say(f"could not look for due briefs: {exc}")


async def _tick(
    queries: queue.Queries, url: str, entrypoint_of: EntrypointOf, now: datetime
) -> int:
    """Queue the briefs due by `now` whose day has no settled run."""
    profiles = await asyncio.to_thread(_profiles, url)
    due = due_jobs(profiles, now)
    if not due:
        return 0
    taken = await asyncio.to_thread(_settled, url, {job.day for job in due})
    by_name = {p.name: p for p in profiles}
    fresh = await asyncio.to_thread(
        lambda: [(j, entrypoint_of(by_name[j.profile])) for j in due if j.key not in taken]
    )
    return await queue.enqueue(queries, fresh)


def _profiles(url: str) -> list[Profile]:
    with open_store(url) as store:
        return store.profiles.list()


def _settled(url: str, days: set[date]) -> set[str]:
    """The keys of the (profile, day) pairs among `days` that have a settled run."""
    with open_store(url) as store:
        return {
            BriefJob(profile, run_date).key
            for day in days
            for profile, run in store.profiles.day_runs(day.isoformat())
            if run.status in SETTLED
            for run_date in [date.fromisoformat(run.brief_date)]
        }
