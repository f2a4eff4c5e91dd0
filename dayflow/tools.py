"""The tool registry: each tool's name, JSON schema, handler, and whether it has a local effect.

Reads (`effect=False`) run outside any transaction and save nothing: their result is committed
with the step (`complete_step`). A tool with a local effect (`create_task`) runs inside the
transaction that saves its result, so the task row and the saved result are written together or
not at all, and a resume reuses that result instead of running it again.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from dayflow.errors import SourceError, SourceUnavailable
from dayflow.shown import MODEL_KEY_PREFIX, Shown
from dayflow.sources import CalendarSource, InboxSource
from dayflow.sources.mail import CursorError, PathMissing, legacy_inbox
from dayflow.store import Lease, Store, Tasks


class ToolError(Exception):
    """A failure the model can act on: becomes a tool_result with is_error."""


@dataclass
class ToolEnv:
    """What handlers may touch. A handler with a local effect runs inside the transaction that
    saves its result, so its writes through `tasks` commit together with that result."""

    tasks: Tasks
    run_id: str
    inbox: InboxSource
    calendar: CalendarSource
    brief_date: date
    tz: ZoneInfo
    task_cap: int
    # What the run's committed steps showed the model (dayflow.shown): the only item keys a
    # task may be filed under. Read when a create_task needs it.
    shown: Callable[[], Shown] = Shown


Handler = Callable[[dict[str, Any], ToolEnv], dict[str, Any]]


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    input_schema: dict[str, Any]
    handler: Handler
    effect: bool = False

    def definition(self) -> dict[str, Any]:
        """The tool as the Messages API takes it."""
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
        }


MAX_TOOL_CALLS_PER_TURN = 25
MAX_RESULT_CHARS = 60_000  # no tool result is larger (about 15k tokens)
CAP_ERROR_PREFIX = "task cap reached"
NO_MAIL_SOURCE = "no mail source is configured ([[inbox]] in the config file)"
NO_CALENDAR_SOURCE = "no calendar is configured ([[calendar]] in the config file)"
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def _local(iso_ts: str, tz: ZoneInfo) -> datetime:
    return datetime.fromisoformat(iso_ts).astimezone(tz)


def read_inbox(args: dict[str, Any], env: ToolEnv) -> dict[str, Any]:
    inbox = legacy_inbox(env.inbox)
    raw_since = args.get("since")
    since = _since(raw_since, env.tz) if isinstance(raw_since, str) else None
    try:
        page = inbox.listing(
            limit=args["limit"],
            since=since,
            source=args.get("source"),
            cursor=args.get("cursor"),
            unread_only=bool(args.get("unread_only")),
        )
    except CursorError as exc:
        raise ToolError(str(exc)) from None
    except SourceUnavailable:
        raise
    except PathMissing as exc:
        raise SourceUnavailable(str(exc)) from None
    except SourceError as exc:
        raise ToolError(f"could not read mail: {exc}") from None
    out: dict[str, Any] = {"messages": [m.listing_json(env.tz) for m in page.items]}
    if page.next_cursor is not None:
        out["next_cursor"] = page.next_cursor
    if page.since is not None:
        out["since"] = page.since.astimezone(env.tz).isoformat()
    if page.failures:
        out["unavailable"] = [{"source": n, "reason": why} for n, why in page.failures]
    if not inbox.sources:  # an empty listing is not an empty inbox: say there is none
        out["unavailable"] = [{"source": "mail", "reason": NO_MAIL_SOURCE}]
    return out


def _since(value: str, tz: ZoneInfo) -> datetime:
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise ToolError(
            f"'since' must be an ISO date or date-time (2026-11-04T18:00), got {value[:40]!r}"
        ) from None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=tz)


def read_message(args: dict[str, Any], env: ToolEnv) -> dict[str, Any]:
    inbox = legacy_inbox(env.inbox)
    try:
        found = inbox.read(args["id"])
    except KeyError:
        raise ToolError(f"no message with id {args['id']!r}; ids come from read_inbox") from None
    except SourceUnavailable:
        raise
    except PathMissing as exc:
        raise SourceUnavailable(str(exc)) from None
    except SourceError as exc:
        raise ToolError(f"could not read message {args['id']!r}: {exc}") from None
    return {"message": found.message_json(env.tz)}


MAX_EVENTS = 100  # per read_calendar result; the rest is counted in "more"
MAX_RANGE_DAYS = 62
_TEXT_CAPS = {"title": 200, "location": 200, "description": 500}
MAX_ATTENDEES = 20


def calendar_range(args: dict[str, Any], today: date) -> tuple[date, date]:
    """The first and last day (inclusive) a read_calendar call asks for."""
    if "range" in args and ("start" in args or "end" in args):
        raise ToolError("give either 'range' or 'start'/'end', not both")
    if "range" in args:
        return today, today if args["range"] == "today" else today + timedelta(days=6)
    if "start" not in args:
        raise ToolError("give 'range' (today or week) or a 'start' date (and optionally 'end')")
    first = _date_arg(args, "start")
    last = _date_arg(args, "end") if "end" in args else first
    if last < first:
        raise ToolError(f"'end' ({last}) is before 'start' ({first})")
    if (last - first).days + 1 > MAX_RANGE_DAYS:
        raise ToolError(f"a range may span at most {MAX_RANGE_DAYS} days")
    return first, last


def _date_arg(args: dict[str, Any], name: str) -> date:
    value = args[name]
    try:
        if not _ISO_DATE.fullmatch(value):
            raise ValueError(value)
        return date.fromisoformat(value)
    except ValueError:
        raise ToolError(f"'{name}' must be a real date as YYYY-MM-DD, got {value!r}") from None


def read_calendar(args: dict[str, Any], env: ToolEnv) -> dict[str, Any]:
    first, last = calendar_range(args, env.brief_date)
    lo = datetime.combine(first, datetime.min.time(), env.tz)
    hi = datetime.combine(last + timedelta(days=1), datetime.min.time(), env.tz)
    try:
        events = env.calendar.events(first=first, last=last)
    except SourceUnavailable:
        raise
    except PathMissing as exc:
        raise SourceUnavailable(str(exc)) from None
    except SourceError as err:
        raise ToolError(str(err)) from None
    found = []
    for e in events:
        if e.get("all_day"):
            start_day, end_day = date.fromisoformat(e["start"]), date.fromisoformat(e["end"])
            if not (start_day <= last and end_day > first):
                continue
            when = {"start": e["start"], "end": e["end"], "all_day": True}
            order = datetime.combine(start_day, datetime.min.time(), env.tz)
        else:
            start, end = _local(e["start"], env.tz), _local(e["end"], env.tz)
            if not (lo <= start < hi if start == end else start < hi and end > lo):
                continue
            when = {"start": start.isoformat(), "end": end.isoformat()}
            order = start
        found.append((order, e["id"], _calendar_item(e, when)))
    found.sort(key=lambda f: (f[0], f[1]))
    out: dict[str, Any] = {"events": [item for _, _, item in found[:MAX_EVENTS]]}
    failures = getattr(env.calendar, "failures", None)
    if failures:  # some calendars answered, these did not
        out["unavailable"] = [{"source": n, "reason": w} for n, w in failures]
    cut = getattr(env.calendar, "cut_short", None)
    if cut:  # recurring series not expanded in full: the rest of the calendar was read
        out["cut_short"] = [c.to_json() for c in cut[:20]]
    if getattr(env.calendar, "sources", None) == []:  # none configured: not an empty day
        out["unavailable"] = [{"source": "calendar", "reason": NO_CALENDAR_SOURCE}]
    return _fit_events(out, len(found))


def _fit_events(out: dict[str, Any], total: int) -> dict[str, Any]:
    """The result under MAX_RESULT_CHARS: descriptions go first, then the latest events (counted
    in "more"), so a busy week is shortened instead of refused as too large."""
    limit = MAX_RESULT_CHARS - 200

    def size() -> int:
        return len(result_text({**out, "more": total}))

    if size() > limit:
        out["events"] = [{k: v for k, v in e.items() if k != "description"} for e in out["events"]]
        out["note"] = "descriptions left out to fit; ask for fewer days to see them"
    while out["events"] and size() > limit:
        out["events"].pop()
    if len(out["events"]) < total:
        out["more"] = total - len(out["events"])
    return out


def _calendar_item(e: dict[str, Any], when: dict[str, Any]) -> dict[str, Any]:
    item: dict[str, Any] = {"id": e["id"], "title": _cap(e["title"], _TEXT_CAPS["title"])}
    item.update(when)
    if e.get("status") and e["status"] != "confirmed":
        item["status"] = e["status"]
    if e.get("source"):
        item["source"] = e["source"]
    for key in ("location", "description"):
        if e.get(key):
            item[key] = _cap(e[key], _TEXT_CAPS[key])
    attendees = e.get("attendees") or []
    if attendees:
        item["attendees"] = [_cap(a, 100) for a in attendees[:MAX_ATTENDEES]]
        if len(attendees) > MAX_ATTENDEES:
            item["attendees"].append(f"and {len(attendees) - MAX_ATTENDEES} more")
    return item


def _cap(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def read_tasks(args: dict[str, Any], env: ToolEnv) -> dict[str, Any]:
    tasks = env.tasks.list(include_done=args["include_done"])
    keys = ("id", "title", "due", "status", "source_id", "idempotency_key")
    return {"tasks": [{k: t.to_json()[k] for k in keys} for t in tasks]}


DUE_BEFORE_DAYS = 14  # how far before the brief's day a due date may be (overdue requests)
DUE_AFTER_DAYS = 366  # and after it: a year


def due_window(brief_date: date) -> tuple[date, date]:
    """The first and last due date a task filed for the brief of `brief_date` may have."""
    lo, hi = brief_date - timedelta(days=DUE_BEFORE_DAYS), brief_date + timedelta(DUE_AFTER_DAYS)
    return lo, hi


def create_task(args: dict[str, Any], env: ToolEnv) -> dict[str, Any]:
    due = args.get("due")
    if due is not None:
        try:
            if not _ISO_DATE.fullmatch(due):
                raise ValueError(due)
            day = date.fromisoformat(due)
        except ValueError:
            raise ToolError(f"'due' must be a real date as YYYY-MM-DD, got {due!r}") from None
        lo, hi = due_window(env.brief_date)
        if not lo <= day <= hi:
            raise ToolError(
                f"'due' {due} is outside this brief's horizon ({lo} to {hi}); leave it out "
                "unless the message gives a date in it; no task was created"
            )
    key = args["idempotency_key"]
    _check_key(key, args.get("source_id"), env.shown())
    book = env.tasks
    if not book.exists(key) and book.count_created_by(env.run_id) >= env.task_cap:
        raise ToolError(
            f"{CAP_ERROR_PREFIX}: this run may create at most {env.task_cap} tasks; "
            "no task was created"
        )
    task, created = book.create(
        title=args["title"],
        idempotency_key=key,
        run_id=env.run_id,
        due=due,
        source_id=args.get("source_id"),
        notes=args.get("notes"),
    )
    # Only fields that do not depend on when or by which run the task was made, so that a
    # resumed run sends the model exactly the bytes an uncrashed run would have sent.
    keys = ("id", "title", "due", "status", "source_id", "notes", "idempotency_key")
    return {"task": {k: task.to_json()[k] for k in keys}, "created": created}


def _check_key(key: str, source_id: str | None, shown: Shown) -> None:
    """Refuse a key that is not the model's own nor an item's this run was shown, and a
    source_id that names an item the key is not its key of (a bogus task would otherwise
    stand for a real message, which then never gets its own)."""
    own = key.startswith(MODEL_KEY_PREFIX) and len(key) > len(MODEL_KEY_PREFIX)
    # A message's second request is `<its key>#2`: still that item's, never another's.
    item_key = re.sub(r"#[1-9][0-9]{0,2}$", "", key)
    if not own and item_key not in shown.keys:
        raise ToolError(
            f"idempotency_key {key[:80]!r} is not the key of any item this run has read: use "
            "the `key` read_inbox gave the message (or 'event:<event id>', 'thread:<thread_id>'), "
            f"or '{MODEL_KEY_PREFIX}<words>' for a task of your own; no task was created"
        )
    if source_id is None:
        return
    keys = shown.keys_of.get(source_id)
    if keys is None:
        raise ToolError(
            f"source_id {source_id[:80]!r} is not the id of a message or event this run has "
            "read; leave it out or use the id read_inbox or read_calendar gave; no task was "
            "created"
        )
    if item_key not in keys:
        raise ToolError(
            f"idempotency_key {key[:80]!r} is not the key of {source_id[:80]!r} (that is "
            f"{' or '.join(sorted(keys))!r}); no task was created"
        )


def _string(max_length: int, description: str) -> dict[str, Any]:
    return {"type": "string", "minLength": 1, "maxLength": max_length, "description": description}


TOOLS: dict[str, Tool] = {
    t.name: t
    for t in (
        Tool(
            "read_inbox",
            "Read the user's mail, newest first: sender, subject, time, a snippet, the source "
            "it came from and the `key` to use as a task's idempotency_key. Without `since` it "
            "lists the mail since the last brief; pass `next_cursor` back as `cursor` for the "
            "next page.",
            {
                "type": "object",
                "properties": {
                    "limit": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": 50,
                        "description": "How many messages, newest first (1-50).",
                    },
                    "unread_only": {"type": "boolean", "description": "Only unread messages."},
                    "since": _string(40, "Only mail received at or after this ISO date-time."),
                    "source": _string(40, "Only this mail source (by name)."),
                    "cursor": _string(4000, "The next_cursor of the previous page."),
                },
                "required": ["limit"],
                "additionalProperties": False,
            },
            read_inbox,
        ),
        Tool(
            "read_message",
            "Read one message in full (read_inbox gives only a snippet): its text (long bodies "
            "are cut, saying how much) and its attachments by name, type and size.",
            {
                "type": "object",
                "properties": {"id": _string(100, "The message id from read_inbox.")},
                "required": ["id"],
                "additionalProperties": False,
            },
            read_message,
        ),
        Tool(
            "read_calendar",
            "Read the user's calendar events in the user's timezone: 'range' today or week (the "
            "7 days starting today), or the days 'start' to 'end' (inclusive). An all-day event "
            "has all_day true and dates, its end exclusive. A cancelled event has status "
            "'cancelled' and takes no time. 'cut_short' lists recurring series that were not "
            "expanded in full (a runaway rule): say so in the brief.",
            {
                "type": "object",
                "properties": {
                    "range": {"type": "string", "enum": ["today", "week"]},
                    "start": {"type": "string", "description": "First day, YYYY-MM-DD."},
                    "end": {"type": "string", "description": "Last day, YYYY-MM-DD (inclusive)."},
                },
                "additionalProperties": False,
            },
            read_calendar,
        ),
        Tool(
            "read_tasks",
            "Read the user's task list, including the idempotency key of each task.",
            {
                "type": "object",
                "properties": {
                    "include_done": {"type": "boolean", "description": "Include done tasks."}
                },
                "required": ["include_done"],
                "additionalProperties": False,
            },
            read_tasks,
        ),
        Tool(
            "create_task",
            "Create a task for something the user must do. Set idempotency_key to the item's "
            "`key` from read_inbox (e.g. 'mail:3fa2c1d9e0b7'), 'event:<id>' for an event, or "
            "'model:<words>' for a task that comes from no item; the same key again returns "
            "the existing task with created=false instead of a duplicate (a second request in "
            "one message: its key and '#2'). Only keys of items this run has read are accepted, "
            "and a due date within a year.",
            {
                "type": "object",
                "properties": {
                    "title": _string(200, "Short imperative title."),
                    "idempotency_key": _string(200, "The item's key, e.g. 'mail:3fa2c1d9e0b7'."),
                    "due": {"type": "string", "description": "Due date, YYYY-MM-DD."},
                    "source_id": _string(200, "The id of the message or event it came from."),
                    "notes": {"type": "string", "maxLength": 2000, "description": "Context."},
                },
                "required": ["title", "idempotency_key"],
                "additionalProperties": False,
            },
            create_task,
            effect=True,
        ),
    )
}


def definitions(tools: dict[str, Tool] | None = None) -> list[dict[str, Any]]:
    """The tool definitions sent to the model, in a stable order."""
    return [t.definition() for t in (tools or TOOLS).values()]


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


def idempotency_key_of(name: str, args: Any) -> str | None:
    """The task key a create_task call carries, for the saved-effect record."""
    if name == "create_task" and isinstance(args, dict):
        key = args.get("idempotency_key")
        return key if isinstance(key, str) else None
    return None


def error_text(message: str) -> str:
    """The content of an is_error tool_result."""
    return f"Error: {message}"


def result_text(result: dict[str, Any]) -> str:
    """The content of a successful tool_result: compact JSON."""
    return json.dumps(result, ensure_ascii=False, separators=(",", ":"))


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
    elif tool is None:
        problem = f"unknown tool {name!r}; available tools: {', '.join(TOOLS)}"
    else:
        try:
            validate(tool.input_schema, args)
        except ToolError as exc:
            problem = f"invalid arguments for {name}: {_no_arguments(args, str(exc))}"
    if problem is not None or tool is None:
        return Outcome(error_text(problem or "unknown tool"), True, saved=False)

    def call() -> tuple[str, bool]:
        try:
            text = result_text(tool.handler(args, env))
        except ToolError as exc:
            return error_text(_no_arguments(args, str(exc))), True
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
    content, is_error = call()  # a read: outside any transaction
    if reads_network(name, env):
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
        return bool(getattr(env.inbox, "remote", False))
    if name == "read_calendar":
        return bool(getattr(env.calendar, "remote", False))
    return False
