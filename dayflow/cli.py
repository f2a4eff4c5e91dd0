"""The Typer app: parse options, build the pieces, call the core, render. Nothing else.

Tests pass their own `Deps` through `CliRunner.invoke(app, args, obj=deps)`.
"""

# No `from __future__ import annotations` here: Typer would compile and eval every option's
# annotation string at start-up (issue 13). Names imported only for type checking are quoted.

import functools
import os
import sys
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from dayflow.cli_base import (
    EXIT_CODES,
    MAX_COUNT,
    MAX_TOKENS,
    AllowRemoteOpt,
    BriefJsonOpt,
    BudgetOpt,
    ConfigOpt,
    CrashOpt,
    DbOpt,
    Deps,
    FormatOpt,
    JsonOpt,
    MaxStepsOpt,
    ProviderOpt,
    RunArg,
    TimeoutOpt,
    VerboseOpt,
    brief_format,
    closing,
    for_run,
    get_deps,
    handle_errors,
    key_notice,
    local_check,
    local_notice,
    make_loop,
    not_empty,
    parse_date,
    print_json,
    print_outcome,
    print_table,
    today,
    zone,
)
from dayflow.errors import (
    ConfigError,
    DayTaken,
    NothingToResume,
    RunBusy,
    StoreError,
    UsageError,
)
from dayflow.frozen import replace
from dayflow.models import (
    DEFAULT_COMPACT_AT,
    DEFAULT_MAX_STEPS,
    DEFAULT_MAX_TOKENS,
    DEFAULT_TASK_CAP,
    DONE,
    RUN_STATUSES,
    RUNNING,
    Run,
    RunSettings,
)

if TYPE_CHECKING:
    from dayflow import config
    from dayflow.store import Store

    app: typer.Typer  # the whole app, built on first use: see `__getattr__` at the end

__all__ = ["Deps", "app", "main"]

# The commands of this module; `app`, the whole app, adds those of the command modules (below).
core = typer.Typer(
    help="Dayflow: a daily-brief agent whose runs outlive their process.\n\n" + EXIT_CODES,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        from dayflow import __version__

        typer.echo(f"dayflow {__version__}")
        raise typer.Exit()


@core.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    """Dayflow: a daily-brief agent whose runs outlive their process."""


@core.command()
def brief(
    ctx: typer.Context,
    brief_date: Annotated[
        str | None,
        typer.Option("--date", metavar="YYYY-MM-DD", callback=not_empty, help="Day of the brief."),
    ] = None,
    tz: Annotated[
        str | None,
        typer.Option(callback=not_empty, help="IANA timezone [env DAYFLOW_TZ; UTC]."),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option(
            callback=not_empty,
            help="'offline', a Claude model, or a local server's model (--provider local: "
            "e.g. qwen3:8b) [env DAYFLOW_MODEL; offline without a key, else claude-haiku-5-5].",
        ),
    ] = None,
    provider: ProviderOpt = None,
    allow_remote: AllowRemoteOpt = False,
    inbox: Annotated[
        Path | None,
        typer.Option(help="Inbox JSON ('-': standard input) [env DAYFLOW_INBOX]."),
    ] = None,
    calendar: Annotated[
        Path | None,
        typer.Option(help="Calendar JSON ('-': standard input) [env DAYFLOW_CALENDAR]."),
    ] = None,
    sample: Annotated[
        str,
        typer.Option(
            help="Bundled inbox when --inbox is not given: 'standard' (19 messages) or "
            "'large' (69 long messages: a long run)."
        ),
    ] = "standard",
    db: DbOpt = None,
    max_steps: MaxStepsOpt = None,
    budget: BudgetOpt = None,
    task_cap: Annotated[
        int, typer.Option(min=0, max=MAX_COUNT, help="Most tasks one run may create.")
    ] = DEFAULT_TASK_CAP,
    max_tokens: Annotated[
        int, typer.Option(min=1, max=MAX_TOKENS, help="Output tokens per call.")
    ] = DEFAULT_MAX_TOKENS,
    compact_at: Annotated[
        int,
        typer.Option(
            "--compact-at",
            min=0,
            max=MAX_TOKENS,
            metavar="TOKENS",
            help="Compact old tool exchanges when a call's input passes this (0: never).",
        ),
    ] = DEFAULT_COMPACT_AT,
    resume_latest: Annotated[
        bool, typer.Option("--resume-latest", help="Continue today's unfinished run instead.")
    ] = False,
    ensure_today: Annotated[
        bool,
        typer.Option(
            "--ensure-today",
            help="Make sure the day has its brief: start it, resume it if unfinished, or print "
            "it if done (no model call). Safe to run from a timer and by hand at once.",
        ),
    ] = False,
    since_last: Annotated[
        bool,
        typer.Option(
            "--since-last",
            help="[default when the day's brief is done] Write an update covering only the "
            "messages that arrived since that brief.",
        ),
    ] = False,
    new: Annotated[
        bool, typer.Option("--new", help="Write a full new brief even if the day has one.")
    ] = False,
    deliver: Annotated[
        list[str] | None,
        typer.Option(
            "--deliver",
            metavar="SINK",
            help="Also deliver the brief (repeatable; added to the config file's `deliver`): "
            "file:PATH ({date} becomes the day), smtp (the config's [smtp]), notify, stdout. "
            "With any sink, stdout gets the brief only if `stdout` is one.",
        ),
    ] = None,
    timeout: TimeoutOpt = None,
    config_file: ConfigOpt = None,
    strict_sources: Annotated[
        bool,
        typer.Option(
            "--strict-sources", help="Fail the run (resumably) when any source cannot be read."
        ),
    ] = False,
    verbose: VerboseOpt = False,
    as_json: BriefJsonOpt = False,
    fmt: FormatOpt = None,
    crash_after: CrashOpt = None,
) -> None:
    """Read the inbox, calendar and tasks, create the tasks found, and print the brief.

    When the day already has a finished brief, a plain `brief` says so (its run id) and writes
    an update covering only what arrived since (--since-last); --new writes a full one,
    --ensure-today prints the one there is."""
    from dayflow import briefday, cli_sources

    deps = get_deps(ctx)
    with handle_errors(deps):
        chosen = [
            flag
            for flag, on in (
                ("--ensure-today", ensure_today),
                ("--since-last", since_last),
                ("--new", new),
                ("--resume-latest", resume_latest),
            )
            if on
        ]
        if len(chosen) > 1:
            raise UsageError(f"{' and '.join(chosen)} cannot be used together")
        out_format = brief_format(deps, fmt, as_json)
        from dayflow.sources import SAMPLES

        if sample not in SAMPLES:
            raise UsageError(f"--sample must be one of {', '.join(SAMPLES)}, not {sample!r}")
        settings = deps.model_settings(
            config_file,
            db=db,
            model=model,
            tz=tz,
            inbox=inbox,
            calendar=calendar,
            timeout=timeout,
            provider=provider,
            allow_remote=allow_remote,
        )
        if not resume_latest and not ensure_today:  # (those may resume a run of its own)
            local_check(settings, settings.model)  # before the database is even made
        day = parse_date(brief_date) if brief_date is not None else today(deps, settings)
        sinks = _sinks(deps, deliver or [], config_file)
        if not isinstance(settings.db_path, Path):  # a server: the day's lock lives here
            _local_dir(settings.local_dir)
        with (
            deps.store(settings, create=True) as store,
            briefday.day_lock(settings.local_db, day, lambda: _say_waiting(deps, store, day)),
        ):
            current = briefday.latest_for(store.runs, day, deps.clock.now())
            if current is not None and current.status == RUNNING:
                driven = current.id
                current = briefday.wait_while_driven(lambda: store.runs.get(driven))
            if ensure_today and current is not None:
                _todays(
                    deps, store, current, day, sinks, settings, verbose, out_format, crash_after
                )
                return
            update_of = None
            if current is not None and current.status == DONE and not resume_latest:
                update_of = _second_brief_notice(deps, current, day, settings.tz, new)
            elif since_last:
                deps.err.print(f"no finished brief for {day} yet: writing a full one", markup=False)
            unfinished = store.runs.latest_unfinished(day.isoformat())
            if resume_latest and unfinished is not None:
                ignored = [
                    "--" + name.replace("_", "-")
                    for name in ("model", "inbox", "calendar", "sample", "task_cap", "compact_at")
                    if _given(ctx, name)
                ]
                if ignored:
                    deps.notice(
                        f"note: {', '.join(ignored)} do not apply to a resumed run: run "
                        f"{unfinished.id} keeps the settings it started with"
                    )
                _resume(
                    deps,
                    store,
                    unfinished,
                    settings,
                    verbose,
                    out_format,
                    crash_after,
                    max_steps,
                    budget,
                    max_tokens if _given(ctx, "max_tokens") else None,
                    timeout,
                )
                return
            if unfinished is not None:
                deps.err.print(
                    f"note: run {unfinished.id} for {day} is {unfinished.status}; "
                    f"`dayflow resume {unfinished.id}` continues it (or brief --resume-latest)",
                    markup=False,
                    soft_wrap=True,
                )
            local_check(settings, settings.model)
            settings = _kept_inputs(deps, settings)
            local_notice(deps, settings, settings.model)
            client = deps.model_factory(settings.model, settings)
            if settings.model_was_defaulted_offline:
                hint = ""
                if Path(".env").is_file() and "DAYFLOW_DOTENV" not in (deps.env or os.environ):
                    hint = " ./.env is not read: DAYFLOW_DOTENV=./.env reads it."
                deps.notice(
                    "No ANTHROPIC_API_KEY set: using the built-in offline model "
                    f"(token counts are estimates).{hint}"
                )
            key_notice(deps, settings, settings.model)
            picked = cli_sources.brief_sources(
                deps,
                config_file=config_file,
                inbox=settings.inbox,
                calendar=settings.calendar,
                db_path=store.upkeep.location,
                mail_since=lambda: briefday.mail_since(
                    store.runs, day, zone(settings), deps.clock.now()
                ),
                strict=strict_sources,
            )
            loop = make_loop(
                deps, store, client, verbose, crash_after, settings, config_file=config_file
            )
            from dayflow.agent import BriefOptions, start_run

            options = BriefOptions(
                brief_date=day,
                model=settings.model,
                max_steps=max_steps or DEFAULT_MAX_STEPS,
                budget=budget,
                task_cap=task_cap,
                max_tokens=max_tokens,
                settings=RunSettings(
                    tz=settings.tz,
                    compact_at=compact_at,
                    sample=sample,
                    inbox=settings.inbox,
                    calendar=settings.calendar,
                    since=None if update_of is None else update_of.created_at,
                    update_of=None if update_of is None else update_of.id,
                    deliver=tuple(sinks),
                    provider=settings.provider,
                    base_url=settings.base_url if settings.local else None,
                    price=(0.0, 0.0) if settings.local else None,  # recorded: never looked up
                    **picked.options,
                ),
                sole_for_day=ensure_today,
            )
            with closing(client):
                try:
                    result = start_run(loop, options)
                except DayTaken as taken:
                    # Another process, on this host or another sharing the database, created
                    # the day's run after we looked: that one is today's brief.
                    deps.err.print(
                        f"another dayflow started the brief for {day} meanwhile (run "
                        f"{taken.run_id}); waiting for it",
                        markup=False,
                        soft_wrap=True,
                    )
                    taken_id = taken.run_id
                    current = briefday.wait_while_driven(lambda: store.runs.get(taken_id))
                    _todays(
                        deps, store, current, day, sinks, settings, verbose, out_format, crash_after
                    )
                    return
            if picked.notice:  # said once the run exists: a refused input gets one line only
                deps.notice(picked.notice)
            # With sinks, stdout is one of them; a brief not delivered is printed anyway.
            printed = (
                not sinks or "stdout" in sinks or out_format == "json" or result.run.status != DONE
            )
            shown = result.text if printed else None
            print_outcome(deps, result.run, shown, out_format, settings.prices)


def _todays(
    deps: Deps,
    store: "Store",
    current: Run,
    day: date,
    sinks: list[str],
    settings: "config.Settings",
    verbose: bool,
    out_format: str,
    crash_after: int | None,
) -> None:
    """`brief --ensure-today` when the day has its run: resume it, or print it when done."""
    if current.status != DONE:
        deps.err.print(
            f"the brief for {day} is run {current.id}, {current.status}: resuming it",
            markup=False,
            soft_wrap=True,
        )
    missed = [k for k in sinks if k not in current.settings.deliver]
    if missed:
        # A run delivers to the sinks it was started with, and no others.
        deps.err.print(
            f"note: run {current.id} was started without delivering to "
            f"{', '.join(missed)}, so it is not delivered there; "
            f"`dayflow brief --new --deliver ...` writes one that is",
            markup=False,
            soft_wrap=True,
        )
    _resume(deps, store, current, settings, verbose, out_format, crash_after, None, None)


def _sinks(deps: Deps, flags: list[str], config_file: Path | None) -> list[str]:
    """The config file's sinks, then the --deliver ones, each once; checked before a run."""
    from dayflow import delivery

    configured, how = deps.config.delivery(config_file, deps.clock)
    sinks: list[str] = []
    for sink in [*configured, *(delivery.parse_sink(f) for f in flags)]:
        if sink not in sinks:
            sinks.append(sink)
    delivery.check(sinks, how)
    return sinks


def _given(ctx: typer.Context, name: str) -> bool:
    """Whether option `name` was given on the command line (not defaulted)."""
    source = ctx.get_parameter_source(name)
    return source is not None and source.name == "COMMANDLINE"


def _kept_inputs(deps: Deps, settings: "config.Settings") -> "config.Settings":
    """An inbox or calendar read from standard input or a pipe (`-`, /dev/stdin, `<(...)`)
    is kept in a private file beside the database, so a resume (in another process) reads the
    very same input again."""
    import hashlib
    import stat

    kept: dict[str, str] = {}
    for name in ("inbox", "calendar"):
        value = getattr(settings, name)
        if value is None:
            continue
        try:
            regular = value != "-" and stat.S_ISREG(os.stat(value).st_mode)
        except OSError:
            continue  # missing: the source reports it, naming the file
        if regular:
            continue
        if value == "-" and settings.inbox == settings.calendar == "-":
            raise UsageError("--inbox and --calendar cannot both read standard input")
        try:
            data = sys.stdin.buffer.read() if value == "-" else Path(value).read_bytes()
        except OSError as exc:
            raise UsageError(f"--{name}: cannot read {value}: {exc.strerror or exc}") from None
        folder = settings.local_dir / "inputs"
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        path = folder / f"{name}-{hashlib.sha256(data).hexdigest()[:16]}.json"
        tmp = path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
        where = "standard input" if value == "-" else value
        deps.notice(f"read the {name} from {where}; kept as {path} for `dayflow resume`")
        kept[name] = str(path)
    inbox, calendar = kept.get("inbox", settings.inbox), kept.get("calendar", settings.calendar)
    return replace(settings, inbox=inbox, calendar=calendar)


def _say_waiting(deps: Deps, store: "Store", day: date) -> None:
    from dayflow import briefday

    current = briefday.latest_for(store.runs, day, deps.clock.now())
    who = "" if current is None else f" (run {current.id}, pid {current.owner_pid})"
    deps.err.print(
        f"another dayflow is writing the brief for {day}{who}; waiting for it",
        markup=False,
        soft_wrap=True,
    )


def _second_brief_notice(deps: Deps, done: Run, day: date, tz: str, new: bool) -> Run | None:
    """Say that the day has its brief; return it when the new run is an update of it."""
    from zoneinfo import ZoneInfo

    at = datetime.fromisoformat(done.finished_at or done.created_at).astimezone(ZoneInfo(tz))
    head = f"the brief for {day} exists: run {done.id}, done at {at:%H:%M}"
    if new:
        deps.err.print(f"{head}; writing a full new one (--new)", markup=False, soft_wrap=True)
        return None
    deps.err.print(
        f"{head}; writing an update with only what arrived since (--since-last; --new writes "
        f"a full brief, --ensure-today or `dayflow show {done.id}` shows that one)",
        markup=False,
        soft_wrap=True,
    )
    return done


def _resume(
    deps: Deps,
    store: "Store",
    run: Run,
    settings: "config.Settings",
    verbose: bool,
    out_format: str,
    crash_after: int | None,
    max_steps: int | None,
    budget: int | None,
    max_tokens: int | None = None,
    timeout: float | None = None,
) -> None:
    from dayflow.agent import resume_run

    if run.status == DONE:
        deps.err.print(
            f"run {run.id} is already done; showing its brief (no model call)", markup=False
        )
        print_outcome(deps, run, run.final_text, out_format, settings.prices)
        return
    if run.status == RUNNING:
        # Say who drives it before anything else (a missing key is not the problem here).
        raise RunBusy(
            f"run {run.id} is being driven by pid {run.owner_pid} on host {run.owner_host}; "
            "wait for it to finish"
        )
    # The run's own provider and server, whatever the environment says today; a local run is
    # refused (exit 2) where its server is not on this machine, unless --allow-remote.
    settings = for_run(deps, run, settings, timeout)
    try:
        local_check(settings, run.model)
    except UsageError as exc:
        raise UsageError(f"run {run.id} uses a local model: {exc}") from None
    local_notice(deps, settings, run.model)
    key_notice(deps, settings, run.model)
    try:
        client = deps.model_factory(run.model, settings)
    except ConfigError as exc:
        raise ConfigError(
            f"run {run.id} uses the model {run.model!r}: {exc}".replace(
                ", or use --model offline", "; a resumed run keeps its model"
            )
        ) from None
    kept = run.settings.config_file
    config_file = Path(kept) if kept else None
    loop = make_loop(deps, store, client, verbose, crash_after, settings, config_file=config_file)
    with closing(client):
        result = resume_run(loop, run, max_steps=max_steps, budget=budget, max_tokens=max_tokens)
    if result.finished_elsewhere:
        deps.err.print(
            f"run {run.id} was finished by another process meanwhile; it is already done",
            markup=False,
        )
    print_outcome(deps, result.run, result.text, out_format, settings.prices)


@core.command()
def resume(
    ctx: typer.Context,
    run_id: Annotated[
        str | None,
        typer.Argument(
            help="Run id or a unique prefix [default: newest unfinished].", callback=not_empty
        ),
    ] = None,
    db: DbOpt = None,
    max_steps: MaxStepsOpt = None,
    budget: BudgetOpt = None,
    max_tokens: Annotated[
        int | None,
        typer.Option(
            min=1,
            max=MAX_TOKENS,
            help="Output tokens per call from now on (after a cut answer).",
        ),
    ] = None,
    timeout: TimeoutOpt = None,
    allow_remote: AllowRemoteOpt = False,
    verbose: VerboseOpt = False,
    as_json: BriefJsonOpt = False,
    fmt: FormatOpt = None,
    crash_after: CrashOpt = None,
) -> None:
    """Continue an interrupted, failed or stopped run from its last committed step, with the
    model, provider and server it was started with."""
    deps = get_deps(ctx)
    with handle_errors(deps):
        out_format = brief_format(deps, fmt, as_json)
        settings = deps.settings(db=db, timeout=timeout, allow_remote=allow_remote)
        with deps.store(settings) as store:
            if run_id is not None:
                run = store.runs.find(run_id)
            else:
                found = store.runs.latest_unfinished()
                if found is None:
                    if not store.runs.list(limit=1):
                        raise NothingToResume("nothing to resume: no runs yet (`dayflow brief`)")
                    raise NothingToResume(
                        "nothing to resume: every run is done or driven by a live process "
                        "(see `dayflow runs`)"
                    )
                run = found
            _resume(
                deps,
                store,
                run,
                settings,
                verbose,
                out_format,
                crash_after,
                max_steps,
                budget,
                max_tokens,
                timeout,
            )


@core.command()
def runs(
    ctx: typer.Context,
    db: DbOpt = None,
    status: Annotated[
        str | None,
        typer.Option(
            callback=not_empty,
            help=f"Only runs with this status ({', '.join(RUN_STATUSES)}).",
        ),
    ] = None,
    since: Annotated[
        str | None,
        typer.Option(
            metavar="YYYY-MM-DD", callback=not_empty, help="Only runs started on or after."
        ),
    ] = None,
    limit: Annotated[
        int, typer.Option(min=1, max=MAX_COUNT, help="How many runs, newest first.")
    ] = 20,
    as_json: JsonOpt = False,
) -> None:
    """List runs, newest first."""
    from dayflow import listing

    deps = get_deps(ctx)
    with handle_errors(deps):
        if status is not None and status not in RUN_STATUSES:
            raise UsageError(f"--status must be one of {', '.join(RUN_STATUSES)}")
        since_bound = parse_date(since, "--since").isoformat() if since is not None else None
        settings = deps.settings(db=db)
        with deps.store(settings) as store:
            found = store.runs.list(status=status, since=since_bound, limit=limit)
            if as_json:
                print_json(deps, [listing.run_json(r, settings.prices) for r in found])
                return
            if not found:
                filtered = status is not None or since is not None
                if filtered and store.runs.list(limit=1):
                    deps.notice("no runs match (`dayflow runs` without filters lists them all)")
                else:
                    deps.notice("no runs yet: `dayflow brief` starts one")
                return
            print_table(deps, listing.runs_table, found, settings.prices, zone(settings))
            day = today(deps, settings).isoformat()
            for r in found:
                if r.resumable and r.brief_date == day and not r.pruned_at and not r.redacted_at:
                    deps.notice(f"run {r.id} is {r.status}: `dayflow resume {r.id}` continues it")
                    break
            if any(r.estimated for r in found):
                deps.notice("* token counts of the offline model are estimates")


def tasks(
    ctx: typer.Context,
    db: DbOpt = None,
    show_all: Annotated[bool, typer.Option("--all", help="Include done tasks.")] = False,
    done: Annotated[
        str | None,
        typer.Option("--done", metavar="TASK_ID", callback=not_empty, help="Mark a task done."),
    ] = None,
    clear_sample: Annotated[
        bool,
        typer.Option(
            "--clear-sample", help="Delete the tasks the bundled sample filed ('sample:' keys)."
        ),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """List the tasks the agent created (open ones unless --all), or mark one done;
    `tasks export` and `tasks sync` keep them in your notes."""
    if ctx.invoked_subcommand:
        return
    from dayflow import listing

    deps = get_deps(ctx)
    with handle_errors(deps):
        settings = deps.settings(db=db)
        with deps.store(settings) as store:
            if clear_sample:
                from dayflow.sources.identity import SAMPLE_SOURCE

                gone = store.tasks.delete_with_key_prefix(SAMPLE_SOURCE + ":")
                deps.err.print(
                    f"deleted {gone} sample task(s) from {settings.db_path}", markup=False
                )
                return
            if done is not None:
                task = store.tasks.mark_done(store.tasks.find(done).id)
                if as_json:
                    print_json(deps, task.to_json() | {"done_at": task.done_at})
                else:
                    deps.notice(f"done: {task.id} {listing.plain(task.title)}")
                return
            found = store.tasks.list(include_done=show_all)
            if as_json:
                print_json(deps, [t.to_json() | {"done_at": t.done_at} for t in found])
                return
            if not found:
                deps.notice("no open tasks" if not show_all else "no tasks")
                return
            print_table(deps, listing.tasks_table, found)


@core.command()
def show(
    ctx: typer.Context,
    run_id: RunArg,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Show one run: its header, steps, event log and brief."""
    from dayflow import render

    deps = get_deps(ctx)
    with handle_errors(deps):
        settings = deps.settings(db=db)
        with deps.store(settings) as store:
            run = store.runs.find(run_id)
            steps, effects, events = (
                store.steps.of(run.id),
                store.steps.effects(run.id),
                store.events.of(run.id),
            )
            if as_json:
                print_json(
                    deps,
                    render.show_json(
                        run,
                        steps,
                        effects,
                        events,
                        settings.prices,
                        compactions=store.steps.compactions(run.id),
                    ),
                )
            else:
                deps.out.print(
                    render.show(run, steps, effects, events, settings.prices, zone(settings))
                )


def app_for(args: list[str]) -> typer.Typer:
    """`app` with only the command `args` name. Before it parses anything, Typer builds every
    command it has, inspecting each signature: for `dayflow runs` that cost more than the rest
    of the command (issue 13), and so did importing every command module. No command, `--help`
    or an unknown name get the whole app."""
    import copy

    from typer.main import get_command_name

    name = next((a for a in args if not a.startswith("-")), None)
    if name is None or "--help" in args[: args.index(name)]:
        return _whole_app()
    source = _with_modules([m for m, names in COMMAND_MODULES.items() if name in names])
    lean = copy.copy(source)
    lean.registered_commands, lean.registered_groups = [], []
    for command in source.registered_commands:
        if name == (command.name or get_command_name(command.callback.__name__)):  # type: ignore[union-attr]
            lean.registered_commands = [command]
    for group in source.registered_groups:
        inner = group.typer_instance
        # Typer leaves unset names as placeholders, not None: a nameless group's commands sit
        # at the top level.
        group_name = next(
            (n for n in (group.name, inner and inner.info.name) if isinstance(n, str)), None
        )
        if group_name == name:
            lean.registered_groups = [_without_unasked(group, args[args.index(name) + 1 :])]
        elif group_name is None and inner is not None:
            for command in inner.registered_commands:
                cmd_name = command.name or get_command_name(command.callback.__name__)  # type: ignore[union-attr]
                if cmd_name == name:
                    lean.registered_commands = [command]
    if not lean.registered_commands and not lean.registered_groups:
        return _whole_app()
    return lean


def _without_unasked(group: Any, rest: list[str]) -> Any:
    """A command group (`tasks`) without its subcommands when none of them is asked for: a
    bare `dayflow tasks` runs only the group's own callback."""
    import copy

    from typer.main import get_command_name

    inner = group.typer_instance
    names = {c.name or get_command_name(c.callback.__name__) for c in inner.registered_commands}
    if "--help" in rest or any(a in names for a in rest):
        return group
    slim, bare = copy.copy(group), copy.copy(inner)
    bare.registered_commands = []
    slim.typer_instance = bare
    return slim


def _local_dir(path: Path) -> None:
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(f"cannot create {path}: {exc.strerror or exc}") from None


def main() -> None:
    """Console-script entry point: no tracebacks for users unless DAYFLOW_DEBUG is set."""
    try:
        app_for(sys.argv[1:])()
    except Exception as exc:  # a bug: say so in one line, keep the detail for DAYFLOW_DEBUG
        if os.environ.get("DAYFLOW_DEBUG"):
            raise
        print(
            f"dayflow: internal error: {type(exc).__name__}: {exc} "
            "(set DAYFLOW_DEBUG=1 for the traceback)",
            file=sys.stderr,
        )
        sys.exit(1)


# The command modules and the top-level commands each adds (tests/test_startup.py keeps these
# lists true). The whole app adds them all, in this order; `main()` imports only the module
# of the command asked for.
COMMAND_MODULES = {
    "cli_history": ("trace", "fork", "gc", "doctor"),
    "cli_migrate": ("migrate",),
    "cli_tasks": ("tasks",),
    "cli_schedule": ("schedule",),
    "cli_sources": ("init", "sources"),
}


def _with_modules(modules: list[str]) -> typer.Typer:
    """`core` with the commands of `modules` added (a copy: `core` stays as it is)."""
    import copy
    import importlib

    built = copy.copy(core)
    built.registered_commands = list(core.registered_commands)
    built.registered_groups = list(core.registered_groups)
    for name in modules:
        module = importlib.import_module(f"dayflow.{name}")
        # `tasks` (above) lists the tasks; the group's subcommands export and sync them.
        built.add_typer(module.group(tasks) if name == "cli_tasks" else module.commands)
    return built


@functools.cache
def _whole_app() -> typer.Typer:
    return _with_modules(list(COMMAND_MODULES))


def __getattr__(name: str) -> typer.Typer:
    """`app`, the whole app, is built on first use (PEP 562): `main()` seldom needs it."""
    if name == "app":
        return _whole_app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
