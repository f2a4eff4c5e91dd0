"""The history commands: `trace`, `fork`, `gc`, `doctor` (added to the app by `cli.py`).

Options, wiring and output only; the work is in `dayflow.history` and `dayflow.timeline`.
"""

# No `from __future__ import annotations` here: Typer would compile and eval every option's
# annotation string at start-up (issue 13). Names imported only for type checking are quoted.

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from dayflow.cli_base import (
    MAX_COUNT,
    AllowRemoteOpt,
    BriefJsonOpt,
    BudgetOpt,
    CrashOpt,
    DbOpt,
    FormatOpt,
    JsonOpt,
    MaxStepsOpt,
    ProviderOpt,
    RunArg,
    TimeoutOpt,
    VerboseOpt,
    brief_format,
    day_option,
    get_deps,
    handle_errors,
    not_empty,
    parse_date,
    print_json,
    print_outcome,
    print_table,
    zone,
)
from dayflow.errors import StoreError, UsageError

if TYPE_CHECKING:
    from dayflow import config
    from dayflow.app import Runtime
    from dayflow.app.upkeep import Probe
    from dayflow.history import GcReport

commands = typer.Typer()


@commands.command()
def trace(
    ctx: typer.Context,
    run_id: RunArg,
    fmt: Annotated[
        str | None,
        typer.Option(
            "--format",
            metavar="jsonl|csv",
            callback=not_empty,
            help="Export format [default: jsonl; nothing is exported when only --png is given].",
        ),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", metavar="FILE", help="Write the export here, not stdout."),
    ] = None,
    png: Annotated[
        Path | None,
        typer.Option(
            "--png",
            metavar="FILE",
            help="Draw the run's timeline (one lane per process) as a PNG; needs matplotlib: "
            "pip install 'dayflow[trace]' (from a clone: pip install -e '.[trace]').",
        ),
    ] = None,
    db: DbOpt = None,
) -> None:
    """Export a run's event log (JSON lines or CSV), or draw its timeline as a PNG."""
    from dayflow import history  # imported here: it pulls in the agent
    from dayflow.app import upkeep

    deps = get_deps(ctx)
    with handle_errors(deps):
        if fmt is not None and fmt not in history.TRACE_FORMATS:
            raise UsageError(f"--format must be one of {', '.join(history.TRACE_FORMATS)}")
        found = upkeep.trace(deps, upkeep.TraceRequest(run_id, db=db))
        run, events = found.run, found.events
        if png is not None:
            _writing(png, lambda: _draw(run.id, events, png))
            deps.err.print(f"wrote the timeline of run {run.id} to {png}", markup=False)
        if fmt is None and output is None and png is not None:
            return
        text = history.export_events(events, fmt or "jsonl")
        if output is None:
            deps.out.out(text, end="", highlight=False)
            return
        from dayflow import files

        _writing(output, lambda: files.write_atomic(output, text.encode("utf-8")))
        deps.err.print(f"wrote {len(events)} events of run {run.id} to {output}", markup=False)


def _writing(path: Path, write: Callable[[], object]) -> None:
    """`write()`, its failure one line (exit 4, as every output that cannot be written)."""
    from dayflow.errors import FileProblem

    try:
        write()
    except OSError as exc:
        raise FileProblem(f"cannot write {path}: {exc.strerror or exc}") from None


@commands.command()
def fork(
    ctx: typer.Context,
    run_id: RunArg,
    from_step: Annotated[
        int,
        typer.Option(
            "--from-step",
            min=0,
            max=MAX_COUNT,
            metavar="N",
            help="Keep the first N committed steps (no model call is spent on them).",
        ),
    ],
    model: Annotated[
        str | None,
        typer.Option(
            callback=not_empty, help="Model for the new steps [default: the run's model]."
        ),
    ] = None,
    db: DbOpt = None,
    max_steps: MaxStepsOpt = None,
    budget: BudgetOpt = None,
    verbose: VerboseOpt = False,
    timeout: TimeoutOpt = None,
    allow_remote: AllowRemoteOpt = False,
    as_json: BriefJsonOpt = False,
    fmt: FormatOpt = None,
    crash_after: CrashOpt = None,
) -> None:
    """Start a new run from the first N steps of RUN and continue it (maybe with another model).

    The tasks those steps created are not created again; the new run records its parent and
    the step it forked at (see `dayflow runs` and `dayflow show`). It keeps the parent's
    provider: a fork of a local run is served by the same local server."""
    from dayflow.app import cases
    from dayflow.models import Limits

    deps = get_deps(ctx)
    with handle_errors(deps):
        out_format = brief_format(deps, fmt, as_json)
        settings = deps.settings(db=db, timeout=timeout, allow_remote=allow_remote)
        limits = Limits(max_steps, budget)
        request = cases.ForkRequest(run_id, from_step, model, limits, timeout, crash_after, verbose)
        outcome = cases.fork(deps, settings, request)
        print_outcome(
            deps,
            outcome.run,
            outcome.text,
            out_format,
            settings.prices,
            outcome.data,
            outcome.links,
            outcome.page,
        )


@commands.command()
def gc(
    ctx: typer.Context,
    before: Annotated[str | None, day_option(help="Only runs started before this day.")] = None,
    keep: Annotated[
        int | None,
        typer.Option(
            min=0, max=MAX_COUNT, metavar="N", help="Always keep the N newest runs intact."
        ),
    ] = None,
    redact: Annotated[
        bool,
        typer.Option(
            "--redact",
            help="Keep the steps but blank what the read tools returned (inbox, messages, "
            "calendar). A redacted run can be shown, not resumed or forked.",
        ),
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Say what would go; change nothing.")
    ] = False,
    include_interrupted: Annotated[
        bool,
        typer.Option(
            "--include-interrupted",
            help="Also prune interrupted runs (never one a live process drives).",
        ),
    ] = False,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Prune old finished runs to tombstones and reclaim the space (VACUUM).

    A tombstone keeps the run's id, dates, status, token totals, step count and brief; the step
    payloads and event details go. Tasks and their idempotency keys are never deleted, so no
    later run re-creates a task a pruned run created. A pruned run cannot be resumed or forked.
    """
    from dayflow.app import upkeep

    deps = get_deps(ctx)
    with handle_errors(deps):
        day = parse_date(before, "--before") if before is not None else None
        request = upkeep.GcRequest(
            before=day,
            keep=keep,
            redact=redact,
            dry_run=dry_run,
            include_interrupted=include_interrupted,
            db=db,
        )
        done = upkeep.gc(deps, request)
        _print_gc(deps, done.report, done.settings, as_json)


def _print_gc(
    deps: "Runtime", report: "GcReport", settings: "config.Settings", as_json: bool
) -> None:
    """What gc did (or would do): JSON, or the table of runs and one line on stderr."""
    from dayflow import listing

    if as_json:
        doc = {
            "action": report.action,
            "dry_run": report.dry_run,
            "runs": [listing.run_json(r, settings.prices) for r in report.runs],
            "bytes_before": report.bytes_before,
            "bytes_after": report.bytes_after,
        }
        print_json(deps, doc)
        return
    verb = {"prune": "pruned", "redact": "redacted"}[report.action]
    if not report.runs:
        deps.err.print(f"nothing to {report.action}", markup=False)
        return
    print_table(deps, listing.gc_table, report.runs, zone(settings))
    if report.dry_run:
        deps.err.print(
            f"dry run: would {report.action} {len(report.runs)} run(s); nothing changed",
            markup=False,
        )
    else:
        deps.err.print(
            f"{verb} {len(report.runs)} run(s); database {_size(report.bytes_before)} -> "
            f"{_size(report.bytes_after)}",
            markup=False,
        )


def _size(n: int) -> str:
    return f"{n / 1024:.1f} KiB" if n < 1024 * 1024 else f"{n / 1024 / 1024:.1f} MiB"


@commands.command()
def doctor(
    ctx: typer.Context,
    fix: Annotated[
        bool,
        typer.Option(
            "--fix",
            help="Repair what is safe: release leases of dead processes, take away other "
            "users' access to the files (chmod go-rwx).",
        ),
    ] = False,
    recompute_totals: Annotated[
        str | None,
        typer.Option(
            "--recompute-totals",
            metavar="RUN",
            callback=not_empty,
            help="Set RUN's token totals to the sum of its steps (the old ones are logged).",
        ),
    ] = None,
    db: DbOpt = None,
    model: Annotated[
        bool,
        typer.Option(
            "--model",
            help="Probe the configured model instead (DAYFLOW_MODEL, --provider, the config's "
            "[model]): one short round trip with a tiny tool; exit 6 when it cannot call tools.",
        ),
    ] = False,
    provider: ProviderOpt = None,
    allow_remote: AllowRemoteOpt = False,
    timeout: TimeoutOpt = None,
    as_json: JsonOpt = False,
    name: Annotated[
        str | None,
        typer.Argument(
            metavar="[NAME]",
            help="With --model: the model to probe (`doctor --model qwen3:8b`) instead of "
            "the configured one.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Check the database: integrity, schema, run totals, tool results, leases, permissions;
    or, with --model [NAME], whether the configured model (or NAME) can write a brief.

    Each finding comes with the command that repairs it. Exit 0 when healthy, 4 when problems
    remain (with --model: 6 when the model cannot be reached or cannot call tools)."""
    from dayflow import render
    from dayflow.app import upkeep

    deps = get_deps(ctx)
    with handle_errors(deps):
        if name is not None and not model:
            from dayflow.errors import UsageError

            raise UsageError(
                f"{name[:60]!r}: a model name goes with --model (`dayflow doctor --model "
                "NAME`); plain `doctor` checks the database"
            )
        if model:
            request = upkeep.ProbeRequest(
                model=name, provider=provider, allow_remote=allow_remote, timeout=timeout, db=db
            )
            _print_probe(deps, upkeep.probe_model(deps, request), as_json)
            return
        report = upkeep.doctor(
            deps, upkeep.DoctorRequest(fix=fix, recompute_totals=recompute_totals, db=db)
        )
        if as_json:
            print_json(deps, report.to_json())
        else:
            deps.out.print(render.doctor_report(report))
        problems = report.problems
        if problems:
            fixable = sum(f.fixable for f in problems)
            hint = f"; `dayflow doctor --fix` repairs {fixable} of them" if fixable else ""
            raise StoreError(f"{len(problems)} problem(s) remain{hint}")


def _print_probe(deps: "Runtime", probed: "Probe | None", as_json: bool) -> None:
    """`doctor --model`'s report (nothing when there was nothing to probe); exit 6 when the
    model cannot call tools."""
    if probed is None:
        return
    from dayflow import render
    from dayflow.errors import ModelError

    report = probed.report
    if as_json:
        print_json(deps, {"model": probed.model, "provider": probed.provider} | report.to_json())
    else:
        deps.out.file.write(render.probe_report(probed.model, report))
        deps.out.file.flush()
    if not report.tools_work:
        raise ModelError(f"{probed.model} cannot write a brief: {report.advice}")


def _draw(run_id: str, events: list, png: Path) -> None:  # type: ignore[type-arg]
    from dayflow.timeline import draw_timeline

    draw_timeline(run_id, events, png)
