"""`dayflow mcp list|check|import|serve`: the MCP servers of the config file, and Dayflow as
an MCP server (dayflow.mcp). Nothing here calls a model.
"""

# No `from __future__ import annotations` here: Typer would compile and eval every option's
# annotation string at start-up (issue 13).

from pathlib import Path
from typing import Annotated, Any

import typer

from dayflow.cli_base import (
    ConfigOpt,
    DbOpt,
    JsonOpt,
    Runtime,
    VerboseOpt,
    get_deps,
    handle_errors,
    print_json,
)
from dayflow.errors import SourceError, UsageError

commands = typer.Typer(
    name="mcp",
    help="MCP: other servers' tools in the brief ([mcp_servers.NAME] in the config file), "
    "and `serve`, Dayflow's briefs and tasks for an MCP client. Exit 4: a server did not "
    "start (check), a file could not be read (import).",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
)


IMPORT_HELP = (
    "claude_desktop_config.json, .mcp.json, ~/.claude.json, .cursor/mcp.json or .vscode/mcp.json."
)


def _survey(deps: Runtime, config_file: str | None, verbose: bool) -> tuple[Any, list[Any], Any]:
    path, _ = deps.config.config_path(config_file)
    servers = deps.mcp(verbose)
    try:
        rows, offer = servers.survey(str(path))
    except ImportError:
        from dayflow.mcp import INSTALL_HINT

        raise UsageError(INSTALL_HINT) from None
    if not rows:
        deps.notice(f"no [mcp_servers.NAME] in {path}: `dayflow mcp import FILE` writes some")
    return path, rows, offer


@commands.command("list")
def list_servers(
    ctx: typer.Context,
    config_file: ConfigOpt = None,
    as_json: JsonOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Each server and its tools: offered to the model (as what name, read or write), or
    refused and why (starts each server to list its tools)."""
    deps = get_deps(ctx)
    with handle_errors(deps):
        from dayflow.mcp import shown

        _, rows, offer = _survey(deps, config_file, verbose)
        tools = _tool_rows(rows, offer)
        if as_json:
            print_json(deps, {"servers": [_server_json(r) for r in rows], "tools": tools})
            return
        for row in rows:
            _line(deps, _server_line(row))
            for t in (t for t in tools if t["server"] == row.name):
                _line(deps, f"  {shown(t['tool'])}: {t['verdict']}")


@commands.command()
def check(ctx: typer.Context, config_file: ConfigOpt = None, verbose: VerboseOpt = False) -> None:
    """Start each server, list its tools and say how long it took (exit 4 if one did not
    start)."""
    deps = get_deps(ctx)
    with handle_errors(deps):
        from dayflow.mcp import shown
        from dayflow.mcp.offer import malformed

        _, rows, _ = _survey(deps, config_file, verbose)
        for row in rows:
            _line(deps, _server_line(row))
            for name, why in row.malformed:  # left out, the rest of the server still used
                _line(deps, f"  {shown(name)}: left out: {malformed(why)}")
        down = [r.name for r in rows if r.why is not None]
        if down:
            raise SourceError(f"{len(down)} MCP server(s) did not start: {', '.join(down)}")


@commands.command("import")
def import_file(
    ctx: typer.Context,
    file: Annotated[
        Path,
        typer.Argument(
            help="claude_desktop_config.json, .mcp.json, "
            "~/.claude.json, .cursor/mcp.json or .vscode/mcp.json."
        ),
    ],  # fmt: skip
) -> None:
    """Print the file's MCP servers as [mcp_servers.NAME] TOML to paste into the config file,
    allow_tools empty; secret values are never copied, only ${VAR} references."""
    deps = get_deps(ctx)
    with handle_errors(deps):
        import json

        from dayflow.config_files import config_bytes
        from dayflow.errors import ConfigFileError
        from dayflow.mcp.importer import to_toml

        path = file.expanduser()
        if not path.exists():
            raise ConfigFileError(f"{file}: does not exist")
        raw = config_bytes(path)
        try:
            doc = json.loads(raw.decode("utf-8-sig"))
        except (UnicodeDecodeError, json.JSONDecodeError) as err:
            raise ConfigFileError(f"{file}: not JSON ({err})") from None
        except RecursionError:
            raise ConfigFileError(f"{file}: not JSON (nested too deeply)") from None
        text, count = to_toml(doc, str(file))
        if count == 0:
            raise ConfigFileError(f"{file}: no mcpServers or servers in it")
        deps.out.file.write(text)
        deps.notice(f"{count} server(s) from {file}: fill allow_tools, then `dayflow mcp check`")


@commands.command()
def serve(
    ctx: typer.Context,
    db: DbOpt = None,
    read_only: Annotated[
        bool,
        typer.Option(
            "--read-only",
            help="Offer only the reading tools: a client cannot mark a task done (a call to "
            "mark_task_done is refused).",
        ),
    ] = False,
) -> None:
    """Serve today's brief, the open tasks and the run history to an MCP client over stdio
    (read-only, and one tool that marks a task done unless --read-only); never starts a model
    run. Briefs are made inert as a file sink's are."""
    deps = get_deps(ctx)
    with handle_errors(deps):
        settings = deps.settings(db=db)
        try:
            from dayflow.mcp.serve import serve_stdio
        except ImportError:
            from dayflow.mcp import INSTALL_HINT

            raise UsageError(INSTALL_HINT) from None
        deps.store(settings).close()  # a missing database is one line now, not at a call
        serve_stdio(lambda: deps.store(settings), settings.tz, deps.clock.now, read_only=read_only)


def _line(deps: Runtime, text: str) -> None:
    """A line of a server's listing: its tool names and errors are the server's words (the
    names already `shown`: escaped and cut)."""
    from dayflow.listing import plain

    deps.out.print(plain(text), markup=False, soft_wrap=True)


def _server_line(row: Any) -> str:
    from dayflow.mcp import shown

    off = "" if row.enabled else " (enabled = false)"
    head = f"{shown(row.name)}: {shown(row.where, 120)}"
    if row.why is not None:
        return f"{head}: not started: {row.why}{off}"
    bad = f", {len(row.malformed)} malformed" if row.malformed else ""
    return f"{head}: started in {row.seconds:.1f} s, {len(row.tools)} tool(s){bad}{off}"


def _server_json(row: Any) -> dict[str, Any]:
    return {"name": row.name, "where": row.where, "enabled": row.enabled, "tools": list(row.tools),
            "seconds": row.seconds, "error": row.why,
            "malformed": [{"tool": n, "why": w} for n, w in row.malformed]}  # fmt: skip


def _tool_rows(rows: list[Any], offer: Any) -> list[dict[str, Any]]:
    verdicts: dict[tuple[str, str], str] = {}
    for o in offer.offered:
        verdicts[(o.server, o.tool)] = f"offered as {o.name} ({o.kind})"
    for r in offer.refused:
        verdicts[(r.server, r.tool)] = f"refused: {r.reason}"
    for r in offer.left_out:
        verdicts[(r.server, r.tool)] = f"left out: {r.reason}"
    out = []
    for row in rows:
        names = list(row.tools) + [t for (s, t) in verdicts if s == row.name and t not in row.tools]
        for tool in names:
            verdict = verdicts.get((row.name, tool), "not offered: the server is disabled")
            out.append({"server": row.name, "tool": tool, "verdict": verdict})
    return out
