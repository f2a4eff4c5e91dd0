"""Compaction: keep long runs cheap without losing what was decided.

Every call re-sends the whole history, so a run's cost grows with the square of its steps. Before
a call whose estimated input passes a threshold, the loop replaces the old tool exchanges with
one user turn labelled `Earlier in this run (compacted):` that keeps the *shape* of each
exchange (which tool, which arguments, ok or which error, how many items, the ids of tasks
created) and the assistant's own words, and drops the payloads (message bodies, event lists).

Rules, each tested:
- Below the threshold the list is returned unchanged.
- The first user message (the job) and the last `keep_last` assistant/user pairs are never
  touched, so the model's own latest move stays verbatim.
- Whole exchanges are replaced, so every tool_use still has its tool_result right after it.
- The summary is a *user* turn, labelled, so the model reads it as context it was given.

Compaction is reversible: the step rows are never rewritten. The loop records which steps a
compaction replaced and the summary text, so a resume rebuilds exactly the list the last call
was sent, and `show` still prints the full history. The summariser is deterministic and makes
no model call: compaction itself costs no tokens.
"""

from __future__ import annotations

import json
import re
from typing import Any

from dayflow.models import DEFAULT_COMPACT_AT, Message

LABEL = "Earlier in this run (compacted):"
MAX_NOTE_CHARS = 600
MAX_IDS_LISTED = 60
MAX_LABEL_CHARS = 60
_STEP_NUMBER = re.compile(r"^- step (\d+)", re.MULTILINE)


def estimate_tokens(value: Any) -> int:
    """A rough token count: a quarter of the characters of the compact JSON."""
    return max(1, len(json.dumps(value, ensure_ascii=False, separators=(",", ":"))) // 4)


def summarise_exchange(step: int, assistant: list[dict[str, Any]], results: list[Any]) -> str:
    """One exchange as summary lines: the assistant's words and each tool call's outcome."""
    lines: list[str] = []
    for block in assistant:
        if block.get("type") == "text" and block.get("text", "").strip():
            note = " ".join(block["text"].split())
            if len(note) > MAX_NOTE_CHARS:
                note = note[: MAX_NOTE_CHARS - 1] + "…"
            lines.append(f"- step {step}, assistant: {note}")
    by_id = {r.get("tool_use_id"): r for r in results if isinstance(r, dict)}
    for block in assistant:
        if block.get("type") != "tool_use":
            continue
        args = json.dumps(block.get("input"), ensure_ascii=False, separators=(", ", ": "))
        outcome = _outcome(block.get("name", ""), by_id.get(block.get("id")))
        lines.append(f"- step {step}: {block.get('name')}({args}) -> {outcome}")
    return "\n".join(lines) if lines else f"- step {step}: (no tool calls)"


def _outcome(name: str, result: dict[str, Any] | None) -> str:
    if result is None:
        return "no result"
    content = result.get("content")
    if isinstance(content, list):
        content = "".join(b.get("text", "") for b in content if isinstance(b, dict))
    text = content if isinstance(content, str) else ""
    if result.get("is_error"):
        message = " ".join(text.split())
        return "error: " + (message[:300] + "…" if len(message) > 300 else message)
    try:
        payload = json.loads(text)
    except ValueError:
        return f"ok, {len(text)} chars"
    if not isinstance(payload, dict):
        return "ok"
    if name == "create_task" and isinstance(payload.get("task"), dict):
        task = payload["task"]
        verb = "created" if payload.get("created") else "already existed"
        return f"ok, task {task.get('id')} {verb}: {json.dumps(task.get('title'))}"
    if name == "read_calendar" and isinstance(payload.get("events"), list):
        # Events keep what a brief shows of them (times, title, place, all-day, status), as
        # JSON a reader can take back (`summarised_calls`): the brief needs no second read.
        events = [_event(e) for e in payload["events"] if isinstance(e, dict) and "id" in e]
        shown = json.dumps(events[:MAX_IDS_LISTED], ensure_ascii=False, separators=(",", ":"))
        cut = "; …" if len(events) > MAX_IDS_LISTED else ""
        return f"ok, {len(payload['events'])} events: {shown}{cut}{_paging(payload)}"
    for key, value in payload.items():
        if isinstance(value, list):
            items = [_item_label(item) for item in value if isinstance(item, dict) and "id" in item]
            more = len(items) > MAX_IDS_LISTED
            listed = "; ".join(items[:MAX_IDS_LISTED]) + ("; …" if more else "")
            return f"ok, {len(value)} {key}" + (f": {listed}" if items else "") + _paging(payload)
        if isinstance(value, dict) and "id" in value:
            return f"ok, {key} {value['id']} read"
    return "ok"


def _paging(payload: dict[str, Any]) -> str:
    """What a listing said beyond its items and a later step still needs: where the next page
    starts, how many were left out, which sources could not be read."""
    out = ""
    if isinstance(payload.get("next_cursor"), str):
        out += f"; next_cursor={json.dumps(payload['next_cursor'])}"
    if isinstance(payload.get("more"), int) and payload["more"]:
        out += f"; {payload['more']} more not listed"
    failed = payload.get("unavailable")
    if isinstance(failed, list) and failed:
        names = [str(f.get("source")) for f in failed if isinstance(f, dict)]
        out += f"{_UNAVAILABLE}{', '.join(names)}"
    return out


_UNAVAILABLE = "; unavailable: "
_SUMMARY_CALL = re.compile(r"^- step \d+: (?P<name>[A-Za-z_][\w-]*)\(")


def summarised_unavailable(message: Message) -> dict[str, list[str]]:
    """The sources a summary says its latest call of each tool could not read, by tool name
    (the `unavailable:` part `_paging` writes), so a model that lost the payload still knows
    what it could not read."""
    out: dict[str, list[str]] = {}
    if not is_summary(message):
        return out
    for line in _summary_text(message).splitlines():
        call = _SUMMARY_CALL.match(line)
        if call is None:
            continue
        _, mark, names = line.rpartition(_UNAVAILABLE)
        out[call.group("name")] = [n for n in names.split(", ") if n] if mark else []
    return out


_EVENT_FIELDS = ("id", "start", "end", "all_day", "title", "location", "status", "response", "free")


def _event(item: dict[str, Any]) -> dict[str, Any]:
    return {k: item[k] for k in _EVENT_FIELDS if item.get(k) not in (None, "", False)}


def summarised_calls(message: Message) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """The calls a summary keeps the results of, as (tool, arguments, result): the calendar
    reads, whose events it holds in full for a brief. Others keep only their shape."""
    out: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
    if not is_summary(message):
        return out
    decoder = json.JSONDecoder()
    for line in _summary_text(message).splitlines():
        call = _SUMMARY_CALL.match(line)
        if call is None or call.group("name") != "read_calendar":
            continue
        try:
            args, end = decoder.raw_decode(line, call.end())
            at = line.index(" events: ", end) + len(" events: ")
            events, _ = decoder.raw_decode(line, at)
        except ValueError:
            continue
        if not (line[end:].startswith(") -> ok, ") and isinstance(args, dict)):
            continue
        if isinstance(events, list):
            result: dict[str, Any] = {"events": [e for e in events if isinstance(e, dict)]}
            _, mark, names = line.rpartition(_UNAVAILABLE)
            if mark:
                result["unavailable"] = [
                    {"source": n, "reason": "it could not be read (earlier in this run)"}
                    for n in names.split(", ")
                    if n
                ]
            out.append((call.group("name"), args, result))
    return out


def _item_label(item: dict[str, Any]) -> str:
    """An item of a listing as its id and a short label (subject, or time and title): cheap,
    and what a brief still needs once the payload is gone."""
    label = str(item.get("subject") or item.get("title") or "")
    if len(label) > MAX_LABEL_CHARS:
        label = label[: MAX_LABEL_CHARS - 1] + "…"
    start = item.get("start")
    if isinstance(start, str) and len(start) >= 16:
        label = f"{start[:10]} {start[11:16]} {label}"
    return f"{item['id']} {json.dumps(label, ensure_ascii=False)}" if label else str(item["id"])


def summary_message(
    exchanges: list[tuple[int, list[dict[str, Any]], list[Any]]], previous: Message | None = None
) -> Message:
    """The labelled user turn that stands for `exchanges` (step, assistant, tool results),
    after the exchanges an earlier summary `previous` stood for: summarising only the new
    steps gives the same text as summarising all of them again, at a cost that does not grow
    with the run."""
    lines = [summarise_exchange(n, a, r) for n, a, r in exchanges]
    if previous is not None:
        lines.insert(0, _summary_text(previous).removeprefix(LABEL).strip("\n"))
    body = "\n".join(lines)
    return {"role": "user", "content": [{"type": "text", "text": f"{LABEL}\n{body}"}]}


def pairs(messages: list[Message]) -> list[tuple[Message, Message | None]]:
    """The assistant turns after the job, each with the user turn that answers it (if any)."""
    out: list[tuple[Message, Message | None]] = []
    i = 1
    while i < len(messages):
        if messages[i]["role"] != "assistant":
            i += 1
            continue
        nxt = messages[i + 1] if i + 1 < len(messages) else None
        if nxt is not None and nxt["role"] == "user":
            out.append((messages[i], nxt))
            i += 2
        else:
            out.append((messages[i], None))
            i += 1
    return out


def compact(
    messages: list[Message], *, keep_last: int = 1, threshold_tokens: int = DEFAULT_COMPACT_AT
) -> list[Message]:
    """Replace the old exchanges of `messages` by a summary when it is over the threshold.

    `messages` is [job, a1, u1, ..., aN, uN] (a turn may lack its user reply, e.g. pause_turn).
    An already compacted list (job, summary, ...) is compacted again from its summary on.
    """
    if threshold_tokens <= 0 or estimate_tokens(messages) < threshold_tokens:
        return messages
    job, rest = messages[0], messages[1:]
    previous: list[str] = []
    offset = 0  # steps already summarised by an earlier compaction
    if rest and rest[0]["role"] == "user" and is_summary(rest[0]):
        earlier = _summary_text(rest[0]).removeprefix(LABEL).strip("\n")
        previous = [earlier]
        offset = max((int(m) for m in _STEP_NUMBER.findall(earlier)), default=0)
        rest = rest[1:]
    exchanges = pairs([job, *rest])
    if len(exchanges) <= keep_last:
        return messages
    old, recent = exchanges[: len(exchanges) - keep_last], exchanges[len(exchanges) - keep_last :]
    lines = previous + [
        summarise_exchange(offset + i + 1, a["content"], (u or {}).get("content") or [])
        for i, (a, u) in enumerate(old)
    ]
    summary: Message = {
        "role": "user",
        "content": [{"type": "text", "text": LABEL + "\n" + "\n".join(lines)}],
    }
    tail: list[Message] = []
    for a, u in recent:
        tail.append(a)
        if u is not None:
            tail.append(u)
    return [job, summary, *tail]


def is_summary(message: Message) -> bool:
    """Whether `message` is a compaction summary (the user turn that starts with `LABEL`).
    The offline model recognises its summaries with this, never by parsing the wording."""
    return message.get("role") == "user" and _summary_text(message).startswith(LABEL)


def _summary_text(message: Message) -> str:
    content = message.get("content")
    if isinstance(content, list) and content and isinstance(content[0], dict):
        return str(content[0].get("text", ""))
    return content if isinstance(content, str) else ""
