"""One MCP tool call of a step, saved the way Dayflow's own network reads are.

- A read is saved (`steps.save_effect`) the moment it returns, before the step completes: a
  resume of the step reuses it and never calls the server again, and a completed step's
  result lives in its row. Only a read in flight when the process died is made again (nothing
  of it had reached the model).
- A write (allowed only by `allow_writes`) is a saved effect with a pending mark: the mark
  `<tool_use id>#pending` is committed before the call and the result after it. A resume that
  finds the mark without the result does not call again: it saves and returns an *uncertain*
  error (the call may have happened), as an interrupted delivery is reported.
- Each call asks the config again (`Servers.call`): a resume never makes a call the user has
  taken back since the run started (out of `allow_tools`, or a write without `allow_writes`).

No transaction is open during a call (each save is its own, short one).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dayflow.frozen import Frozen
from dayflow.mcp.offer import WRITE
from dayflow.mcp.servers import Servers
from dayflow.models import RunSettings
from dayflow.store import Lease, Store
from dayflow.tools import McpCaller, error_text

PENDING_SUFFIX = "#pending"


class Called(Frozen):
    """A call's tool_result content, whether it is an error, and whether it was uncertain."""

    content: str
    is_error: bool
    uncertain: bool = False


def uncertain_text(name: str) -> str:
    return error_text(
        f"uncertain: a process was killed while {name} was being called; it may have taken "
        "effect, and it is not called again: say so in the brief"
    )


def call_tool(
    store: Store,
    lease: Lease,
    n: int,
    use_id: str,
    name: str,
    args: Any,
    *,
    catalog: dict[str, Any],
    servers: Servers,
    config: str | None,
) -> Called:
    """Run MCP tool call `use_id` (the model's name `name`) of step `n` and save its result."""
    entry = catalog.get(name)
    if not (isinstance(entry, list) and len(entry) == 3):
        return Called(error_text(f"unknown tool {name!r}"), True)
    server, tool, kind = entry
    if not isinstance(args, dict):
        return Called(error_text(f"the arguments of {name} must be a JSON object"), True)
    before = None
    if kind == WRITE:
        mark = use_id + PENDING_SUFFIX
        if store.steps.get_effect(lease.run_id, mark) is not None:
            text = uncertain_text(name)
            store.steps.save_effect(lease, n, use_id, name, lambda: (text, True))
            return Called(text, True, uncertain=True)

        def before() -> None:  # the mark, committed once the config still allows the call
            store.steps.save_effect(lease, n, mark, name, lambda: ("pending", False))

    content, is_error = servers.call(config, server, tool, args, kind=kind, before=before)
    saved = store.steps.save_effect(lease, n, use_id, name, lambda: (content, is_error))
    return Called(saved.content, saved.is_error)


def caller(
    store: Store,
    lease: Lease,
    settings: RunSettings,
    servers: Servers | None,
    say: Callable[[str], None] = lambda line: None,
) -> McpCaller | None:
    """What a step's ToolEnv calls for the run's MCP tools; None when it offers none (or
    this process has no servers: its tools are then unknown to it, and refused as such)."""
    catalog = settings.mcp_tools
    if not catalog or servers is None:
        return None

    def call(n: int, use_id: str, name: str, args: Any) -> tuple[str, bool]:
        done = call_tool(
            store,
            lease,
            n,
            use_id,
            name,
            args,
            catalog=catalog,
            servers=servers,
            config=settings.config_file,
        )
        if done.uncertain:
            say(f"{name}: {done.content.removeprefix('Error: ')}")
        return done.content, done.is_error

    return call
