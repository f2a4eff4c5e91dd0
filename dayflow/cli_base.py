"""What every `cli_*.py` command module shares: the runtime (`dayflow.app.Runtime`),
the one error -> exit code mapping, the common options and parsers, and printing an outcome.

A command module defines `commands = typer.Typer()` and decorates its commands with
`@commands.command()`; `cli.py` lists it in `COMMAND_MODULES` with the names of its commands,
and its group imports the module and builds a command of it only when that command is asked
for (`cli._Group`). Command modules import from here, never from `cli.py`, so there is no
import cycle.

Keep this module cheap to import: it is on the path of `--help`, `runs` and `tasks`, and the
command modules import it at start-up. What only some commands use (the store, the settings,
Rich's renderables, the providers) is imported inside the functions that use it;
`tests/test_startup.py` keeps the import list honest.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator
from datetime import UTC, date, tzinfo
from typing import TYPE_CHECKING, Annotated, Any

import typer

from dayflow.app.runtime import Runtime, default_model_factory
from dayflow.cli_console import lazy_console
from dayflow.errors import DayflowError, SimulatedCrash, UsageError
from dayflow.models import DEFAULT_MAX_STEPS

if TYPE_CHECKING:  # imported where used: see the module docstring
    from dayflow import config
    from dayflow.models import Run
    from dayflow.page import Page
    from dayflow.pricing import Prices

EXIT_CODES = """\
Exit codes: 0 ok · 1 error · 2 bad usage · 3 no such run/task/profile · 4 database or file problem
(an input unreadable, an output unwritable) · 5 a run or rules.toml busy in another process
· 6 the model
failed: API error after retries or a refusal (resumable) · 7 run stopped by a guard or a
cut-short answer (resumable) · 70 simulated crash · 130 interrupted."""

# Where the shell scripts of `dayflow completion` ask for completions (Typer's convention:
# `_PROG_COMPLETE`), which `main()`'s Typer app answers (`prog_name` is "dayflow").
COMPLETE_VAR = "_DAYFLOW_COMPLETE"


def set_profile(ctx: typer.Context, _param: Any, value: str | None) -> None:
    """--profile's callback (every command has the option: `cli.with_profile`)."""
    if value is not None:
        from dayflow.fleet.profiles import check_name

        try:
            get_deps(ctx).profile = check_name(value)
        except UsageError as exc:
            raise typer.BadParameter(str(exc)) from None


PROFILE_HELP = (
    "Whose runs and tasks: a profile of `dayflow profiles list` (its config file and "
    "timezone apply) [default: the default profile]."
)


__all__ = ["Runtime", "default_model_factory"]


def get_deps(ctx: typer.Context) -> Runtime:
    """The runtime a test passed with `obj=`, or this process's, made now."""
    if not isinstance(ctx.obj, Runtime):
        # Text from mail, calendars and files is printed as is: no emoji codes (":x:"
        # stays); notices are whole lines, never hard-wrapped at 80 columns in a pipe.
        made = Runtime()
        made.out = lazy_console(made.environ, highlight=False, emoji=False)
        made.err = lazy_console(
            made.environ, stderr=True, highlight=False, soft_wrap=True, emoji=False
        )
        ctx.obj = made
    return ctx.obj


@contextlib.contextmanager
def handle_errors(deps: Runtime) -> Iterator[None]:
    """Say the environment's warnings first (a misspelt `DAYFLOW_*` setting: the core
    returns them, the CLI shows them), then turn every expected failure into one line on
    stderr and an exit code."""
    try:
        for line in deps.warnings():
            deps.notice(line)
        yield
    except SimulatedCrash as exc:
        deps.err.print(str(exc), markup=False)
        raise typer.Exit(exc.exit_code) from None
    except DayflowError as exc:
        for line in str(exc).splitlines() or [""]:  # several problems: each its own error
            deps.err.print(f"error: {line}", markup=False, soft_wrap=True)
        raise typer.Exit(exc.exit_code) from None
    except KeyboardInterrupt:
        from dayflow.store.values import command_hint

        again = command_hint(deps.profile, "resume")
        deps.err.print(f"interrupted; `{again}` continues the run", markup=False)
        raise typer.Exit(130) from None
    finally:
        deps.stop_mcp()  # the servers a run started: stopped at the command's end


# The largest values the integer options take: far beyond any real use, well inside SQLite's
# 64-bit integers (a bigger one is a usage error, exit 2, not an overflow deep in the store).
MAX_COUNT = 1_000_000_000
MAX_TOKENS = 1_000_000_000_000


def day_option(*names: str, help: str) -> Any:
    """A day option, YYYY-MM-DD and never empty: `Annotated[str | None, day_option(...)]`."""
    return typer.Option(*names, metavar="YYYY-MM-DD", callback=not_empty, help=help)


def not_empty(value: Any) -> Any:
    """Option callback: an empty string is a mistake (an unset shell variable), not a default;
    bytes that are not UTF-8 (they reach Python as lone surrogates) are not text either."""
    if isinstance(value, str) and not value.strip():
        raise typer.BadParameter("must not be empty")
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise typer.BadParameter("must be UTF-8 text") from None
    return value


# Options shared by several commands.
DbOpt = Annotated[
    str | None,  # not a Path: it would fold a postgresql:// URL's double slash
    typer.Option(
        "--db",
        callback=not_empty,  # an unset variable (`--db "$DB"`) is not the default database
        help="SQLite file or postgresql:// URL [env DAYFLOW_DB; default: a file in the user "
        "data directory].",
    ),
]
VerboseOpt = Annotated[bool, typer.Option("-v", "--verbose", help="Print each step and tool call.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]
ConfigOpt = Annotated[
    str | None,  # not a Path: an empty value would become ".", the current directory
    typer.Option(
        "--config",
        callback=not_empty,
        help="Sources config file [env DAYFLOW_CONFIG; default: "
        "$XDG_CONFIG_HOME/dayflow/config.toml].",
    ),
]
BRIEF_FORMATS = ("markdown", "rich", "json", "html")
FormatOpt = Annotated[
    str | None,
    typer.Option(
        "--format",
        metavar="markdown|rich|json|html",
        callback=not_empty,
        help="How to print the brief (html: one self-contained page) [default: rendered on a "
        "terminal, the Markdown itself when stdout is a file or a pipe].",
    ),
]
BriefJsonOpt = Annotated[
    bool, typer.Option("--json", help="Print the run and its brief as JSON (--format json).")
]
CrashOpt = Annotated[
    int | None,
    typer.Option(
        "--crash-after",
        metavar="N",
        min=1,
        max=MAX_COUNT,
        help="Test hook: exit as if crashed right after step N is committed.",
    ),
]
MaxStepsOpt = Annotated[
    int | None,
    typer.Option(
        "--max-steps",
        min=1,
        max=MAX_COUNT,
        help=f"Most model calls [new runs: {DEFAULT_MAX_STEPS}].",
    ),
]
BudgetOpt = Annotated[
    int | None,
    typer.Option(
        "--budget",
        min=1,
        max=MAX_TOKENS,
        metavar="TOKENS",
        help="Most tokens (input + output) over the whole run, resumes included.",
    ),
]
TimeoutOpt = Annotated[
    float | None,
    typer.Option(
        "--timeout",
        min=1,
        max=3600,
        metavar="SECONDS",
        help="How long one API request may take before it is retried (twice, each retry "
        "said on stderr) [env DAYFLOW_TIMEOUT; 120].",
    ),
]
ProviderOpt = Annotated[
    str | None,
    typer.Option(
        "--provider",
        metavar="anthropic|local",
        callback=not_empty,
        help="Who serves the model: anthropic (Claude; the offline model without a key) or "
        "local, a server on this machine speaking the Messages API (Ollama at "
        "http://127.0.0.1:11434 unless ANTHROPIC_BASE_URL or the config's [model] base_url "
        "says otherwise; needs --model, no key) [env DAYFLOW_PROVIDER; anthropic].",
    ),
]
AllowRemoteOpt = Annotated[
    bool,
    typer.Option(
        "--allow-remote",
        help="Let a local-provider run use a base URL that is not on this machine, or an "
        "Ollama cloud model: its mail then leaves the machine.",
    ),
]
RunArg = Annotated[str, typer.Argument(help="Run id or a unique prefix.", callback=not_empty)]

# Dates a brief can be for: every date, week and timestamp computed from them stays inside
# what `datetime` can hold in any timezone.
FIRST_DATE, LAST_DATE = date(1900, 1, 1), date(9998, 12, 31)


def parse_date(value: str, option: str = "--date") -> date:
    """A YYYY-MM-DD option value inside the supported range, or a usage error naming it."""
    try:
        day = date.fromisoformat(value.strip())
    except ValueError:
        raise UsageError(f"{option}: {value!r} is not a date (use YYYY-MM-DD)") from None
    if not FIRST_DATE <= day <= LAST_DATE:
        raise UsageError(f"{option}: {day} is out of range ({FIRST_DATE} to {LAST_DATE})")
    return day


def today(deps: Runtime, settings: config.Settings) -> date:
    """Today in the user's timezone (not UTC's: a brief at 00:30 in Tokyo is for that day)."""
    return deps.clock.now().astimezone(zone(settings)).date()


def brief_format(deps: Runtime, fmt: str | None, as_json: bool) -> str:
    """markdown, rich or json: --json wins; by default rendered only on a terminal."""
    if as_json:
        if fmt not in (None, "json"):
            raise UsageError(f"--json and --format {fmt} contradict each other")
        return "json"
    if fmt is None:
        return "rich" if deps.out.is_terminal else "markdown"
    if fmt not in BRIEF_FORMATS:
        raise UsageError(f"--format must be one of {', '.join(BRIEF_FORMATS)}")
    return fmt


def print_json(deps: Runtime, doc: Any) -> None:
    """Strict JSON on stdout: never NaN or Infinity (whatever a price table held), and the
    characters a terminal would obey (bidi overrides) as `\\uXXXX` escapes."""
    import json  # here: `--help` and the tables need none

    from dayflow.listing import plain

    text = json.dumps(_finite(doc), allow_nan=False, indent=2, ensure_ascii=False)
    deps.out.file.write(plain(text) + "\n")
    deps.out.file.flush()


def print_table(deps: Runtime, build: Callable[..., str], *args: Any) -> None:
    """A plain-text listing (`dayflow.listing`) on stdout: fitted to a terminal's width (in
    colour unless NO_COLOR), whole in a pipe."""
    terminal = deps.out.is_terminal
    colour = terminal and deps.out.color_system is not None
    text = build(*args, width=deps.out.width if terminal else None, colour=colour)
    deps.out.file.write(text)
    deps.out.file.flush()


def zone(settings: config.Settings) -> tzinfo:
    """The user's timezone (DAYFLOW_TZ, --tz, $TZ or UTC): every time shown is in it."""
    if settings.tz == "UTC":
        return UTC  # no zoneinfo import on the common path
    from zoneinfo import ZoneInfo

    return ZoneInfo(settings.tz)


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def print_outcome(
    deps: Runtime,
    run: Run,
    text: str | None,
    fmt: str,
    prices: Prices | None = None,
    data: dict[str, Any] | None = None,
    links: frozenset[str] = frozenset(),
    page: Page | None = None,
) -> None:
    """The brief (or the JSON document) on stdout; a run that did not finish exits 6 or 7.
    `fmt` is one of BRIEF_FORMATS (see `brief_format`); the JSON document carries the run's
    lists as data (`data`: `followups`, `prep`, `conflicts`, each null when it read none).
    Markdown keeps only the links in `links` (the addresses the run read), as a file does;
    html is `page` (`dayflow.page`, from the run's reads) as one document, as a mail carries it."""
    from dayflow import listing
    from dayflow.models import DONE, FAILED

    if fmt == "json":
        doc = {"run": listing.run_json(run, prices), "brief": text}
        doc |= {"followups": None, "prep": None, "conflicts": None, "injections": None}
        doc |= data or {}
        print_json(deps, doc)
    elif text is not None and fmt == "html":
        from dayflow.page import document, page_of

        if page is None:  # no reads at hand: the page of the text's own lines
            from dataclasses import replace

            page = page_of([], text, run_id=run.id, brief_date=run.brief_date, zone="")
            page = replace(page, links=links)
        deps.out.file.write(document(page))
        deps.out.file.flush()
    elif text is not None and fmt == "rich":
        from dayflow import render

        deps.out.print(render.brief(text))
    elif text is not None:
        # `dayflow brief > brief.md` is a Markdown file a notes app will render: made inert
        # exactly as `--deliver file:` writes it (escapes, no image, no link the run's mail
        # and calendar did not show, no raw HTML), since mail can make the model write anything.
        from dayflow.safe_text import inert_markdown

        text = inert_markdown(text, links)
        deps.out.file.write(text if text.endswith("\n") else text + "\n")
        deps.out.file.flush()
    if run.status != DONE:
        deps.err.print(f"run {run.id} {run.status}: {run.reason}", markup=False, soft_wrap=True)
        raise typer.Exit(6 if run.status == FAILED else 7)
