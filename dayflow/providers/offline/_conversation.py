"""Reading the offline model's conversation: its tool calls with their results, and the
`Noted:` entries and create_task calls it finds in its own text or in a compacted summary
(the protocol is described in `_model.py`).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass, field
from typing import Any

from dayflow.compaction import is_summary, summarised_calls, summarised_creates, summary_lines
from dayflow.models import Message
from dayflow.providers.offline._reading import date_of

_ENTRY = re.compile(r"Noted: (plan|have|request|no request|reader) ")


@dataclass(frozen=True)
class Call:
    name: str
    input: dict[str, Any]
    result: Any  # the parsed JSON result, or None
    error: str | None  # why there is no usable result, if so


@dataclass(frozen=True)
class Created:
    """One create_task call as the brief reports it."""

    key: Any
    title: str
    task_id: str | None
    existing: bool
    error: str | None
    done: bool = False  # the existing task is one the user marked done


@dataclass
class Memory:
    """What the run knows beyond the visible payloads: its own `Noted:` entries and its creates."""

    compacted: bool = False
    plan: list[list[str]] | None = None  # None until a plan entry is seen
    have: set[str] = field(default_factory=set)
    requests: list[dict[str, Any]] = field(default_factory=list)
    done: set[str] = field(default_factory=set)  # ids with a request or no-request entry
    creates: list[Created] = field(default_factory=list)
    reader: str | None = None  # the first name the inbox greets: whose own mail it is


def blocks_of(message: Message, kind: str) -> list[dict[str, Any]]:
    content = message.get("content")
    blocks = content if isinstance(content, list) else []
    return [b for b in blocks if isinstance(b, dict) and b.get("type") == kind]


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict))
    return ""


def tool_calls(messages: list[Message]) -> list[Call]:
    results = {}
    for message in messages:
        if message.get("role") == "user":
            results.update({b.get("tool_use_id"): b for b in blocks_of(message, "tool_result")})
    calls = []
    for message in messages:
        # A summary keeps the calendar's events whole: those reads count as made, and are
        # never made again for the brief.
        calls += [Call(n, a, r, None) for n, a, r in summarised_calls(message)]
        for block in blocks_of(message, "tool_use") if message.get("role") == "assistant" else []:
            args: dict[str, Any] = block["input"] if isinstance(block.get("input"), dict) else {}
            found = results.get(block.get("id"))
            result, error = None, None
            if found is None:
                error = "no result came back"
            elif found.get("is_error"):
                # Dayflow's tools say "Error: why"; the brief says "Could not read X: why".
                text = _text_of(found.get("content")).strip().removeprefix("Error:").strip()
                error = text or "unknown error"
            else:
                try:
                    result = json.loads(_text_of(found.get("content")))
                except (ValueError, RecursionError):  # an MCP server's text can be anything
                    error = "the result was not valid JSON"
            calls.append(Call(str(block.get("name")), args, result, error))
    return calls


def named(calls: list[Call], name: str, **args: Any) -> list[Call]:
    return [
        c for c in calls if c.name == name and all(c.input.get(k) == v for k, v in args.items())
    ]


def latest_list(calls: list[Call], name: str, key: str, **args: Any) -> tuple[list, str | None]:
    """The list under `key` from the latest such call, or an error; ([], None) if never called."""
    found = named(calls, name, **args)
    if not found:
        return [], None
    call = found[-1]
    if call.error:
        return [], call.error
    items = call.result.get(key) if isinstance(call.result, dict) else None
    if not isinstance(items, list):
        return [], f"the result has no '{key}' list"
    return [i for i in items if isinstance(i, dict)], None


def prompt_facts(messages: list[Message]) -> tuple[dt.date | None, str | None]:
    first = next((m for m in messages if m.get("role") == "user"), {})
    text = _text_of(first.get("content"))
    day = re.search(r"\b\d{4}-\d{2}-\d{2}\b", text)
    zone = re.search(r"timezone is ([\w/+\-]+)", text)
    return date_of(day.group(0) if day else None), zone.group(1) if zone else None


def _texts(message: Message) -> list[str]:
    content = message.get("content")
    if isinstance(content, str):
        return [content]
    return [str(b.get("text", "")) for b in blocks_of(message, "text")]


def remember(messages: list[Message], calls: list[Call]) -> Memory:
    """The `Noted:` entries and create_task calls of the run, from its text and any summary."""
    memory = Memory()
    for message in messages:
        if message.get("role") == "assistant":
            for text in _texts(message):
                _read_entries(text, memory)
        elif is_summary(message):
            # Entries anywhere in the summary but its tool-call lines; the creates it records.
            memory.compacted = True
            for line in summary_lines(message, calls=False):
                _read_entries(line, memory)
            memory.creates += [
                Created(c.key, str(c.args.get("title", "(untitled)")), c.task_id, c.existing,
                        c.error)
                for c in summarised_creates(message)
            ]  # fmt: skip
    memory.creates += visible_creates(calls)
    return memory


def visible_creates(calls: list[Call]) -> list[Created]:
    out = []
    for call in named(calls, "create_task"):
        task = call.result.get("task") if isinstance(call.result, dict) else None
        task_id = task.get("id") if isinstance(task, dict) else None
        existing = isinstance(call.result, dict) and call.result.get("created") is False
        done = existing and isinstance(task, dict) and task.get("status") == "done"
        title = str(call.input.get("title", "(untitled)"))
        # A call that named its item by source_id alone: the key it was filed under.
        key = call.input.get("idempotency_key")
        if isinstance(task, dict) and isinstance(task.get("idempotency_key"), str):
            key = task["idempotency_key"]
        out.append(Created(key, title, task_id, existing, call.error, done))
    return out


def _read_entries(text: str, memory: Memory) -> None:
    at = 0
    while (found := _ENTRY.search(text, at)) is not None:
        try:
            value, end = json.JSONDecoder().raw_decode(text, found.end())
        except ValueError:
            at = found.end()
            continue
        at = end
        kind = found.group(1)
        if kind == "plan" and isinstance(value, list):
            memory.plan = (memory.plan or []) + [
                [str(i) for i in g] for g in value if isinstance(g, list)
            ]
        elif kind == "have" and isinstance(value, list):
            memory.have |= {str(k) for k in value}
        elif kind == "request" and isinstance(value, dict) and "id" in value:
            memory.requests.append(value)
            memory.done.add(str(value["id"]))
        elif kind == "no request" and isinstance(value, list):
            memory.done |= {str(i) for i in value}
        elif kind == "reader" and isinstance(value, str):
            memory.reader = value
