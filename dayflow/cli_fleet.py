"""`dayflow worker` and `dayflow fleet enqueue|status`: briefs for every profile of a shared
PostgreSQL database, taken from a job queue by any number of workers (`dayflow.fleet`).

Options and output only: how the worker drives one brief (`drive_job`), its batch rounds
and the queue's entrypoints are the application's (`dayflow.app.fleet`).
"""

# No `from __future__ import annotations` here: Typer would compile and eval every option's
# annotation string at start-up (issue 13).

from typing import TYPE_CHECKING, Annotated

import typer

from dayflow.cli_base import (
    JsonOpt,
    get_deps,
    handle_errors,
    not_empty,
    parse_date,
    print_json,
)
from dayflow.errors import UsageError

if TYPE_CHECKING:
    pass

commands = typer.Typer()
fleet = typer.Typer(
    name="fleet",
    help="The fleet's briefs: queue a day's briefs now, or see where each one is.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
)
commands.add_typer(fleet)

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

    from dayflow.app.fleet import batch_rounds, entrypoints, fleet_db, make_driver
    from dayflow.fleet.worker import WorkerOptions, run_worker

    deps = get_deps(ctx)
    with handle_errors(deps):
        _refuse_profile(profile or deps.profile, "worker")
        url = fleet_db(deps, db)
        if batch_cutoff is not None and not batch:
            raise UsageError("--batch-cutoff needs --batch")
        # concurrency, until_idle, per_key, heartbeat_s, poll_s: in the fields' order
        options = WorkerOptions(concurrency, until_idle, per_key, heartbeat, poll)
        rounds = batch_rounds(deps, url, batch_cutoff, batch_poll) if batch else nullcontext()
        with rounds as coordinator:
            drive = make_driver(deps, url, coordinator)
            try:
                report = run_worker(
                    url,
                    drive,
                    entrypoints(deps, url),
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
    from dayflow.app.fleet import entrypoints, fleet_db
    from dayflow.fleet.worker import enqueue_day

    deps = get_deps(ctx)
    with handle_errors(deps):
        _refuse_profile(profile or deps.profile, "fleet enqueue")
        url = fleet_db(deps, db)
        when = parse_date(day) if day else None
        did = enqueue_day(url, entrypoints(deps, url), when, deps.clock.now())
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
    from dayflow.app.fleet import fleet_db, fleet_status

    deps = get_deps(ctx)
    with handle_errors(deps):
        _refuse_profile(profile or deps.profile, "fleet status")
        url = fleet_db(deps, db)
        found = fleet_status(deps, url, parse_date(day) if day else None, heartbeat)
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
