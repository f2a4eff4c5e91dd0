"""`dayflow mcp serve`: Dayflow as a stdio MCP server, for Claude Desktop, Claude Code, Cursor.

Read-only tools (readOnlyHint): today's brief (the newest finished brief of a day, or none),
the open tasks, the run history and one run's summary; one write, marking a task done
(destructiveHint false, idempotentHint true: marking it twice changes nothing). It reads the
same store as the CLI (SQLite or PostgreSQL), opened for each call and closed after it, and
never starts a model run: it only shows what `dayflow brief` made.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime
from typing import Any
from zoneinfo import ZoneInfo

from dayflow.errors import DayflowError
from dayflow.models import DONE
from dayflow.store import Store

OpenStore = Callable[[], Store]
MAX_RUNS = 100
_TASK_KEYS = ("id", "title", "due", "status", "source_id", "notes", "created_at")


def todays_brief(store: Store, day: date) -> dict[str, Any]:
    """The newest finished brief of `day` (an update of the day counts), or none."""
    runs = [r for r in store.runs.list(status=DONE, limit=None) if r.brief_date == day.isoformat()]
    if not runs or runs[0].final_text is None:
        return {"date": day.isoformat(), "brief": None, "note": "no finished brief for this day"}
    run = runs[0]
    return {"date": day.isoformat(), "run_id": run.id, "finished_at": run.finished_at,
            "brief": run.final_text}  # fmt: skip


def open_tasks(store: Store) -> dict[str, Any]:
    tasks = store.tasks.list(include_done=False)
    return {"tasks": [{k: t.to_json().get(k) for k in _TASK_KEYS} for t in tasks]}


def run_history(store: Store, limit: int) -> dict[str, Any]:
    runs = store.runs.list(limit=max(1, min(limit, MAX_RUNS)))
    return {"runs": [_run_line(r) for r in runs]}


def run_summary(store: Store, run_id: str) -> dict[str, Any]:
    run = store.runs.find(run_id)
    return {**_run_line(run), "reason": run.reason, "max_steps": run.max_steps,
            "brief": run.final_text}  # fmt: skip


def mark_task_done(store: Store, task_id: str) -> dict[str, Any]:
    task = store.tasks.mark_done(store.tasks.find(task_id).id)
    return {"task": {k: task.to_json().get(k) for k in _TASK_KEYS}}


def _run_line(run: Any) -> dict[str, Any]:
    return {"id": run.id, "date": run.brief_date, "status": run.status, "model": run.model,
            "steps": run.steps, "tokens": run.usage.total, "created_at": run.created_at,
            "finished_at": run.finished_at}  # fmt: skip


def build_server(open_store: OpenStore, tz: str, now: Callable[[], datetime]) -> Any:
    """The SDK's MCPServer with Dayflow's tools over the store `open_store` opens."""
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


def serve_stdio(open_store: OpenStore, tz: str, now: Callable[[], datetime]) -> None:
    """Answer MCP requests on stdin/stdout until the client closes them."""
    build_server(open_store, tz, now).run("stdio")
