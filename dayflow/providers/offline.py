"""The built-in offline model: a deterministic stand-in for Claude when no API key is set.

It reads the conversation the way a model would and answers with the same wire shapes. It is a
pure function of the request, with no state between calls, because the loop may crash and resume
in a new process: the same history must get the same answer, tool-use ids included. It never
raises; whatever it is sent, it answers with something a person can read.

The plan is fixed: gather (inbox, calendar today and week, open tasks), then file a task for each
message that asks something of the reader and is not yet covered, then write the brief. When the
snippets settle everything (the bundled standard inbox) that is three turns.

When `read_message` is offered and snippets are not enough (see `offline_reading.triage`), it
works through the inbox instead: re-list it with `limit` 50 if the first page came back full,
write a reading plan, open the planned messages one thread (1-3 messages) per turn, file a task
for each request as it is found (batched with the next read), re-read the calendar if its
results are no longer in view, then write the brief. On the large sample that is 30+ turns.

Such a run outlives its early tool results: the loop may compact old exchanges into one user
turn labelled `Earlier in this run (compacted):`, dropping their payloads. So every decision
is taken from what survives compaction, never from an old payload: the model writes what it
learns into its own text, one text block per entry, each starting `Noted: ` and a kind, then
compact JSON:

    Noted: have ["email:m12"]                  task keys already on the list when planning
    Noted: plan [["m156","m121"],["m169"]]     the messages to open, one inner list per turn
    Noted: request {"id":"m151","title":"Sign renewal agreement in tenant portal",
                    "due":"2026-11-09","from":"Rosa Lindqvist"}   (on one line)
    Noted: no request ["m150"]                 opened, nothing asked (or it could not be read)

(A long plan is split over several `plan` entries, read in order.) The model finds these entries
in its visible assistant text blocks and in the compacted summary: anywhere in a summary line
that is not a tool-call line, so `- step 4, assistant: Opening m151. Noted: ...` works. From the
summary's tool-call lines it also reads its `create_task` calls, for the "Tasks created" section:

    - step 7: create_task({"title": "...", "idempotency_key": "email:m151", ...}) -> ok, task
      t_ab12 created: "Sign renewal agreement in tenant portal"     (or `already existed`,
      or `-> error: <message>`, or `-> no result`)   (on one line)

A message id counts as done once a `request` or `no request` entry names it; opened messages
whose results vanished before they were looked at are opened again. So the tasks created, their
order and the brief are the same with or without compaction; the only difference is a turn or
two that read again what was compacted away before it was needed (the calendar before the brief;
the inbox listing and task list, together, if they went before the plan was written). Text taken
from mail (titles, names) appears only inside the JSON of an entry, which the parser consumes
whole, so a message cannot forge an entry.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from dataclasses import dataclass, field, replace
from typing import Any

from dayflow.models import Block, Message, ModelRequest, ModelResponse, Usage
from dayflow.providers import OFFLINE_MODEL
from dayflow.providers.offline_reading import (
    DAYS,
    MONTHS,
    Action,
    body_action,
    date_of,
    parse_time,
    snippet_action,
    thread_key,
    triage,
    who,
)

GATHER: tuple[tuple[str, dict[str, Any]], ...] = (
    ("read_inbox", {"limit": 20}),
    ("read_calendar", {"range": "today"}),
    ("read_calendar", {"range": "week"}),
    ("read_tasks", {"include_done": False}),
)
MAX_NEW_TASKS = 5  # a brief, not a backlog: the rest still shows under "Needs action"
MAX_RUN_TASKS = 10  # tasks found while reading are filed as found, up to this many per run
FULL_LISTING = 50  # read_inbox's largest page
READS_PER_TURN = 3  # one thread at a time, at most this many of its messages
COMPACTED = "Earlier in this run (compacted):"
NOTED = "Noted: "
_PLAN_CHARS = 400  # a plan entry's JSON stays well under a summariser's line limit
_ENTRY = re.compile(r"Noted: (plan|have|request|no request) ")
_TOOL_LINE = re.compile(r"^\s*-\s*step\s+\d+\s*:\s*(?P<name>[A-Za-z_][\w.-]*)\(")
_CREATED = re.compile(r"\btask (?P<id>\S+) (?P<verb>created|already existed)\b")


def estimate_tokens(obj: object) -> int:
    """About one token per four characters of `obj` as compact JSON."""
    text = json.dumps(obj, separators=(",", ":"), ensure_ascii=False, default=str)
    return (len(text) + 3) // 4


class OfflineModel:
    """A `ModelClient` that needs no network and answers deterministically."""

    def create(self, request: ModelRequest) -> ModelResponse:
        """Answer one turn of the daily-brief conversation; never raises."""
        try:
            content, stop_reason = _reply(request)
        except Exception as exc:  # the contract is "always answer", so say what broke instead
            problem = f"offline model error: {type(exc).__name__}"
            text = f"I could not put the brief together ({problem})."
            content, stop_reason = [{"type": "text", "text": text}], "end_turn"
        out = estimate_tokens(content)
        usage = Usage(input_tokens=self.count_tokens(request), output_tokens=out)
        return ModelResponse(
            content, stop_reason, usage, model=OFFLINE_MODEL, request_id=None, estimated=True
        )

    def count_tokens(self, request: ModelRequest) -> int:
        """Estimated input tokens of `request` (system, tools and messages)."""
        return estimate_tokens(
            {"system": request.system, "tools": request.tools, "messages": request.messages}
        )


@dataclass(frozen=True)
class _Call:
    name: str
    input: dict[str, Any]
    result: Any  # the parsed JSON result, or None
    error: str | None  # why there is no usable result, if so


@dataclass(frozen=True)
class _Created:
    """One create_task call as the brief reports it."""

    key: Any
    title: str
    task_id: str | None
    existing: bool
    error: str | None


@dataclass
class _Memory:
    """What the run knows beyond the visible payloads: its own `Noted:` entries and its creates."""

    compacted: bool = False
    plan: list[list[str]] | None = None  # None until a plan entry is seen
    have: set[str] = field(default_factory=set)
    requests: list[dict[str, Any]] = field(default_factory=list)
    done: set[str] = field(default_factory=set)  # ids with a request or no-request entry
    creates: list[_Created] = field(default_factory=list)


@dataclass(frozen=True)
class _Need:
    title: str
    who: str
    due: dt.date | None


def _reply(request: ModelRequest) -> tuple[list[Block], str]:
    messages = [m for m in request.messages if isinstance(m, dict)]
    calls = _calls(messages)
    memory = _remember(messages, calls)
    offered = {t.get("name") for t in request.tools if isinstance(t, dict)}
    last = messages[-1] if messages else {}
    last_is_results = last.get("role") == "user" and bool(_blocks(last, "tool_result"))
    fresh = last.get("role") == "user" and all(m.get("role") != "assistant" for m in messages)
    if fresh and not memory.compacted:
        plan = [(name, args) for name, args in GATHER if name in offered]
        if plan:
            intro = "Let me look at your inbox, calendar and tasks."
            return _with_tools(messages, [intro], plan), "tool_use"
    if "read_message" in offered or memory.plan is not None:
        can_act = last.get("role") == "user" and (last_is_results or _is_summary(last))
        reading = _reading_turn(messages, calls, memory, offered, can_act)
        if reading is not None:
            return reading
    if last_is_results and "create_task" in offered and not _named(calls, "create_task"):
        pending = _pending(calls)
        if pending:
            n = len(pending)
            needs = "1 message needs" if n == 1 else f"{n} messages need"
            intro = f"{needs} something from you; adding them as tasks."
            plan = [("create_task", _task_input(a)) for a in pending]
            return _with_tools(messages, [intro], plan), "tool_use"
    return [{"type": "text", "text": _brief(messages, calls)}], "end_turn"


def _with_tools(
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


# --- the reading flow ----------------------------------------------------------------------------


def _reading_turn(
    messages: list[Message], calls: list[_Call], memory: _Memory, offered: set, can_act: bool
) -> tuple[list[Block], str] | None:
    """The next turn when messages are opened one thread at a time; None for the plain flow."""
    if memory.plan is None:
        return _planning_turn(messages, calls, memory, offered) if can_act else None
    if not can_act:
        return [{"type": "text", "text": _brief(messages, calls, memory)}], "end_turn"
    done = set(memory.done)
    filed = {c.key for c in memory.creates} | memory.have
    room = MAX_RUN_TASKS - len(memory.creates)
    notes, found, quiet, uses = [], [], [], []
    for call in _named(calls, "read_message"):
        mid = str(call.input.get("id"))
        if mid in done:
            continue
        done.add(mid)
        message = call.result.get("message") if isinstance(call.result, dict) else None
        action = body_action(message) if isinstance(message, dict) else None
        if action is None:
            quiet.append(mid)
            continue
        found.append(action)
        notes.append(NOTED + "request " + _dumps(_request_entry(action)))
        if action.key not in filed and room > 0 and "create_task" in offered:
            filed.add(action.key)
            room -= 1
            uses.append(("create_task", _task_input(action)))
    if quiet:
        notes.append(NOTED + "no request " + _dumps(quiet))
    # Titles come from the mail, so they stay inside the JSON of the notes, never in the prose.
    said = (
        [f"Found a request in {_and([str(a.message.get('id')) for a in found])}."] if found else []
    )
    said += [f"Nothing asked of you in {_and(quiet)}."] if quiet else []
    group = next(([i for i in g if i not in done] for g in memory.plan if set(g) - done), [])
    if group and "read_message" in offered:
        uses += [("read_message", {"id": i}) for i in group]
        said.append(f"Opening {_and(group)}.")
    else:
        missing = [r for r in ("today", "week") if not _named(calls, "read_calendar", range=r)]
        if missing and "read_calendar" in offered:
            uses += [("read_calendar", {"range": r}) for r in missing]
            said.append("Reading the calendar again for the brief.")
    if not uses:
        requests = memory.requests + [_request_entry(a) for a in found]
        final = replace(memory, requests=requests, done=done)
        return [{"type": "text", "text": _brief(messages, calls, final)}], "end_turn"
    return _with_tools(messages, [" ".join(said), *notes], uses), "tool_use"


def _planning_turn(
    messages: list[Message], calls: list[_Call], memory: _Memory, offered: set
) -> tuple[list[Block], str] | None:
    listed = _named(calls, "read_inbox")
    inbox, error = _latest_list(calls, "read_inbox", "messages")
    limit = listed[-1].input.get("limit") if listed else None
    if error or not (listed or memory.compacted):
        return None
    relist = [("read_inbox", {"limit": FULL_LISTING})]
    tasks_seen = bool(_named(calls, "read_tasks")) or "read_tasks" not in offered
    if memory.compacted and not (listed and tasks_seen):
        # The listing or the task list was compacted away before the plan was written: read
        # both again, in one turn, so that the plan sees them together.
        if "read_tasks" in offered:
            relist.append(("read_tasks", {"include_done": False}))
        return _with_tools(messages, ["Reading the inbox and tasks again."], relist), "tool_use"
    if isinstance(limit, int) and len(inbox) >= limit and limit < FULL_LISTING:
        # A full first page means there is more.
        return _with_tools(messages, ["Reading more of the inbox."], relist), "tool_use"
    settled: list[Action] = []
    groups: list[list[str]] = []
    thread_of: dict[str, int] = {}
    for message in inbox:
        action, wanted = triage(message)
        if action is not None:
            settled.append(action)
        if not wanted:
            continue
        key, mid = thread_key(str(message.get("subject", ""))), str(message.get("id"))
        index = thread_of.get(key)
        if index is not None and len(groups[index]) < READS_PER_TURN:
            groups[index].append(mid)
        else:
            thread_of[key] = len(groups)
            groups.append([mid])
    if not groups:
        return None
    settled.sort(key=_action_order)
    have = sorted(_covered(calls))
    pending = [a for a in settled if a.key not in have][:MAX_NEW_TASKS]
    count = sum(map(len, groups))
    texts = [
        f"{count} messages may need you and their snippets do not settle it; I will open them "
        f"one thread at a time. Opening {_and(groups[0])}."
    ]
    texts += [NOTED + "have " + _dumps(have)] if have else []
    texts += [NOTED + "request " + _dumps(_request_entry(a)) for a in settled]
    texts += [NOTED + "plan " + _dumps(chunk) for chunk in _chunks(groups)]
    uses = [("create_task", _task_input(a)) for a in pending] if "create_task" in offered else []
    uses += [("read_message", {"id": i}) for i in groups[0]]
    return _with_tools(messages, texts, uses), "tool_use"


def _chunks(groups: list[list[str]]) -> list[list[list[str]]]:
    chunks: list[list[list[str]]] = [[]]
    for group in groups:
        if chunks[-1] and len(_dumps([*chunks[-1], group])) > _PLAN_CHARS:
            chunks.append([])
        chunks[-1].append(group)
    return chunks


def _request_entry(action: Action) -> dict[str, Any]:
    due = action.due.isoformat() if action.due else None
    sender = who(action.message)[:80]
    return {"id": str(action.message.get("id")), "title": action.title, "due": due, "from": sender}


def _and(ids: list[str]) -> str:
    return ", ".join(ids[:-1]) + " and " + ids[-1] if len(ids) > 1 else "".join(ids)


def _dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


# --- reading the history ---------------------------------------------------------------------


def _blocks(message: Message, kind: str) -> list[dict[str, Any]]:
    content = message.get("content")
    blocks = content if isinstance(content, list) else []
    return [b for b in blocks if isinstance(b, dict) and b.get("type") == kind]


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict))
    return ""


def _calls(messages: list[Message]) -> list[_Call]:
    results = {}
    for message in messages:
        if message.get("role") == "user":
            results.update({b.get("tool_use_id"): b for b in _blocks(message, "tool_result")})
    calls = []
    for message in messages:
        for block in _blocks(message, "tool_use") if message.get("role") == "assistant" else []:
            args: dict[str, Any] = block["input"] if isinstance(block.get("input"), dict) else {}
            found = results.get(block.get("id"))
            result, error = None, None
            if found is None:
                error = "no result came back"
            elif found.get("is_error"):
                error = _text_of(found.get("content")).strip() or "unknown error"
            else:
                try:
                    result = json.loads(_text_of(found.get("content")))
                except ValueError:
                    error = "the result was not valid JSON"
            calls.append(_Call(str(block.get("name")), args, result, error))
    return calls


def _named(calls: list[_Call], name: str, **args: Any) -> list[_Call]:
    return [
        c for c in calls if c.name == name and all(c.input.get(k) == v for k, v in args.items())
    ]


def _latest_list(calls: list[_Call], name: str, key: str, **args: Any) -> tuple[list, str | None]:
    """The list under `key` from the latest such call, or an error; ([], None) if never called."""
    found = _named(calls, name, **args)
    if not found:
        return [], None
    call = found[-1]
    if call.error:
        return [], call.error
    items = call.result.get(key) if isinstance(call.result, dict) else None
    if not isinstance(items, list):
        return [], f"the result has no '{key}' list"
    return [i for i in items if isinstance(i, dict)], None


def _prompt(messages: list[Message]) -> tuple[dt.date | None, str | None]:
    first = next((m for m in messages if m.get("role") == "user"), {})
    text = _text_of(first.get("content"))
    day = re.search(r"\b\d{4}-\d{2}-\d{2}\b", text)
    zone = re.search(r"timezone is ([\w/+\-]+)", text)
    return date_of(day.group(0) if day else None), zone.group(1) if zone else None


def _is_summary(message: Message) -> bool:
    return message.get("role") == "user" and any(
        t.lstrip().startswith(COMPACTED) for t in _texts(message)
    )


def _texts(message: Message) -> list[str]:
    content = message.get("content")
    if isinstance(content, str):
        return [content]
    return [str(b.get("text", "")) for b in _blocks(message, "text")]


def _remember(messages: list[Message], calls: list[_Call]) -> _Memory:
    """The `Noted:` entries and create_task calls of the run, from its text and any summary."""
    memory = _Memory()
    for message in messages:
        if message.get("role") == "assistant":
            for text in _texts(message):
                _read_entries(text, memory)
        elif _is_summary(message):
            memory.compacted = True
            for text in _texts(message):
                for line in text.splitlines():
                    tool = _TOOL_LINE.match(line)
                    if tool is None:
                        _read_entries(line, memory)
                    elif tool.group("name") == "create_task":
                        _summarised_create(line[tool.end() :], memory)
    memory.creates += _visible_creates(calls)
    return memory


def _visible_creates(calls: list[_Call]) -> list[_Created]:
    out = []
    for call in _named(calls, "create_task"):
        task = call.result.get("task") if isinstance(call.result, dict) else None
        task_id = task.get("id") if isinstance(task, dict) else None
        existing = isinstance(call.result, dict) and call.result.get("created") is False
        title = str(call.input.get("title", "(untitled)"))
        out.append(
            _Created(call.input.get("idempotency_key"), title, task_id, existing, call.error)
        )
    return out


def _read_entries(text: str, memory: _Memory) -> None:
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


def _summarised_create(rest: str, memory: _Memory) -> None:
    """One `create_task({...}) -> outcome` summary line, from just after the `(`."""
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
    title = str(args.get("title", "(untitled)"))
    existing = bool(created and created.group("verb") == "already existed")
    task_id = created.group("id") if created else None
    memory.creates.append(_Created(args.get("idempotency_key"), title, task_id, existing, error))


# --- deciding what needs action ----------------------------------------------------------------


def _covered(calls: list[_Call]) -> set[str]:
    tasks, _ = _latest_list(calls, "read_tasks", "tasks")
    return {str(t.get("idempotency_key")) for t in tasks if t.get("idempotency_key")} | {
        f"email:{t['source_id']}" for t in tasks if t.get("source_id")
    }


def _pending(calls: list[_Call]) -> list[Action]:
    inbox, _ = _latest_list(calls, "read_inbox", "messages")
    covered = _covered(calls)
    return [a for a in _actions(inbox) if a.key not in covered][:MAX_NEW_TASKS]


def _actions(inbox: list[dict[str, Any]]) -> list[Action]:
    found = [a for a in map(snippet_action, inbox) if a is not None]
    found.sort(key=_action_order)
    return found


def _action_order(action: Action) -> tuple[dt.date, str, str]:
    return action.due or dt.date.max, _sort_time(action.message.get("received_at")), action.key


def _task_input(action: Action) -> dict[str, Any]:
    message = action.message
    notes = f'{who(message)} asked in "{message.get("subject", "")}"'
    notes += f" ({action.deadline})." if action.deadline else "."
    args: dict[str, Any] = {"title": action.title, "idempotency_key": action.key}
    if action.due:
        args["due"] = action.due.isoformat()
    return args | {"source_id": str(message.get("id")), "notes": notes}


# --- writing the brief ---------------------------------------------------------------------------


def _brief(messages: list[Message], calls: list[_Call], memory: _Memory | None = None) -> str:
    today, zone = _prompt(messages)
    head = "# Daily brief"
    if today:
        head += f": {DAYS[today.weekday()]} {today.day} {MONTHS[today.month - 1]} {today.year}"
    lines = [head, f"_Times in {zone}._" if zone else "", "", "## Today"]
    today_events, today_error = _latest_list(calls, "read_calendar", "events", range="today")
    week_events, week_error = _latest_list(calls, "read_calendar", "events", range="week")
    if today_error:
        lines.append(f"- _Could not read today's calendar: {today_error}_")
    if (today_error or not _named(calls, "read_calendar", range="today")) and today:
        # No usable "today" result (failed, never asked, compacted away): the week still has it.
        today_events = [e for e in week_events if date_of(e.get("start")) == today]
    if not _named(calls, "read_calendar"):
        lines.append("- _The calendar was not read._")
    for event in sorted(today_events, key=lambda e: _sort_time(e.get("start"))):
        where = f" ({event['location']})" if event.get("location") else ""
        times = f"{_hm(event.get('start'))}–{_hm(event.get('end'))}"
        lines.append(f"- {times} {event.get('title', '(untitled)')}{where}")
    if not today_events and not today_error and _named(calls, "read_calendar"):
        lines.append("- Nothing on the calendar today.")

    if memory is not None and memory.plan is not None:  # the reading flow remembers its finds
        inbox_error, inbox_read, creates = None, True, memory.creates
        found = list(enumerate(memory.requests))
        found.sort(key=lambda p: (date_of(p[1].get("due")) or dt.date.max, p[0]))
        needs = [
            _Need(str(r.get("title")), str(r.get("from")), date_of(r.get("due"))) for _, r in found
        ]
    else:
        inbox, inbox_error = _latest_list(calls, "read_inbox", "messages")
        inbox_read, creates = bool(_named(calls, "read_inbox")), _visible_creates(calls)
        needs = [_Need(a.title, who(a.message), a.due) for a in _actions(inbox)]
    lines += ["", "## Needs action"]
    if inbox_error:
        lines.append(f"- _Could not read the inbox: {inbox_error}_")
    elif not inbox_read:
        lines.append("- _The inbox was not read._")
    for need in needs:
        lines.append(f"- {need.title} (from {need.who}, {_due_text(need.due, today)})")
    if not needs and not inbox_error and inbox_read:
        lines.append("- Nothing in the inbox needs you right now.")

    _, tasks_error = _latest_list(calls, "read_tasks", "tasks")
    lines += ["", "## Tasks created"]
    lines += _task_lines(creates, tasks_error, bool(needs), inbox_error or not inbox_read)
    lines += ["", "## This week"]
    if week_error:
        lines.append(f"- _Could not read this week's calendar: {week_error}_")
    lines += _week_lines(week_events, today)
    lines += ["", "## One thing", _one_thing(needs, today_events, today)]
    return "\n".join(lines).replace("\n\n\n", "\n\n").strip() + "\n"


def _task_lines(
    creates: list[_Created], tasks_error: str | None, has_needs: bool, no_inbox: bool | str
) -> list[str]:
    lines = []
    if tasks_error:
        lines.append(f"- _Could not read your existing tasks: {tasks_error}_")
    for c in creates:
        ref = f" (`{c.task_id}`)" if c.task_id else ""
        if c.error:
            lines.append(f'- Could not create "{c.title}": {c.error}')
        elif c.existing:
            lines.append(f"- {c.title}: already on your list{ref}")
        else:
            lines.append(f"- {c.title}{ref}")
    if not creates:
        if no_inbox:
            lines.append("- None: without the inbox there was nothing to file.")
        elif has_needs:
            lines.append("- None new: everything that needs action is already on your task list.")
        else:
            lines.append("- None: nothing in the inbox called for a task.")
    return lines


def _week_lines(events: list[dict], today: dt.date | None) -> list[str]:
    days: dict[dt.date, list[str]] = {}
    for event in sorted(events, key=lambda e: _sort_time(e.get("start"))):
        day = date_of(event.get("start"))
        if day is not None and (today is None or day > today):
            days.setdefault(day, []).append(f"{_hm(event.get('start'))} {event.get('title')}")
    lines = []
    for day, items in sorted(days.items())[:6]:
        more = f" (+{len(items) - 3} more)" if len(items) > 3 else ""
        lines.append(f"- {_short_date(day)}: {', '.join(items[:3])}{more}")
    return lines or ["- Nothing else on the calendar."]


def _one_thing(needs: list[_Need], events: list[dict], today: dt.date | None) -> str:
    if needs:
        first = needs[0]  # already ordered by due date, then by when it arrived
        due = f", {_due_text(first.due, today)}" if first.due else ""
        return f"**{first.title}{due}.**"
    if events:
        first_event = min(events, key=lambda e: _sort_time(e.get("start")))
        return f"**Be ready for {first_event.get('title')} at {_hm(first_event.get('start'))}.**"
    return "**Nothing urgent: a clear day to get ahead.**"


def _due_text(due: dt.date | None, today: dt.date | None) -> str:
    if due is None:
        return "no deadline given"
    if today is not None and due == today:
        return "due today"
    if today is not None and due == today + dt.timedelta(days=1):
        return "due tomorrow"
    if today is not None and due < today:
        return f"overdue since {_short_date(due)}"
    return f"due {_short_date(due)}"


def _sort_time(iso: object) -> str:
    # Times arrive already in the reader's zone, so their wall-clock text orders them.
    value = parse_time(iso)
    return value.replace(tzinfo=None).isoformat() if value else "~"


def _hm(iso: object) -> str:
    value = parse_time(iso)
    return f"{value.hour:02d}:{value.minute:02d}" if value else "?"


def _short_date(day: dt.date) -> str:
    return f"{DAYS[day.weekday()][:3]} {day.day} {MONTHS[day.month - 1][:3]}"
