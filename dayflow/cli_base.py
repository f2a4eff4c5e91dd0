"""What every `cli_*.py` command module shares: the `Deps` bundle, the one error -> exit code
mapping, the common options and parsers, and the helpers that drive a run and print its outcome.

A command module defines `commands = typer.Typer()` and decorates its commands with
`@commands.command()`; `cli.py` lists it in `COMMAND_MODULES` with the names of its commands,
and adds it with `app.add_typer(module.commands)` (a nameless group: its commands sit at the
top level) when the whole app or one of its commands is asked for. Command modules import
from here, never from `cli.py`, so there is no import cycle.

Keep this module cheap to import: it is on the path of `--help`, `runs` and `tasks`, and the
command modules import it at start-up. What only some commands use (the store, the settings,
Rich's renderables, the providers) is imported inside the functions that use it;
`tests/test_startup.py` keeps the import list honest.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, date, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from dayflow.cli_console import lazy_console
from dayflow.clock import Clock, SystemClock
from dayflow.errors import ConfigError, DayflowError, SimulatedCrash, UsageError
from dayflow.models import DEFAULT_MAX_STEPS

if TYPE_CHECKING:  # imported where used: see the module docstring
    from rich.console import Console

    from dayflow import config
    from dayflow import config as configuration  # `Deps.config` shadows the module name
    from dayflow.agent import SourceFactory
    from dayflow.mcp.servers import Servers
    from dayflow.models import Run
    from dayflow.pricing import Prices
    from dayflow.providers import ModelClient
    from dayflow.store import Store
    from dayflow.store.values import Profile

    ModelFactory = Callable[[str, config.Settings], ModelClient]

EXIT_CODES = """\
Exit codes: 0 ok · 1 error · 2 bad usage · 3 no such run/task · 4 database or input file
problem · 5 run busy in another process · 6 the model failed: API error after retries or a
refusal (resumable) · 7 run stopped by a guard or a cut-short answer (resumable) · 70 simulated
crash · 130 interrupted."""

# Where the shell scripts of `dayflow completion` ask for completions (Typer's convention:
# `_PROG_COMPLETE`); `cli.main()` reads it to load only the command being completed.
COMPLETE_VAR = "_DAYFLOW_COMPLETE"


def default_model_factory(model: str, settings: config.Settings) -> ModelClient:
    """The offline model, or Claude through the SDK (imported only here, only when needed)."""
    from dayflow.providers import OFFLINE_MODEL

    if settings.local:
        from dayflow.providers import local

        assert settings.base_url is not None  # config.load gives a local model its address
        return local.make_client(settings.base_url, timeout=settings.timeout)
    if model == OFFLINE_MODEL:
        from dayflow.providers.offline import OfflineModel

        return OfflineModel()
    if not settings.api_key:
        raise ConfigError(
            f"model {model!r} needs ANTHROPIC_API_KEY (set it in the environment or .env), "
            "or use --model offline"
        )
    from dayflow.providers.anthropic import make_client

    return make_client(settings.api_key, settings.base_url, timeout=settings.timeout)


class Deps:
    """What commands are built from; tests replace any part. (A plain class, not a
    dataclass: each dataclass costs start-up time, and this one is made by every command.)"""

    def __init__(
        self,
        env: Mapping[str, str] | None = None,
        clock: Clock | None = None,
        model_factory: ModelFactory = default_model_factory,
        sources: SourceFactory | None = None,  # None: the JSON files named in a run's settings
        out: Console | None = None,
        err: Console | None = None,
        config: configuration.Config | None = None,
    ) -> None:
        self.env = env  # the whole environment (no `.env` read), or None: the process's
        self._config = config
        # --profile: whose runs and tasks (None: the default profile, today's single user).
        # Another profile's config file and timezone replace the environment's once its row
        # is read (`_as_profile`), on the first call for settings.
        self.profile: str | None = None
        self._profile_read = False
        self._mcp: Servers | None = None  # made by `mcp()` when a run or command needs it
        self.clock: Clock = clock or SystemClock()
        self.model_factory = model_factory
        self.sources = sources
        # Text from mail, calendars and files is printed as is: no emoji codes (":x:" stays).
        self.out: Console = out or lazy_console(highlight=False, emoji=False)
        # Notices are whole lines: never hard-wrapped at 80 columns when stderr is a pipe.
        self.err: Console = err or lazy_console(
            stderr=True, highlight=False, soft_wrap=True, emoji=False
        )

    @property
    def config(self) -> configuration.Config:
        """This process's configuration, resolved once (`.env` and config files read once):
        --profile's config file and timezone when one was given (its row read from the store
        the environment names; a command with --db reads it there first, via `settings`)."""
        self._as_profile({})
        return self._environment_config()

    def _environment_config(self) -> configuration.Config:
        if self._config is None:
            from dayflow import config

            self._config = config.Config(self.env, notice=self.notice)
        return self._config

    def for_profile(self, profile: Profile, db: str) -> Deps:
        """A bundle for `profile`'s briefs in the store at `db` (a worker's): its config file
        and timezone over this process's environment, its runs and tasks."""
        from dayflow import config
        from dayflow.fleet.profiles import profile_env

        env = {**profile_env(self.config.env, profile), "DAYFLOW_DB": db}
        twin = Deps(
            env=env,
            config=config.Config(env, notice=self.notice, profile=True),
            clock=self.clock,
            model_factory=self.model_factory,
            sources=self.sources,
            out=self.out,
            err=self.err,
        )
        twin.profile, twin._profile_read = profile.name, True
        return twin

    def settings(self, **flags: Any) -> configuration.Settings:
        self._as_profile(flags)
        return self._environment_config().settings(**flags)

    def _as_profile(self, flags: dict[str, Any]) -> None:
        """Read --profile's row from the store the flags name (ProfileNotFound: exit 3) and
        take its config file and timezone as the environment's, once."""
        if self._profile_read or self.profile is None:
            return
        self._profile_read = True
        from dayflow.fleet.profiles import profile_env
        from dayflow.store import DEFAULT_PROFILE

        if self.profile == DEFAULT_PROFILE:
            return
        db = {k: v for k, v in flags.items() if k == "db"}
        base = self._environment_config()
        with self.store(base.settings(**db), profile=DEFAULT_PROFILE) as store:
            row = store.profiles.get(self.profile)
        from dayflow import config

        self._config = config.Config(profile_env(base.env, row), notice=self.notice, profile=True)

    def model_settings(
        self, config_file: Path | None = None, **flags: Any
    ) -> configuration.Settings:
        """The settings of a command that talks to a model: `settings`, with the config
        file's `[model]` table under the flags and the environment (only these commands read
        the file: `runs` and `tasks` never do)."""
        self._as_profile(flags)
        return self.config.model_settings(config_file, **flags)

    def store(
        self, settings: configuration.Settings, *, create: bool = False, profile: str | None = None
    ) -> Store:
        """The store at the configured path, as --profile's (or `profile`'s). Only commands
        that start runs pass `create`: the others never create a database (a typo in --db is
        an error, not an empty file)."""
        from dayflow import config
        from dayflow.store import DEFAULT_PROFILE, Owner, open_store

        if not create and isinstance(settings.db_path, Path):
            config.require_existing_db(settings.db_path)
        whose = profile or self.profile or DEFAULT_PROFILE
        return open_store(
            settings.db_path,
            clock=self.clock,
            owner=Owner.current(settings.host),
            durability=settings.durability,
            profile=whose,
            registered=whose != DEFAULT_PROFILE,  # --profile's row must be there for a new run
        )

    def mcp(self, verbose: bool = False) -> Servers:
        """This process's MCP servers, made once; none is started until a run needs it."""
        if self._mcp is None:
            from dayflow.mcp.servers import for_config

            self._mcp = for_config(self.config, verbose=verbose)
        return self._mcp

    def stop_mcp(self) -> None:
        """Stop the MCP servers this process started, if any."""
        made = self._mcp
        if made is not None:
            self._mcp = None
            made.close()

    def notice(self, text: str) -> None:
        """One line on stderr (written as is: no Rich needed for a line of text)."""
        self.err.file.write(text + "\n")
        self.err.file.flush()


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


def get_deps(ctx: typer.Context) -> Deps:
    """The bundle a test passed with `obj=`, or the real one."""
    if not isinstance(ctx.obj, Deps):
        ctx.obj = Deps()
    return ctx.obj


@contextlib.contextmanager
def handle_errors(deps: Deps) -> Iterator[None]:
    """Turn every expected failure into one line on stderr and an exit code."""
    try:
        yield
    except SimulatedCrash as exc:
        deps.err.print(str(exc), markup=False)
        raise typer.Exit(exc.exit_code) from None
    except DayflowError as exc:
        deps.err.print(f"error: {exc}", markup=False, soft_wrap=True)
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
BRIEF_FORMATS = ("markdown", "rich", "json")
FormatOpt = Annotated[
    str | None,
    typer.Option(
        "--format",
        metavar="markdown|rich|json",
        callback=not_empty,
        help="How to print the brief [default: rendered on a terminal, the Markdown itself "
        "when stdout is a file or a pipe].",
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


def today(deps: Deps, settings: config.Settings) -> date:
    """Today in the user's timezone (not UTC's: a brief at 00:30 in Tokyo is for that day)."""
    return deps.clock.now().astimezone(zone(settings)).date()


def brief_format(deps: Deps, fmt: str | None, as_json: bool) -> str:
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


def print_json(deps: Deps, doc: Any) -> None:
    """Strict JSON on stdout: never NaN or Infinity (whatever a price table held), and the
    characters a terminal would obey (bidi overrides) as `\\uXXXX` escapes."""
    import json  # here: `--help` and the tables need none

    from dayflow.listing import plain

    text = json.dumps(_finite(doc), allow_nan=False, indent=2, ensure_ascii=False)
    deps.out.file.write(plain(text) + "\n")
    deps.out.file.flush()


def print_table(deps: Deps, build: Callable[..., str], *args: Any) -> None:
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
    deps: Deps,
    run: Run,
    text: str | None,
    fmt: str,
    prices: Prices | None = None,
    data: dict[str, Any] | None = None,
    links: frozenset[str] = frozenset(),
) -> None:
    """The brief (or the JSON document) on stdout; a run that did not finish exits 6 or 7.
    `fmt` is one of BRIEF_FORMATS (see `brief_format`); the JSON document carries the run's
    lists as data (`data`: `followups`, `prep`, `conflicts`, each null when it read none).
    Markdown keeps only the links in `links` (the addresses the run read), as a file does."""
    from dayflow import listing
    from dayflow.models import DONE, FAILED

    if fmt == "json":
        doc = {"run": listing.run_json(run, prices), "brief": text}
        doc |= {"followups": None, "prep": None, "conflicts": None} | (data or {})
        print_json(deps, doc)
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
