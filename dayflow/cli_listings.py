"""`dayflow runs`, `dayflow show` and the bare `dayflow tasks`: the listings people type most
(added by `cli.py`; `cli_tasks.py` makes `tasks` its group's own command).

Plain text from `dayflow.listing` (Rich only for `show`), so they start fast (issue 13).
"""

# No `from __future__ import annotations` here: Typer would compile and eval every option's
# annotation string at start-up (issue 13).

from typing import Annotated

import typer

from dayflow.cli_base import (
    MAX_COUNT,
    DbOpt,
    JsonOpt,
    RunArg,
    day_option,
    get_deps,
    handle_errors,
    not_empty,
    parse_date,
    print_json,
    print_table,
    today,
    zone,
)
from dayflow.errors import UsageError
from dayflow.models import RUN_STATUSES

commands = typer.Typer()


@commands.command()
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
    since: Annotated[str | None, day_option(help="Only runs started on or after.")] = None,
    limit: Annotated[
        int, typer.Option(min=1, max=MAX_COUNT, help="How many runs, newest first.")
    ] = 20,
    as_json: JsonOpt = False,
) -> None:
    """List runs, newest first."""
    from functools import partial

    from dayflow import listing
    from dayflow.store.values import command_hint

    deps = get_deps(ctx)
    with handle_errors(deps):
        if status is not None and status not in RUN_STATUSES:
            raise UsageError(f"--status must be one of {', '.join(RUN_STATUSES)}")
        since_bound = parse_date(since, "--since").isoformat() if since is not None else None
        settings = deps.settings(db=db)
        with deps.store(settings) as store:
            found = store.runs.list(status=status, since=since_bound, limit=limit)
            hint = partial(command_hint, store.profile)
            if as_json:
                print_json(deps, [listing.run_json(r, settings.prices) for r in found])
                return
            if not found:
                filtered = status is not None or since is not None
                if filtered and store.runs.list(limit=1):
                    deps.notice(f"no runs match (`{hint('runs')}` without filters lists them all)")
                else:
                    deps.notice(f"no runs yet: `{hint('brief')}` starts one")
                return
            print_table(deps, listing.runs_table, found, settings.prices, zone(settings))
            day = today(deps, settings).isoformat()
            for r in found:
                if r.resumable and r.brief_date == day and not r.pruned_at and not r.redacted_at:
                    deps.notice(f"run {r.id} is {r.status}: `{hint('resume', r.id)}` continues it")
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


@commands.command()
def show(
    ctx: typer.Context,
    run_id: RunArg,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Show one run: its header, steps, event log and brief."""
    from dayflow import render, turns

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
            turns.refuse_unreadable(run, steps, store.profile)
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
