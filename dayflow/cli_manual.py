"""`dayflow completion SHELL` and `dayflow man [COMMAND]...` (added by `cli.py`).

Both are read off the command tree that `--help` prints, never written by hand: the shell
scripts are Typer's, and the manual pages and docs/cli.md are made from the Click commands' own
usage lines, help texts and option records (`get_help_record`, the call `--help` makes). So a new
command or option is in the pages and in the reference the moment it is in `--help`, and
tests/test_cli_manual.py fails while docs/cli.md lags behind.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterator
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from dayflow.cli_base import COMPLETE_VAR, get_deps, handle_errors
from dayflow.errors import FileProblem, UsageError
from dayflow.files import write_atomic

commands = typer.Typer()

# The command that regenerates the reference (tests/test_cli_manual.py prints it when stale).
REGENERATE = "dayflow man --format markdown > docs/cli.md"


class Shell(StrEnum):
    bash = "bash"
    zsh = "zsh"
    fish = "fish"


class Format(StrEnum):
    roff = "roff"
    markdown = "markdown"


@commands.command()
def completion(
    ctx: typer.Context,
    shell: Annotated[Shell, typer.Argument(help="bash, zsh or fish.")],
    install: Annotated[
        bool,
        typer.Option(
            "--install",
            help="Write the script where SHELL reads it (bash: ~/.bash_completions/dayflow.sh, "
            "sourced from ~/.bashrc; zsh: ~/.zfunc/_dayflow; fish: "
            "~/.config/fish/completions/dayflow.fish) instead of printing it.",
        ),
    ] = False,
) -> None:
    """Print the shell completion script for SHELL, or install it with --install.

    bash: `source <(dayflow completion bash)` in ~/.bashrc; zsh: `dayflow completion zsh >
    ~/.zfunc/_dayflow` (with ~/.zfunc on fpath); fish: `dayflow completion fish >
    ~/.config/fish/completions/dayflow.fish`. A TAB then runs `dayflow` with _DAYFLOW_COMPLETE
    set, which loads only the command being completed."""
    from typer.completion import get_completion_script
    from typer.completion import install as install_script

    deps = get_deps(ctx)
    with handle_errors(deps):
        if install:
            try:
                _, path = install_script(
                    shell=shell.value, prog_name="dayflow", complete_var=COMPLETE_VAR
                )
            except OSError as exc:
                raise FileProblem(f"cannot install the {shell.value} completion: {exc}") from None
            deps.out.print(f"{shell.value} completion installed in {path}", markup=False)
            deps.err.print("it takes effect in a new shell", markup=False)
            return
        script = get_completion_script(
            prog_name="dayflow", complete_var=COMPLETE_VAR, shell=shell.value
        )
        _echo(deps, script + "\n")


@commands.command()
def man(
    ctx: typer.Context,
    command: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="[COMMAND]...",
            help="The command whose page to print, e.g. `tasks export` [default: dayflow].",
        ),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            metavar="DIR",
            help="Write one page per command (COMMAND and those under it) into DIR as "
            "dayflow-NAME.1, and print their paths (`-o ~/.local/share/man/man1`: then `man "
            "dayflow-tasks` finds them).",
        ),
    ] = None,
    fmt: Annotated[
        Format,
        typer.Option(
            "--format",
            help="roff: a manual page (`man -l`); markdown: the CLI reference of COMMAND and "
            f"every command under it (`{REGENERATE}`).",
        ),
    ] = Format.roff,
) -> None:
    """Print the manual page of COMMAND (roff, for `man -l -`), or the CLI reference.

    Made from the same command tree as --help: every command, its help text and every
    option."""
    deps = get_deps(ctx)
    with handle_errors(deps):
        root: Any = ctx.find_root().command  # cli.py's group, which knows the whole tree
        top = typer.Context(root.whole(), info_name="dayflow")
        target = _find(top, command or [])
        if fmt is Format.markdown:
            if output is not None:
                raise UsageError("--output writes manual pages: drop it with --format markdown")
            _echo(deps, markdown(target))
            return
        if output is None:
            _echo(deps, roff_page(target))
            return
        try:
            output.mkdir(parents=True, exist_ok=True)
            for each in walk(target):
                path = output / f"{page_name(each)}.1"
                # A page left there as a FIFO or a device is written as a stream, never
                # waited on (files.write_atomic), and a regular one is replaced whole.
                write_atomic(path, roff_page(each).encode("utf-8"))
                deps.out.print(str(path), markup=False, highlight=False, soft_wrap=True)
        except OSError as exc:
            raise FileProblem(f"cannot write the manual pages to {output}: {exc}") from None


def _echo(deps: Any, text: str) -> None:
    deps.out.print(text, markup=False, highlight=False, emoji=False, soft_wrap=True, end="")


def _find(ctx: Any, names: list[str]) -> Any:
    """The context of the command `names` spell under `ctx` (a UsageError if none does)."""
    for i, name in enumerate(names):
        group = ctx.command
        sub = group.get_command(ctx, name) if hasattr(group, "get_command") else None
        if sub is None or sub.hidden:
            asked = " ".join(names[: i + 1])
            raise UsageError(f"no such command: dayflow {asked} (see `dayflow --help`)")
        ctx = typer.Context(sub, info_name=name, parent=ctx)
    return ctx


def walk(ctx: Any) -> Iterator[Any]:
    """`ctx` and the contexts of every visible command under it, in --help's order."""
    yield ctx
    for sub in subcommands(ctx):
        yield from walk(sub)


def subcommands(ctx: Any) -> list[Any]:
    group = ctx.command
    if not hasattr(group, "list_commands"):
        return []
    subs = (group.get_command(ctx, name) for name in group.list_commands(ctx))
    return [typer.Context(s, info_name=s.name, parent=ctx) for s in subs if not s.hidden]


def page_name(ctx: Any) -> str:
    """dayflow, dayflow-tasks, dayflow-tasks-export: the page's name (git's convention)."""
    return ctx.command_path.replace(" ", "-")


def usage(ctx: Any) -> str:
    return f"{ctx.command_path} {' '.join(ctx.command.collect_usage_pieces(ctx))}".strip()


def help_text(ctx: Any) -> str:
    """The command's help as --help shows it: Click's text before a \\f, dedented."""
    return inspect.cleandoc(ctx.command.help or "").partition("\f")[0].strip()


def short_help(ctx: Any) -> str:
    return ctx.command.get_short_help_str(limit=300)


def options(ctx: Any) -> list[tuple[str, str]]:
    """(the option as --help names it, its help with default and env) for each visible
    parameter, arguments first, as --help lists them."""
    params = ctx.command.get_params(ctx)
    records = []
    for kind in ("argument", "option"):
        for param in params:
            if param.param_type_name != kind or getattr(param, "hidden", False):
                continue
            record = param.get_help_record(ctx)
            if record is None:  # an argument without help text: its metavar
                record = (param.make_metavar(ctx), "")
            records.append(record)
    return records


def paragraphs(text: str) -> list[tuple[bool, str]]:
    """(kept as written, paragraph): Click's `\\b` marks a paragraph not to rewrap."""
    out = []
    for block in re.split(r"\n\s*\n", text):
        if block.startswith("\b"):
            out.append((True, block[1:].strip("\n")))
        elif block.strip():
            out.append((False, " ".join(line.strip() for line in block.splitlines())))
    return out


# --- roff -----------------------------------------------------------------------------------


def _roff(text: str) -> str:
    """Text safe in a roff line: backslashes escaped, a leading dot or quote neutralised."""
    text = text.replace("\\", "\\e")
    return "\n".join(
        "\\&" + line if line.startswith((".", "'")) else line for line in text.split("\n")
    )


def _dash(name: str) -> str:
    """A name with its hyphens as roff's minus sign, so that it can be searched and pasted."""
    return name.replace("-", "\\-")


def _roff_option(names: str) -> str:
    """`--db PATH, -o DIR` as bold names and italic metavars."""
    parts = []
    for piece in re.split(r"(\s+|,\s*|/)", names):
        if piece.startswith("-"):
            parts.append("\\fB" + _roff(piece).replace("-", "\\-") + "\\fR")
        elif piece.strip(" ,/"):
            parts.append("\\fI" + _roff(piece) + "\\fR")
        else:
            parts.append(piece)
    return "".join(parts)


def roff_page(ctx: Any) -> str:
    """The manual page (man(7) macros) of the command of `ctx`."""
    from dayflow import __version__

    name = page_name(ctx)
    lines = [
        f'.TH "{name.upper()}" "1" "" "dayflow {__version__}" "Dayflow Manual"',
        ".SH NAME",
        f"{_dash(name)} \\- {_roff(short_help(ctx))}",
        ".SH SYNOPSIS",
        f".B {ctx.command_path}",
        _roff(" ".join(ctx.command.collect_usage_pieces(ctx))),
        ".SH DESCRIPTION",
    ]
    for kept, para in paragraphs(help_text(ctx)):
        lines += [".PP", ".nf", _roff(para), ".fi"] if kept else [".PP", _roff(para)]
    records = options(ctx)
    if records:
        lines.append(".SH OPTIONS")
        for names, text in records:
            lines += [".TP", _roff_option(names), _roff(text) if text else "\\&"]
    subs = subcommands(ctx)
    if subs:
        lines.append(".SH COMMANDS")
        for sub in subs:
            lines += [".TP", f"\\fB{_roff(sub.info_name)}\\fR", _roff(short_help(sub))]
            lines.append(f"See \\fB{_dash(page_name(sub))}\\fR(1).")
    related = [] if ctx.parent is None else [ctx.parent]
    related += subs
    if related:
        lines.append(".SH SEE ALSO")
        lines.append(",\n".join(f"\\fB{_dash(page_name(r))}\\fR(1)" for r in related))
    return "\n".join(lines) + "\n"


# --- Markdown -------------------------------------------------------------------------------


def _md(text: str) -> str:
    """Help text in Markdown: < and > escaped (HTML), the rest as written."""
    return text.replace("<", "&lt;").replace(">", "&gt;")


def markdown(ctx: Any) -> str:
    """The CLI reference of the command of `ctx` and of every command under it."""
    lines = [
        "# Command-line reference",
        "",
        f"<!-- Generated from the commands' --help by `{REGENERATE}`; do not edit. "
        "tests/test_cli_manual.py fails when it is stale. -->",
        "",
        "Every command, its help text and every option, as `--help` prints them. The same "
        "pages are in `man`: `dayflow man COMMAND | man -l -`, or `dayflow man -o DIR` for "
        "one page per command.",
        "",
    ]
    for each in walk(ctx):
        lines += [f"## {each.command_path}", "", "```", f"Usage: {usage(each)}", "```", ""]
        for kept, para in paragraphs(help_text(each)):
            lines += (["```", para, "```"] if kept else [_md(para)]) + [""]
        records = options(each)
        if records:
            lines += ["Options:", ""]
            lines += [
                f"- `{names}`" + (f": {_md(text)}" if text else "") for names, text in records
            ]
            lines.append("")
        subs = subcommands(each)
        if subs:
            lines += ["Commands:", ""]
            for sub in subs:
                anchor = sub.command_path.replace(" ", "-")
                lines.append(f"- [`{sub.info_name}`](#{anchor}): {_md(short_help(sub))}")
            lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"
