"""The task tools: `read_tasks`, and `create_task` (the one tool with a local effect: a task
filed under an item's key, within the run's cap and the brief's horizon).

A create_task may name its item by `source_id` alone (or with a bare `#2`, `#3` for a further
request in one message): it is filed under that item's own key (`Shown.key_for`). A model
that kept only the ids across a compaction can still file, and file exactly once: the key is
worked out from the run's committed rows alone, so the same call resolves to the same key
after a crash and a resume."""

from __future__ import annotations

import re
from datetime import date, timedelta
from typing import Any

from dayflow.rules import IMPORTANT, Facts
from dayflow.shown import MODEL_KEY_PREFIX, Shown
from dayflow.sources.mime import title_text
from dayflow.tools import evidence as proof
from dayflow.tools.spec import ISO_DATE, Tool, ToolEnv, ToolError, string_schema


class TaskCapReached(ToolError):
    """create_task refused: the run has filed as many tasks as its cap (`cap`) allows. The
    words the model reads are made here, and `refused_by_cap` is their one reader: the run's
    note and the offline model ask it instead of matching the text themselves."""

    MARK = "task cap reached"  # how the refusal starts, in the saved result and the request
    refusal = "task_cap"  # saved with the effect (`tool_effects.refused_by`), counted as data

    def __init__(self, cap: int) -> None:
        super().__init__(
            f"{self.MARK}: this run may create at most {cap} tasks; no task was created"
        )
        self.cap = cap


def refused_by_cap(error: str | None) -> bool:
    """Whether a create_task error (or an is_error tool result) is the task cap's refusal."""
    return error is not None and TaskCapReached.MARK in error


class RuleForbids(ToolError):
    """create_task refused: one of the user's rules (dayflow.rules) forbids this task."""

    refusal = "rule"

    def __init__(self, rule: str) -> None:
        super().__init__(f"the user's {rule} forbids this task; no task was created")


def read_tasks(args: dict[str, Any], env: ToolEnv) -> dict[str, Any]:
    tasks = env.tasks.list(include_done=args["include_done"])
    keys = ("id", "title", "due", "status", "source_id", "idempotency_key")
    out: dict[str, Any] = {"tasks": []}
    important = _from_important_senders(env) if tasks else frozenset()
    for task in tasks:
        base = task.idempotency_key.split("#", 1)[0]
        snoozed = env.rules.snoozed(base, env.brief_date)
        if snoozed is None:
            shown = {k: task.to_json()[k] for k in keys}
            if important & {base, task.source_id}:
                shown["important"] = True  # first in its section, as its mail would be
            if env.rules.snooze_ends(base, env.brief_date) is not None:
                # Back today (`dayflow snooze --until` this day): in Needs action today though
                # due later, as the snooze promised, and its mail older than the window.
                shown["snooze_ended"] = True
            out["tasks"].append(shown)
        else:  # left out of the brief until its day: named, so it is not filed again
            out.setdefault("snoozed", []).append(
                {"id": task.id, "idempotency_key": task.idempotency_key, "until": snoozed.until}
            )
    return out


def _from_important_senders(env: ToolEnv) -> frozenset[str | None]:
    """The mail keys and ids of the followups window's messages whose sender the user marked
    important (`dayflow important`): a task filed from one is marked so, though this brief
    does not read its mail again. Nothing without such a rule, or when the mail is not read."""
    if not env.rules.of(IMPORTANT):
        return frozenset()
    feed = env.mail.followups
    if feed is None or not (feed.inbox or feed.sent):
        return frozenset()
    try:
        view = feed()
    except Exception:  # noqa: BLE001 - read_followups says what failed; the list stands
        return frozenset()
    found: set[str | None] = set()
    for thread in view.threads:
        for m in thread.messages:
            if not m.from_me and env.rules.important(Facts(sender=m.sender_address)) is not None:
                found.update((m.key, m.id))
    return frozenset(found)


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
    shown = env.shown()
    key = task_key(args.get("idempotency_key"), args.get("source_id"), shown)
    _obey_rules(key, args.get("source_id"), shown, env)
    source_id = args.get("source_id")
    quote = task_evidence(args.get("evidence"), source_id, key, shown)
    if source_id is None and quote is not None:
        source_id = proof.item_of(shown, key)  # the message the key is of, named for `why`
    due_kind = args.get("due_kind") or proof.due_kind_of(quote, due)
    if due is None:
        due_kind = "none"
    book = env.tasks
    if not book.exists(key) and book.count_created_by(env.run_id) >= env.task_cap:
        raise TaskCapReached(env.task_cap)
    task, created = book.create(
        title=title,
        idempotency_key=key,
        run_id=env.run_id,
        due=due,
        source_id=source_id,
        notes=notes,
        evidence=quote,
        due_kind=due_kind,
    )
    # Only fields that do not depend on when or by which run the task was made, so that a
    # resumed run sends the model exactly the bytes an uncrashed run would have sent.
    # With its evidence and due_kind: what `--format json` lists the run's tasks with.
    keys: tuple[str, ...] = ("id", "title", "due", "status", "source_id", "notes")
    keys += ("idempotency_key", "evidence", "due_kind")
    return {"task": {k: task.to_json()[k] for k in keys}, "created": created}


def task_evidence(given: str | None, source_id: str | None, key: str, shown: Shown) -> str | None:
    """The evidence a task is filed with (see dayflow.tools.evidence): required and checked
    for a task from a message, checked when given for one from an event, refused for a task
    that names no item it could be checked against."""
    message = source_id if proof.is_message(shown, source_id) else proof.item_of(shown, key)
    if given is None:
        if message is not None:
            raise ToolError(
                f"give 'evidence': the ask in the sender's words, copied from message "
                f"{message[:80]!r} (at most {proof.MAX_CHARS} characters), so the task can be "
                "checked and shown beside it; no task was created"
            )
        return None
    item = message or source_id
    texts = shown.texts_of.get(item or "")
    if item is None or not texts:
        raise ToolError(
            "'evidence' quotes a message or an event this run read, and this task names none "
            "(a task of your own, or an owed reply by its thread key alone): leave evidence "
            "out, or set source_id to the message it comes from; no task was created"
        )
    return proof.check(given, texts, f"message {item[:80]!r}" if message else f"{item[:80]!r}")


def _obey_rules(key: str, source_id: str | None, shown: Shown, env: ToolEnv) -> None:
    """Refuse a task one of the user's rules forbids: under a rejected, snoozed or muted key,
    or for an item a read marked `no_task` (the rules as the run read them)."""
    if not env.rules:
        return
    base = key.split("#", 1)[0]
    rule = env.rules.forbids_key(base, env.brief_date)
    if rule is not None:
        raise RuleForbids(rule.named())
    found = shown.barred.get(base)
    if found is None and source_id is not None:
        found = next(
            (shown.barred[k] for k in shown.keys_of.get(source_id, ()) if k in shown.barred), None
        )
    if found is not None:
        raise RuleForbids(found)


_ASK = re.compile(r"#([1-9][0-9]{0,2})")  # a request's number within its message, alone


def task_key(key: str | None, source_id: str | None, shown: Shown) -> str:
    """The key a create_task files under: `key` as given, checked against what the run was
    shown; or, when it is left out or only `#n`, the own key of the item `source_id` names
    (with `#n` for its n-th request, n > 1)."""
    ask = _ASK.fullmatch(key) if key is not None else None
    if key is not None and ask is None:
        _check_key(key, source_id, shown)
        return key
    if source_id is None:
        raise ToolError(
            "give idempotency_key (the `key` read_inbox gave the message, 'event:<event id>', "
            f"'thread:<thread_id>' or '{MODEL_KEY_PREFIX}<words>'), or the source_id of the "
            "message or event the task comes from; no task was created"
        )
    own = shown.key_for.get(source_id)
    if own is None:
        raise ToolError(
            f"source_id {source_id[:80]!r} is not the id of a message or event this run has "
            "read, so it names no key: use the id read_inbox or read_calendar gave, or give "
            "idempotency_key; no task was created"
        )
    n = int(ask.group(1)) if ask is not None else 1
    return own if n == 1 else f"{own}#{n}"


def _check_key(key: str, source_id: str | None, shown: Shown) -> None:
    """Refuse a key that is not the model's own nor an item's this run was shown, and a
    source_id that names an item the key is not its key of (a bogus task would otherwise
    stand for a real message, which then never gets its own)."""
    own = key.startswith(MODEL_KEY_PREFIX) and len(key) > len(MODEL_KEY_PREFIX)
    # A message's second request is `<its key>#2`: still that item's, never another's.
    item_key = re.sub(r"#[1-9][0-9]{0,2}$", "", key)
    right = shown.key_for.get(source_id) if source_id is not None else None
    if not own and item_key not in shown.keys:
        if right is not None:
            raise ToolError(
                f"idempotency_key {key[:80]!r} is not the key of any item this run has read; "
                f"the key of {source_id!r} is {right!r} (leave idempotency_key out to file "
                "under it); no task was created"
            )
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
        that = right or " or ".join(sorted(keys))
        raise ToolError(
            f"idempotency_key {key[:80]!r} is not the key of {source_id[:80]!r} (that is "
            f"{that!r}: leave idempotency_key out to file under it); no task was created"
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
    "Create a task for something the user must do. Set source_id to the id of the message "
    "or event it came from: the task is filed under that item's `key` (idempotency_key "
    "may then be left out, or be just '#2', '#3' for a second or third request in one "
    "message). Or set idempotency_key to the item's `key` from read_inbox (e.g. "
    "'mail:3fa2c1d9e0b7'), 'event:<id>' for an event, the thread's `key` from "
    "read_followups (thread:<hash>) for an owed reply, or 'model:<words>' for a task that "
    "comes from no item (then without source_id). The same key again returns the existing "
    "task with created=false instead of a duplicate. Only keys of items this run has read "
    "are accepted, and a due date within a year. A task from a message needs `evidence`: "
    "the ask copied word for word from the sender's own text (not the quoted history), so "
    "that the user can check each task against its mail and the brief can show why it is "
    "there; evidence not found in the message is refused.",
    {
        "type": "object",
        "properties": {
            "title": string_schema(200, "Short imperative title."),
            "idempotency_key": string_schema(
                200,
                "The item's key, e.g. 'mail:3fa2c1d9e0b7'; optional with source_id (then "
                "'#2' alone is its second request).",
            ),
            "evidence": string_schema(
                proof.MAX_CHARS,
                "The ask in the sender's words, copied from the message (the sentence that "
                "asks; '...' may stand for words left out). Required for a task from a message.",
            ),
            "due": {"type": "string", "description": "Due date, YYYY-MM-DD."},
            "due_kind": {
                "type": "string",
                "enum": ["stated", "implied"],
                "description": "With due: 'stated' when the message names the date or day "
                "('by Friday 4 Dec'), 'implied' when it only implies one ('this week', "
                "'before the meeting').",
            },
            "reason": string_schema(200, "Why this is the user's task, in a few words (optional)."),
            "source_id": string_schema(200, "The id of the message or event it came from."),
            "notes": {"type": "string", "maxLength": 2000, "description": "Context."},
        },
        "required": ["title"],
        "additionalProperties": False,
    },
    create_task,
    effect=True,
)
