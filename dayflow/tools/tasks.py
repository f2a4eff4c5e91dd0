"""The task tools: `read_tasks`, and `create_task` (the one tool with a local effect: a task
filed under an item's key, within the run's cap and the brief's horizon)."""

from __future__ import annotations

import re
from datetime import date, timedelta
from typing import Any

from dayflow.shown import MODEL_KEY_PREFIX, Shown
from dayflow.sources.mime import title_text
from dayflow.tools.spec import ISO_DATE, Tool, ToolEnv, ToolError, string_schema


class TaskCapReached(ToolError):
    """create_task refused: the run has filed as many tasks as its cap (`cap`) allows. The
    words the model reads are made here, and `refused_by_cap` is their one reader: the run's
    note and the offline model ask it instead of matching the text themselves."""

    MARK = "task cap reached"  # how the refusal starts, in the saved result and the request

    def __init__(self, cap: int) -> None:
        super().__init__(
            f"{self.MARK}: this run may create at most {cap} tasks; no task was created"
        )
        self.cap = cap


def refused_by_cap(error: str | None) -> bool:
    """Whether a create_task error (or an is_error tool result) is the task cap's refusal."""
    return error is not None and TaskCapReached.MARK in error


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
            if not ISO_DATE.fullmatch(due):
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
    # Text from mail may carry terminal escapes, or what is left of one (`[1m`): never kept.
    title = title_text(args["title"])
    if not title:
        raise ToolError("'title' is empty once control characters are removed; no task was created")
    notes = args.get("notes")
    notes = title_text(notes, one_line=False) or None if isinstance(notes, str) else notes
    key = args["idempotency_key"]
    _check_key(key, args.get("source_id"), env.shown())
    book = env.tasks
    if not book.exists(key) and book.count_created_by(env.run_id) >= env.task_cap:
        raise TaskCapReached(env.task_cap)
    task, created = book.create(
        title=title,
        idempotency_key=key,
        run_id=env.run_id,
        due=due,
        source_id=args.get("source_id"),
        notes=notes,
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


READ_TASKS = Tool(
    "read_tasks",
    "Read the user's task list, including the idempotency key of each task.",
    {
        "type": "object",
        "properties": {"include_done": {"type": "boolean", "description": "Include done tasks."}},
        "required": ["include_done"],
        "additionalProperties": False,
    },
    read_tasks,
)
CREATE_TASK = Tool(
    "create_task",
    "Create a task for something the user must do. Set idempotency_key to the item's "
    "`key` from read_inbox (e.g. 'mail:3fa2c1d9e0b7'), 'event:<id>' for an event, the "
    "thread's `key` from read_followups (thread:<hash>) for an owed reply, or "
    "'model:<words>' for a task that comes from no item; the same key again returns "
    "the existing task with created=false instead of a duplicate (a second request in "
    "one message: its key and '#2'). Only keys of items this run has read are accepted, "
    "and a due date within a year.",
    {
        "type": "object",
        "properties": {
            "title": string_schema(200, "Short imperative title."),
            "idempotency_key": string_schema(200, "The item's key, e.g. 'mail:3fa2c1d9e0b7'."),
            "due": {"type": "string", "description": "Due date, YYYY-MM-DD."},
            "source_id": string_schema(200, "The id of the message or event it came from."),
            "notes": {"type": "string", "maxLength": 2000, "description": "Context."},
        },
        "required": ["title", "idempotency_key"],
        "additionalProperties": False,
    },
    create_task,
    effect=True,
)
