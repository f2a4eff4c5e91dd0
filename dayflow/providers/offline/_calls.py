"""The tool calls the offline model makes, as blocks: their ids (a hash of the conversation,
so a resumed run sends the same ones), a request's create_task arguments, and which requests
are still to file."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from dayflow.models import Block, Message
from dayflow.providers.offline._brief import snippet_actions
from dayflow.providers.offline._conversation import (
    Call,
    Memory,
    latest_list,
    named,
    prompt_facts,
)
from dayflow.providers.offline._followups import no_tasks
from dayflow.providers.offline._reading import (
    Action,
    urgent_action,
    who,
)
from dayflow.providers.offline._titles import clean_subject
from dayflow.tools import due_window, refused_by_cap
from dayflow.tools.evidence import MAX_CHARS, due_kind_of

NOTED = "Noted: "


def with_tools(
    messages: list[Message], texts: list[str], plan: list[tuple[str, dict]]
) -> list[Block]:
    history = json.dumps(messages, sort_keys=True, separators=(",", ":"), default=str)
    blocks: list[Block] = [{"type": "text", "text": text} for text in texts]
    for name, args in plan:
        digest = hashlib.sha256(f"{history}#{len(blocks)}".encode()).hexdigest()
        # A fresh input dict: a caller mutating the response must not reach GATHER.
        blocks.append({"type": "tool_use", "id": "toolu_off_" + digest[:20], "name": name,
                       "input": dict(args)})  # fmt: skip
    return blocks


def request_entry(action: Action) -> dict[str, Any]:
    due = action.due.isoformat() if action.due else None
    sender = who(action.message)[:80]
    entry: dict[str, Any] = {"id": str(action.message.get("id")), "title": action.title}
    entry |= {"due": due, "from": sender}
    entry["key"] = action.key
    if urgent_action(action):
        entry["urgent"] = True
        entry["about"] = clean_subject(str(action.message.get("subject", "")))[:80]
    if action.message.get("important") is True:  # a sender the user put first
        entry["important"] = True
    if action.deadline:
        entry["deadline"] = action.deadline[:60]
    if action.evidence:
        entry["evidence"] = quote(action.evidence)
        entry["rule"] = action.rule
    return entry


QUOTE_CHARS = min(200, MAX_CHARS)  # a request's note stays one short line


def quote(sentence: str) -> str:
    """A sentence as evidence: at most QUOTE_CHARS, cut at a word (a part of the sentence is
    still in the message, and the same cut whether filed at once or from a note)."""
    sentence = " ".join(sentence.split())
    if len(sentence) <= QUOTE_CHARS:
        return sentence
    return sentence[: QUOTE_CHARS - 1].rsplit(" ", 1)[0] + "…"


def evidence_args(evidence: object, rule: object, due: object, phrase: object) -> dict[str, Any]:
    """The evidence a create_task carries: the sentence, the rule's name as its reason, and
    whether the due date was stated or implied (from the phrase the date came from)."""
    if not evidence:
        return {}
    args: dict[str, Any] = {"evidence": quote(str(evidence))}
    if rule:
        args["reason"] = f"offline rule: {rule}"[:200]
    if due:
        args["due_kind"] = due_kind_of(str(phrase) if phrase else None, due)
    return args


def entry_task(entry: dict[str, Any]) -> dict[str, Any]:
    """The create_task call for a noted request (what a note keeps is enough to file it)."""
    args: dict[str, Any] = {"title": str(entry.get("title")), "idempotency_key": str(entry["key"])}
    if entry.get("due"):
        args["due"] = str(entry["due"])
    notes = f"{entry.get('from', 'someone')} asked"
    notes += f' in "{entry["subject"]}"' if entry.get("subject") else ""
    notes += f" ({entry['deadline']})." if entry.get("deadline") else "."
    args |= evidence_args(
        entry.get("evidence"), entry.get("rule"), args.get("due"), entry.get("deadline")
    )
    return args | {"source_id": str(entry.get("id")), "notes": notes}


def and_list(ids: list[str]) -> str:
    return ", ".join(ids[:-1]) + " and " + ids[-1] if len(ids) > 1 else "".join(ids)


def compact_json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def covered_keys(calls: list[Call]) -> set[str]:
    """The task keys already on the list: each task's key, and the key of the message a task
    names as its source (found in the inbox listing)."""
    tasks, _ = latest_list(calls, "read_tasks", "tasks")
    inbox, _ = latest_list(calls, "read_inbox", "messages")
    key_of = {str(m.get("id")): str(m.get("key") or f"email:{m.get('id')}") for m in inbox}
    covered = {str(t.get("idempotency_key")) for t in tasks if t.get("idempotency_key")}
    for t in tasks:
        if t.get("source_id"):
            covered.add(key_of.get(str(t["source_id"]), f"email:{t['source_id']}"))
    return covered


def pending_actions(calls: list[Call], memory: Memory) -> list[Action]:
    """The requests still to file: not on the list, never tried (a call that failed is not
    made again: what it would send is the same), none at all once the task cap was hit."""
    if hit_cap(memory):
        return []
    inbox, _ = latest_list(calls, "read_inbox", "messages")
    skip = covered_keys(calls) | {c.key for c in memory.creates}
    return [a for a in no_tasks(calls).keep(snippet_actions(inbox)) if a.key not in skip]


def hit_cap(memory: Memory) -> bool:
    """Whether a create_task of this run hit the run's task cap."""
    return any(refused_by_cap(c.error) for c in memory.creates)


def task_input(action: Action, messages: list[Message]) -> dict[str, Any]:
    """The create_task arguments for `action`. A due date outside the brief's horizon (a date
    misread from an old message) is left out: create_task would refuse the call."""
    message = action.message
    notes = f'{who(message)} asked in "{message.get("subject", "")}"'
    notes += f" ({action.deadline})." if action.deadline else "."
    args: dict[str, Any] = {"title": action.title, "idempotency_key": action.key}
    today, _ = prompt_facts(messages)
    lo, hi = due_window(today) if today else (action.due, action.due)
    if action.due and lo is not None and hi is not None and lo <= action.due <= hi:
        args["due"] = action.due.isoformat()
    args |= evidence_args(action.evidence, action.rule, args.get("due"), action.deadline)
    return args | {"source_id": str(message.get("id")), "notes": notes}


_REREAD_WHAT = {"read_followups": "who owes replies", "read_prep": "the meetings' prep"}


def rereads(calls: list[Call], offered: set) -> tuple[list[tuple[str, dict[str, Any]]], str]:
    """What the brief needs that the run no longer sees (compacted away, or never read): the
    calendar's today and week and the followups, as calls, and the sentence saying so."""
    uses: list[tuple[str, dict[str, Any]]] = []
    if "read_calendar" in offered:
        missing = [r for r in ("today", "week") if not named(calls, "read_calendar", range=r)]
        uses += [("read_calendar", {"range": r}) for r in missing]
    for name in _REREAD_WHAT:
        if name in offered and not named(calls, name):
            uses.append((name, {}))
    what = " and ".join(dict.fromkeys(_REREAD_WHAT.get(n, "the calendar") for n, _ in uses))
    return uses, f"Reading {what} again for the brief."
