"""The tool registry: each tool's name, JSON schema, handler, and whether it has a local effect.

Reads (`effect=False`) run outside any transaction and save nothing: their result is committed
with the step (`complete_step`). A tool with a local effect (`create_task`) runs inside the
transaction that saves its result, so the task row and the saved result are written together or
not at all, and a resume reuses that result instead of running it again.

The package's face is this module. `spec` says what a tool is, `registry` lists the tools a
run offers and runs one call; each concept's tools live in their own module (`mail`,
`calendar`, `tasks`). A new tool is a `Tool` in a module of its own, added at the end of
`registry.TOOLS`.
"""

from __future__ import annotations

from dayflow.tools.calendar import MAX_EVENTS, NO_CALENDAR_SOURCE, calendar_range, read_calendar
from dayflow.tools.mail import NO_MAIL_SOURCE, read_inbox, read_message
from dayflow.tools.registry import (
    MAX_TOOL_CALLS_PER_TURN,
    NO_ARGUMENTS,
    TOOLS,
    Outcome,
    definitions,
    execute,
    idempotency_key_of,
    reads_network,
)
from dayflow.tools.since import READ_SINCE, Earlier, earlier_brief
from dayflow.tools.spec import (
    MAX_RESULT_CHARS,
    Handler,
    McpCaller,
    Tool,
    ToolEnv,
    ToolError,
    error_text,
    result_text,
    string_schema,
    validate,
)
from dayflow.tools.tasks import (
    TaskCapReached,
    create_task,
    due_window,
    read_tasks,
    refused_by_cap,
)

__all__ = [
    "MAX_EVENTS",
    "MAX_RESULT_CHARS",
    "MAX_TOOL_CALLS_PER_TURN",
    "NO_ARGUMENTS",
    "NO_CALENDAR_SOURCE",
    "NO_MAIL_SOURCE",
    "READ_SINCE",
    "TOOLS",
    "Handler",
    "McpCaller",
    "Earlier",
    "Outcome",
    "Tool",
    "ToolEnv",
    "TaskCapReached",
    "ToolError",
    "calendar_range",
    "create_task",
    "definitions",
    "due_window",
    "earlier_brief",
    "error_text",
    "execute",
    "idempotency_key_of",
    "read_calendar",
    "read_inbox",
    "read_message",
    "read_tasks",
    "reads_network",
    "refused_by_cap",
    "result_text",
    "string_schema",
    "validate",
]
