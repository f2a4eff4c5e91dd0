"""`dayflow mcp serve`: Dayflow as a stdio MCP server, for Claude Desktop, Claude Code, Cursor.

Read-only tools (readOnlyHint): today's brief (the newest finished brief of a day, or none),
the open tasks, the run history and one run's summary; one write, marking a task done
(destructiveHint false, idempotentHint true: marking it twice changes nothing), which
`--read-only` leaves out (not offered, and a call to it is refused as an unknown tool). It reads
the same store as the CLI (SQLite or PostgreSQL), opened for each call and closed after it, and
never starts a model run: it only shows what `dayflow brief` made.

What it returns is made inert as every sink makes it (the model's text is not trusted: a
message can make it write anything, and a client renders what it is given): a brief as a file
carries it (`safe_text.inert_markdown`: no image, no link the run's mail and calendar did not
show, no raw HTML, escapes visible), and task titles, notes and a run's reason with their
control characters and bidi marks escaped (`printable.plain`).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime
from typing import Any
from zoneinfo import ZoneInfo

from dayflow.errors import DayflowError
from dayflow.models import DONE, Run
from dayflow.printable import plain
from dayflow.safe_text import inert_markdown
from dayflow.shown import shown_in
from dayflow.store import Store

OpenStore = Callable[[], Store]
MAX_RUNS = 100
_TASK_KEYS = ("id", "title", "due", "status", "source_id", "notes", "created_at")
_TASK_TEXT = ("title", "notes")  # the model's words: escaped
WRITE_TOOLS = ("mark_task_done",)


def todays_brief(store: Store, day: date) -> dict[str, Any]:
    """The newest finished brief of `day` (an update of the day counts), or none."""
    runs = [r for r in store.runs.list(status=DONE, limit=None) if r.brief_date == day.isoformat()]
    if not runs or runs[0].final_text is None:
        return {"date": day.isoformat(), "brief": None, "note": "no finished brief for this day"}
    run = runs[0]
    return {"date": day.isoformat(), "run_id": run.id, "finished_at": run.finished_at,
            "brief": inert_brief(store, run)}  # fmt: skip


def inert_brief(store: Store, run: Run) -> str | None:
    """The run's brief as a file sink writes it: only the links its committed reads showed."""
    if run.final_text is None:
        return None
    return inert_markdown(run.final_text, shown_in(store.steps.conversation(run.id)).urls)


def open_tasks(store: Store) -> dict[str, Any]:
    tasks = store.tasks.list(include_done=False)
    return {"tasks": [_task(t.to_json()) for t in tasks]}


def _task(doc: dict[str, Any]) -> dict[str, Any]:
    out = {k: doc.get(k) for k in _TASK_KEYS}
    for key in _TASK_TEXT:
        value = out[key]
        if isinstance(value, str):
            out[key] = plain(value)
    return out


def run_history(store: Store, limit: int) -> dict[str, Any]:
    runs = store.runs.list(limit=max(1, min(limit, MAX_RUNS)))
    return {"runs": [_run_line(r) for r in runs]}


def run_summary(store: Store, run_id: str) -> dict[str, Any]:
    run = store.runs.find(run_id)
    reason = None if run.reason is None else plain(run.reason)
    return {**_run_line(run), "reason": reason, "max_steps": run.max_steps,
            "brief": inert_brief(store, run)}  # fmt: skip


def mark_task_done(store: Store, task_id: str) -> dict[str, Any]:
    task = store.tasks.mark_done(store.tasks.find(task_id).id)
    return {"task": _task(task.to_json())}


def _run_line(run: Any) -> dict[str, Any]:
    return {"id": run.id, "date": run.brief_date, "status": run.status, "model": run.model,
            "steps": run.steps, "tokens": run.usage.total, "created_at": run.created_at,
            "finished_at": run.finished_at}  # fmt: skip


def build_server(
    open_store: OpenStore, tz: str, now: Callable[[], datetime], *, read_only: bool = False
) -> Any:
    """The SDK's MCPServer with Dayflow's tools over the store `open_store` opens; with
    `read_only`, without the tools that change the store (WRITE_TOOLS)."""
    from mcp.server import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp_types import ToolAnnotations

    server = MCPServer(
        "dayflow", instructions="The user's daily briefs and tasks (Dayflow).", log_level="ERROR"
    )
    read = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True)
    write = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True)

    def use(fn: Callable[[Store], dict[str, Any]]) -> dict[str, Any]:
        store = open_store()
        try:
            return fn(store)
        except (DayflowError, ValueError) as err:  # one line the client shows (not found...)
            raise ToolError(str(err)) from None
        finally:
            store.close()

    @server.tool(annotations=read)
    def get_brief(day: str | None = None) -> dict[str, Any]:
        """Today's brief (or the day given as YYYY-MM-DD): the newest finished one, or none."""
        try:
            when = now().astimezone(ZoneInfo(tz)).date() if day is None else _day(day)
        except ValueError as err:
            raise ToolError(str(err)) from None
        return use(lambda s: todays_brief(s, when))

    @server.tool(annotations=read)
    def list_open_tasks() -> dict[str, Any]:
        """The user's open tasks, soonest due first."""
        return use(open_tasks)

    @server.tool(annotations=read)
    def list_runs(limit: int = 20) -> dict[str, Any]:
        """The brief runs, newest first (at most 100)."""
        return use(lambda s: run_history(s, limit))

    @server.tool(annotations=read)
    def get_run(run_id: str) -> dict[str, Any]:
        """One run's summary: status, steps, tokens, why it stopped, its brief."""
        return use(lambda s: run_summary(s, run_id))

    if read_only:
        return server

    @server.tool(name="mark_task_done", annotations=write)
    def mark_done(task_id: str) -> dict[str, Any]:
        """Mark a task done (by id or a unique prefix); marking it again changes nothing."""
        return use(lambda s: mark_task_done(s, task_id))

    return server


def _day(value: str) -> date:
    try:
        return date.fromisoformat(value.strip())
    except ValueError:
        raise ValueError(f"day must be YYYY-MM-DD, got {value[:40]!r}") from None


def serve_stdio(
    open_store: OpenStore, tz: str, now: Callable[[], datetime], *, read_only: bool = False
) -> None:
    """Answer MCP requests on stdin/stdout until the client closes them."""
    build_server(open_store, tz, now, read_only=read_only).run("stdio")
