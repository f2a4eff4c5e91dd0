"""`dayflow why`: why a task is on the list, or why a message got none, from what a run saved.

Everything here is read from the run's committed step rows (the reads' results and the
create_task calls with their results) and the task book: never a mail server, never a model.
A resumed run has the same rows as one that never crashed, and a fork holds copies of its
parent's first steps, so the answer is the same for all three.

For a task: the message it came from (sender, date, subject), the evidence create_task found
in it, why it counted (the `reason` a create_task carries: the rule's name offline; without
one, the model's quote), and the due date with whether the mail stated or implied it. For a
message with no task, why not, in this order: a create_task for it was refused, a rule of the
user's, it tried to instruct an assistant (`to_assistant`, a prompt injection), it is list or
automated mail (`bulk`), it is the user's own, the user has answered it, it is an owed reply
(under "You owe replies"), it reads as spam or a scam (the offline rules' signs), its only
ask is in the quoted history, or no ask was found. What a message told an assistant is quoted
(escaped, cut to `INJECTED_SHOWN` characters), never followed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from dayflow.clock import iso
from dayflow.errors import RunNotFound, UsageError
from dayflow.models import Message, Run, Task
from dayflow.no_task import NoTask, said
from dayflow.printable import plain
from dayflow.providers.offline import looks_like_scam
from dayflow.rules import Rule
from dayflow.senders import from_line, sender_name
from dayflow.shown import Call, shown_in, tool_calls
from dayflow.sources.injected import injected_spans
from dayflow.store import Store
from dayflow.tools.evidence import own_text

RUNS_SEARCHED = 50  # a message id is looked for in the newest runs of the profile
# How far the clocks of the hosts that share a store may disagree: a run written up to this long
# before a task was filed is still read for its moves.
CLOCK_SKEW = timedelta(hours=1)
# Why a task no brief filed is on the list (its run_id is None).
ADDED_BY_HAND = "your promise, made a task by `dayflow tasks add`"
INJECTED_SHOWN = 120  # characters of what a message told an assistant, quoted
_ASKS = re.compile(
    r"\?|\b(?:please|pls|could you|can you|would you|will you|need you to|let me know|"
    r"bitte|könntest|pourriez|merci de|podrías|puedes)\b",
    re.IGNORECASE,
)
# Mail from a service rather than a person: its sender's mailbox, or a line only such mail has.
_AUTOMATED = re.compile(
    r"(?:^|<|\s)(?:no-?reply|do-?not-?reply|newsletters?|notifications?|mailer-daemon|"
    r"news|updates|info|alerts?|digest)@|\bunsubscribe\b|you are receiving this",
    re.IGNORECASE,
)
_TASK_ID = re.compile(r"^t_[0-9a-f]{0,40}$", re.IGNORECASE)


@dataclass(frozen=True)
class TaskWhy:
    """One task (or a refused create_task) for the message, and why it is there."""

    title: str
    task_id: str | None
    status: str | None
    evidence: str | None
    counted: str | None
    due: str | None
    due_kind: str | None
    notes: str | None
    refused: str | None = None
    step: int | None = None
    moves: tuple[dict[str, Any], ...] = ()  # the due-date moves made on it (move_due), oldest first
    snoozed: dict[str, str] | None = None  # the snooze that leaves it out today: until, rule

    def to_json(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id,
            "title": self.title,
            "status": self.status,
            "evidence": self.evidence,
            "counted": self.counted,
            "due": self.due,
            "due_kind": self.due_kind,
            "notes": self.notes,
            "refused": self.refused,
            "step": self.step,
            "due_moves": list(self.moves),
            "snoozed": self.snoozed,
        }


@dataclass(frozen=True)
class Why:
    """What `dayflow why ID` prints: the run it read, the message, its tasks, or why none."""

    run_id: str  # "" for a task no brief filed (`dayflow tasks add`)
    asked: str
    message: dict[str, Any] | None
    tasks: list[TaskWhy] = field(default_factory=list)
    no_task: str | None = None
    item: str | None = None  # the key or id of an item that is no message (an event, a thread)

    @property
    def injected(self) -> str | None:
        """What the message told an assistant (a prompt injection), cut; None for none."""
        return injected_words(self.message) if self.message is not None else None

    def to_json(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id or None,
            "asked": self.asked,
            "item": self.item,
            "message": self.message,
            "tasks": [t.to_json() for t in self.tasks],
            "no_task": self.no_task,
            "to_assistant": self.injected,
        }


def explain(
    store: Store,
    asked: str,
    *,
    run_id: str | None = None,
    snoozed: Callable[[str], Rule | None] | None = None,
) -> Why:
    """Why for `asked`: a task id (t_…), a message id, or an item's key (mail:…, with #n),
    read from run `run_id` (a prefix), else from the task's own run or the newest run that
    read the message. `snoozed`: the user's snooze of a task's key today, if any (said with
    the task). Raises RunNotFound (one line) when nothing matches."""
    asked = asked.strip()
    if not asked:
        raise UsageError("give a task id, a message id or an item's key")
    run = store.runs.find(run_id) if run_id is not None else None
    if _TASK_ID.match(asked):
        task = store.tasks.find(asked)
        why = _for_task(store, task, run)
        rule = snoozed(task.idempotency_key.split("#", 1)[0]) if snoozed else None
        if rule is None:
            return why
        said = {"until": rule.until, "rule": rule.id}
        return replace(why, tasks=[replace(t, snoozed=said) for t in why.tasks])
    runs = [run] if run is not None else store.runs.list(limit=RUNS_SEARCHED)
    for candidate in runs:
        messages = store.steps.conversation(candidate.id)
        found = _for_item(candidate, messages, asked, store, filed_elsewhere=run is None)
        if found is not None:
            return found
    where = f"run {run.id}" if run is not None else f"the newest {RUNS_SEARCHED} runs"
    raise RunNotFound(
        f"no task, message or item {asked[:80]!r} in {where} (give a task id from `dayflow "
        "tasks`, or a message id or key a brief read; --run picks the run)"
    )


def _for_task(store: Store, task: Task, run: Run | None) -> Why:
    run_id = run.id if run is not None else task.run_id
    if run_id is None:
        # Filed by no brief (`dayflow tasks add --from promise:KEY`): what the task row keeps.
        entry = TaskWhy(
            title=task.title,
            task_id=task.id,
            status=task.status,
            evidence=task.evidence,
            counted=ADDED_BY_HAND if task.idempotency_key.startswith("promise:") else None,
            due=task.due,
            due_kind=task.due_kind,
            notes=task.notes,
            moves=tuple(due_moves(store, task)),
        )
        return Why("", task.id, None, [entry], item=task.source_id or task.idempotency_key)
    messages = store.steps.conversation(run_id)
    calls = list(tool_calls(messages))
    made = [c for c in calls if c.name == "create_task" and _task_of(c) == task.id]
    call = made[0] if made else None
    source = task.source_id
    shown = shown_in(messages)
    message = _message(calls, source) if source else None
    item = None if message is not None else (source or task.idempotency_key)
    entry = TaskWhy(
        title=task.title,
        task_id=task.id,
        status=task.status,
        evidence=task.evidence if task.evidence is not None else _given(call, "evidence"),
        counted=_counted(call, task.evidence),
        due=task.due,
        due_kind=task.due_kind,
        notes=task.notes,
        step=call.step if call else None,
        moves=tuple(due_moves(store, task)),
    )
    if source and message is None and source in shown.texts_of:
        item = source
    return Why(run_id, task.id, message, [entry], item=item)


def _for_item(
    run: Run, messages: list[Message], asked: str, store: Store, *, filed_elsewhere: bool = False
) -> Why | None:
    shown = shown_in(messages)
    calls = list(tool_calls(messages))
    base = re.sub(r"#[1-9][0-9]{0,2}$", "", asked)
    if asked in shown.texts_of or asked in shown.keys_of:
        item_id = asked
    else:
        ids = sorted(i for i, key in shown.key_for.items() if key == base)
        if not ids:  # the id as the user's own file writes it: `m1` for `inbox:m1`
            ids = sorted(i for i in {*shown.texts_of, *shown.keys_of} if i.endswith(":" + asked))
            if len(ids) > 1:
                raise UsageError(
                    f"{asked[:80]!r} is the id of {len(ids)} items (messages or events) of run "
                    f"{run.id}: give one of {', '.join(ids[:5])}"
                )
        if not ids:
            return None
        item_id = ids[0]
    message = _message(calls, item_id)
    keys = set(shown.keys_of.get(item_id, ())) | {shown.key_for.get(item_id, "")}
    tasks = [
        _entry(c, store) for c in calls if c.name == "create_task" and _about(c, item_id, keys)
    ]
    if base != asked:  # a key with #n: that request only
        tasks = [t for t in tasks if t.refused or _key_of(t, store) == asked]
    why = Why(run.id, asked, message, tasks, item=None if message is not None else item_id)
    if any(t.task_id for t in tasks):
        return why
    if filed_elsewhere:  # a later brief read it again and filed nothing: the task's own run
        earlier = _filing_run(store, keys, asked if base != asked else None, run.id)
        if earlier is not None:
            again = _for_item(earlier, store.steps.conversation(earlier.id), asked, store)
            if again is not None and any(t.task_id for t in again.tasks):
                return again
    return Why(why.run_id, asked, message, tasks, _no_task(calls, message, keys, tasks), why.item)


def due_moves(store: Store, task: Task) -> list[dict[str, Any]]:
    """The due-date moves made on `task`, oldest first: each saved move_due effect of any run
    written since the task was filed (its date then and now, the message that moved it with
    its sender, date and subject as that run read it, and its words). A fork that made a move
    again on a task already moved (then and now the same) adds nothing; nor does the same move
    seen twice."""
    # A move is a write of its run made after the task was filed, so a run last written before
    # (less the hosts' clocks' disagreement) holds none: those are not read, however many.
    # Not "stop at the run that filed it": an older run resumed later can move it.
    since = iso(datetime.fromisoformat(task.created_at) - CLOCK_SKEW)
    ids = list(store.runs.ids_newest_first(written_since=since))
    out: list[dict[str, Any]] = []
    seen: set[tuple[Any, Any, Any]] = set()
    for run_id in reversed(ids):
        messages = store.steps.conversation(run_id)
        calls = list(tool_calls(messages))
        for call in (c for c in calls if c.name == "move_due"):
            payload = _payload(call)
            moved = payload.get("moved") if isinstance(payload, dict) else None
            if not isinstance(moved, dict) or moved.get("id") != task.id:
                continue
            was, now, source = moved.get("was"), moved.get("now"), moved.get("source_id")
            if was == now or (was, now, source) in seen:
                continue
            seen.add((was, now, source))
            message = _message(calls, str(source)) or {}
            out.append(
                {"was": was, "now": now, "source_id": source, "evidence": moved.get("evidence")}
                | {"run_id": run_id, "step": call.step}
                | {k: message[k] for k in ("from", "subject", "received_at") if k in message}
            )
    return out


def _filing_run(store: Store, keys: set[str], exact: str | None, not_run: str) -> Run | None:
    """The run that filed the task of one of `keys` (`exact`: that key with its #n), when it is
    another run than `not_run` and still in the store."""
    for task in store.tasks.list(include_done=True):
        key = task.idempotency_key
        hit = key == exact if exact is not None else key.split("#", 1)[0] in keys
        if hit and task.run_id is not None and task.run_id != not_run:
            try:
                return store.runs.find(task.run_id)
            except RunNotFound:  # pruned: the run that read it answers
                return None
    return None


def _entry(call: Call, store: Store) -> TaskWhy:
    task_id = _task_of(call)
    task = None
    if task_id is not None:
        try:
            task = store.tasks.find(task_id)
        except RunNotFound:  # deleted since (the sample's, cleared): the call still shows it
            task = None
    refused = call.content.removeprefix("Error: ") if call.is_error and call.content else None
    evidence = task.evidence if task is not None else _given(call, "evidence")
    return TaskWhy(
        title=str(call.input.get("title") or ""),
        task_id=task_id,
        status=task.status if task else None,
        evidence=evidence,
        counted=_counted(call, evidence),
        due=task.due if task else _given(call, "due"),
        due_kind=task.due_kind if task else _given(call, "due_kind"),
        notes=task.notes if task else _given(call, "notes"),
        refused=refused,
        step=call.step,
    )


def _key_of(entry: TaskWhy, store: Store) -> str | None:
    if entry.task_id is None:
        return None
    try:
        return store.tasks.find(entry.task_id).idempotency_key
    except RunNotFound:
        return None


def _about(call: Call, item_id: str, keys: set[str]) -> bool:
    """Whether a create_task call names the item: by source_id, or by one of its keys."""
    key = call.input.get("idempotency_key")
    base = re.sub(r"#[1-9][0-9]{0,2}$", "", key) if isinstance(key, str) else None
    return call.input.get("source_id") == item_id or (base is not None and base in keys)


def _no_task(
    calls: list[Call], message: dict[str, Any] | None, keys: set[str], tasks: list[TaskWhy]
) -> str:
    """Why a message (or an item) got no task, from what the run read."""
    reason, details = no_task_reason(calls, message, keys, tasks)
    return said(reason, details)


def no_task_reason(
    calls: list[Call], message: dict[str, Any] | None, keys: set[str], tasks: list[TaskWhy]
) -> tuple[NoTask, str]:
    """Why `message` (under `keys`) got no task, the first reason that holds, and its details;
    `tasks` are the create_task calls made for it (all refused)."""
    refused = [t.refused for t in tasks if t.refused]
    if refused:
        return NoTask.REFUSED, f": {refused[-1]}"
    if message is None:
        return NoTask.NOT_READ, ""
    rule = message.get("no_task")
    if isinstance(rule, str):  # the user's own rule (dayflow.rules): "rule r3 (...)"
        return NoTask.RULE, f" {rule.removeprefix('rule ')} (`dayflow rules` lists it)"
    if message.get("to_assistant"):
        return NoTask.INJECTION, (
            " (a prompt injection): what it asks is never a task, and nothing was done"
        )
    if message.get("bulk"):
        return NoTask.AUTOMATED, " (it is marked bulk): never a task"
    followups = _latest(calls, "read_followups")
    listed = {
        name: {str(k) for k in followups.get(name) or [] if isinstance(k, str)}
        for name in ("bulk", "answered", "yours")
    }
    if keys & listed["bulk"]:
        return NoTask.AUTOMATED, " (read_followups lists it as bulk): never a task"
    if keys & listed["yours"]:
        return NoTask.YOURS, ": what you asked is under Waiting on others"
    if keys & listed["answered"]:
        return NoTask.ANSWERED, ": you wrote in its thread after it, so it is no new request"
    for owed in followups.get("you_owe") or []:
        if isinstance(owed, dict) and (
            owed.get("id") == message.get("id") or keys & {str(k) for k in owed.get("keys") or []}
        ):
            return NoTask.OWED, ": it asks only for an answer, under You owe replies"
    body = str(message.get("body") or message.get("snippet") or "")
    if _AUTOMATED.search(f"{message.get('from', '')} {body}"):
        return NoTask.AUTOMATED, " (its sender or an unsubscribe line says so): never a task"
    if looks_like_scam(str(message.get("subject") or ""), body, str(message.get("from") or "")):
        return NoTask.SCAM, (
            ": it dangles money, a prize or an account to verify, with pressure or a spammer's "
            "signs; never a task"
        )
    kind = "body" if message.get("body") else "snippet"
    own = own_text(kind, body)
    if not _ASKS.search(own) and not _ASKS.search(str(message.get("subject") or "")):
        if _ASKS.search(body):
            return NoTask.QUOTED, ": its one ask is in the quoted history, not the sender's words"
    return NoTask.NO_ASK, ": nothing in the sender's own words asks something of you"


def _message(calls: list[Call], item_id: str) -> dict[str, Any] | None:
    """The message `item_id` as the run read it (its listing, with read_message's body)."""
    found: dict[str, Any] | None = None
    for call in calls:
        payload = _payload(call)
        if not isinstance(payload, dict):
            continue
        items: list[Any] = []
        if call.name == "read_inbox":
            items = payload.get("messages") or []
        elif call.name == "read_message":
            items = [payload.get("message")]
        for item in items:
            if isinstance(item, dict) and item.get("id") == item_id:
                found = {**(found or {}), **item}
    if found is None:
        return None
    keep: tuple[str, ...] = ("id", "key", "from", "subject", "received_at", "bulk", "no_task")
    keep += ("to_assistant", "snippet", "body")
    return {k: found[k] for k in keep if k in found}


def injected_words(message: dict[str, Any]) -> str | None:
    """What a message marked `to_assistant` told the assistant: the first such passage of its
    text (else of its subject), on one line, cut to INJECTED_SHOWN characters."""
    if message.get("to_assistant") is not True:
        return None
    for text in (str(message.get("body") or message.get("snippet") or ""),
                 str(message.get("subject") or "")):  # fmt: skip
        spans = injected_spans(text)
        if spans:
            said = " ".join(text[spans[0][0] : spans[0][1]].split())
            if len(said) > INJECTED_SHOWN:
                said = said[: INJECTED_SHOWN - 1] + "…"
            return said
    return None


def _latest(calls: list[Call], name: str) -> dict[str, Any]:
    for call in reversed(calls):
        payload = _payload(call) if call.name == name else None
        if isinstance(payload, dict):
            return payload
    return {}


def _counted(call: Call | None, evidence: str | None) -> str | None:
    reason = _given(call, "reason")
    if reason:
        return reason
    if evidence:
        return "the model's quote of the message (above)"
    return None


def _given(call: Call | None, name: str) -> Any:
    value = call.input.get(name) if call is not None else None
    return value if isinstance(value, str) and value else None


def _task_of(call: Call) -> str | None:
    payload = _payload(call)
    task = payload.get("task") if isinstance(payload, dict) else None
    return str(task["id"]) if isinstance(task, dict) and task.get("id") else None


def _payload(call: Call) -> Any:
    if call.is_error or call.content is None:
        return None
    try:
        return json.loads(call.content)
    except (ValueError, RecursionError):
        return None


def render_text(why: Why) -> str:
    """`dayflow why` as plain lines (the CLI prints them; the terminal's width aside)."""
    lines = [f"run {why.run_id}" if why.run_id else "run: none (no brief filed this task)"]
    m = why.message
    if m is not None:
        lines.append(f"message {m.get('id')} ({m.get('key')})" if m.get("key") else
                     f"message {m.get('id')}")  # fmt: skip
        lines.append(f"  from:     {from_line(m.get('from'), '?')}")
        lines.append(f"  date:     {m.get('received_at', '?')}")
        lines.append(f"  subject:  {m.get('subject', '')}")
        if why.injected is not None:
            lines.append(f'  to the assistant: "{why.injected}" (quoted, not followed)')
    elif why.item is not None:
        lines.append(f"item {why.item}" + (" (not a message this run read)" * bool(why.run_id)))
    for t in why.tasks:
        if t.refused:
            lines.append(f"create_task refused at step {t.step}: {t.title}")
            lines.append(f"  error:    {t.refused}")
            if t.evidence:
                lines.append(f'  evidence: "{t.evidence}" (not accepted)')
            continue
        state = f" ({t.status})" if t.status else ""
        lines.append(f"task {t.task_id}: {t.title}{state}")
        if t.evidence:
            lines.append(f'  evidence: "{t.evidence}"')
        else:
            lines.append("  evidence: none recorded (filed before Dayflow kept evidence, or "
                         "from no message)")  # fmt: skip
        if t.counted:
            lines.append(f"  counted:  {t.counted}")
        last = t.moves[-1] if t.moves else None
        if last is not None and last.get("now") == t.due:  # a later message set it
            sender = f" {sender_name(last['from'])}'s" if last.get("from") else " a later"
            lines.append(f"  due:      {t.due}, moved by{sender} message (below)")
        else:
            lines.append(f"  due:      {due_line(t.due, t.due_kind)}")
        for move in t.moves:
            lines.append(f"  moved:    {move.get('was') or 'no date'} → {move.get('now')} "
                         f"(run {move.get('run_id')}, step {move.get('step')})")  # fmt: skip
            sender = f" from {from_line(move['from'])}" if move.get("from") else ""
            when = f", {move['received_at']}" if move.get("received_at") else ""
            lines.append(f"    by:     message {move.get('source_id')}{sender}{when}")
            if move.get("subject"):
                lines.append(f"    subject: {move['subject']}")
            lines.append(f'    words:  "{move.get("evidence") or ""}"')
        if t.snoozed:
            lines.append(f"  snoozed until {t.snoozed['until']} (rule {t.snoozed['rule']}): left "
                         "out of the brief until that day")  # fmt: skip
        if t.notes:
            lines.append(f"  notes:    {t.notes}")
    if why.no_task:
        lines.append(f"no task: {why.no_task}")
    # Mail's words are shown inert: control characters escaped, each field on its line.
    return "".join(plain(re.sub(r"[\r\n\t]+", " ", line)) + "\n" for line in lines)


def due_line(due: str | None, kind: str | None) -> str:
    """A task's due date and where it comes from, in words."""
    if due is None:
        return "none (the message gives no date)"
    if kind == "stated":
        return f"{due}, stated in the message"
    if kind == "implied":
        return f"{due}, implied by the message (no date named)"
    return f"{due} (whether stated or implied was not recorded)"
