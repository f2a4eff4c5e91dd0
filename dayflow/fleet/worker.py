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
naming the failing source (the loop's own behaviour) and is done: never a retry storm. A
brief that fails before it has a run to show for it (a config file that cannot be read, no API
key) is tried again by the worker after `recheck_s`, doubling each time up to an hour: a
broken profile costs a few tries an hour, and its fix is picked up without a restart. Every
other failure leaves the run as `dayflow runs --profile NAME` shows it, for a person.

Nothing here parses options or prints: the CLI hands in how one brief is driven (`drive`) and
which API key a profile's calls go to (`entrypoint_of`).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable, Collection
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta

from dayflow.clock import Clock
from dayflow.errors import DayflowError, ModelError, ProfileNotFound, StoreError
from dayflow.fleet import queue
from dayflow.fleet.profiles import BriefJob, due_jobs, local_today
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
    another worker's; `poll_s`: how often due briefs are looked for; `recheck_s`: how long
    after a brief failed with no run to show for it it is tried again (doubling each time,
    up to an hour)."""

    concurrency: int = 4
    until_idle: bool = False
    per_key: int = 8
    heartbeat_s: float = 10.0
    poll_s: float = 5.0
    max_attempts: int = 5
    backoff_s: float = 5.0
    recheck_s: float = 60.0


# --until-idle waits out a job put back for this long at most (a short backoff); put back for
# longer, it is left in the queue and named in the worker's last line.
IDLE_WAIT_S = 60.0


class WorkerReport:
    """What a worker did, for its last line."""

    def __init__(self) -> None:
        self.queued = 0
        self.driven = 0
        self.retried = 0
        self.failed = 0
        self.dropped = 0  # jobs of a profile removed since they were queued
        # With --until-idle: the jobs left in the queue put back with a delay (a rate limit)
        # that no worker takes before then, and when the first of them is due.
        self.deferred = 0
        self.next_due: datetime | None = None

    def line(self) -> str:
        """The worker's last line."""
        text = (
            f"worker done: {self.driven} brief(s) driven, {self.retried} put back, "
            f"{self.failed} failed, {self.queued} queued"
        )
        if self.dropped:
            text += f", {self.dropped} dropped (profile removed)"
        if self.deferred and self.next_due is not None:
            text += (
                f"; {self.deferred} still waiting in the queue, put back with a delay (the "
                f"first due again at {self.next_due.astimezone(UTC):%H:%M:%S} UTC): a worker "
                "running then takes them"
            )
        return text


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
    worker = _Worker(url, drive, entrypoint_of, options, clock, say)
    asyncio.run(worker.run())
    return worker.report


class Enqueued(Frozen):
    """What `fleet enqueue` did: jobs queued, profiles skipped because their brief of the
    day is done, and how many profiles there are (the rest were queued or running already)."""

    queued: int
    done: int
    profiles: int


def enqueue_day(url: str, entrypoint_of: EntrypointOf, day: date | None, now: datetime) -> Enqueued:
    """Queue every profile's brief for `day` (None: each profile's today at `now`, in its
    zone) now, whatever the clock says, but those whose brief of the day is done (its job
    would only show it: `dayflow brief --new --profile NAME` writes a second). A profile
    whose job is already queued or running is not queued twice."""

    async def go() -> Enqueued:
        profiles = await asyncio.to_thread(_profiles, url)
        wanted = [(BriefJob(p.name, day or local_today(p, now)), p) for p in profiles]
        done = await asyncio.to_thread(_settled, url, {j.day for j, _ in wanted}, (DONE,))
        jobs = [(j, entrypoint_of(p)) for j, p in wanted if j.key not in done]
        async with queue.connect(url) as queries:
            queued = await queue.enqueue(queries, jobs)
        return Enqueued(queued, len(wanted) - len(jobs), len(profiles))

    return asyncio.run(go())


@dataclass
class _Worker:
    """One worker process's loop: what it was handed (`run_worker`'s arguments), what it did,
    and when to stop."""

    url: str
    drive: Drive
    entrypoint_of: EntrypointOf
    options: WorkerOptions
    clock: Clock
    say: Callable[[str], None]
    report: WorkerReport = field(default_factory=WorkerReport)
    # The (profile, day) keys whose brief failed in this process before it had a run to
    # settle the day (a config file that cannot be read): key -> (when it is tried again,
    # the failures so far). Not queued again until then, so a broken profile costs a few
    # tries an hour, not one per poll, and is written once it is fixed.
    gave_up: dict[str, tuple[datetime, int]] = field(default_factory=dict)
    reached: bool = False  # whether the queue's database answered once

    async def run(self) -> None:
        """Work the queue, connecting again (1 s, 2 s, ... 10 s apart) when its connection is
        lost: a server restart costs a worker a pause, not its life. Briefs in flight go on in
        their threads on their own connections (the store reconnects, or fails resumably)."""
        self.stop = asyncio.Event()
        with contextlib.suppress(NotImplementedError, RuntimeError):
            asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, self.stop.set)
        self.slots = asyncio.Semaphore(self.options.concurrency)
        # A thread per brief in flight: asyncio's default pool has cpu_count + 4 (6 on two
        # cores), which would cap the briefs at once below --concurrency.
        self.pool = ThreadPoolExecutor(self.options.concurrency, thread_name_prefix="brief")
        pause = 1.0
        try:
            while True:
                try:
                    await self._connected()
                    return
                except queue.QueueLost as exc:
                    if self.options.until_idle and not self.reached:
                        raise  # never reached (a wrong URL, a server down): no restart to wait
                    self.say(f"{exc}; connecting again in {pause:.0f} s")
                    with contextlib.suppress(asyncio.TimeoutError):
                        await asyncio.wait_for(self.stop.wait(), pause)
                    if self.stop.is_set():
                        return
                    pause = min(pause * 2, 10.0)
        finally:
            self.pool.shutdown(wait=True)

    async def _connected(self) -> None:
        options = self.options
        async with queue.connect(self.url) as queries:
            self.reached = True
            # Off the event loop: it keeps the jobs' heartbeats.
            profiles = await asyncio.to_thread(_profiles, self.url)
            names = await asyncio.to_thread(lambda: {self.entrypoint_of(p) for p in profiles})
            default = queue.ENTRYPOINT_PREFIX + "default"
            entrypoints = dict.fromkeys(names | {default}, options.per_key)
            self.report.queued += await self._tick(queries)
            ticker = asyncio.create_task(
                self._idle_watch(queries) if options.until_idle else self._ticking(queries)
            )
            try:
                await queue.work(
                    queries,
                    entrypoints,
                    self._handle,
                    concurrency=options.concurrency,
                    until_idle=options.until_idle,
                    heartbeat=timedelta(seconds=options.heartbeat_s),
                    poll=timedelta(seconds=options.poll_s),
                    stop=self.stop,
                )
            finally:
                ticker.cancel()
            if options.until_idle:  # say what drain mode left behind: jobs not yet due
                # (The queue's times are the database server's: compared with this machine's
                # real clock, not the injected one a test fixes in the past.)
                real_now = datetime.now(UTC)
                left = [w for w in await queue.waiting(queries) if w.deferred(real_now)]
                self.report.deferred = len(left)
                self.report.next_due = min(
                    (w.execute_after for w in left if w.execute_after), default=None
                )

    def now(self) -> datetime:
        return self.clock.now()

    async def _tick(self, queries: queue.Queries) -> int:
        now = self.now()

        def later() -> set[str]:  # read after the tick's own reads: a failure meanwhile counts
            return {key for key, (again, _) in self.gave_up.items() if again > now}

        return await _tick(queries, self.url, self.entrypoint_of, now, later)

    def _give_up(self, job: BriefJob, exc: DayflowError) -> None:
        """Leave `job`'s brief alone for a while: the first failure for `recheck_s`, each
        next one twice as long, an hour at most."""
        self.report.failed += 1
        _, failures = self.gave_up.get(job.key, (None, 0))
        wait = min(self.options.recheck_s * 2**failures, 3600.0)
        self.gave_up[job.key] = (self.now() + timedelta(seconds=wait), failures + 1)
        # Several problems (a config file's) are a line each, each naming the job.
        *first, last = str(exc).splitlines() or [""]
        for line in first:
            self.say(f"{job.key}: {line}")
        self.say(f"{job.key}: {last}; tried again in {_span(wait)}")

    async def _handle(self, job: BriefJob, attempts: int) -> None:
        """One brief, in a thread (the loop is synchronous); what its failure means for its
        job."""
        options, report, say = self.options, self.report, self.say
        async with self.slots:
            try:
                await asyncio.get_running_loop().run_in_executor(self.pool, self.drive, job)
                report.driven += 1
                self.gave_up.pop(job.key, None)
            except (ModelError, StoreError) as exc:
                # A rate limit, an overloaded API, a database that went away: later may work.
                again = isinstance(exc, StoreError) or exc.retryable
                if again and attempts + 1 < options.max_attempts:
                    delay = timedelta(seconds=options.backoff_s * 2**attempts)
                    report.retried += 1
                    say(f"{job.key}: {exc}; again in {delay.total_seconds():.0f} s")
                    raise queue.RetryRequested(delay=delay, reason=str(exc)) from None
                if isinstance(exc, StoreError):  # its interrupted run is queued again later
                    report.failed += 1
                    say(f"{job.key}: {exc}")
                else:  # a model error before its run began (no key) would come back each poll
                    self._give_up(job, exc)
            except ProfileNotFound:  # removed since its job was queued: nothing to write
                report.dropped += 1
                say(f"{job.key}: profile {job.profile!r} was removed; its job is dropped")
            except DayflowError as exc:  # the run says what happened; the job is done
                self._give_up(job, exc)

    async def _idle_watch(self, queries: queue.Queries) -> None:
        """--until-idle: stop once every job left is one put back with a delay (the queue's
        drain would wait the delay out, up to an hour, saying nothing); the last line then
        names them."""
        while not self.stop.is_set():
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.stop.wait(), self.options.poll_s)
            with contextlib.suppress(DayflowError):
                left = await queue.waiting(queries)
                later = datetime.now(UTC) + timedelta(seconds=IDLE_WAIT_S)
                if left and all(w.deferred(later) for w in left):
                    self.stop.set()

    async def _ticking(self, queries: queue.Queries) -> None:
        while not self.stop.is_set():
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.stop.wait(), self.options.poll_s)
            try:
                self.report.queued += await self._tick(queries)
            except DayflowError as exc:  # the database went away: the next tick tries again
                self.say(f"could not look for due briefs: {exc}")


async def _tick(
    queries: queue.Queries,
    url: str,
    entrypoint_of: EntrypointOf,
    now: datetime,
    gave_up: Callable[[], Collection[str]] = tuple,
) -> int:
    """Queue the briefs due by `now` whose day has no settled run, but those `gave_up()`
    names (asked last, just before queueing: a brief that failed while this tick read the
    database is left alone too)."""
    profiles = await asyncio.to_thread(_profiles, url)
    due = due_jobs(profiles, now)
    if not due:
        return 0
    settled = await asyncio.to_thread(_settled, url, {job.day for job in due})
    by_name = {p.name: p for p in profiles}
    pairs = await asyncio.to_thread(lambda: [(j, entrypoint_of(by_name[j.profile])) for j in due])
    taken = settled | set(gave_up())
    return await queue.enqueue(queries, [(j, e) for j, e in pairs if j.key not in taken])


def _profiles(url: str) -> list[Profile]:
    with open_store(url) as store:
        return store.profiles.list()


def _settled(url: str, days: set[date], settled: Collection[str] = SETTLED) -> set[str]:
    """The keys of the (profile, day) pairs among `days` that have a run in `settled`."""
    with open_store(url) as store:
        return {
            BriefJob(profile, run_date).key
            for day in days
            for profile, run in store.profiles.day_runs(day.isoformat())
            if run.status in settled
            for run_date in [date.fromisoformat(run.brief_date)]
        }


def _span(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"
