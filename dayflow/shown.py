"""What a run was shown: the items its reads returned (their ids and task keys) and the links
in the user's own mail and calendar.

The model's text is not trusted (a message can tell it what to write), so two things are
checked against what the run actually read:

- `create_task` files a task only under the key of an item the run was shown (a message's
  `key`, `thread:<thread id>` of a message it opened or of a thread read_followups listed,
  `event:<event id>` of an event read_calendar or read_prep listed, `thread:<hash>` of a thread
  read_prep listed, or a task it read), or under a key of the model's own (`model:...`), so
  a prompt-injected run cannot claim the key of a message it never saw (one not yet arrived,
  or the sample's) and keep its real task from ever
  being filed;
- a brief delivered to a file or by mail keeps a link only when its address appears in what the
  run read (`dayflow.safe_text`), and never one that only a message marked `to_assistant` (a
  prompt injection) holds: it may be what the injection asked the model to write.

`key_for` is each item's own key, which a create_task that names its item by `source_id` alone
is filed under (a model that kept only the ids across a compaction).

The record is the run's committed step rows (`store.steps.conversation`), never memory: a resumed
process reads the same rows, so a call is judged the same after a crash as before it. A step's
own results are not in it until the step commits, and the model had not seen them either.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from dayflow.models import Message

MODEL_KEY_PREFIX = "model:"  # the model's own task keys: never an item's
THREAD_KEY_PREFIX = "thread:"
EVENT_KEY_PREFIX = "event:"
_URL = re.compile(r"(?:https?://|mailto:)[^\s<>\"'`\\)\]]+", re.IGNORECASE)
_TRAILING = ".,;:!?*_~"
_READS = ("read_inbox", "read_message", "read_calendar", "read_followups", "read_prep")


@dataclass(frozen=True)
class Shown:
    """The task keys the run may file under, each item's keys by its id, each item's own key
    by its id (what a create_task with only a source_id is filed under), and the links."""

    keys: frozenset[str] = frozenset()
    keys_of: dict[str, frozenset[str]] = field(default_factory=dict)
    urls: frozenset[str] = frozenset()
    key_for: dict[str, str] = field(default_factory=dict)
    # The text each item was shown with, by its id, as (kind, text): a message's "subject",
    # "snippet" and "body", an event's "event" fields. What a task's evidence must quote.
    texts_of: dict[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    # The keys a rule of the user's says are no task (a message read_inbox or read_message
    # marked `no_task`, a thread read_followups listed under `left_out`): the rule's words.
    barred: dict[str, str] = field(default_factory=dict)


def shown_in(messages: list[Message]) -> Shown:
    """What the tool results in `messages` (a run's committed conversation) showed."""
    keys: set[str] = set()
    keys_of: dict[str, set[str]] = {}
    urls: set[str] = set()
    own: dict[str, tuple[int, str]] = {}
    texts: dict[str, dict[tuple[str, str], None]] = {}
    barred: dict[str, str] = {}
    for name, payload in _results(messages):
        barred.update(_barred(name, payload))
        for shown_id, kind, said in _texts(name, payload):
            texts.setdefault(shown_id, {})[(kind, said)] = None
        if name in _READS:
            # Not the links of a message that spoke to an assistant: it may have asked for them.
            for text in _strings(payload, skip_injected=True):
                urls.update(urls_in(text))
        for item_id, item_keys in _items(name, payload):
            keys.update(item_keys)
            if item_id is not None:
                keys_of.setdefault(item_id, set()).update(item_keys)
        for item_id, rank, key in _own_keys(name, payload):
            if item_id not in own or rank < own[item_id][0]:
                own[item_id] = (rank, key)
    return Shown(
        frozenset(keys),
        {k: frozenset(v) for k, v in keys_of.items()},
        frozenset(urls),
        {item_id: key for item_id, (_, key) in own.items()},
        {item_id: tuple(found) for item_id, found in texts.items()},
        barred,
    )


def messages_read(messages: list[Message]) -> Iterator[dict[str, Any]]:
    """Every message the run's read_inbox and read_message results showed, in order."""
    for name, payload in _results(messages):
        if not isinstance(payload, dict):
            continue
        if name == "read_inbox":
            yield from _dicts(payload.get("messages"))
        elif name == "read_message" and isinstance(payload.get("message"), dict):
            yield payload["message"]


def calls_in(messages: list[Message]) -> Iterator[tuple[str, dict[str, Any], Any]]:
    """(tool name, its arguments, parsed result) of each successful tool call in `messages`."""
    return _calls(messages)


def _barred(name: str, payload: Any) -> Iterator[tuple[str, str]]:
    """(key, the rule's words) of each item a result marks as no task by a rule."""
    if not isinstance(payload, dict):
        return
    if name in ("read_inbox", "read_message"):
        listed = _dicts(payload.get("messages")) if name == "read_inbox" else []
        if name == "read_message" and isinstance(payload.get("message"), dict):
            listed = [payload["message"]]
        for m in listed:
            rule = m.get("no_task")
            if isinstance(rule, str) and rule:
                for key in _strs(m.get("key")) | _strs(m.get("thread_id"), THREAD_KEY_PREFIX):
                    yield key, rule
    elif name == "read_followups":
        for item in _dicts(payload.get("left_out")):
            rule = item.get("rule")
            if isinstance(rule, str) and rule:
                for key in _strs(item.get("key")) | set(_strings(item.get("keys"))):
                    yield key, rule


def latest_result(messages: list[Message], name: str, **args: Any) -> Any | None:
    """The parsed result of the last successful call of tool `name` (with these arguments) in
    `messages`, None when there is none: what `--format json` carries of the run's lists."""
    found = None
    for called, given, payload in _calls(messages):
        if called == name and all(given.get(k) == v for k, v in args.items()):
            found = payload
    return found


def run_lists(messages: list[Message]) -> dict[str, Any]:
    """The lists a run read, as data (`--format json`): `tasks` (those its create_task calls
    filed or found, each with its `evidence`, `due_kind` and `source_id`), `followups`
    (read_followups' result), `prep` (the events read_prep gave), `conflicts` (today's, from
    read_calendar), `since` (read_since's changes) and `injections` (the messages that tried
    to instruct an assistant), each None when the run never read it, and the `drafts` it
    wrote."""
    prep = latest_result(messages, "read_prep")
    today = latest_result(messages, "read_calendar", range="today")
    since = latest_result(messages, "read_since")
    return {
        "tasks": run_tasks(messages),
        "followups": latest_result(messages, "read_followups"),
        "prep": prep.get("events") if isinstance(prep, dict) else None,
        "conflicts": today.get("conflicts", []) if isinstance(today, dict) else None,
        # The drafts draft_reply wrote (issue 36): Message-ID, folder, to whom; None when the
        # run drafted none.
        "drafts": [p["draft"] for p in _payloads(messages, "draft_reply")] or None,
        # What changed since the previous finished brief (read_since, issue 35); None on a
        # first brief or when the run never compared.
        "since": since
        if isinstance(since, dict) and isinstance(since.get("previous"), dict)
        else None,
        # The messages that tried to instruct an assistant (a prompt injection): no task, no
        # tool call; None when the run read no mail.
        "injections": injections(messages),
    }


def _payloads(messages: list[Message], name: str) -> list[dict[str, Any]]:
    return [
        payload
        for called, _, payload in _calls(messages)
        if called == name and isinstance(payload, dict) and isinstance(payload.get("draft"), dict)
    ]


def run_tasks(messages: list[Message]) -> list[dict[str, Any]]:
    """The tasks the run's create_task calls filed (or found filed), once each, in order, with
    `created`; a task filed before evidence was kept has `evidence` and `due_kind` null."""
    out: dict[str, dict[str, Any]] = {}
    for name, _, payload in _calls(messages):
        task = payload.get("task") if name == "create_task" and isinstance(payload, dict) else None
        if isinstance(task, dict) and isinstance(task.get("id"), str) and task["id"] not in out:
            kept = {"evidence": task.get("evidence"), "due_kind": task.get("due_kind")}
            out[task["id"]] = task | kept | {"created": payload.get("created") is True}
    return list(out.values())


INJECTED_NOTE = "it tried to instruct an assistant; nothing was done"
INJECTED_BESIDE = "it tried to instruct an assistant; that part was ignored, its ask to you was not"


def injections(messages: list[Message]) -> list[dict[str, Any]] | None:
    """The messages the run's reads marked `to_assistant` (text in them written to an AI
    assistant, a prompt injection: `sources/injected.py`), once each in reading order, as
    data: id, key, sender, subject, date and `note`, the words the brief says of it. Never
    their text: what it told the assistant is not repeated (`dayflow why` quotes it, escaped
    and cut). None when the run read no mail."""
    read = False
    found: dict[str, dict[str, Any]] = {}
    for name, _, payload in _calls(messages):
        if name in ("read_inbox", "read_message") and isinstance(payload, dict):
            read = True
    if not read:
        return None
    filed = {t.get("source_id") for t in run_tasks(messages)}
    for m in messages_read(messages):
        item_id = _id(m)
        if item_id is None or m.get("to_assistant") is not True or item_id in found:
            continue
        found[item_id] = {
            "id": item_id,
            "key": m.get("key"),
            "from": m.get("from"),
            "subject": m.get("subject"),
            "received_at": m.get("received_at"),
            "note": INJECTED_BESIDE if item_id in filed else INJECTED_NOTE,
        }
    return list(found.values())


def urls_in(text: str) -> set[str]:
    """The http(s) and mailto addresses written in `text`, without trailing punctuation."""
    return {m.group(0).rstrip(_TRAILING) for m in _URL.finditer(text)}


def _results(messages: list[Message]) -> Iterator[tuple[str, Any]]:
    """(tool name, parsed result) of each successful tool call in `messages`."""
    return ((name, payload) for name, _, payload in _calls(messages))


@dataclass(frozen=True)
class Call:
    """One tool call of a conversation with its result: the step (the assistant turn, from 1)
    that made it; `content` None when the result is not text."""

    step: int
    name: str
    input: dict[str, Any]
    content: str | None
    is_error: bool


def tool_calls(messages: list[Message]) -> Iterator[Call]:
    """Each tool call of the conversation with its result, in order; a call no result answers
    is left out, and a result answers the call of its id once."""
    pending: dict[str, tuple[int, str, dict[str, Any]]] = {}
    step = 0
    for message in messages:
        content = message.get("content")
        if message.get("role") == "assistant":
            step += 1
        if not isinstance(content, list):
            continue
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use":
                given = block.get("input")
                pending[str(block.get("id"))] = (
                    step,
                    str(block.get("name")),
                    given if isinstance(given, dict) else {},
                )
            elif block.get("type") == "tool_result":
                use = pending.pop(str(block.get("tool_use_id")), None)
                if use is None:
                    continue
                body = block.get("content")
                if isinstance(body, list):
                    body = "".join(b.get("text", "") for b in body if isinstance(b, dict))
                yield Call(use[0], use[1], use[2], body if isinstance(body, str) else None,
                           bool(block.get("is_error")))  # fmt: skip


def _calls(messages: list[Message]) -> Iterator[tuple[str, dict[str, Any], Any]]:
    """(tool name, its arguments, parsed result) of each successful tool call in `messages`."""
    for call in tool_calls(messages):
        if call.is_error or call.content is None:
            continue
        try:
            yield call.name, call.input, json.loads(call.content)
        except (ValueError, RecursionError):  # an MCP server's text can be anything
            continue


def _items(name: str, payload: Any) -> Iterator[tuple[str | None, set[str]]]:
    """(item id, the task keys it may be filed under) of each item a result shows."""
    if not isinstance(payload, dict):
        return
    if name == "read_inbox":
        for m in _dicts(payload.get("messages")):
            yield _id(m), _strs(m.get("key"))
    elif name == "read_message" and isinstance(payload.get("message"), dict):
        m = payload["message"]
        thread = m.get("thread_id")
        yield _id(m), _strs(m.get("key")) | _strs(thread, THREAD_KEY_PREFIX)
    elif name == "read_calendar":
        for e in _dicts(payload.get("events")):
            yield _id(e), _strs(e.get("id"), EVENT_KEY_PREFIX)
    elif name == "read_tasks":
        for t in _dicts(payload.get("tasks")):
            yield None, _strs(t.get("idempotency_key"))
    elif name == "read_followups":
        # An owed or awaited reply is filed under its thread's key (never twice), and its
        # latest message's id may be the task's source_id.
        for item in (*_dicts(payload.get("you_owe")), *_dicts(payload.get("waiting_on"))):
            yield _id(item), _strs(item.get("key"))
    elif name == "read_prep":
        # Prep shows today's events and the threads with their people: a task for either is
        # filed under its key.
        for e in _dicts(payload.get("events")):
            yield _id(e), _strs(e.get("id"), EVENT_KEY_PREFIX)
            for t in _dicts(e.get("threads")):
                yield None, _strs(t.get("key"))
    elif name == "create_task" and isinstance(payload.get("task"), dict):
        yield None, _strs(payload["task"].get("idempotency_key"))


MESSAGE_TEXTS = ("subject", "snippet", "body")  # the kinds of text a message is shown with
_EVENT_TEXTS = ("title", "description", "location")


def _texts(name: str, payload: Any) -> Iterator[tuple[str, str, str]]:
    """(item id, kind, text) of each text a read showed of a message or an event."""
    if not isinstance(payload, dict):
        return
    if name == "read_inbox":
        items, fields = _dicts(payload.get("messages")), MESSAGE_TEXTS
    elif name == "read_message" and isinstance(payload.get("message"), dict):
        items, fields = [payload["message"]], MESSAGE_TEXTS
    elif name in ("read_calendar", "read_prep"):
        items, fields = _dicts(payload.get("events")), _EVENT_TEXTS
    else:
        return
    for item in items:
        item_id = _id(item)
        for kind in fields:
            text = item.get(kind)
            if item_id is not None and isinstance(text, str) and text:
                yield item_id, "event" if fields is _EVENT_TEXTS else kind, text


def _own_keys(name: str, payload: Any) -> Iterator[tuple[str, int, str]]:
    """(item id, rank, key) of each item a result shows with a key of its own: a message's
    `key` (rank 0) before an event's `event:<id>` (1) before the thread key read_followups
    gives its latest message (2). The lowest rank, then the first shown, is the item's key:
    a function of the run's committed rows alone, so a resumed call resolves the same key."""
    if not isinstance(payload, dict):
        return
    found: list[tuple[dict[str, Any], int, str]] = []
    if name == "read_inbox":
        found = [(m, 0, str(m.get("key") or "")) for m in _dicts(payload.get("messages"))]
    elif name == "read_message" and isinstance(payload.get("message"), dict):
        found = [(payload["message"], 0, str(payload["message"].get("key") or ""))]
    elif name in ("read_calendar", "read_prep"):
        events = _dicts(payload.get("events"))
        found = [(e, 1, EVENT_KEY_PREFIX + str(e.get("id") or "")) for e in events]
    elif name == "read_followups":
        items = (*_dicts(payload.get("you_owe")), *_dicts(payload.get("waiting_on")))
        found = [(i, 2, str(i.get("key") or "")) for i in items]
    for item, rank, key in found:
        item_id = _id(item)
        if item_id is not None and key and key != EVENT_KEY_PREFIX:
            yield item_id, rank, key


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _id(item: dict[str, Any]) -> str | None:
    value = item.get("id")
    return value if isinstance(value, str) and value else None


def _strs(value: Any, prefix: str = "") -> set[str]:
    return {prefix + value} if isinstance(value, str) and value else set()


def _strings(value: Any, *, skip_injected: bool = False) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        if skip_injected and value.get("to_assistant") is True:
            return
        for v in value.values():
            yield from _strings(v, skip_injected=skip_injected)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v, skip_injected=skip_injected)
