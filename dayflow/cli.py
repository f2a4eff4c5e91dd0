"""The Typer app: parse options, build the pieces, call the core, render. Nothing else.

Tests pass their own `Deps` through `CliRunner.invoke(app, args, obj=deps)`.
"""

# No `from __future__ import annotations` here: Typer would compile and eval every option's
# annotation string at start-up (issue 13). Names imported only for type checking are quoted.

import functools
import os
import sys
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
    for_run,
    get_deps,
    handle_errors,
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
    NothingToResume,
    UsageError,
)
from dayflow.models import (
    DEFAULT_COMPACT_AT,
    DEFAULT_MAX_TOKENS,
    DEFAULT_TASK_CAP,
    RUN_STATUSES,
)

if TYPE_CHECKING:
    from dayflow import config
    from dayflow.briefing import Room
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
    since: Annotated[
        str | None,
        typer.Option(
            "--since",
            metavar="DATE|SPAN",
            callback=not_empty,
            help="Read the config's inboxes from this day (YYYY-MM-DD, from its start) or this "
            "long before the brief (36h, 3d, 2w), instead of since the last brief (a first "
            "brief: 24 hours). Writes a full brief.",
        ),
    ] = None,
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
    --ensure-today prints the one there is. A run of the bundled sample is never the day's
    brief of your own mail."""
    from dayflow.briefing import BriefRequest, Mode
    from dayflow.briefing import brief as write_brief
    from dayflow.briefing.inputs import parse_since

    deps = get_deps(ctx)
    with handle_errors(deps):
        modes = {
            Mode.ENSURE_TODAY: ensure_today,
            Mode.SINCE_LAST: since_last,
            Mode.NEW: new,
            Mode.RESUME_LATEST: resume_latest,
        }
        chosen = [mode for mode, on in modes.items() if on]
        if len(chosen) > 1:
            raise UsageError(f"{' and '.join(m.value for m in chosen)} cannot be used together")
        if since is not None and chosen and chosen[0] is not Mode.NEW:
            raise UsageError(f"--since and {chosen[0].value} cannot be used together")
        out_format = brief_format(deps, fmt, as_json)
        settings = deps.model_settings(
            None if config_file is None else Path(config_file),
            db=db,
            model=model,
            tz=tz,
            inbox=inbox,
            calendar=calendar,
            timeout=timeout,
            provider=provider,
            allow_remote=allow_remote,
        )
        request = BriefRequest(
            day=parse_date(brief_date) if brief_date is not None else None,
            mode=chosen[0] if chosen else Mode.AUTO,
            sample=sample,
            max_steps=max_steps,
            budget=budget,
            task_cap=task_cap,
            max_tokens=max_tokens,
            compact_at=compact_at,
            deliver=tuple(deliver or ()),
            config_file=None if config_file is None else Path(config_file),
            strict_sources=strict_sources,
            crash_after=crash_after,
            timeout=timeout,
            given=frozenset(name for name in ctx.params if _given(ctx, name)),
            since=None if since is None else parse_since(since),
        )
        outcome = write_brief(request, _room(deps, settings, verbose))
        shown = None if outcome.quiet and out_format != "json" else outcome.text
        print_outcome(deps, outcome.run, shown, out_format, settings.prices)


def _room(deps: Deps, settings: "config.Settings", verbose: bool) -> "Room":
    """What `dayflow.briefing` makes a brief with: this process's parts."""
    from dayflow.briefing import Room

    def loop(store: "Store", client: Any, crash_after: int | None, config_file: Path | None) -> Any:
        return make_loop(
            deps, store, client, verbose, crash_after, settings, config_file=config_file
        )

    return Room(
        settings=settings,
        config=deps.config,
        clock=deps.clock,
        open_store=lambda s: deps.store(s, create=True),
        model_factory=deps.model_factory,
        make_loop=loop,
        say=lambda text: deps.err.print(text, markup=False, soft_wrap=True),
        sources=deps.sources,
        settings_for=lambda run, timeout: for_run(deps, run, settings, timeout),
        stdin=lambda: sys.stdin.buffer.read(),
    )


def _given(ctx: typer.Context, name: str) -> bool:
    """Whether option `name` was given on the command line (not defaulted)."""
    source = ctx.get_parameter_source(name)
    return source is not None and source.name == "COMMANDLINE"


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
            from dayflow.briefing import resume as continue_run

            outcome = continue_run(
                _room(deps, settings, verbose),
                store,
                run,
                crash_after=crash_after,
                max_steps=max_steps,
                budget=budget,
                max_tokens=max_tokens,
                timeout=timeout,
            )
        print_outcome(deps, outcome.run, outcome.text, out_format, settings.prices)


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
