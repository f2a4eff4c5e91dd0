"""`dayflow worker` and `dayflow fleet enqueue|status`: briefs for every profile of a shared
PostgreSQL database, taken from a job queue by any number of workers (`dayflow.fleet`).

The worker is handed how one brief is driven: the same `briefing.brief` a person's
`dayflow brief --ensure-today --profile NAME` runs, with that profile's config file, timezone
and runs (`Deps.for_profile`).
"""

# No `from __future__ import annotations` here: Typer would compile and eval every option's
# annotation string at start-up (issue 13).

from typing import TYPE_CHECKING, Annotated, Any

import typer

from dayflow.cli_base import (
    Deps,
    JsonOpt,
    get_deps,
    handle_errors,
    not_empty,
    parse_date,
    print_json,
)
from dayflow.errors import UsageError

if TYPE_CHECKING:
    from collections.abc import Callable
    from contextlib import AbstractContextManager

    from dayflow.batching import Rounds
    from dayflow.fleet import BriefJob
    from dayflow.store.values import Profile

commands = typer.Typer()
fleet = typer.Typer(
    name="fleet",
    help="The fleet's briefs: queue a day's briefs now, or see where each one is.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
)
commands.add_typer(fleet)

FLEET_EXTRA = "pip install 'dayflow[fleet]'"
DateOpt = Annotated[
    str | None,
    typer.Option(
        "--date",
        metavar="YYYY-MM-DD",
        callback=not_empty,
        help="The day [default: each profile's today, in its own timezone].",
    ),
]

# The queue lives in PostgreSQL: a SQLite file is refused (`_fleet_db`), so not offered.
FleetDbOpt = Annotated[
    str | None,  # not a Path: it would fold a postgresql:// URL's double slash
    typer.Option(
        "--db",
        metavar="postgresql://...",
        callback=not_empty,
        help="The fleet's PostgreSQL database [env DAYFLOW_DB].",
    ),
]

WORKER_INTERRUPTED = (
    "worker interrupted: a brief it had started was finished first or is left resumable; "
    "the next worker resumes it"
)

# Hidden: the fleet's commands are every profile's, with no --profile to offer.
NoProfileOpt = Annotated[str | None, typer.Option("--profile", hidden=True)]
EVERYONE = "the fleet's commands work on every profile"

UntilIdleOpt = Annotated[
    bool, typer.Option("--until-idle", help="Exit when nothing is due or queued.")
]


def _finite(value: float) -> float:
    """Option callback: NaN passes a range check (no comparison is true), but is no time."""
    import math

    if not math.isfinite(value):
        raise typer.BadParameter(f"{value} is not a number of seconds")
    return value


HeartbeatOpt = Annotated[
    float,
    typer.Option(
        min=1.0,
        max=3600.0,
        callback=_finite,
        help="Seconds without a beat after which a job is retaken.",
    ),
]
BatchOpt = Annotated[
    bool,
    typer.Option(
        "--batch",
        help="Send the briefs' model calls through the Message Batches API (half the "
        "price, answers in minutes rather than seconds): one batch per round of the "
        "briefs this worker is driving.",
    ),
]
BatchCutoffOpt = Annotated[
    str | None,
    typer.Option(
        "--batch-cutoff",
        metavar="HH:MM[ ZONE]",
        callback=not_empty,
        help="With --batch: from this time on (its next occurrence; UTC, or the zone that "
        "follows: '18:00 Europe/Paris'), calls go to the normal API and a batch still "
        "running is canceled.",
    ),
]
BatchPollOpt = Annotated[
    float,
    typer.Option(
        "--batch-poll",
        min=0.01,
        max=3600.0,
        callback=_finite,
        help="With --batch: seconds between polls.",
    ),
]


@commands.command()
def worker(
    ctx: typer.Context,
    db: FleetDbOpt = None,
    concurrency: Annotated[
        int, typer.Option(min=1, max=256, help="Briefs this worker drives at once.")
    ] = 4,
    per_key: Annotated[
        int,
        typer.Option(
            "--per-key",
            min=0,
            max=100_000,
            help="Briefs in flight at once per API key, across every worker (0: no limit).",
        ),
    ] = 8,
    until_idle: UntilIdleOpt = False,
    heartbeat: HeartbeatOpt = 10.0,
    poll: Annotated[
        float,
        typer.Option(
            min=0.1, max=3600.0, callback=_finite, help="Seconds between looks for due briefs."
        ),
    ] = 5.0,
    batch: BatchOpt = False,
    batch_cutoff: BatchCutoffOpt = None,
    batch_poll: BatchPollOpt = 30.0,
    profile: NoProfileOpt = None,
) -> None:
    """Take the profiles' briefs from the queue when they are due (each at its local time)
    and write them; run as many workers, on as many machines, as you like. A brief that
    fails before its run begins (a config file that cannot be read) is tried again a minute
    later, then 2, 4, ... minutes, an hour at most; `fleet status` shows it due meanwhile."""
    from contextlib import nullcontext

    from dayflow.fleet.worker import WorkerOptions, run_worker

    deps = get_deps(ctx)
    with handle_errors(deps):
        _refuse_profile(profile or deps.profile, "worker")
        url = _fleet_db(deps, db)
        if batch_cutoff is not None and not batch:
            raise UsageError("--batch-cutoff needs --batch")
        # concurrency, until_idle, per_key, heartbeat_s, poll_s: in the fields' order
        options = WorkerOptions(concurrency, until_idle, per_key, heartbeat, poll)
        rounds = _batch_rounds(deps, url, batch_cutoff, batch_poll) if batch else nullcontext()
        with rounds as coordinator:
            drive = make_driver(deps, url, coordinator)
            try:
                report = run_worker(
                    url,
                    drive,
                    _entrypoints(deps, url),
                    options=options,
                    clock=deps.clock,
                    say=deps.notice,
                )
            except KeyboardInterrupt:
                # Not the one-run line (`dayflow resume` knows no profile): the worker's runs
                # are resumed by the next worker that takes their jobs.
                deps.notice(WORKER_INTERRUPTED)
                raise typer.Exit(130) from None
            finally:
                drive.close()
        deps.notice(report.line())


@fleet.command()
def enqueue(
    ctx: typer.Context, db: FleetDbOpt = None, day: DateOpt = None, profile: NoProfileOpt = None
) -> None:
    """Queue every profile's brief for the day now, whatever the clock says; a profile whose
    brief of the day is done is skipped (`dayflow brief --new --profile NAME` writes a second
    one)."""
    from dayflow.fleet.worker import enqueue_day

    deps = get_deps(ctx)
    with handle_errors(deps):
        _refuse_profile(profile or deps.profile, "fleet enqueue")
        url = _fleet_db(deps, db)
        when = parse_date(day) if day else None
        did = enqueue_day(url, _entrypoints(deps, url), when, deps.clock.now())
        already = did.profiles - did.done - did.queued
        skipped = [f"{did.done} already done, skipped"] if did.done else []
        skipped += [f"{already} already queued or running"] if already else []
        which = when or "each profile's today"
        deps.notice(
            f"{did.queued} brief(s) for {which} queued"
            + (f" ({'; '.join(skipped)})" if skipped else "")
        )


@fleet.command()
def status(
    ctx: typer.Context,
    db: FleetDbOpt = None,
    day: DateOpt = None,
    as_json: JsonOpt = False,
    heartbeat: Annotated[
        float,
        typer.Option(
            min=1.0,
            max=3600.0,
            callback=_finite,
            help="The workers' --heartbeat: a job held this long without a beat, before its "
            "run began, is shown lost.",
        ),
    ] = 10.0,
    profile: NoProfileOpt = None,
) -> None:
    """The day's briefs by state: due, running, lost (its worker is gone: the next worker
    retakes it), done, failed, uncertain delivery, with the oldest job still waiting for a
    worker."""
    import asyncio
    from datetime import timedelta

    from dayflow.fleet import queue
    from dayflow.fleet.status import board

    deps = get_deps(ctx)
    with handle_errors(deps):
        _refuse_profile(profile or deps.profile, "fleet status")
        url = _fleet_db(deps, db)
        when = parse_date(day) if day else None

        async def jobs() -> list[Any]:
            async with queue.connect(url) as queries:
                return await queue.waiting(queries)

        waiting = asyncio.run(jobs())
        with deps.store(deps.settings(db=url)) as store:
            stale = timedelta(seconds=heartbeat)
            found = board(store, waiting, when, deps.clock.now(), stale_after=stale)
        if as_json:
            print_json(deps, found.to_json())
            return
        from dayflow.cli_base import zone
        from dayflow.listing import fleet_table

        deps.out.file.write(fleet_table(found, zone(deps.settings(db=url))))
        deps.out.file.flush()


def _refuse_profile(profile: str | None, command: str) -> None:
    from dayflow.fleet.profiles import refuse_profile

    refuse_profile(profile, command, EVERYONE)


def _fleet_db(deps: Deps, db: str | None) -> str:
    """The PostgreSQL database the fleet shares (a SQLite file has no queue)."""
    from dayflow.store import is_postgres_target

    target = str(deps.settings(db=db).db_path)
    if not is_postgres_target(target):
        raise UsageError(
            "the fleet's queue lives in PostgreSQL: give --db postgresql://... (or DAYFLOW_DB)"
        )
    import importlib.util

    if importlib.util.find_spec("pgqueuer") is None:
        raise UsageError(f"the fleet needs its job queue library: {FLEET_EXTRA}")
    return target


def make_driver(deps: Deps, url: str, rounds: "Rounds | None" = None) -> "BriefDriver":
    """How a worker drives one brief: `brief --ensure-today` as that profile, on its day;
    with `rounds` (--batch), its Claude calls through them. Calling it returns the brief's
    `Outcome`; `close()` when the worker is done."""
    return BriefDriver(deps, url, rounds)


class BriefDriver:
    """One worker's briefs: each job reads its profile's row afresh (an edit is seen at the
    next job, a removal ends the job with ProfileNotFound), on the connection its thread
    keeps, and its Claude calls go through one client per API key (`dayflow.fleet.kept`)."""

    def __init__(self, deps: Deps, url: str, rounds: "Rounds | None") -> None:
        from dayflow.fleet.kept import KeptClients, KeptStores

        self.deps, self.url, self.rounds = deps, url, rounds
        settings = deps.settings(db=url)
        self.durability = settings.durability
        self.stores = KeptStores(deps.clock, host=settings.host)
        self.clients = KeptClients(deps.model_factory)

    def __call__(self, job: "BriefJob") -> object:
        from dataclasses import replace

        from dayflow.briefing import BriefRequest, Mode
        from dayflow.briefing import brief as write_brief
        from dayflow.cli_brief import brief_room
        from dayflow.store import DEFAULT_PROFILE

        deps, url, stores = self.deps, self.url, self.stores
        with stores.open(url, durability=self.durability, profile=DEFAULT_PROFILE) as store:
            profile = store.profiles.get(job.profile)
        as_them = deps.for_profile(profile, url)
        settings = as_them.model_settings(None, db=url)
        request = BriefRequest(day=job.day, mode=Mode.ENSURE_TODAY)
        room = replace(
            brief_room(as_them, settings, verbose=False),
            # Every line of a brief a worker drives names whose it is: briefs run at once.
            say=lambda text: deps.notice(f"{job.key}: {text}"),
            open_store=lambda s: stores.open(
                s.db_path, durability=s.durability, profile=profile.name
            ),
            model_factory=self.clients,
        )
        if self.rounds is None:
            outcome = write_brief(request, room)
        else:
            with self.rounds.driving():
                factory = _batched(deps, self.rounds, self.clients)
                outcome = write_brief(request, replace(room, model_factory=factory))
        deps.notice(f"{job.key}: run {outcome.run.id} {outcome.run.status}")
        return outcome

    def close(self) -> None:
        self.stores.close()
        self.clients.close()


def _batch_rounds(
    deps: Deps, url: str, cutoff: str | None, poll: float
) -> "AbstractContextManager[Rounds]":
    """The worker's batch rounds: its own Claude client (its ANTHROPIC_API_KEY) submits and
    polls, and answers on the normal API what a batch does not."""
    from dayflow.batching import Rounds, batch_api, next_cutoff, rounds_in_background

    until = None if cutoff is None else next_cutoff(cutoff, deps.clock.now())
    settings = deps.model_settings(None, db=url)
    client = deps.model_factory(settings.model, settings)
    api = batch_api(client, "local" if settings.local else "anthropic")
    deps.notice(
        "batching model calls"
        + (f" until {until:%Y-%m-%d %H:%M} {until.tzname()}" if until else "")
        + f" (polling every {poll:g} s)"
    )
    return rounds_in_background(
        lambda: deps.store(deps.settings(db=url)),
        lambda store: Rounds(
            store,
            api,
            client,
            clock=deps.clock,
            cutoff=until,
            poll_every=poll,
            gather=min(poll, 5.0),
            report=deps.notice,
        ),
        deps.notice,
    )


def _batched(
    deps: Deps, rounds: "Rounds", clients: "Callable[[str, Any], Any]"
) -> "Callable[[str, Any], Any]":
    """A model factory: Claude through `rounds` for the briefs it can batch (the worker's own
    API key and server), else the brief's own model (offline, a local server, another key)."""
    from dayflow.providers import OFFLINE_MODEL

    worker = deps.model_settings(None)

    def factory(model: str, settings: Any) -> Any:
        same_api = (settings.api_key, settings.base_url) == (worker.api_key, worker.base_url)
        if settings.local or model == OFFLINE_MODEL or not same_api:
            return clients(model, settings)
        return rounds.client

    return factory


def _entrypoints(deps: Deps, url: str) -> "Callable[[Profile], str]":
    """The queue entrypoint of a profile's briefs: one per API key (its limit is per key)."""
    import hashlib

    from dayflow.errors import DayflowError
    from dayflow.fleet.queue import ENTRYPOINT_PREFIX
    from dayflow.providers import OFFLINE_MODEL

    known: dict[Profile, str] = {}  # reading a config file is not free: once a profile

    def of(profile: "Profile") -> str:
        if profile in known:
            return known[profile]
        try:
            settings = deps.for_profile(profile, url).model_settings(None, db=url)
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
