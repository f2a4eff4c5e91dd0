"""The fleet's use case: `drive_job`, one brief of the queue as its profile (the same
`briefing.brief` a person's `dayflow brief --ensure-today --profile NAME` runs, with that
profile's config file, timezone and runs: `Runtime.for_profile`), by a `JobDriver` that keeps
a worker's connections and model clients from job to job; the worker's batch rounds
(`--batch`), the queue's entrypoint of each profile, and the fleet's database.

`dayflow worker` (the CLI) and `bench/fleet.py` both drive jobs through it.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from dayflow.app.runtime import Runtime
from dayflow.errors import UsageError

if TYPE_CHECKING:
    from datetime import date

    from dayflow.batching import Rounds
    from dayflow.briefing import Outcome
    from dayflow.fleet import BriefJob
    from dayflow.fleet.status import Board
    from dayflow.store.values import Profile

FLEET_EXTRA = "pip install 'dayflow[fleet]'"


def fleet_db(rt: Runtime, db: str | None) -> str:
    """The PostgreSQL database the fleet shares (a SQLite file has no queue)."""
    from dayflow.store import is_postgres_target

    target = str(rt.settings(db=db).db_path)
    if not is_postgres_target(target):
        raise UsageError(
            "the fleet's queue lives in PostgreSQL: give --db postgresql://... (or DAYFLOW_DB)"
        )
    import importlib.util

    if importlib.util.find_spec("pgqueuer") is None:
        raise UsageError(f"the fleet needs its job queue library: {FLEET_EXTRA}")
    return target


def fleet_status(rt: Runtime, url: str, day: date | None, heartbeat: float) -> Board:
    """`fleet status`: the day's briefs (None: each profile's today) by state, from the
    queue's waiting jobs and the store's runs; a job held `heartbeat` seconds without a beat,
    before its run began, is lost."""
    import asyncio
    from datetime import timedelta

    from dayflow.fleet import queue
    from dayflow.fleet.status import board

    async def jobs() -> list[Any]:
        async with queue.connect(url) as queries:
            return await queue.waiting(queries)

    waiting = asyncio.run(jobs())
    with rt.store(rt.settings(db=url)) as store:
        stale = timedelta(seconds=heartbeat)
        return board(store, waiting, day, rt.clock.now(), stale_after=stale)


def make_driver(rt: Runtime, url: str, rounds: Rounds | None = None) -> JobDriver:
    """How a worker drives one brief: `brief --ensure-today` as that profile, on its day;
    with `rounds` (--batch), its Claude calls through them. Calling it returns the brief's
    `Outcome`; `close()` when the worker is done."""
    return JobDriver(rt, url, rounds)


class JobDriver:
    """One worker's briefs: each job reads its profile's row afresh (an edit is seen at the
    next job, a removal ends the job with ProfileNotFound), on the connection its thread
    keeps, and its Claude calls go through one client per API key (`dayflow.fleet.kept`)."""

    def __init__(self, rt: Runtime, url: str, rounds: Rounds | None) -> None:
        from dayflow.fleet.kept import KeptClients, KeptStores

        self.rt, self.url, self.rounds = rt, url, rounds
        settings = rt.settings(db=url)
        self.durability = settings.durability
        self.stores = KeptStores(rt.clock, host=settings.host)
        self.clients = KeptClients(rt.model_factory)

    def __call__(self, job: BriefJob) -> Outcome:
        return drive_job(self, job)

    def close(self) -> None:
        self.stores.close()
        self.clients.close()


def drive_job(driver: JobDriver, job: BriefJob) -> Outcome:
    """One job of the queue: `brief --ensure-today` as its profile on its day (the row read
    afresh, on the connection the thread keeps, its config file validated whole first, as
    the CLI's brief does), each line said naming whose it is."""
    from dataclasses import replace

    from dayflow.app.cases import room
    from dayflow.briefing import BriefRequest, Mode
    from dayflow.briefing import brief as write_brief
    from dayflow.store import DEFAULT_PROFILE

    rt, url, stores = driver.rt, driver.url, driver.stores
    with stores.open(url, durability=driver.durability, profile=DEFAULT_PROFILE) as store:
        profile = store.profiles.get(job.profile)
    as_them = rt.for_profile(profile, url)
    # A broken config file fails the job with every problem of it, before anything is said
    # or done, as `dayflow brief` fails (its job is tried again later: no run settles it).
    as_them.config.validate()
    settings = as_them.model_settings(None, db=url)
    request = BriefRequest(day=job.day, mode=Mode.ENSURE_TODAY)
    made = replace(
        room(as_them, settings, verbose=False),
        # Every line of a brief a worker drives names whose it is: briefs run at once.
        say=lambda text: rt.notice(f"{job.key}: {text}"),
        open_store=lambda s: stores.open(s.db_path, durability=s.durability, profile=profile.name),
        model_factory=driver.clients,
    )
    if driver.rounds is None:
        outcome = write_brief(request, made)
    else:
        with driver.rounds.driving():
            factory = _batched(rt, driver.rounds, driver.clients)
            outcome = write_brief(request, replace(made, model_factory=factory))
    rt.notice(f"{job.key}: run {outcome.run.id} {outcome.run.status}")
    return outcome


def batch_rounds(
    rt: Runtime, url: str, cutoff: str | None, poll: float
) -> AbstractContextManager[Rounds]:
    """The worker's batch rounds: its own Claude client (its ANTHROPIC_API_KEY) submits and
    polls, and answers on the normal API what a batch does not."""
    from dayflow.batching import Rounds, batch_api, next_cutoff, rounds_in_background

    until = None if cutoff is None else next_cutoff(cutoff, rt.clock.now())
    settings = rt.model_settings(None, db=url)
    client = rt.model_factory(settings.model, settings)
    api = batch_api(client, "local" if settings.local else "anthropic")
    rt.notice(
        "batching model calls"
        + (f" until {until:%Y-%m-%d %H:%M} {until.tzname()}" if until else "")
        + f" (polling every {poll:g} s)"
    )
    return rounds_in_background(
        lambda: rt.store(rt.settings(db=url)),
        lambda store: Rounds(
            store,
            api,
            client,
            clock=rt.clock,
            cutoff=until,
            poll_every=poll,
            gather=min(poll, 5.0),
            report=rt.notice,
        ),
        rt.notice,
    )


def _batched(
    rt: Runtime, rounds: Rounds, clients: Callable[[str, Any], Any]
) -> Callable[[str, Any], Any]:
    """A model factory: Claude through `rounds` for the briefs it can batch (the worker's own
    API key and server), else the brief's own model (offline, a local server, another key)."""
    from dayflow.providers import OFFLINE_MODEL

    worker = rt.model_settings(None)

    def factory(model: str, settings: Any) -> Any:
        same_api = (settings.api_key, settings.base_url) == (worker.api_key, worker.base_url)
        if settings.local or model == OFFLINE_MODEL or not same_api:
            return clients(model, settings)
        return rounds.client

    return factory


def entrypoints(rt: Runtime, url: str) -> Callable[[Profile], str]:
    """The queue entrypoint of a profile's briefs: one per API key (its limit is per key)."""
    import hashlib

    from dayflow.errors import DayflowError
    from dayflow.fleet.queue import ENTRYPOINT_PREFIX
    from dayflow.providers import OFFLINE_MODEL

    known: dict[Profile, str] = {}  # reading a config file is not free: once a profile

    def of(profile: Profile) -> str:
        if profile in known:
            return known[profile]
        try:
            settings = rt.for_profile(profile, url).model_settings(None, db=url)
        except DayflowError:  # its brief will say what is wrong with its config
            return ENTRYPOINT_PREFIX + "default"
        if settings.model == OFFLINE_MODEL:
            name = "offline"
        else:
            key = (settings.base_url or "") if settings.local else (settings.api_key or "")
            name = hashlib.sha256(key.encode()).hexdigest()[:12]
        known[profile] = ENTRYPOINT_PREFIX + name
        return known[profile]

    return of
