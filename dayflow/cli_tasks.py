"""`dayflow tasks export` and `dayflow tasks sync`: the task list in the files people keep;
`tasks add --from promise:KEY`: a promise of the user's made a task; `tasks done` and
`tasks reject`: the user's verdict on one task (a rejection is kept as a rule,
`dayflow.rules`).

Options, wiring and output only; the formats are in `dayflow.taskfiles`. `dayflow tasks`
itself (list, `--done`) is the group's own callback, `dayflow.cli_listings.tasks`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from dayflow.cli_base import ConfigOpt, DbOpt, get_deps, handle_errors, not_empty
from dayflow.cli_listings import tasks as list_tasks
from dayflow.errors import FileProblem, RunNotFound, UsageError
from dayflow.models import Task

if TYPE_CHECKING:  # imported by the commands themselves: `dayflow tasks` stays fast
    from rich.console import Console

    from dayflow import taskfiles

tasks_app = typer.Typer(
    name="tasks", no_args_is_help=False, add_completion=False, rich_markup_mode=None
)
# A bare `dayflow tasks` lists them (dayflow.cli_listings: fast); export and sync are its own.
tasks_app.callback(invoke_without_command=True)(list_tasks)
commands = tasks_app


TaskArg = Annotated[
    str, typer.Argument(metavar="ID", callback=not_empty, help="A task id or a unique prefix.")
]


@tasks_app.command("done")
def done(ctx: typer.Context, task_id: TaskArg, db: DbOpt = None) -> None:
    """Mark a task done (as `dayflow tasks --done ID`)."""
    from dayflow.listing import plain

    deps = get_deps(ctx)
    with handle_errors(deps):
        with deps.store(deps.settings(db=db)) as store:
            task = store.tasks.find(task_id)
            if task.status == "done":
                deps.notice(f"already done: {task.id} {plain(task.title)}")
                return
            task = store.tasks.mark_done(task.id)
        deps.notice(f"done: {task.id} {plain(task.title)}")


@tasks_app.command("add")
def add(
    ctx: typer.Context,
    source: Annotated[
        str,
        typer.Option(
            "--from",
            metavar="promise:KEY",
            callback=not_empty,
            help="One of your promises (the key the brief shows beside it), made a task.",
        ),
    ],
    db: DbOpt = None,
) -> None:
    """Make one of your promises a task: its words, whom to and its due date kept."""
    from dayflow.listing import plain
    from dayflow.tools.promises import task_from_promise

    deps = get_deps(ctx)
    with handle_errors(deps):
        with deps.store(deps.settings(db=db)) as store:
            filed = task_from_promise(store, source)
        if filed.task is None:
            kept = "not added, a later brief found it kept or called off"
            deps.notice(f"{kept}: {plain(filed.title)}")
            return
        how = "added" if filed.created else "already on your list"
        deps.notice(f"{how}: {filed.task.id} {plain(filed.task.title)}")


@tasks_app.command("reject")
def reject(
    ctx: typer.Context,
    task_id: TaskArg,
    why: Annotated[
        str | None,
        typer.Option("--why", metavar="TEXT", callback=not_empty, help="Why, for your rules."),
    ] = None,
    asking: Annotated[
        str | None,
        typer.Option(
            "--asking",
            metavar="WORDS",
            callback=not_empty,
            help="The words of the request the rule refuses [default: the task's verb]; "
            "words that name no word of a request ('', '*', only common words such as "
            "'the' or 'by', your own name) are refused: `dayflow mute` silences a sender "
            "altogether.",
        ),
    ] = None,
    config: ConfigOpt = None,
    db: DbOpt = None,
) -> None:
    """Not a task, and not mine: the task goes, and a rule keeps such a task from its sender
    or list from coming back (`dayflow rules` lists it; mail from elsewhere is not touched)."""
    from dayflow import rules
    from dayflow.cli_rules import where
    from dayflow.listing import plain

    deps = get_deps(ctx)
    with handle_errors(deps):
        at = where(deps, config, f"tasks reject {task_id}", db)
        names: frozenset[str] = frozenset()
        if asking is not None:  # the user's own name is no word of a request: refused
            sources = deps.config.sources(config)
            names = rules.own_names(sources.me.addresses if sources is not None else ())
        with deps.store(deps.settings(db=db)) as store:
            rule, task = rules.reject(store, at, task_id, why or "", asking, names)
        deps.notice(f"rejected {task.id} {plain(task.title)}")
        deps.notice(f"rule {rule.id}: {plain(rule.says())} ({at.path})")


@tasks_app.command("export")
def export(
    ctx: typer.Context,
    fmt: Annotated[
        str,
        typer.Option(
            "--format",
            "-f",
            metavar="markdown|todo.txt|ics|json",
            help="markdown (an Obsidian Tasks checklist with due dates), todo.txt, ics "
            "(iCalendar VTODO) or json.",
        ),
    ] = "markdown",
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", metavar="FILE", help="Write here (replaced atomically)."),
    ] = None,
    show_all: Annotated[bool, typer.Option("--all", help="Include done tasks (ticked).")] = False,
    db: DbOpt = None,
) -> None:
    """Write the task list as Markdown, todo.txt, iCalendar or JSON (stdout unless -o).

    Each task carries its id, derived from its idempotency key, so the same task has the same
    id in every export; exporting twice with nothing changed gives identical bytes."""
    from dayflow import files, taskfiles

    deps = get_deps(ctx)
    with handle_errors(deps):
        if fmt not in taskfiles.FORMATS:
            raise UsageError(f"--format must be one of {', '.join(taskfiles.FORMATS)}")
        if output is not None and not str(output).strip():
            raise UsageError("--output needs a file name")
        settings = deps.settings(db=db)
        with deps.store(settings) as store:
            found = store.tasks.list(include_done=show_all)
        from zoneinfo import ZoneInfo

        text = taskfiles.export(found, fmt, ZoneInfo(settings.tz), profile=store.profile)
        if output is None:
            deps.out.file.write(text)
            deps.out.file.flush()
            return
        files.write_atomic(output, text.encode("utf-8"))
        deps.err.print(
            f"wrote {len(found)} task(s) to {output} ({fmt})", markup=False, soft_wrap=True
        )


@tasks_app.command("sync")
def sync(
    ctx: typer.Context,
    file: Annotated[
        Path, typer.Argument(metavar="FILE", help="A Markdown or todo.txt file Dayflow exported.")
    ],
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Say what would be marked done; change nothing.")
    ] = False,
    db: DbOpt = None,
) -> None:
    """Mark done the tasks ticked in a Markdown or todo.txt file `tasks export` wrote.

    Only lines carrying a Dayflow task id are read; the rest of the file is yours and is never
    touched (sync does not write the file). Unticking a task Dayflow has done does not reopen
    it."""
    from dayflow import files, taskfiles
    from dayflow.store.values import command_hint

    deps = get_deps(ctx)
    with handle_errors(deps):
        text = files.read_text(file, "task file")
        writes = command_hint(deps.profile, "tasks", "export", "--format", "markdown|todo.txt")
        reading = taskfiles.read_back(text)
        if reading.fmt is None:
            raise FileProblem(
                f"{file} is not a task list Dayflow exported (no line carries a Dayflow task "
                f"id; `{writes}` writes one); "
                "nothing changed"
            )
        settings = deps.settings(db=db)
        with deps.store(settings) as store:
            known: dict[str, Task] = {}
            unknown: list[str] = []
            for tick in reading.ticks:
                if tick.task_id in known or tick.task_id in unknown:
                    continue
                try:
                    known[tick.task_id] = store.tasks.find(tick.task_id)
                except RunNotFound:
                    unknown.append(tick.task_id)
            if not known:
                raise FileProblem(
                    f"{file} names {len(unknown)} task(s), none of them in {settings.db_path} "
                    "(exported from another database?); nothing changed"
                )
            ticked = {t.task_id for t in reading.ticks if t.done and t.task_id in known}
            to_mark = [known[i] for i in known if i in ticked and known[i].status != "done"]
            stale = [t for i, t in known.items() if i not in ticked and t.status == "done"]
            for task in to_mark:
                if not dry_run:
                    store.tasks.mark_done(task.id)
                verb = "would mark done" if dry_run else "done"
                deps.err.print(f"{verb}: {task.id} {task.title}", markup=False, soft_wrap=True)
        _sync_summary(deps.err, file, reading, known, to_mark, stale, unknown, dry_run)


def _sync_summary(
    err: Console,
    file: Path,
    reading: taskfiles.Reading,
    known: dict[str, Task],
    marked: list[Task],
    stale: list[Task],
    unknown: list[str],
    dry_run: bool,
) -> None:
    verb = "would mark" if dry_run else "marked"
    still_open = sum(1 for t in known.values() if t.status != "done") - len(marked)
    err.print(
        f"sync {file} ({reading.fmt}): {verb} {len(marked)} done, {still_open} still open",
        markup=False,
        soft_wrap=True,
    )
    if stale:
        err.print(
            f"{len(stale)} task(s) done in Dayflow are unticked in the file (a sync never "
            "reopens a task); export again to refresh the file",
            markup=False,
            soft_wrap=True,
        )
    if unknown:
        err.print(
            f"{len(unknown)} task id(s) in the file are not in this database: left alone",
            markup=False,
            soft_wrap=True,
        )
    if reading.ambiguous:
        lines = ", ".join(str(n) for n in reading.ambiguous[:10])
        err.print(
            f"ignored line(s) {lines}: more than one Dayflow task id on a line",
            markup=False,
            soft_wrap=True,
        )
