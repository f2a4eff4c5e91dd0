"""Compaction: keep long runs cheap without losing what was decided.

Every call re-sends the whole history, so a run's cost grows with the square of its steps. Before
a call whose estimated input passes a threshold, the loop replaces the old tool exchanges with
one user turn labelled `LABEL` (`Earlier in this run (compacted):`) that keeps the *shape* of
each exchange (which tool, which arguments, ok or which error, how many items) and the
assistant's own words, and drops the payloads (message bodies, descriptions, snippets).

What a later step needs of each result stays, because a model acts on it after the payload is
gone (issue 31.2: without the keys it could file nothing; without the followups it filed the
user's own mail, answered threads and owed replies as tasks; without the cut-short notice Today
lost its "not read in full" line):
- read_inbox: each message's id, `key`, subject and `bulk` mark; where the next page starts,
  how many were left out, which sources failed.
- read_message: its id, `key` and thread key (its requests are the model's reading, in its own
  words: a second one is filed as `#2` with the source_id, see `tools.tasks`).
- read_tasks: each task's id, key, title and due date (what is already covered).
- create_task: the task's id and title, and its key when the call did not spell it out.
- read_calendar: each event's times, title, place and whether it takes time; the conflicts;
  the series cut short; what was left out or failed.
- read_followups: all of it but the window's start, the user's addresses and each item's
  sources: the owed and awaited threads and the keys of what is never a task (answered, bulk,
  yours), which decide every later filing.
- read_prep: each event's threads and open tasks (not its attendees).
- read_since and move_due: whole (what changed since the last brief, a due date moved).
- draft_reply: whole (the draft's thread, folder and Message-ID: the owed reply's line says
  "draft in Drafts" from it, and the model does not draft that thread again).
- another server's tool (MCP), or any result of no known shape: its size and its opening
  (Dayflow cannot know what a later step needs of it); an error: its message.
The calendar, followups and prep keep theirs as JSON that `summarised_calls` gives back (the
offline model reads them so; a model reads the same JSON). These results are *kept in the
summary* rather than *never compacted*: they come in the same turn as the inbox listing and
the bodies, and exchanges are replaced whole (a tool_use needs its tool_result right after
it), so keeping them out would keep the turn's payloads too; and each is bounded by its tool.

Rules, each tested (the loop applies them, `agent.driver._maybe_compact`, from the step rows):
- Below the threshold nothing is compacted.
- The first user message (the job) and the last `keep_last` assistant/user pairs are never
  touched, so the model's own latest move stays verbatim.
- Whole exchanges are replaced, so every tool_use still has its tool_result right after it.
- The summary is a *user* turn, labelled, so the model reads it as context it was given.

Compaction is reversible: the step rows are never rewritten. The loop records which steps a
compaction replaced and the summary text (the `compactions` table), so a resume rebuilds
exactly the list the last call was sent, and `show` still prints the full history. A later
compaction extends the stored text as it stands, so a run compacted by an older Dayflow goes on
with its own words (its lines still read back: `summarised_calls` takes the older calendar form
too); the stored record decides, never today's summariser. The summariser is deterministic and
makes no model call: compaction itself costs no tokens.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from dayflow.models import Message
from dayflow.shown import THREAD_KEY_PREFIX

LABEL = "Earlier in this run (compacted):"
MAX_NOTE_CHARS = 600
MAX_IDS_LISTED = 60
MAX_LABEL_CHARS = 60


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
        outcome = _outcome(block.get("name", ""), block.get("input"), by_id.get(block.get("id")))
        lines.append(f"- step {step}: {block.get('name')}({args}) -> {outcome}")
    return "\n".join(lines) if lines else f"- step {step}: (no tool calls)"


def _outcome(name: str, args: Any, result: dict[str, Any] | None) -> str:
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
    except (ValueError, RecursionError):  # an MCP server's text can be anything
        return _opening(text)
    if not isinstance(payload, dict):
        return _opening(text)
    if name == "create_task" and isinstance(payload.get("task"), dict):
        task = payload["task"]
        verb = "created" if payload.get("created") else "already existed"
        out = f"ok, task {task.get('id')} {verb}: {json.dumps(task.get('title'))}"
        given = args.get("idempotency_key") if isinstance(args, dict) else None
        key = task.get("idempotency_key")
        # Filed under a key the call did not spell out (source_id alone, or `#2`): say which,
        # so a later step knows that item is done.
        return out + (f"{_KEY}{json.dumps(key)}" if isinstance(key, str) and key != given else "")
    keep = _KEPT.get(name)
    if keep is not None:
        kept = keep(payload)
        return f"ok, {_counts(kept)}{_KEPT_MARK}{_json(kept)}"
    if name == "read_message" and isinstance(payload.get("message"), dict):
        message = payload["message"]
        out = f"ok, message {message.get('id')} read"
        if isinstance(message.get("key"), str):
            out += f"{_KEY}{json.dumps(message['key'])}"
        if isinstance(message.get("thread_id"), str) and message["thread_id"]:
            out += f"; thread {json.dumps(THREAD_KEY_PREFIX + message['thread_id'])}"
        return out
    for key, value in payload.items():
        if isinstance(value, list):
            items = [_item_label(item) for item in value if isinstance(item, dict) and "id" in item]
            more = len(items) > MAX_IDS_LISTED
            listed = "; ".join(items[:MAX_IDS_LISTED]) + ("; …" if more else "")
            return f"ok, {len(value)} {key}" + (f": {listed}" if items else "") + _paging(payload)
        if isinstance(value, dict) and "id" in value:
            return f"ok, {key} {value['id']} read"
    return _opening(text)


_KEY = "; key "
_KEPT_MARK = ": "  # after the counts: the kept result, as one JSON object
MAX_OPENING_CHARS = 300


def _opening(text: str) -> str:
    """A result the summary cannot read (another server's text, JSON of no known shape): its
    size and its opening, since Dayflow cannot tell what a later step needs of it."""
    flat = " ".join(text.split())
    if not flat:
        return "ok"
    cut = flat if len(flat) <= MAX_OPENING_CHARS else flat[: MAX_OPENING_CHARS - 1] + "…"
    return f"ok, {len(text)} chars: {json.dumps(cut, ensure_ascii=False)}"


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _counts(kept: dict[str, Any]) -> str:
    """`3 events`, `2 you_owe, 1 waiting_on`: the lists a kept result holds, by size."""
    sizes = [f"{len(v)} {k}" for k, v in kept.items() if isinstance(v, list) and k in _COUNTED]
    return ", ".join(sizes) or "nothing listed"


_COUNTED = ("events", "you_owe", "waiting_on", "answered", "bulk", "yours")


def _kept_calendar(payload: dict[str, Any]) -> dict[str, Any]:
    """A calendar read as a brief still needs it: each event's times, title, place and
    whether it takes time; the conflicts to flag; the series not read in full (Today's
    "not read in full" line); what was left out and what could not be read."""
    events = [e for e in payload.get("events", []) if isinstance(e, dict) and "id" in e]
    kept: dict[str, Any] = {"events": [_event(e) for e in events]}
    for key in ("conflicts", "conflicts_more", "cut_short", "more", "unavailable"):
        if payload.get(key):
            kept[key] = payload[key]
    return kept


def _kept_followups(payload: dict[str, Any]) -> dict[str, Any]:
    """read_followups as later steps need it: the owed and awaited threads (their keys, the
    owed messages' keys and latest id, who, about what, since when, for how long) and the
    mail keys of no new request (answered, bulk, yours), which decide what is never a task;
    the counts left out, why nothing can be told (`note`), what could not be read. Only the
    window's start, the user's addresses and each item's sources go."""
    kept = {k: v for k, v in payload.items() if k not in ("since", "me")}
    for name in ("you_owe", "waiting_on"):
        if isinstance(kept.get(name), list):
            items = [i for i in kept[name] if isinstance(i, dict)]
            kept[name] = [{k: v for k, v in i.items() if k != "sources"} for i in items]
    return kept


def _kept_prep(payload: dict[str, Any]) -> dict[str, Any]:
    """read_prep as the brief's Today needs it: each event's times and title, its threads
    (key, subject, who wrote last, when) and its open tasks; only the attendees go (the
    threads name who wrote)."""
    kept = dict(payload)
    if isinstance(kept.get("events"), list):
        events = [e for e in kept["events"] if isinstance(e, dict)]
        kept["events"] = [
            {k: v for k, v in e.items() if k not in ("with", "with_more")} for e in events
        ]
    return kept


def _kept_whole(payload: dict[str, Any]) -> dict[str, Any]:
    """read_since, move_due and draft_reply whole: the brief's Since yesterday and its
    "draft in Drafts" are written from them, and each is bounded by its tool (at most 30
    items of each kind; one task; one draft's few fields)."""
    return dict(payload)


# The reads whose results a later step acts on, item by item, and that are small and bounded
# by their tools: the summary keeps what of each it needs, as JSON `summarised_calls` reads.
_KEPT = {
    "read_calendar": _kept_calendar,
    "read_followups": _kept_followups,
    "read_prep": _kept_prep,
    "read_since": _kept_whole,
    "move_due": _kept_whole,
    "draft_reply": _kept_whole,
}


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
    (the `unavailable:` part `_paging` writes, or the kept result's list), so a model that
    lost the payload still knows what it could not read."""
    out: dict[str, list[str]] = {}
    if not is_summary(message):
        return out
    for line in _summary_text(message).splitlines():
        call = _SUMMARY_CALL.match(line)
        if call is None:
            continue
        parsed = _parse_call(line, call)
        if parsed is not None and isinstance(parsed[1], dict):
            failed = parsed[1].get("unavailable")
            listed = failed if isinstance(failed, list) else []
            out[call.group("name")] = [
                str(f.get("source")) for f in listed if isinstance(f, dict) and f.get("source")
            ]
            continue
        _, mark, names = line.rpartition(_UNAVAILABLE)
        out[call.group("name")] = [n for n in names.split(", ") if n] if mark else []
    return out


_EVENT_FIELDS = ("id", "start", "end", "all_day", "title", "location", "status", "response", "free")


def _event(item: dict[str, Any]) -> dict[str, Any]:
    return {k: item[k] for k in _EVENT_FIELDS if item.get(k) not in (None, "", False)}


def summarised_calls(message: Message) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """The calls a summary keeps the results of, as (tool, arguments, result): the calendar,
    followups and prep reads, whose results it holds as later steps need them. Others keep
    only their shape. A line an older Dayflow wrote (a calendar read's events as a bare list,
    its failed sources by name) is read as well: a resumed run's stored summary is never
    rewritten."""
    out: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
    if not is_summary(message):
        return out
    for line in _summary_text(message).splitlines():
        call = _SUMMARY_CALL.match(line)
        if call is None or call.group("name") not in _KEPT:
            continue
        parsed = _parse_call(line, call)
        if parsed is None:
            continue
        args, kept = parsed
        if isinstance(kept, dict):
            out.append((call.group("name"), args, kept))
        elif isinstance(kept, list) and call.group("name") == "read_calendar":
            result: dict[str, Any] = {"events": [e for e in kept if isinstance(e, dict)]}
            _, mark, names = line.rpartition(_UNAVAILABLE)
            if mark:
                result["unavailable"] = [
                    {"source": n, "reason": "it could not be read (earlier in this run)"}
                    for n in names.split(", ")
                    if n
                ]
            out.append((call.group("name"), args, result))
    return out


def summarised_arguments(message: Message, name: str) -> list[dict[str, Any]]:
    """The arguments of every `name` call a summary records, whatever its outcome (an error
    too): what was tried, so that it is not tried again (a refused draft_reply)."""
    out: list[dict[str, Any]] = []
    if not is_summary(message):
        return out
    for line in _summary_text(message).splitlines():
        call = _SUMMARY_CALL.match(line)
        if call is None or call.group("name") != name:
            continue
        try:
            args, _ = json.JSONDecoder().raw_decode(line, call.end())
        except ValueError:
            continue
        if isinstance(args, dict):
            out.append(args)
    return out


@dataclass(frozen=True)
class SummarisedCreate:
    """One create_task call a summary records: its arguments, the task's id (None when it
    failed), whether the task existed already, why it failed (None when it did not), and
    the key it was filed under (given, or as the summary says when the call named none)."""

    args: dict[str, Any]
    task_id: str | None
    existing: bool
    error: str | None
    key: Any


def summarised_creates(message: Message) -> list[SummarisedCreate]:
    """The create_task calls a summary records, in order (none when it is no summary)."""
    out: list[SummarisedCreate] = []
    for line in summary_lines(message, calls=True):
        call = _SUMMARY_CALL.match(line)
        if call is None or call.group("name") != "create_task":
            continue
        rest = line[call.end() :]
        try:
            args, end = json.JSONDecoder().raw_decode(rest)
        except ValueError:
            args, end = {}, 0
        args = args if isinstance(args, dict) else {}
        outcome = rest[end:].partition("->")[2].strip()
        created = _CREATED.search(outcome)
        error = None
        if outcome.startswith("error"):
            error = outcome.removeprefix("error").lstrip(": ").strip() or "unknown error"
        elif outcome.startswith("no result"):
            error = "no result came back"
        existing = bool(created and created.group("verb") == "already existed")
        task_id = created.group("id") if created else None
        key = _filed_key(outcome) or args.get("idempotency_key")
        out.append(SummarisedCreate(args, task_id, existing, error, key))
    return out


def summary_lines(message: Message, *, calls: bool) -> list[str]:
    """A summary's lines that record tool calls (`calls`), or all the others (the label and
    the assistant's own words), so a reader never needs the lines' wording."""
    if not is_summary(message):
        return []
    lines = _summary_text(message).splitlines()
    return [ln for ln in lines if (_SUMMARY_CALL.match(ln) is not None) == calls]


_CREATED = re.compile(r"\btask (?P<id>\S+) (?P<verb>created|already existed)\b")
_FILED = re.compile(r"ok, task \S+ (?:created|already existed): ")


def _filed_key(outcome: str) -> str | None:
    """The key a create_task outcome says its task was filed under, when the call did not
    spell it out (`ok, task t_1 created: "Title"; key "mail:3fa2#2"`); else None."""
    found = _FILED.search(outcome)
    if found is None:
        return None
    decoder = json.JSONDecoder()
    try:
        _, end = decoder.raw_decode(outcome, found.end())
        if not outcome.startswith(_KEY, end):
            return None
        key, _ = decoder.raw_decode(outcome, end + len(_KEY))
    except ValueError:
        return None
    return key if isinstance(key, str) else None


def _parse_call(line: str, call: re.Match[str]) -> tuple[dict[str, Any], Any] | None:
    """(arguments, kept JSON) of a summary line `- step N: tool({args}) -> ok, <counts>:
    <JSON>`; None when the line keeps no JSON result (an error, a shape only)."""
    decoder = json.JSONDecoder()
    try:
        args, end = decoder.raw_decode(line, call.end())
    except ValueError:
        return None
    head = ") -> ok, "
    if not (isinstance(args, dict) and line.startswith(head, end)):
        return None
    at = line.find(_KEPT_MARK, end + len(head))
    if at < 0 or line[at + len(_KEPT_MARK) : at + len(_KEPT_MARK) + 1] not in ("{", "["):
        return None
    try:
        kept, _ = decoder.raw_decode(line, at + len(_KEPT_MARK))
    except ValueError:
        return None
    return args, kept


def _item_label(item: dict[str, Any]) -> str:
    """An item of a listing as its id, its task key (a message's `key`, a task's
    idempotency key) and a short label (subject, or time and title; a task's due date):
    cheap, and what a later step still needs once the payload is gone (a task filed under the
    key, a message known to be covered)."""
    label = str(item.get("subject") or item.get("title") or "")
    if len(label) > MAX_LABEL_CHARS:
        label = label[: MAX_LABEL_CHARS - 1] + "…"
    start = item.get("start")
    if isinstance(start, str) and len(start) >= 16:
        label = f"{start[:10]} {start[11:16]} {label}"
    out = str(item["id"])
    key = item.get("key") or item.get("idempotency_key")
    if isinstance(key, str) and key:
        out += f" {key}"
    if label:
        out += f" {json.dumps(label, ensure_ascii=False)}"
    if isinstance(item.get("due"), str):
        out += f" due {item['due']}"
    if item.get("bulk") is True:  # list, bulk or automated mail: never a task
        out += " bulk"
    return out


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


def is_summary(message: Message) -> bool:
    """Whether `message` is a compaction summary (the user turn that starts with `LABEL`).
    The offline model recognises its summaries with this, never by parsing the wording."""
    return message.get("role") == "user" and _summary_text(message).startswith(LABEL)


def _summary_text(message: Message) -> str:
    content = message.get("content")
    if isinstance(content, list) and content and isinstance(content[0], dict):
        return str(content[0].get("text", ""))
    return content if isinstance(content, str) else ""
