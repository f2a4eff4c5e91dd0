"""The Typer app: parse options, build the pieces, call the core, render. Nothing else.

Tests pass their own `Deps` through `CliRunner.invoke(app, args, obj=deps)`.
"""

from __future__ import annotations

import json
import os
import sys
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from dayflow import briefday, cli_history, cli_schedule, cli_tasks, render
from dayflow.cli_base import (
    DEFAULT_MAX_STEPS,
    EXIT_CODES,
    BudgetOpt,
    CrashOpt,
    DbOpt,
    Deps,
    JsonOpt,
    MaxStepsOpt,
    VerboseOpt,
    closing,
    get_deps,
    handle_errors,
    make_loop,
    parse_date,
    print_outcome,
    today,
)
from dayflow.compaction import DEFAULT_COMPACT_AT
from dayflow.errors import NothingToResume, UsageError
from dayflow.models import DONE, RUN_STATUSES, RUNNING, Run
from dayflow.store import Store

if TYPE_CHECKING:
    from dayflow import config

__all__ = ["Deps", "app", "main"]

app = typer.Typer(
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


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    """Dayflow: a daily-brief agent whose runs outlive their process."""


@app.command()
def brief(
    ctx: typer.Context,
    brief_date: Annotated[
        str | None, typer.Option("--date", metavar="YYYY-MM-DD", help="Day of the brief.")
    ] = None,
    tz: Annotated[str | None, typer.Option(help="IANA timezone [env DAYFLOW_TZ; UTC].")] = None,
    model: Annotated[
        str | None,
        typer.Option(
            help="'offline' or a Claude model [env DAYFLOW_MODEL; offline without a "
            "key, else claude-haiku-5-5]."
        ),
    ] = None,
    inbox: Annotated[Path | None, typer.Option(help="Inbox JSON [env DAYFLOW_INBOX].")] = None,
    calendar: Annotated[
        Path | None, typer.Option(help="Calendar JSON [env DAYFLOW_CALENDAR].")
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
    task_cap: Annotated[int, typer.Option(min=0, help="Most tasks one run may create.")] = 20,
    max_tokens: Annotated[int, typer.Option(min=1, help="Output tokens per call.")] = 4096,
    compact_at: Annotated[
        int,
        typer.Option(
            "--compact-at",
            min=0,
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
    verbose: VerboseOpt = False,
    as_json: JsonOpt = False,
    crash_after: CrashOpt = None,
) -> None:
    """Read the inbox, calendar and tasks, create the tasks found, and print the brief.

    When the day already has a finished brief, a plain `brief` says so (its run id) and writes
    an update covering only what arrived since (--since-last); --new writes a full one,
    --ensure-today prints the one there is."""
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
        settings = deps.settings(db=db, model=model, tz=tz, inbox=inbox, calendar=calendar)
        day = parse_date(brief_date) if brief_date else today(deps, settings)
        sinks = _sinks(deps, deliver or [])
        with (
            deps.store(settings) as store,
            briefday.day_lock(settings.db_path, day, lambda: _say_waiting(deps, store, day)),
        ):
            current = briefday.latest_for(store, day, deps.clock.now())
            if current is not None and current.status == RUNNING:
                driven = current.id
                current = briefday.wait_while_driven(lambda: store.get_run(driven))
            if ensure_today and current is not None:
                if current.status != DONE:
                    deps.err.print(
                        f"the brief for {day} is run {current.id}, {current.status}: resuming it",
                        markup=False,
                        soft_wrap=True,
                    )
                _resume(deps, store, current, settings, verbose, as_json, crash_after, None, None)
                return
            update_of = None
            if current is not None and current.status == DONE and not resume_latest:
                update_of = _second_brief_notice(deps, current, day, settings.tz, new)
            elif since_last:
                deps.err.print(f"no finished brief for {day} yet: writing a full one", markup=False)
            unfinished = store.latest_unfinished(day.isoformat())
            if resume_latest and unfinished is not None:
                _resume(
                    deps,
                    store,
                    unfinished,
                    settings,
                    verbose,
                    as_json,
                    crash_after,
                    max_steps,
                    budget,
                )
                return
            if unfinished is not None:
                deps.err.print(
                    f"note: run {unfinished.id} for {day} is {unfinished.status}; "
                    f"`dayflow resume {unfinished.id}` continues it (or brief --resume-latest)",
                    markup=False,
                    soft_wrap=True,
                )
            client = deps.model_factory(settings.model, settings)
            if settings.model_was_defaulted_offline:
                deps.err.print(
                    "No ANTHROPIC_API_KEY set: using the built-in offline model "
                    "(token counts are estimates).",
                    markup=False,
                )
            loop = make_loop(deps, store, client, verbose, crash_after, settings)
            from dayflow.agent import BriefOptions, start_run

            options = BriefOptions(
                brief_date=day,
                tz=settings.tz,
                model=settings.model,
                max_steps=max_steps or DEFAULT_MAX_STEPS,
                budget=budget,
                task_cap=task_cap,
                max_tokens=max_tokens,
                compact_at=compact_at,
                sample=sample,
                inbox=settings.inbox,
                calendar=settings.calendar,
                since=None if update_of is None else update_of.created_at,
                update_of=None if update_of is None else update_of.id,
                deliver=tuple(sinks),
            )
            with closing(client):
                result = start_run(loop, options)
            # With sinks, stdout is one of them; a brief not delivered is printed anyway.
            printed = not sinks or "stdout" in sinks or as_json or result.run.status != DONE
            shown = result.text if printed else None
            print_outcome(deps, result.run, shown, as_json, settings.prices)


def _sinks(deps: Deps, flags: list[str]) -> list[str]:
    """The config file's sinks, then the --deliver ones, each once; checked before a run."""
    from dayflow import delivery

    env = deps.env if deps.env is not None else os.environ
    configured, how = delivery.load(env, deps.clock)
    sinks: list[str] = []
    for sink in [*configured, *(delivery.parse_sink(f) for f in flags)]:
        if sink not in sinks:
            sinks.append(sink)
    delivery.check(sinks, how)
    return sinks


def _say_waiting(deps: Deps, store: Store, day: date) -> None:
    current = briefday.latest_for(store, day, deps.clock.now())
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
    store: Store,
    run: Run,
    settings: config.Settings,
    verbose: bool,
    as_json: bool,
    crash_after: int | None,
    max_steps: int | None,
    budget: int | None,
    max_tokens: int | None = None,
) -> None:
    from dayflow.agent import resume_run

    if run.status == DONE:
        deps.err.print(
            f"run {run.id} is already done; showing its brief (no model call)", markup=False
        )
        print_outcome(deps, run, run.final_text, as_json, settings.prices)
        return
    client = deps.model_factory(run.model, settings)
    loop = make_loop(deps, store, client, verbose, crash_after, settings)
    with closing(client):
        result = resume_run(loop, run, max_steps=max_steps, budget=budget, max_tokens=max_tokens)
    if result.finished_elsewhere:
        deps.err.print(
            f"run {run.id} was finished by another process meanwhile; it is already done",
            markup=False,
        )
    print_outcome(deps, result.run, result.text, as_json, settings.prices)


@app.command()
def resume(
    ctx: typer.Context,
    run_id: Annotated[
        str | None, typer.Argument(help="Run id or a unique prefix [default: newest unfinished].")
    ] = None,
    db: DbOpt = None,
    max_steps: MaxStepsOpt = None,
    budget: BudgetOpt = None,
    max_tokens: Annotated[
        int | None,
        typer.Option(min=1, help="Output tokens per call from now on (after a cut answer)."),
    ] = None,
    verbose: VerboseOpt = False,
    as_json: JsonOpt = False,
    crash_after: CrashOpt = None,
) -> None:
    """Continue an interrupted, failed or stopped run from its last committed step."""
    deps = get_deps(ctx)
    with handle_errors(deps):
        settings = deps.settings(db=db)
        with deps.store(settings) as store:
            if run_id:
                run = store.find_run(run_id)
            else:
                found = store.latest_unfinished()
                if found is None:
                    raise NothingToResume(
                        "nothing to resume: every run is done (see `dayflow runs`)"
                    )
                run = found
            _resume(
                deps,
                store,
                run,
                settings,
                verbose,
                as_json,
                crash_after,
                max_steps,
                budget,
                max_tokens,
            )


@app.command()
def runs(
    ctx: typer.Context,
    db: DbOpt = None,
    status: Annotated[
        str | None, typer.Option(help=f"Only runs with this status ({', '.join(RUN_STATUSES)}).")
    ] = None,
    since: Annotated[
        str | None, typer.Option(metavar="YYYY-MM-DD", help="Only runs started on or after.")
    ] = None,
    limit: Annotated[int, typer.Option(min=1, help="How many runs, newest first.")] = 20,
    as_json: JsonOpt = False,
) -> None:
    """List runs, newest first."""
    deps = get_deps(ctx)
    with handle_errors(deps):
        if status is not None and status not in RUN_STATUSES:
            raise UsageError(f"--status must be one of {', '.join(RUN_STATUSES)}")
        since_bound = parse_date(since).isoformat() if since else None
        settings = deps.settings(db=db)
        with deps.store(settings) as store:
            found = store.list_runs(status=status, since=since_bound, limit=limit)
            if as_json:
                deps.out.print_json(
                    json.dumps([render.run_json(r, settings.prices) for r in found])
                )
                return
            if not found:
                deps.err.print("no runs yet: `dayflow brief` starts one", markup=False)
                return
            deps.out.print(render.runs_table(found, settings.prices))
            day = today(deps, settings).isoformat()
            for r in found:
                if r.resumable and r.brief_date == day and not r.pruned_at and not r.redacted_at:
                    deps.err.print(
                        f"run {r.id} is {r.status}: `dayflow resume {r.id}` continues it",
                        markup=False,
                    )
                    break
            if any(r.estimated for r in found):
                deps.err.print("* token counts of the offline model are estimates", markup=False)


def tasks(
    ctx: typer.Context,
    db: DbOpt = None,
    show_all: Annotated[bool, typer.Option("--all", help="Include done tasks.")] = False,
    done: Annotated[
        str | None, typer.Option("--done", metavar="TASK_ID", help="Mark a task done.")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """List the tasks the agent created (open ones unless --all), or mark one done;
    `tasks export` and `tasks sync` keep them in your notes."""
    if ctx.invoked_subcommand:
        return
    deps = get_deps(ctx)
    with handle_errors(deps):
        settings = deps.settings(db=db)
        with deps.store(settings) as store:
            if done:
                task = store.mark_task_done(store.find_task(done).id)
                deps.err.print(f"done: {task.id} {task.title}", markup=False)
                return
            found = store.list_tasks(include_done=show_all)
            if as_json:
                deps.out.print_json(
                    json.dumps([t.to_json() | {"done_at": t.done_at} for t in found])
                )
                return
            if not found:
                deps.err.print("no open tasks" if not show_all else "no tasks", markup=False)
                return
            deps.out.print(render.tasks_table(found))


@app.command()
def show(
    ctx: typer.Context,
    run_id: Annotated[str, typer.Argument(help="Run id or a unique prefix.")],
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Show one run: its header, steps, event log and brief."""
    deps = get_deps(ctx)
    with handle_errors(deps):
        settings = deps.settings(db=db)
        with deps.store(settings) as store:
            run = store.find_run(run_id)
            steps, effects, events = (
                store.steps(run.id),
                store.effects(run.id),
                store.events(run.id),
            )
            if as_json:
                deps.out.print_json(
                    json.dumps(
                        render.show_json(
                            run,
                            steps,
                            effects,
                            events,
                            settings.prices,
                            compactions=store.compactions(run.id),
                        )
                    )
                )
            else:
                deps.out.print(render.show(run, steps, effects, events, settings.prices))


def main() -> None:
    """Console-script entry point: no tracebacks for users unless DAYFLOW_DEBUG is set."""
    try:
        app()
    except Exception as exc:  # a bug: say so in one line, keep the detail for DAYFLOW_DEBUG
        if os.environ.get("DAYFLOW_DEBUG"):
            raise
        print(
            f"dayflow: internal error: {type(exc).__name__}: {exc} "
            "(set DAYFLOW_DEBUG=1 for the traceback)",
            file=sys.stderr,
        )
        sys.exit(1)


# Command modules: one import above and one line here each.
app.add_typer(cli_history.commands)
app.add_typer(cli_tasks.group(tasks))  # `tasks` lists; its subcommands export and sync
app.add_typer(cli_schedule.commands)
