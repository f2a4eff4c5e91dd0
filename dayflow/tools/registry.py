"""The tools a run offers, in the order the model sees them, and how one call of a step is
run: refused (too many calls, an unknown tool, bad arguments), run as a read, or run inside
the transaction that saves its result."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dayflow.errors import SourceUnavailable
from dayflow.models import is_mcp_tool
from dayflow.store import Lease, Store
from dayflow.tools.calendar import READ_CALENDAR
from dayflow.tools.drafts import DRAFT_REPLY
from dayflow.tools.followups import READ_FOLLOWUPS
from dayflow.tools.mail import READ_INBOX, READ_MESSAGE
from dayflow.tools.prep import READ_PREP
from dayflow.tools.prep import reads_network as prep_reads_network
from dayflow.tools.since import MOVE_DUE, READ_SINCE
from dayflow.tools.spec import (
    MAX_RESULT_CHARS,
    Tool,
    ToolEnv,
    ToolError,
    error_text,
    result_text,
    validate,
)
from dayflow.tools.tasks import CREATE_TASK, READ_TASKS

MAX_TOOL_CALLS_PER_TURN = 25

# The order is part of every request: a new tool goes at the end.
_ORDER = (
    READ_INBOX,
    READ_MESSAGE,
    READ_CALENDAR,
    READ_TASKS,
    CREATE_TASK,
    READ_FOLLOWUPS,
    READ_PREP,
    DRAFT_REPLY,
    READ_SINCE,
    MOVE_DUE,
)
TOOLS: dict[str, Tool] = {t.name: t for t in _ORDER}
# Offered only by a run with drafts on (`RunSettings.drafts`): no other run's request changes.
ONLY_WITH_DRAFTS = frozenset({DRAFT_REPLY.name})


def definitions(
    tools: dict[str, Tool] | None = None, *, drafts: bool = False
) -> list[dict[str, Any]]:
    """The tool definitions sent to the model, in a stable order (draft_reply only with
    `drafts`)."""
    chosen = (tools or TOOLS).values()
    return [t.definition() for t in chosen if drafts or t.name not in ONLY_WITH_DRAFTS]


def idempotency_key_of(name: str, args: Any) -> str | None:
    """The task key a create_task call carries, for the saved-effect record."""
    if name == "create_task" and isinstance(args, dict):
        key = args.get("idempotency_key")
        return key if isinstance(key, str) else None
    return None


@dataclass(frozen=True)
class Outcome:
    """A call's tool_result content, whether it is an error, and whether it was saved (with
    its `tool_executed` event) as an effect already."""

    content: str
    is_error: bool
    saved: bool


def execute(
    store: Store,
    lease: Lease,
    n: int,
    env: ToolEnv,
    index: int,
    name: str,
    args: Any,
    use_id: str,
) -> Outcome:
    """Run one tool call of step `n`; every failure becomes an is_error result. A call with a
    local effect is run inside the transaction that saves its result (and logs it); any other
    call (a read, or one refused before it ran) only returns its result, for the step."""
    key = idempotency_key_of(name, args)
    tool = TOOLS.get(name)
    problem: str | None = None
    if index >= MAX_TOOL_CALLS_PER_TURN:
        problem = (
            f"too many tool calls in one turn (limit {MAX_TOOL_CALLS_PER_TURN}); "
            "this call was not executed"
        )
    elif env.mcp is not None and is_mcp_tool(name):
        # Another server's tool: saved the moment it returns (dayflow.mcp.calls).
        content, is_error = env.mcp(n, use_id, name, args)
        return Outcome(content, is_error, saved=True)
    elif tool is None:
        problem = f"unknown tool {name!r}; available tools: {', '.join(TOOLS)}"
    else:
        try:
            validate(tool.input_schema, args)
        except ToolError as exc:
            problem = f"invalid arguments for {name}: {_no_arguments(args, str(exc))}"
    if problem is not None or tool is None:
        return Outcome(error_text(problem or "unknown tool"), True, saved=False)

    def call() -> tuple[str, bool] | tuple[str, bool, str | None]:
        env.call_id = use_id
        try:
            text = result_text(tool.handler(args, env))
        except ToolError as exc:
            return error_text(_no_arguments(args, str(exc))), True, exc.refusal
        except SourceUnavailable:
            raise  # the run fails (resumably) and nothing is saved for this call
        except Exception as exc:  # a tool bug must not end the run: tell the model instead
            return error_text(f"{name} failed: {type(exc).__name__}: {exc}"), True
        if len(text) > MAX_RESULT_CHARS:
            return error_text(
                f"the result of {name} is too large ({len(text):,} characters, the limit is "
                f"{MAX_RESULT_CHARS:,}); ask for less (a smaller limit or a narrower range)"
            ), True
        return text, False

    if tool.effect:
        effect = store.steps.save_effect(lease, n, use_id, name, call, key)
        return Outcome(effect.content, effect.is_error, saved=True)
    content, is_error = call()[:2]  # a read: outside any transaction (no rule refuses one)
    if tool.outward or reads_network(name, env):
        # A read from a mail or calendar server is saved the moment it returns, so a resume
        # never asks the server again for a step that already read it (issue 9).
        effect = store.steps.save_effect(lease, n, use_id, name, lambda: (content, is_error), key)
        return Outcome(effect.content, effect.is_error, saved=True)
    return Outcome(content, is_error, saved=False)  # committed with the step


NO_ARGUMENTS = (
    "the model sent no arguments (a call whose arguments were not valid JSON arrives as {}); "
    "call it again with its arguments as a JSON object"
)


def _no_arguments(args: Any, problem: str) -> str:
    """A failed call's error; when its arguments came back empty, it says so first: a local
    server (llama.cpp) turns arguments that are not valid JSON into `{}`."""
    return f"{NO_ARGUMENTS}: {problem}" if args == {} else problem


def reads_network(name: str, env: ToolEnv) -> bool:
    """Whether tool `name` reads a server (IMAP, CalDAV, a calendar URL) in this run."""
    if name in ("read_inbox", "read_message"):
        return env.mail.remote
    if name == "read_calendar":
        return env.calendars.remote
    if name == "read_followups":
        feed = env.mail.followups
        return feed is not None and feed.remote
    if name == "read_prep":
        return prep_reads_network(env)
    if name == "read_since":  # it reads the calendar and the followups again
        feed = env.mail.followups
        return env.calendars.remote or (feed is not None and feed.remote)
    return False
