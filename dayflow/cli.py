"""The Typer app: parse options, build the pieces, call the core, render. Nothing else.

Tests pass their own `Deps` through `CliRunner.invoke(app, args, obj=deps)`.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any
from zoneinfo import ZoneInfo

import typer
from rich.console import Console

from dayflow import config, render
from dayflow.clock import Clock, SystemClock
from dayflow.compaction import DEFAULT_COMPACT_AT
from dayflow.db import DatabaseError
from dayflow.errors import (
    ConfigError,
    DayflowError,
    NothingToResume,
    SimulatedCrash,
    UsageError,
)
from dayflow.models import DONE, FAILED, RUN_STATUSES, Run
from dayflow.pricing import Prices
from dayflow.providers import OFFLINE_MODEL, ModelClient
from dayflow.store import Store

EXIT_CODES = """\
Exit codes: 0 ok · 1 error · 2 bad usage · 3 no such run/task · 4 database or input file
problem · 5 run busy in another process · 6 the model failed: API error after retries or a
refusal (resumable) · 7 run stopped by a guard or a cut-short answer (resumable) · 70 simulated
crash · 130 interrupted."""

if TYPE_CHECKING:  # the agent is imported only by the commands that run one (it is slow)
    from dayflow.agent import Loop, Note, SourceFactory

app = typer.Typer(
    help="Dayflow: a daily-brief agent whose runs outlive their process.\n\n" + EXIT_CODES,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

ModelFactory = Callable[[str, config.Settings], ModelClient]


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


def default_model_factory(model: str, settings: config.Settings) -> ModelClient:
    """The offline model, or Claude through the SDK (imported only here, only when needed)."""
    if model == OFFLINE_MODEL:
        from dayflow.providers.offline import OfflineModel

        return OfflineModel()
    if not settings.api_key:
        raise ConfigError(
            f"model {model!r} needs ANTHROPIC_API_KEY (set it in the environment or .env), "
            "or use --model offline"
        )
    from dayflow.providers.anthropic import make_client

    return make_client(settings.api_key, settings.base_url)


@dataclass
class Deps:
    """What commands are built from; tests replace any part."""

    env: Mapping[str, str] | None = None
    clock: Clock = field(default_factory=SystemClock)
    model_factory: ModelFactory = default_model_factory
    sources: SourceFactory | None = None  # None: the JSON files named in a run's settings
    out: Console = field(default_factory=lambda: Console(highlight=False))
    err: Console = field(default_factory=lambda: Console(stderr=True, highlight=False))

    def settings(self, **flags: Any) -> config.Settings:
        env = self.env if self.env is not None else config.environment()
        return config.load(env, **flags)

    def store(self, settings: config.Settings) -> Store:
        return Store(settings.db_path, clock=self.clock, synchronous=settings.durability)


def _deps(ctx: typer.Context) -> Deps:
    if not isinstance(ctx.obj, Deps):
        ctx.obj = Deps()
    return ctx.obj


@contextlib.contextmanager
def _errors(deps: Deps) -> Iterator[None]:
    """Turn every expected failure into one line on stderr and an exit code."""
    try:
        yield
    except SimulatedCrash as exc:
        deps.err.print(str(exc), markup=False)
        raise typer.Exit(exc.exit_code) from None
    except DayflowError as exc:
        deps.err.print(f"error: {exc}", markup=False, soft_wrap=True)
        raise typer.Exit(exc.exit_code) from None
    except DatabaseError as exc:
        deps.err.print(f"error: database problem: {exc}", markup=False)
        raise typer.Exit(4) from None
    except KeyboardInterrupt:
        deps.err.print("interrupted; `dayflow resume` continues the run", markup=False)
        raise typer.Exit(130) from None


DbOpt = Annotated[
    Path | None,
    typer.Option("--db", help="SQLite file [env DAYFLOW_DB; default: the user data directory]."),
]
VerboseOpt = Annotated[bool, typer.Option("-v", "--verbose", help="Print each step and tool call.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]
CrashOpt = Annotated[
    int | None,
    typer.Option(
        "--crash-after",
        metavar="N",
        min=1,
        help="Test hook: exit as if crashed right after step N is committed.",
    ),
]
DEFAULT_MAX_STEPS = 40
MaxStepsOpt = Annotated[
    int | None,
    typer.Option("--max-steps", min=1, help=f"Most model calls [new runs: {DEFAULT_MAX_STEPS}]."),
]
BudgetOpt = Annotated[
    int | None,
    typer.Option(
        "--budget",
        min=1,
        metavar="TOKENS",
        help="Most tokens (input + output) over the whole run, resumes included.",
    ),
]


class _Trace:
    """Shows the loop's notes on stderr: a spinner while the model works, and with -v the
    step trace."""

    def __init__(self, console: Console, verbose: bool) -> None:
        self.console, self.verbose = console, verbose
        self.status: Any = None

    def __call__(self, note: Note) -> None:
        d = note.data
        if note.kind == "calling" and self.console.is_terminal:
            self.status = self.console.status(f"step {d['step']}: waiting for the model…")
            self.status.start()
        elif note.kind == "called" and self.status is not None:
            self.status.stop()
            self.status = None
        elif note.kind == "resumed":
            run: Run = d["run"]
            self.console.print(
                f"[resume {run.id}] replaying {run.steps} committed step(s), "
                f"{run.usage.total_input} in / {run.usage.output_tokens} out already spent",
                markup=False,
            )
        elif note.kind == "step" and self.verbose:
            extra = "  (committed before the crash; finishing it)" if d.get("recovered") else ""
            self.console.print(f"[step {d['step']}] stop={d['stop_reason']}{extra}", markup=False)
        elif note.kind == "tool" and self.verbose:
            line = render.tool_call_line(
                d["name"], d["input"], reused=d["reused"], error=d.get("error", False)
            )
            self.console.print(line, markup=False, soft_wrap=True)
        elif note.kind == "finished":
            run = d["run"]
            word = "resumed" if d["resumed"] else "run"
            est = " (estimated)" if run.estimated else ""
            self.console.print(
                f"[{word} {run.id} · finished at step {run.steps} · {run.usage.total_input} in"
                f" / {run.usage.output_tokens} out total{est}]",
                markup=False,
            )


def _print_outcome(
    deps: Deps, run: Run, text: str | None, as_json: bool, prices: Prices | None = None
) -> None:
    if as_json:
        deps.out.print_json(json.dumps({"run": render.run_json(run, prices), "brief": text}))
    elif text is not None:
        deps.out.print(render.brief(text))
    if run.status != DONE:
        deps.err.print(f"run {run.id} {run.status}: {run.reason}", markup=False, soft_wrap=True)
        raise typer.Exit(6 if run.status == FAILED else 7)


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
    verbose: VerboseOpt = False,
    as_json: JsonOpt = False,
    crash_after: CrashOpt = None,
) -> None:
    """Read the inbox, calendar and tasks, create the tasks found, and print the brief."""
    deps = _deps(ctx)
    with _errors(deps):
        settings = deps.settings(db=db, model=model, tz=tz, inbox=inbox, calendar=calendar)
        day = _parse_date(brief_date) if brief_date else _today(deps, settings)
        with deps.store(settings) as store:
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
            loop = _loop(deps, store, client, verbose, crash_after, settings)
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
            )
            with _closing(client):
                result = start_run(loop, options)
            _print_outcome(deps, result.run, result.text, as_json, settings.prices)


def _loop(
    deps: Deps,
    store: Store,
    client: ModelClient,
    verbose: bool,
    crash_after: int | None,
    settings: config.Settings,
) -> Loop:
    from dayflow.agent import Hooks, Loop, json_sources

    return Loop(
        store=store,
        client=client,
        report=_Trace(deps.err, verbose),
        sources=deps.sources or json_sources,
        hooks=Hooks(crash_after=crash_after, kill_at=settings.kill_at),
    )


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
        _print_outcome(deps, run, run.final_text, as_json, settings.prices)
        return
    client = deps.model_factory(run.model, settings)
    loop = _loop(deps, store, client, verbose, crash_after, settings)
    with _closing(client):
        result = resume_run(loop, run, max_steps=max_steps, budget=budget, max_tokens=max_tokens)
    if result.finished_elsewhere:
        deps.err.print(
            f"run {run.id} was finished by another process meanwhile; it is already done",
            markup=False,
        )
    _print_outcome(deps, result.run, result.text, as_json, settings.prices)


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
    deps = _deps(ctx)
    with _errors(deps):
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
    deps = _deps(ctx)
    with _errors(deps):
        if status is not None and status not in RUN_STATUSES:
            raise UsageError(f"--status must be one of {', '.join(RUN_STATUSES)}")
        since_bound = _parse_date(since).isoformat() if since else None
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
            today = _today(deps, settings).isoformat()
            for r in found:
                if r.resumable and r.brief_date == today and not r.pruned_at and not r.redacted_at:
                    deps.err.print(
                        f"run {r.id} is {r.status}: `dayflow resume {r.id}` continues it",
                        markup=False,
                    )
                    break
            if any(r.estimated for r in found):
                deps.err.print("* token counts of the offline model are estimates", markup=False)


@app.command()
def tasks(
    ctx: typer.Context,
    db: DbOpt = None,
    show_all: Annotated[bool, typer.Option("--all", help="Include done tasks.")] = False,
    done: Annotated[
        str | None, typer.Option("--done", metavar="TASK_ID", help="Mark a task done.")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """List the tasks the agent created (open ones unless --all), or mark one done."""
    deps = _deps(ctx)
    with _errors(deps):
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
    deps = _deps(ctx)
    with _errors(deps):
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


@contextlib.contextmanager
def _closing(client: ModelClient) -> Iterator[None]:
    """Close the model client's connections afterwards, where it has any."""
    try:
        yield
    finally:
        close = getattr(client, "close", None)
        if callable(close):
            close()


def _today(deps: Deps, settings: config.Settings) -> date:
    """Today in the user's timezone (not UTC's: a brief at 00:30 in Tokyo is for that day)."""
    return deps.clock.now().astimezone(ZoneInfo(settings.tz)).date()


def _parse_date(value: str) -> date:
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise UsageError(f"{value!r} is not a date (use YYYY-MM-DD)") from None


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


from dayflow import cli_history  # noqa: E402,F401  (registers trace/fork/gc/doctor)
