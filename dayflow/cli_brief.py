"""`dayflow brief` and `dayflow resume`: parse, call `dayflow.briefing`, render (added by
`cli.py`).

What happens on a day (the lock, new / update / ensure-today / resume, inputs, delivery) is
`dayflow.briefing`'s, made with the runtime's parts by `dayflow.app.cases`; this module
fills a `BriefRequest` (or a `ResumeRequest`), calls the use case and prints the outcome.
"""

# No `from __future__ import annotations` here: Typer would compile and eval every option's
# annotation string when it builds the command (issue 13). Type-checking-only names are quoted.

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from dayflow.cli_base import (
    MAX_COUNT,
    MAX_TOKENS,
    AllowRemoteOpt,
    BriefJsonOpt,
    BudgetOpt,
    ConfigOpt,
    CrashOpt,
    DbOpt,
    FormatOpt,
    MaxStepsOpt,
    ProviderOpt,
    TimeoutOpt,
    VerboseOpt,
    brief_format,
    day_option,
    get_deps,
    handle_errors,
    not_empty,
    parse_date,
    print_outcome,
)
from dayflow.errors import UsageError
from dayflow.models import DEFAULT_COMPACT_AT, DEFAULT_MAX_TOKENS, DEFAULT_TASK_CAP, Limits

if TYPE_CHECKING:
    from dayflow.briefing import Mode

commands = typer.Typer()

# The options of `brief` that no other command takes.
BriefDateOpt = Annotated[str | None, day_option("--date", help="Day of the brief.")]
TzOpt = Annotated[
    str | None,
    typer.Option(callback=not_empty, help="IANA timezone [env DAYFLOW_TZ; UTC]."),
]
ModelOpt = Annotated[
    str | None,
    typer.Option(
        callback=not_empty,
        help="'offline', a Claude model, or a local server's model (--provider local: "
        "e.g. qwen3:8b) [env DAYFLOW_MODEL; offline without a key, else claude-haiku-5-5].",
    ),
]
InboxOpt = Annotated[
    Path | None,
    typer.Option(help="Inbox JSON ('-': standard input) [env DAYFLOW_INBOX]."),
]
CalendarOpt = Annotated[
    Path | None,
    typer.Option(
        help="Calendar JSON, or an iCalendar file (.ics: an export of Google, Outlook, Apple..."
        ") ('-': standard input) [env DAYFLOW_CALENDAR]."
    ),
]
SampleOpt = Annotated[
    str,
    typer.Option(
        help="Bundled inbox when --inbox is not given: 'standard' (19 messages) or "
        "'large' (69 long messages: a long run)."
    ),
]
TaskCapOpt = Annotated[
    int, typer.Option(min=0, max=MAX_COUNT, help="Most tasks one run may create.")
]
MaxTokensOpt = Annotated[int, typer.Option(min=1, max=MAX_TOKENS, help="Output tokens per call.")]
CompactAtOpt = Annotated[
    int,
    typer.Option(
        "--compact-at",
        min=0,
        max=MAX_TOKENS,
        metavar="TOKENS",
        help="Compact old tool exchanges when a call's input passes this (0: never).",
    ),
]
ResumeLatestOpt = Annotated[
    bool, typer.Option("--resume-latest", help="Continue today's unfinished run instead.")
]
EnsureTodayOpt = Annotated[
    bool,
    typer.Option(
        "--ensure-today",
        help="Make sure the day has its brief: start it, resume it if unfinished, or print "
        "it if done (no model call). Safe to run from a timer and by hand at once.",
    ),
]
SinceLastOpt = Annotated[
    bool,
    typer.Option(
        "--since-last",
        help="[default when the day's brief is done] Write an update covering only the "
        "messages that arrived since that brief.",
    ),
]
NewOpt = Annotated[
    bool, typer.Option("--new", help="Write a full new brief even if the day has one.")
]
SinceOpt = Annotated[
    str | None,
    typer.Option(
        "--since",
        metavar="DATE|SPAN",
        callback=not_empty,
        help="Read the config's inboxes from this day (YYYY-MM-DD, from its start) or this "
        "long before the brief (36h, 3d, 2w), instead of since the last brief (a first "
        "brief: 24 hours). Writes a full brief.",
    ),
]
DeliverOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--deliver",
        metavar="SINK",
        help="Also deliver the brief (repeatable; added to the config file's `deliver`): "
        "file:PATH ({date} becomes the day), smtp (the config's [smtp]), notify, stdout. "
        "With any sink, stdout gets the brief only if `stdout` is one.",
    ),
]
StrictSourcesOpt = Annotated[
    bool,
    typer.Option(
        "--strict-sources", help="Fail the run (resumably) when any source cannot be read."
    ),
]
NoDraftsOpt = Annotated[
    bool,
    typer.Option(
        "--no-drafts",
        help="Draft no reply this time, whatever the config's `drafts = ...` says: nothing is "
        "written to any mailbox.",
    ),
]


@commands.command()
def brief(
    ctx: typer.Context,
    brief_date: BriefDateOpt = None,
    tz: TzOpt = None,
    model: ModelOpt = None,
    provider: ProviderOpt = None,
    allow_remote: AllowRemoteOpt = False,
    inbox: InboxOpt = None,
    calendar: CalendarOpt = None,
    sample: SampleOpt = "standard",
    db: DbOpt = None,
    max_steps: MaxStepsOpt = None,
    budget: BudgetOpt = None,
    task_cap: TaskCapOpt = DEFAULT_TASK_CAP,
    max_tokens: MaxTokensOpt = DEFAULT_MAX_TOKENS,
    compact_at: CompactAtOpt = DEFAULT_COMPACT_AT,
    resume_latest: ResumeLatestOpt = False,
    ensure_today: EnsureTodayOpt = False,
    since_last: SinceLastOpt = False,
    new: NewOpt = False,
    since: SinceOpt = None,
    deliver: DeliverOpt = None,
    timeout: TimeoutOpt = None,
    config_file: ConfigOpt = None,
    strict_sources: StrictSourcesOpt = False,
    no_drafts: NoDraftsOpt = False,
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
    from dayflow.app import cases
    from dayflow.briefing import BriefRequest
    from dayflow.briefing.inputs import parse_since

    deps = get_deps(ctx)
    with handle_errors(deps):
        mode = _mode(ensure_today, since_last, new, resume_latest, since_given=since is not None)
        out_format = brief_format(deps, fmt, as_json)
        # A broken config file gives its problems, all of them, and nothing else first.
        deps.config.validate(None if config_file is None else Path(config_file))
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
            mode=mode,
            sample=sample,
            limits=Limits(max_steps, budget, max_tokens, task_cap),
            compact_at=compact_at,
            deliver=tuple(deliver or ()),
            config_file=None if config_file is None else Path(config_file),
            strict_sources=strict_sources,
            drafts=not no_drafts,
            crash_after=crash_after,
            timeout=timeout,
            given=frozenset(name for name in ctx.params if _given(ctx, name)),
            since=None if since is None else parse_since(since),
        )
        outcome = cases.brief(deps, settings, request, verbose)
        shown = None if outcome.quiet and out_format != "json" else outcome.text
        print_outcome(
            deps,
            outcome.run,
            shown,
            out_format,
            settings.prices,
            outcome.data,
            outcome.links,
            outcome.page,
        )


def _mode(
    ensure_today: bool, since_last: bool, new: bool, resume_latest: bool, *, since_given: bool
) -> "Mode":
    """The one mode the flags ask for (AUTO for none); two at once, or --since with any but
    --new, is a usage error."""
    from dayflow.briefing import Mode

    modes = {
        Mode.ENSURE_TODAY: ensure_today,
        Mode.SINCE_LAST: since_last,
        Mode.NEW: new,
        Mode.RESUME_LATEST: resume_latest,
    }
    chosen = [mode for mode, on in modes.items() if on]
    if len(chosen) > 1:
        raise UsageError(f"{' and '.join(m.value for m in chosen)} cannot be used together")
    if since_given and chosen and chosen[0] is not Mode.NEW:
        raise UsageError(f"--since and {chosen[0].value} cannot be used together")
    return chosen[0] if chosen else Mode.AUTO


def _given(ctx: typer.Context, name: str) -> bool:
    """Whether option `name` was given on the command line (not defaulted)."""
    source = ctx.get_parameter_source(name)
    return source is not None and source.name == "COMMANDLINE"


@commands.command()
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
        from dayflow.app import cases

        limits = Limits(max_steps, budget, max_tokens)
        request = cases.ResumeRequest(run_id, limits, timeout, crash_after, verbose)
        outcome = cases.resume(deps, settings, request)
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
