"""`dayflow schedule install|status|remove`: today's brief every morning without typing.

Options, wiring and output only; the units, the crontab block and the plist are made in
`dayflow.schedule_units` and installed by `dayflow.schedule`.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from dayflow.cli_base import DbOpt, Runtime, get_deps, handle_errors, today

if TYPE_CHECKING:  # imported by the commands themselves: `--help` stays fast
    from dayflow import schedule
    from dayflow.config import Settings

commands = typer.Typer(
    name="schedule",
    help="Run `dayflow brief --ensure-today` every morning: a systemd user timer, a crontab "
    "entry or a launchd agent.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
)

BackendOpt = Annotated[
    str | None,
    typer.Option(
        "--backend",
        metavar="systemd|cron|launchd",
        help="Use this scheduler [default: launchd on macOS, else systemd where a user session "
        "exists, else cron].",
    ),
]


def _environment(deps: Runtime) -> Mapping[str, str]:
    return deps.config.env


def _system(deps: Runtime) -> schedule.System:
    from dayflow import schedule

    return schedule.System(_environment(deps), sys.platform)


def installed_dayflow() -> list[str]:
    """The absolute command of this very Dayflow: the console script beside the interpreter
    (a virtualenv's bin/), else the one on PATH, else `python -m dayflow`."""
    beside = Path(sys.executable).parent / "dayflow"
    if beside.is_file() and os.access(beside, os.X_OK):
        return [str(beside.absolute())]
    import shutil

    found = shutil.which("dayflow")
    if found:
        return [str(Path(found).absolute())]
    return [str(Path(sys.executable).absolute()), "-m", "dayflow"]


def _job(
    deps: Runtime,
    settings: Settings,
    system: schedule.System,
    when: tuple[int, int],
    weekdays: bool,
    deliver: list[str],
) -> schedule.Job:
    """The job `install` writes: this Dayflow's `brief --ensure-today` at `when`, with the
    database, timezone and DAYFLOW_* settings in effect now pinned in its environment."""
    from dayflow import schedule
    from dayflow.delivery import parse_sink

    hour, minute = when
    pinned = schedule.pinned_settings(_environment(deps), Path.cwd())
    db_path = settings.db_path  # a postgresql:// URL is pinned as written
    if isinstance(db_path, str):
        _refuse_a_password(db_path)
    elif db_path.exists() and not db_path.is_file():  # every morning's brief would fail on it
        import os

        from dayflow.errors import UsageError
        from dayflow.files import kind_of

        raise UsageError(f"--db {db_path}: is {kind_of(os.stat(db_path).st_mode)}, not a database")
    pinned["DAYFLOW_DB"] = str(db_path.absolute() if isinstance(db_path, Path) else db_path)
    pinned["DAYFLOW_TZ"] = settings.tz
    argv = [*installed_dayflow(), "brief", "--ensure-today"]
    for sink in deliver:
        argv += ["--deliver", parse_sink(sink)]
    return schedule.Job(
        hour=hour,
        minute=minute,
        weekdays=weekdays,
        argv=tuple(argv),
        env=tuple(sorted(pinned.items())),
        log=system.state_dir / "schedule.log",
    )


@commands.command()
def install(
    ctx: typer.Context,
    at: Annotated[
        str, typer.Option("--at", metavar="HH:MM", help="Time of day (24-hour, local time).")
    ],
    weekdays: Annotated[bool, typer.Option("--weekdays", help="Monday to Friday only.")] = False,
    deliver: Annotated[
        list[str] | None,
        typer.Option(
            "--deliver",
            metavar="SINK",
            help="Passed to `brief` (repeatable): file:PATH, smtp, notify, stdout.",
        ),
    ] = None,
    backend: BackendOpt = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print what would be installed; change nothing.")
    ] = False,
    db: DbOpt = None,
) -> None:
    """Install (or replace) the daily schedule of `dayflow brief --ensure-today`.

    The job runs this Dayflow by absolute path with the database, timezone and DAYFLOW_*
    settings in effect now. With systemd a brief missed while the machine slept runs at wake
    (Persistent=true); launchd does the same; cron does not."""
    from dayflow import schedule

    deps = get_deps(ctx)
    with _schedule_errors(deps):
        when = schedule.parse_at(at)
        settings = deps.settings(db=db)
        system = _system(deps)
        job = _job(deps, settings, system, when, weekdays, deliver or [])
        schedule.refuse_unwritable(job)
        if dry_run and backend is None:
            try:
                chosen = schedule.choose_backend(system, job)
            except schedule.ScheduleError as exc:
                # Nothing to install with here; the plan is what to run by hand.
                deps.out.file.write(exc.by_hand or schedule.by_hand(job))
                deps.err.print(f"dry run: {exc}", markup=False, soft_wrap=True)
                return
        else:
            chosen = schedule.choose_backend(system, job, backend)
        if dry_run:
            _print_plan(deps, system, job, schedule.render(system, job, chosen))
            _warn_unpinned(deps, settings)
            _warn_shell_secrets(deps)
            return
        done = schedule.install(system, job, chosen)
        _warn_unpinned(deps, settings)
        _warn_shell_secrets(deps)
        deps.err.print(
            f"installed: {done.backend} ({done.where}), {job.when}: "
            f"{' '.join(_quote(a) for a in job.argv)}",
            markup=False,
            soft_wrap=True,
        )
        if done.backend != "systemd":
            deps.err.print(f"its output goes to {job.log}", markup=False, soft_wrap=True)
        if done.backend == "cron":
            deps.err.print(
                "note: cron does not run a brief missed while the machine was off or asleep; "
                "the first `dayflow brief` of the day writes it",
                markup=False,
                soft_wrap=True,
            )


def _refuse_a_password(url: str) -> None:
    """A job's unit, crontab line or plist is plain text: Dayflow never writes a secret there."""
    from urllib.parse import parse_qsl, urlsplit

    from dayflow.errors import UsageError

    parts = urlsplit(url)
    if parts.password is not None or any(k == "password" for k, _ in parse_qsl(parts.query)):
        raise UsageError(
            "the database URL holds a password, which a scheduled job would keep in plain "
            "text: put it in ~/.pgpass (or a PGPASSFILE) and give --db / DAYFLOW_DB without it"
        )


def _print_plan(
    deps: Runtime, system: schedule.System, job: schedule.Job, rendered: schedule.Rendered
) -> None:
    from dayflow import schedule

    write = deps.out.file.write
    for path, text in rendered.files:
        write(f"# {path}\n{text}\n")
    if rendered.backend == "systemd":
        write(
            f"# then: systemctl --user daemon-reload && systemctl --user enable --now "
            f"{schedule.UNIT}.timer\n"
        )
    elif rendered.backend == "cron":
        write("# added to your crontab:\n" + rendered.cron)
    else:
        write(f"# then: launchctl bootstrap gui/{system.uid} {system.launchd_plist}\n")


def _warn_unpinned(deps: Runtime, settings: Settings) -> None:
    """A key only this shell has is not there at 07:30: say so (the key is never pinned)."""
    from dayflow.providers import OFFLINE_MODEL

    if settings.api_key and not settings.api_key_file and settings.model != OFFLINE_MODEL:
        from dayflow.config_files import config_dir

        deps.err.print(
            "warning: ANTHROPIC_API_KEY is set in this shell only, and a scheduled run does not "
            f"see it: put it in {config_dir(_environment(deps)) / '.env'} (or the file "
            "DAYFLOW_DOTENV names), or the scheduled brief uses the offline model or fails",
            markup=False,
            soft_wrap=True,
        )


def _warn_shell_secrets(deps: Runtime) -> None:
    """Each `password_env` / `token_env` of the config whose variable a scheduled run will not
    have: set in this shell only (a timer, cron or launchd starts with none of its variables),
    or not set at all. One set in a `.env` file Dayflow reads is found by the job too."""
    from dayflow.config_files import Environment, config_dir
    from dayflow.delivery.settings import from_document
    from dayflow.errors import DayflowError

    env = _environment(deps)
    try:
        sources = deps.config.sources()
        path, document = deps.config.document()
        smtp = from_document(document, path, env)[1].smtp
    except DayflowError:
        return  # a broken config is `sources check`'s to report, and the run's
    specs = [(f"[[inbox]] {s.name!r}", s) for s in sources.inboxes] if sources else []
    specs += [(f"[[calendar]] {s.name!r}", s) for s in sources.calendars] if sources else []
    named: list[tuple[str, str | None]] = []
    for where, spec in specs:
        named += [
            (f"{where} password_env", spec.password_env),
            (f"{where} token_env", spec.token_env),
        ]
    if smtp is not None:
        named += [("[smtp] password_env", smtp.password_env), ("[smtp] token_env", smtp.token_env)]
    files = env.files if isinstance(env, Environment) else {}
    dotenv = config_dir(env) / ".env"
    for where, variable in named:
        if not variable or variable in files:
            continue
        state = "is set in this shell only" if env.get(variable) else "is not set"
        deps.err.print(
            f"warning: {where} names ${variable}, which {state}, and a scheduled run does not "
            f"see this shell's variables: put it in {dotenv} (or the file DAYFLOW_DOTENV "
            "names), or the scheduled brief cannot read that source",
            markup=False,
            soft_wrap=True,
        )


@commands.command()
def status(ctx: typer.Context, db: DbOpt = None) -> None:
    """Show the installed schedule, what the scheduler says of its last run, and today's
    brief."""
    from dayflow import schedule

    deps = get_deps(ctx)
    with _schedule_errors(deps):
        settings = deps.settings(db=db)  # first: --profile's row is read from --db's store
        system = _system(deps)
        found = schedule.find(system)
        if not found:
            deps.err.print(
                "no schedule installed: `dayflow schedule install --at 07:30` makes one",
                markup=False,
                soft_wrap=True,
            )
        log = system.state_dir / "schedule.log"
        for item in found:
            deps.out.print(
                f"{item.backend}: {item.where}: {item.detail}", markup=False, soft_wrap=True
            )
            if item.backend == "systemd":
                nxt = schedule.next_run(system)
                if nxt:
                    deps.out.print(f"  next run: {nxt}", markup=False, soft_wrap=True)
            last = schedule.last_outcome(system, item.backend, log)
            if last:
                deps.out.print(f"  last run: {last}", markup=False, soft_wrap=True)
        if isinstance(settings.db_path, Path) and not settings.db_path.exists():
            return
        day = today(deps, settings)
        from dayflow.briefing import day as briefday
        from dayflow.errors import ConfigFileError

        try:  # what the scheduled brief reads: the user's mail, or the bundled sample
            real = briefday.declares_sources(deps.config.document(None)[1])
        except ConfigFileError:
            real = True  # a config file named but unreadable: it was meant to name sources
        with deps.store(settings) as store:
            latest = briefday.latest_for(store.runs, day, deps.clock.now(), real)
        if latest is None:
            deps.out.print(f"today's brief ({day}): none yet", markup=False, soft_wrap=True)
        else:
            sample = " (of the bundled sample)" if latest.settings.reads_sample else ""
            deps.out.print(
                f"today's brief ({day}): run {latest.id} {latest.status}{sample}",
                markup=False,
                soft_wrap=True,
            )


@commands.command()
def remove(ctx: typer.Context) -> None:
    """Disable and delete Dayflow's schedule (the rest of your crontab is kept)."""
    from dayflow import schedule

    deps = get_deps(ctx)
    with _schedule_errors(deps):
        removed = schedule.remove(_system(deps))
        if not removed:
            deps.err.print("no schedule installed; nothing to remove", markup=False, soft_wrap=True)
        for item in removed:
            deps.err.print(f"removed: {item.backend} ({item.where})", markup=False, soft_wrap=True)


@contextlib.contextmanager
def _schedule_errors(deps: Runtime) -> Iterator[None]:
    """handle_errors, plus: a schedule that could not be installed prints what to run by hand
    on stdout before its one error line."""
    from dayflow.schedule import ScheduleError

    with handle_errors(deps):
        try:
            yield
        except ScheduleError as exc:
            if exc.by_hand:
                deps.out.file.write(exc.by_hand)
                deps.out.file.flush()
            raise


def _quote(arg: str) -> str:
    import shlex  # here: off the start-up path of every other command

    return shlex.quote(arg)
