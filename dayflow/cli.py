"""The Typer app: parse options, build the pieces, call the core, render. Nothing else.

Tests pass their own `Runtime` through `CliRunner.invoke(app, args, obj=deps)`.
"""

# No `from __future__ import annotations` here: Typer would compile and eval every option's
# annotation string at start-up (issue 13). Names imported only for type checking are quoted.

import functools
import sys
from typing import Annotated, Any

import typer

from dayflow.cli_base import EXIT_CODES, PROFILE_HELP, Runtime, set_profile

__all__ = ["Runtime", "app", "main"]


# The command groups that work on every profile at once: --profile is refused there.
EVERY_PROFILE = ("profiles", "fleet")


class _Group(typer.core.TyperGroup):
    """A group whose commands are built when one is asked for, through Click's documented
    hooks (`list_commands`, `get_command`: the "lazily loading subcommands" recipe): the app
    lists the names of `COMMAND_MODULES` and imports a command module only when one of its
    commands is resolved, and a command group (`tasks`) builds only the subcommand asked for
    (Typer inspects every signature it builds: for `dayflow runs` that cost more than the rest
    of the command, issue 13; so did importing every command module). `--help` lists every
    command, and a TAB builds only the commands that match the word being completed. Every
    command given out has --profile (`with_profile`)."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        # name -> how to build it; the app's from COMMAND_MODULES, a group's set by `_lazy`
        self.lazy: dict[str, Any] = {} if type(self) is _Subgroup else _app_commands()

    def list_commands(self, ctx: Any) -> list[str]:
        # In the order they were registered, whichever were built first (`man` builds itself).
        return [*self.lazy, *(n for n in self.commands if n not in self.lazy)]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        return self.built(cmd_name)

    def built(self, cmd_name: str) -> Any:
        """The command `cmd_name`, built (and kept) now if it was not yet; None if unknown."""
        if cmd_name not in self.commands and cmd_name in self.lazy:
            self.add_command(self.lazy[cmd_name](), cmd_name)
        command = self.commands.get(cmd_name)
        return None if command is None else with_profile(command)

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        """Typer's list of commands, the app's unbuilt ones summed up from `SUMMARIES` (a
        command group builds its subcommands to list them, as Typer does)."""
        if type(self) is _Subgroup:
            return super().format_commands(ctx, formatter)
        from gettext import gettext

        from typer._click.utils import make_default_short_help

        rows: list[tuple[str, Any]] = []
        for name in self.list_commands(ctx):
            summary = None if name in self.commands else SUMMARIES.get(name)
            command = self.get_command(ctx, name) if summary is None else None
            if summary is not None or (command is not None and not command.hidden):
                rows.append((name, summary if summary is not None else command))
        if rows:
            limit = formatter.width - 6 - max(len(name) for name, _ in rows)
            helps = [
                (
                    n,
                    make_default_short_help(h, limit)
                    if isinstance(h, str)
                    else h.get_short_help_str(limit),
                )
                for n, h in rows
            ]
            with formatter.section(gettext("Commands")):
                formatter.write_dl(helps)

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        """Typer's, its "Did you mean" drawn from every command, built or not."""
        try:
            return self._click_resolve_command(ctx, args)
        except typer.core._click.exceptions.UsageError as exc:
            import difflib

            matches = difflib.get_close_matches(args[0], self.list_commands(ctx)) if args else []
            if self.suggest_commands and matches:
                suggestions = ", ".join(f"{m!r}" for m in matches)
                exc.message = f"{exc.message.rstrip('.')}. Did you mean {suggestions}?"
            raise

    def whole(self) -> Any:
        """This group with every command and subcommand built: what `dayflow man` documents
        (a command module asks its root for it: no import cycle)."""
        for name in self.list_commands(None):
            command = self.built(name)
            if isinstance(command, _Group):
                command.whole()
        return self


class _Subgroup(_Group):
    """A command group of a command module (`tasks`, `fleet`), its subcommands built lazily."""


def with_profile(command: Any) -> Any:
    """`command` (and each subcommand of a group) with a --profile option, once: the option
    is the same everywhere, so it is added here rather than written in every signature."""
    if not any(p.name == "profile" for p in command.params):
        command.params.append(
            typer.core.TyperOption(
                param_decls=["--profile"],
                metavar="NAME",
                expose_value=False,
                is_eager=True,
                callback=set_profile,
                help=PROFILE_HELP,
                # The groups of every profile refuse it (their commands do): not offered.
                hidden=command.name in EVERY_PROFILE,
            )
        )
    for sub in getattr(command, "commands", {}).values():
        with_profile(sub)
    return command


# The app's own options; its commands are those of the command modules (below).
core = typer.Typer(
    cls=_Group,
    help="Dayflow: a daily-brief agent whose runs outlive their process.\n\n" + EXIT_CODES,
    no_args_is_help=True,
    # --install-completion and --show-completion (Typer's): they cost no import, and a TAB
    # builds only the commands that match the word completed (`_Group`).
    add_completion=True,
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


def main() -> None:
    """Console-script entry point: no tracebacks for users unless DAYFLOW_DEBUG is set."""
    from dayflow.app.environ import process

    try:
        try:
            core()
        finally:  # what is left of stdout's buffer: a full disk fails here, or at exit
            sys.stdout.flush()
    except OSError as exc:
        if _stdout_lost(exc):
            print(f"error: could not write the output to stdout: {exc}", file=sys.stderr)
            sys.exit(4)
        if process().get("DAYFLOW_DEBUG"):
            raise
        _internal(exc)
    except Exception as exc:  # a bug: say so in one line, keep the detail for DAYFLOW_DEBUG
        if process().get("DAYFLOW_DEBUG"):
            raise
        _internal(exc)


def _stdout_lost(exc: OSError) -> bool:
    """Whether `exc` is stdout failing to take the output: a full disk or a device error with
    no file named (every file Dayflow writes by name is reported as a FileProblem; SQLite's
    errors are not OSErrors; a closed pipe is Click's, quiet). Then stdout goes to /dev/null,
    so that the exit's own flush does not fail again."""
    import errno
    import os

    if exc.filename is not None or exc.errno not in (
        errno.ENOSPC,
        errno.EDQUOT,
        errno.EIO,
        errno.EFBIG,
    ):
        return False
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    except (OSError, ValueError):
        pass
    return True


def _internal(exc: Exception) -> None:
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
    "cli_brief": ("brief", "resume"),
    "cli_listings": ("runs", "show"),
    "cli_history": ("trace", "fork", "gc", "doctor"),
    "cli_migrate": ("migrate",),
    "cli_tasks": ("tasks",),
    "cli_schedule": ("schedule",),
    "cli_sources": ("init", "sources"),
    "cli_profiles": ("profiles",),
    "cli_fleet": ("worker", "fleet"),
    "cli_mcp": ("mcp",),
    "cli_rules": ("mute", "important", "snooze", "rules", "replay"),
    "cli_manual": ("completion", "man"),
    "cli_why": ("why",),
    "cli_view": ("view",),
}


# What `dayflow --help` says of each command: the first sentence of its help (all Click's
# short help reads of it), so `--help` lists the commands without importing their modules or
# building them (that was most of its start-up: issue 33). A command not here is built to ask;
# tests/test_startup.py keeps every entry equal to the command's own help.
SUMMARIES = {
    "brief": "Read the inbox, calendar and tasks, create the tasks found, and print the brief.",
    "resume": (
        "Continue an interrupted, failed or stopped run from its last committed step, with the "
        "model, provider and server it was started with."
    ),
    "runs": "List runs, newest first.",
    "show": "Show one run: its header, steps, event log and brief.",
    "trace": "Export a run's event log (JSON lines or CSV), or draw its timeline as a PNG.",
    "fork": (
        "Start a new run from the first N steps of RUN and continue it (maybe with another model)."
    ),
    "gc": "Prune old finished runs to tombstones and reclaim the space (VACUUM).",
    "doctor": (
        "Check the database: integrity, schema, run totals, tool results, leases, permissions; "
        "or, with --model [NAME], whether the configured model (or NAME) can write a brief."
    ),
    "migrate": (
        "Copy every run, step, saved effect, task, event and compaction to TARGET, verbatim."
    ),
    "tasks": (
        "List the tasks the agent created (open ones unless --all), or mark one done; `tasks "
        "export` and `tasks sync` keep them in your notes."
    ),
    "schedule": (
        "Run `dayflow brief --ensure-today` every morning: a systemd user timer, a crontab entry "
        "or a launchd agent."
    ),
    "init": "Write a commented starter config file (never overwrites one).",
    "sources": "The configured mail and calendar sources: list them, or `check` them.",
    "profiles": (
        "The people a fleet briefs: one profile each, with its own runs and tasks (`--profile "
        "NAME` on any command)."
    ),
    "worker": (
        "Take the profiles' briefs from the queue when they are due (each at its local time) and "
        "write them; run as many workers, on as many machines, as you like."
    ),
    "fleet": "The fleet's briefs: queue a day's briefs now, or see where each one is.",
    "mcp": (
        "MCP: other servers' tools in the brief ([mcp_servers.NAME] in the config file), and "
        "`serve`, Dayflow's briefs and tasks for an MCP client."
    ),
    "mute": (
        "Never a task, never a reply owed or awaited, from this sender, domain, list or thread."
    ),
    "important": (
        "Mail from this sender or domain comes first in its section, and One thing prefers it."
    ),
    "snooze": (
        "Leave a task, an owed reply or a wait out of the brief until a day; it is back that day."
    ),
    "rules": (
        "List the rules in force and where each came from (the command, the date, the item it was"
        " made on), and the file they were read from; each entry of rules.toml that is wrong is"
        " one line on stderr, and the others still apply."
    ),
    "replay": (
        "Read the saved mornings again with today's rules and print what would change: try a rule"
        " before living with it."
    ),
    "completion": "Print the shell completion script for SHELL, or install it with --install.",
    "man": "Print the manual page of COMMAND (roff, for `man -l -`), or the CLI reference.",
    "why": "Say why a task is on the list, or why a message got no task.",
    "view": (
        "Show the briefs, their evidence, runs and tasks in a browser, with buttons to correct."
    ),
}


def _app_commands() -> dict[str, Any]:
    """How to build each command of `COMMAND_MODULES`, its module imported only then."""
    return {
        name: functools.partial(_build, module, name)
        for module, names in COMMAND_MODULES.items()
        for name in names
    }


def _build(module: str, name: str) -> Any:
    """The Click command `name` of the command module `module` (imported now), alone: a
    command group gets its own callback and options, its subcommands built when asked for."""
    import importlib

    from typer.main import get_command_from_info, get_command_name

    source = importlib.import_module(f"dayflow.{module}").commands
    if source.info.name == name:  # the module's commands are one named group (`tasks`)
        from typer.models import TyperInfo

        return _lazy(TyperInfo(source))
    infos = [
        (c, c.name or get_command_name(c.callback.__name__)) for c in source.registered_commands
    ]  # type: ignore[union-attr]
    for group in source.registered_groups:
        inner = group.typer_instance
        # Typer leaves unset names as placeholders, not None: a nameless group's commands sit
        # at the top level.
        group_name = next(
            (n for n in (group.name, inner and inner.info.name) if isinstance(n, str)), None
        )
        if group_name == name:
            return _lazy(group)
        if group_name is None and inner is not None:
            infos += [
                (c, c.name or get_command_name(c.callback.__name__))
                for c in inner.registered_commands
            ]  # type: ignore[union-attr]
    for info, command_name in infos:
        if command_name == name:
            return get_command_from_info(
                info, pretty_exceptions_short=core.pretty_exceptions_short, rich_markup_mode=None
            )
    raise LookupError(f"{module} adds no command {name!r}: COMMAND_MODULES is out of date")


def _lazy(group: Any) -> "_Subgroup":
    """A command group (`add_typer`'s info) built without its subcommands, which it builds
    when one is asked for."""
    import copy

    from typer.main import get_command_from_info, get_command_name, get_group_from_info

    inner = group.typer_instance
    bare = copy.copy(inner)
    bare.registered_commands, bare.registered_groups = [], []
    bare.info = copy.copy(inner.info)
    slim = copy.copy(group)
    slim.typer_instance, slim.cls, bare.info.cls = bare, _Subgroup, _Subgroup
    built = get_group_from_info(
        slim,
        pretty_exceptions_short=core.pretty_exceptions_short,
        suggest_commands=core.suggest_commands,
        rich_markup_mode=None,
    )
    assert isinstance(built, _Subgroup)
    for info in inner.registered_commands:
        built.lazy[info.name or get_command_name(info.callback.__name__)] = functools.partial(
            get_command_from_info,
            info,
            pretty_exceptions_short=core.pretty_exceptions_short,
            rich_markup_mode=None,
        )
    for sub in inner.registered_groups:
        sub_name = next(
            n
            for n in (sub.name, sub.typer_instance and sub.typer_instance.info.name)
            if isinstance(n, str)
        )
        built.lazy[sub_name] = functools.partial(_lazy, sub)
    return built


# The app under the name tests and `python -m dayflow` use: `core`, whose group builds its
# commands lazily (`_Group`).
app = core
