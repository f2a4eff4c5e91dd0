"""The Typer app: parse options, build the pieces, call the core, render. Nothing else.

Tests pass their own `Deps` through `CliRunner.invoke(app, args, obj=deps)`.
"""

# No `from __future__ import annotations` here: Typer would compile and eval every option's
# annotation string at start-up (issue 13). Names imported only for type checking are quoted.

import functools
import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from dayflow.cli_base import COMPLETE_VAR, EXIT_CODES, PROFILE_HELP, Deps, set_profile

if TYPE_CHECKING:
    from collections.abc import Mapping

    app: typer.Typer  # the whole app, built on first use: see `__getattr__` at the end

__all__ = ["Deps", "app", "main"]


# The command groups that work on every profile at once: --profile is refused there.
EVERY_PROFILE = ("profiles", "fleet")


class _Group(typer.core.TyperGroup):
    """The app's group: every command it gives out has --profile (`with_profile`)."""

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        command = super().get_command(ctx, cmd_name)
        return None if command is None else with_profile(command)

    def whole(self) -> Any:
        """The whole app's command tree, even when this group is lean (`app_for`): what
        `dayflow man` documents (a command module asks its root for it: no import cycle)."""
        return typer.main.get_command(_whole_app())


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
    # --install-completion and --show-completion (Typer's): they cost no import, and `main()`
    # answers a TAB from the command it completes (`completing`), not from the whole app.
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


# The app's own options that answer without a command: they need no command module.
_CORE_ONLY = ("--version", "--show-completion", "--install-completion")


def app_for(args: list[str], *, whole_groups: bool = False) -> typer.Typer:
    """`app` with only the command `args` name. Before it parses anything, Typer builds every
    command it has, inspecting each signature: for `dayflow runs` that cost more than the rest
    of the command (issue 13), and so did importing every command module. No command, `--help`
    or an unknown name get the whole app. `whole_groups` keeps a group's subcommands even when
    `args` names none of them (a TAB after `dayflow tasks` offers them)."""
    import copy

    from typer.main import get_command_name

    name = next((a for a in args if not a.startswith("-")), None)
    if name is None and args and args[0] in _CORE_ONLY:
        return _with_modules([])  # eager, and printed before any command would be built
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
            rest = args[args.index(name) + 1 :]
            lean.registered_groups = [group if whole_groups else _without_unasked(group, rest)]
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
    from dayflow.app.environ import process

    env = process()
    try:
        words = completing(env)
        if words is None:
            app_for(sys.argv[1:])()
        else:  # a TAB: Typer answers it, from the command being completed only
            app_for(words, whole_groups=True)()
    except Exception as exc:  # a bug: say so in one line, keep the detail for DAYFLOW_DEBUG
        if env.get("DAYFLOW_DEBUG"):
            raise
        print(
            f"dayflow: internal error: {type(exc).__name__}: {exc} "
            "(set DAYFLOW_DEBUG=1 for the traceback)",
            file=sys.stderr,
        )
        sys.exit(1)


def completing(env: "Mapping[str, str]") -> list[str] | None:
    """The words before the one being completed when the shell asks for completions (the
    scripts' variables, read as Typer's completion classes read them), else None."""
    instruction = env.get(COMPLETE_VAR)
    if not instruction:
        return None
    shell = instruction.partition("_")[2]
    if shell == "bash":
        words = _split(env.get("COMP_WORDS", ""))
        cword = env.get("COMP_CWORD", "")
        return words[1 : int(cword)] if cword.isdigit() else words[1:]
    line = env.get("_TYPER_COMPLETE_ARGS", "")
    words = _split(line)[1:]
    if shell in ("powershell", "pwsh"):
        done = not env.get("_TYPER_COMPLETE_WORD_TO_COMPLETE")
    else:  # zsh, fish: the last word is being completed unless a space follows it
        done = line.endswith(" ")
    return words if done or not words else words[:-1]


def _split(line: str) -> list[str]:
    """Shell words, an unclosed quote closing the last (as Click splits them)."""
    import shlex

    lexer = shlex.shlex(line, posix=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    words: list[str] = []
    try:
        words.extend(lexer)
    except ValueError:
        words.append(lexer.token)
    return words


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
}


def _with_modules(modules: list[str]) -> typer.Typer:
    """`core` with the commands of `modules` added (a copy: `core` stays as it is)."""
    import copy
    import importlib

    built = copy.copy(core)
    built.registered_commands = list(core.registered_commands)
    built.registered_groups = list(core.registered_groups)
    for name in modules:
        built.add_typer(importlib.import_module(f"dayflow.{name}").commands)
    return built


@functools.cache
def _whole_app() -> typer.Typer:
    return _with_modules(list(COMMAND_MODULES))


def __getattr__(name: str) -> typer.Typer:
    """`app`, the whole app, is built on first use (PEP 562): `main()` seldom needs it."""
    if name == "app":
        return _whole_app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
