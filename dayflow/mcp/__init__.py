"""MCP: other servers' tools in the brief (the client), and Dayflow as a server (`serve`).

The face is light on purpose: nothing here imports the SDK (`mcp`, an optional extra,
`dayflow[mcp]`) or asyncio; `dayflow.mcp.runtime` and `dayflow.mcp.serve` do, and only a run or
a command that uses a configured server imports them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from dayflow.models import MCP_PREFIX as PREFIX
from dayflow.models import is_mcp_tool

INSTALL_HINT = "MCP servers need the mcp extra: pip install 'dayflow[mcp]'"
MAX_SHOWN = 80  # characters of a server's or a tool's name on a terminal line
# The system prompt's line naming the servers a run did not start for a model that never
# calls MCP tools (`unstarted_note`); the offline model reads it back (`unstarted_in`).
_UNSTARTED = "MCP servers not started, as this model never calls their tools: "


def unstarted_note(servers: Sequence[str]) -> str:
    """The system prompt's line for a model that never calls MCP tools (the offline model):
    the config's enabled servers, which the run did not start (names are [A-Za-z0-9_-])."""
    return f"{_UNSTARTED}{', '.join(servers)}."


def unstarted_in(system: str) -> list[str]:
    """The servers `unstarted_note` named in a system prompt (none when it has no such line)."""
    for line in system.splitlines():
        if line.startswith(_UNSTARTED):
            return [s for s in line[len(_UNSTARTED) :].rstrip(".").split(", ") if s]
    return []


def shown(name: str, limit: int = MAX_SHOWN) -> str:
    """A name a server (or the config) gave, as one terminal line shows it: control
    characters, line ends and bidi marks escaped, and cut to `limit` characters with an ellipsis (a
    server may name a tool with 5,000 characters); never an escape cut in half."""
    from dayflow.printable import plain as escaped

    def plain(text: str) -> str:  # one line: a line end is an escape too
        return escaped(text).replace("\n", "\\n")

    text = plain(name)
    if len(text) <= limit:
        return text
    pieces: list[str] = []
    room = limit - 1
    for char in name:  # whole escapes only
        piece = plain(char)
        if len(piece) > room:
            break
        pieces.append(piece)
        room -= len(piece)
    return "".join(pieces) + "…"


def offline_note(tools: Iterable[Any], system: str = "") -> str | None:
    """The offline model's one line about the MCP servers it did not start (named in its
    system prompt), or the MCP tools it was offered by a run made before servers were left
    unstarted for it (it cannot know what they mean, so it never calls them); None when the
    config has none."""
    names = [t.get("name") for t in tools if isinstance(t, dict) and is_mcp_tool(t.get("name"))]
    if not names:
        unstarted = unstarted_in(system)
        if not unstarted:
            return None
        return (
            "_MCP tools need a model (Claude or local): the offline model did not start "
            f"{', '.join(unstarted)}, so nothing of {'it' if len(unstarted) == 1 else 'them'} "
            "is in this brief._"
        )
    servers = sorted({str(n)[len(PREFIX) :].split("__", 1)[0] for n in names})
    return (
        f"_MCP tools need a model (Claude or local): the offline model left {len(names)} "
        f"tool(s) of {', '.join(servers)} unused._"
    )


def with_offline_note(content: list[Any], tools: Iterable[Any], system: str = "") -> list[Any]:
    """The offline model's final turn with `offline_note` after its brief (the last text
    block), once; unchanged when the config has no MCP server."""
    note = offline_note(tools, system)
    texts = [i for i, block in enumerate(content) if block.get("type") == "text"]
    if note is None or not texts:
        return content
    last = texts[-1]
    text = str(content[last].get("text", "")).rstrip("\n")
    block = {**content[last], "text": f"{text}\n\n{note}\n"}
    return [*content[:last], block, *content[last + 1 :]]
