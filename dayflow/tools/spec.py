"""What a tool is: its name, JSON schema, handler and whether it has a local effect; what its
handler may touch (`ToolEnv`); the error the model can act on; and its result as text."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import date
from typing import Any
from zoneinfo import ZoneInfo

from dayflow.drafts import Drafter
from dayflow.errors import SourceError, SourceUnavailable
from dayflow.rules import RuleSet
from dayflow.shown import Shown
from dayflow.sources.inbox import Inbox, legacy_inbox
from dayflow.sources.mail import PathMissing
from dayflow.sources.protocols import CalendarSource, InboxSource, as_calendar
from dayflow.store import Tasks


class ToolError(Exception):
    """A failure the model can act on: becomes a tool_result with is_error."""

    # Which rule refused the call, if one did: saved with the effect as data (its
    # `refused_by`), so a count of refusals never matches the words the model reads.
    refusal: str | None = None


@dataclass
class ToolEnv:
    """What handlers may touch. A handler with a local effect runs inside the transaction that
    saves its result, so its writes through `tasks` commit together with that result."""

    tasks: Tasks
    run_id: str
    inbox: Inbox | InboxSource
    calendar: CalendarSource
    brief_date: date
    tz: ZoneInfo
    task_cap: int
    # What the run's committed steps showed the model (dayflow.shown): the only item keys a
    # task may be filed under. Read when a create_task needs it.
    shown: Callable[[], Shown] = Shown
    # The run's MCP tools (dayflow.mcp.calls): (step, tool_use id, name, arguments) to the
    # saved tool_result content and whether it is an error. None: the run offers none.
    mcp: McpCaller | None = None
    # The user's rules the run obeys (dayflow.rules; the run's own, kept in its settings): the
    # reads mark what they touch, create_task refuses what they forbid.
    rules: RuleSet = field(default_factory=RuleSet)
    # Where draft_reply writes (dayflow.drafts): None, drafts are off and nothing is written.
    drafts: Drafter | None = None
    # The id of the tool_use being run (set by `registry.execute` before each call): the
    # marks of a call with its own write (draft_reply) name it.
    call_id: str = ""
    # The previous finished brief of the profile (dayflow.tools.since.Earlier), read when
    # read_since asks; None on a first brief.
    earlier: Callable[[], Any] = lambda: None
    # The one face each is read through: the merged `Inbox` (a dicts reader becomes one), a
    # calendar with the protocol's defaults (one that only has `events()` gets them).
    mail: Inbox = field(init=False)
    calendars: CalendarSource = field(init=False)

    def __post_init__(self) -> None:
        self.mail = legacy_inbox(self.inbox)
        # A message filed before its key carried its sender is read with that task's key.
        self.mail.keep_filed_keys(self.tasks.filed_at)
        self.calendars = as_calendar(self.calendar)


McpCaller = Callable[[int, str, str, Any], tuple[str, bool]]
Handler = Callable[[dict[str, Any], ToolEnv], dict[str, Any]]


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    input_schema: dict[str, Any]
    handler: Handler
    effect: bool = False
    # A call that writes outside the store (draft_reply's APPEND) and saves its own marks
    # around that write: run outside any transaction, its result saved the moment it returns.
    outward: bool = False

    def definition(self) -> dict[str, Any]:
        """The tool as the Messages API takes it."""
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
        }


MAX_RESULT_CHARS = 60_000  # no tool result is larger (about 15k tokens)
ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


@contextlib.contextmanager
def reading(prefix: str) -> Iterator[None]:
    """A read tool's source failures as the run takes them: a source the run needs that is
    gone (a local path, or any failure with --strict-sources) fails the run, resumably; any
    other SourceError is an error result the model reads, `prefix` and the source's line."""
    try:
        yield
    except SourceUnavailable:
        raise
    except PathMissing as exc:
        raise SourceUnavailable(str(exc)) from None
    except SourceError as exc:
        raise ToolError(f"{prefix}{exc}") from None


def string_schema(max_length: int, description: str) -> dict[str, Any]:
    """The schema of a non-empty string argument of at most `max_length` characters."""
    return {"type": "string", "minLength": 1, "maxLength": max_length, "description": description}


def validate(schema: dict[str, Any], value: Any, path: str = "input") -> None:
    """Check `value` against the subset of JSON Schema our tools use; raise ToolError."""
    kind = schema.get("type")
    if kind == "object":
        if not isinstance(value, dict):
            raise ToolError(f"{path} must be an object")
        props = schema.get("properties", {})
        for name in schema.get("required", []):
            if name not in value:
                raise ToolError(f"'{name}' is required")
        if schema.get("additionalProperties") is False:
            extra = sorted(set(value) - set(props))
            if extra:
                raise ToolError(f"unknown argument(s): {', '.join(extra)}")
        for name, sub in props.items():
            if name in value:
                validate(sub, value[name], name)
        return
    if kind == "integer" and (not isinstance(value, int) or isinstance(value, bool)):
        raise ToolError(f"'{path}' must be an integer, got {json.dumps(value)[:40]}")
    if kind == "boolean" and not isinstance(value, bool):
        raise ToolError(f"'{path}' must be true or false, got {json.dumps(value)[:40]}")
    if kind == "string":
        if not isinstance(value, str):
            raise ToolError(f"'{path}' must be a string, got {json.dumps(value)[:40]}")
        if len(value) < schema.get("minLength", 0):
            raise ToolError(f"'{path}' must not be empty")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            raise ToolError(f"'{path}' is too long ({len(value)} > {schema['maxLength']} chars)")
    if "enum" in schema and value not in schema["enum"]:
        raise ToolError(f"'{path}' must be one of {schema['enum']}, got {json.dumps(value)[:40]}")
    if "minimum" in schema and value < schema["minimum"]:
        raise ToolError(f"'{path}' must be at least {schema['minimum']}")
    if "maximum" in schema and value > schema["maximum"]:
        raise ToolError(f"'{path}' must be at most {schema['maximum']}")


def error_text(message: str) -> str:
    """The content of an is_error tool_result."""
    return f"Error: {message}"


def result_text(result: dict[str, Any]) -> str:
    """The content of a successful tool_result: compact JSON."""
    return json.dumps(result, ensure_ascii=False, separators=(",", ":"))
