"""The built-in offline model: a deterministic stand-in for Claude when no API key is set.

It reads the conversation the way a model would and answers with the same wire shapes. It is a
pure function of the request, with no state between calls, because the loop may crash and resume
in a new process: the same history must get the same answer, tool-use ids included. It never
raises; whatever it is sent, it answers with something a person can read.

The plan is fixed: gather (inbox, calendar today and week, open tasks), then file a task for each
message that asks something of the reader and is not yet covered, then write the brief.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from dataclasses import dataclass
from email.utils import parseaddr
from typing import Any

from dayflow.models import Block, Message, ModelRequest, ModelResponse, Usage
from dayflow.providers import OFFLINE_MODEL

GATHER: tuple[tuple[str, dict[str, Any]], ...] = (
    ("read_inbox", {"limit": 20}),
    ("read_calendar", {"range": "today"}),
    ("read_calendar", {"range": "week"}),
    ("read_tasks", {"include_done": False}),
)
MAX_NEW_TASKS = 5  # a brief, not a backlog: the rest still shows under "Needs action"

_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")  # fmt: skip
_MON = (
    r"jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?"
)
_DOW = r"mon|tue(?:s)?|wed(?:nes)?|thu(?:rs?)?|fri|sat(?:ur)?|sun"
_DEADLINE = re.compile(
    r"\b(?:by|before|due(?:\s+(?:on|by))?|no later than|until)\s+(?P<when>"
    r"(?:the\s+)?end\s+of\s+(?:the\s+)?(?:day|week)|eod|cob|eow|today|tonight|tomorrow"
    r"|\d{4}-\d{2}-\d{2}"
    rf"|(?:(?:next|this)\s+)?(?:{_DOW})(?:day)?\b\.?"  # a weekday, maybe with its date:
    rf"(?:,?\s+(?:(?:{_MON})\.?\s+\d{{1,2}}|\d{{1,2}}\s+(?:{_MON})))?"
    rf"|(?:{_MON})\.?\s+\d{{1,2}}\b|\d{{1,2}}\s+(?:{_MON})\b)",
    re.IGNORECASE,
)
_REQUEST = re.compile(
    r"\b(?:(?:could|can|would|will)\s+you(?:\s+please)?|(?:i\s+|we\s+)?need\s+you\s+to|please)\s+",
    re.IGNORECASE,
)
# Only at the start of a sentence or after a colon: "Timesheets: submit yours by Friday" is a
# request, "the review is due Friday" is not.
_ACTION_VERB = re.compile(
    r"(?:^|[:.!?;]\s+|:)\s*(?P<verb>(?:sign|approve|confirm|rsvp|submit|return|complete|renew)\b)",
    re.IGNORECASE,
)
_NOT_A_REQUEST = re.compile(
    r"(?:find|see|note|allow|ignore|disregard|do not|don't|feel free|excuse|forgive|keep in mind"
    r"|be (?:aware|advised)|believe|imagine|let (?:me|us) know if you (?:have|need))\b",
    re.IGNORECASE,
)
_CLAUSE_END = re.compile(
    r"[?!;\n]|\.(?:\s|$)|,\s|\s(?:by|before|no later than|until|so|and (?:tell|let)|because|if)\s",
    re.IGNORECASE,
)
_FYI = re.compile(
    r"\bfyi\b|\bno action\b|nothing (?:is )?needed|nothing you need to do|for your information"
    r"|no (?:need to|reply needed)",
    re.IGNORECASE,
)
_AUTOMATED = {"noreply", "donotreply", "no", "newsletter", "newsletters", "digest", "notification",
              "notifications", "notify", "alert", "alerts", "mailer", "bounce", "bounces",
              "updates", "news", "marketing", "receipts", "billing", "calendar"}  # fmt: skip
_HALF_YEAR = dt.timedelta(days=183)
_GIVE = {"send", "forward", "share", "give", "email", "mail", "pass", "get"}


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
class _Action:
    message: dict[str, Any]
    title: str
    due: dt.date | None
    deadline: str | None  # the phrase the due date came from

    @property
    def key(self) -> str:
        return f"email:{self.message.get('id')}"


def _reply(request: ModelRequest) -> tuple[list[Block], str]:
    messages = [m for m in request.messages if isinstance(m, dict)]
    calls = _calls(messages)
    offered = {t.get("name") for t in request.tools if isinstance(t, dict)}
    last = messages[-1] if messages else {}
    last_is_results = last.get("role") == "user" and bool(_blocks(last, "tool_result"))
    fresh = last.get("role") == "user" and all(m.get("role") != "assistant" for m in messages)
    if fresh:
        plan = [(name, args) for name, args in GATHER if name in offered]
        if plan:
            intro = "Let me look at your inbox, calendar and tasks."
            return _with_tools(messages, intro, plan), "tool_use"
    elif last_is_results and "create_task" in offered and not _named(calls, "create_task"):
        pending = _pending(calls)
        if pending:
            n = len(pending)
            needs = "1 message needs" if n == 1 else f"{n} messages need"
            intro = f"{needs} something from you; adding them as tasks."
            plan = [("create_task", _task_input(a)) for a in pending]
            return _with_tools(messages, intro, plan), "tool_use"
    return [{"type": "text", "text": _brief(messages, calls)}], "end_turn"


def _with_tools(messages: list[Message], intro: str, plan: list[tuple[str, dict]]) -> list[Block]:
    history = json.dumps(messages, sort_keys=True, separators=(",", ":"), default=str)
    blocks: list[Block] = [{"type": "text", "text": intro}]
    for name, args in plan:
        digest = hashlib.sha256(f"{history}#{len(blocks)}".encode()).hexdigest()
        # A fresh input dict: a caller mutating the response must not reach GATHER.
        blocks.append({"type": "tool_use", "id": "toolu_off_" + digest[:20], "name": name,
                       "input": dict(args)})  # fmt: skip
    return blocks


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
    return _date_of(day.group(0) if day else None), zone.group(1) if zone else None


# --- deciding what needs action ----------------------------------------------------------------


def _pending(calls: list[_Call]) -> list[_Action]:
    inbox, _ = _latest_list(calls, "read_inbox", "messages")
    tasks, _ = _latest_list(calls, "read_tasks", "tasks")
    covered = {t.get("idempotency_key") for t in tasks} | {
        f"email:{t['source_id']}" for t in tasks if t.get("source_id")
    }
    return [a for a in _actions(inbox) if a.key not in covered][:MAX_NEW_TASKS]


def _actions(inbox: list[dict[str, Any]]) -> list[_Action]:
    found = [a for a in map(_action, inbox) if a is not None]
    found.sort(
        key=lambda a: (a.due or dt.date.max, _sort_time(a.message.get("received_at")), a.key)
    )
    return found


def _action(message: dict[str, Any]) -> _Action | None:
    name, address = parseaddr(str(message.get("from", "")))
    local = address.split("@")[0].lower()
    if local.replace("-", "").replace("_", "") in _AUTOMATED or _AUTOMATED & set(
        re.split(r"[._+\-]", local)
    ):
        return None
    subject, snippet = str(message.get("subject", "")), str(message.get("snippet", ""))
    if _FYI.search(subject) or _FYI.search(snippet):
        return None
    match = _DEADLINE.search(snippet) or _DEADLINE.search(subject)
    received = _date_of(message.get("received_at"))
    due = _resolve(match.group("when"), received) if match and received else None
    deadline = match.group(0).rstrip(".") if match else None
    sender = _sender_name(name, local)
    for text in (snippet, subject):
        for req in _REQUEST.finditer(text):
            rest = text[req.end() :]
            if not _NOT_A_REQUEST.match(rest):
                title = _title(_clause(rest), sender)
                if title:
                    return _Action(message, title, due, deadline)
        verb = _ACTION_VERB.search(text)
        if verb and match:
            return _Action(message, _title(_clause(text[verb.start("verb") :]), sender)
                           or f"Reply to {sender}: {subject}", due, deadline)  # fmt: skip
    return None


def _sender_name(display: str, local: str) -> str:
    words = display.split()
    if not words:
        return local.split(".")[0].capitalize() or "the sender"
    # A person goes by their first name; "Maple Grove Elementary" keeps its whole name.
    return words[0] if len(words) <= 2 else display


def _clause(text: str) -> str:
    end = _CLAUSE_END.search(text)
    return text[: end.start()] if end else text


def _title(clause: str, sender: str) -> str:
    words = clause.strip(" ,:-").split()
    while words and words[0].lower() in {"just", "also", "quickly", "kindly", "please"}:
        words.pop(0)
    if [w.lower() for w in words[:3]] == ["sign", "and", "return"]:
        words = ["return", "signed", *words[3:]]
    suffix = ""
    if len(words) > 1 and words[0].lower() in _GIVE and words[1].lower() in {"me", "us"}:
        del words[1]
        suffix = f" to {sender}"
    out: list[str] = []
    for word in words:
        low = word.lower()
        if low in {"the", "your", "our"}:  # a to-do list reads better without them
            continue
        out.append({"me": sender, "us": sender, "my": f"{sender}'s"}.get(low, word))
    if len(out) < 2 and not suffix:
        return ""
    title = " ".join(out) + suffix
    title = title[0].upper() + title[1:]
    return title if len(title) <= 80 else title[:77].rsplit(" ", 1)[0] + "..."


def _resolve(when: str, received: dt.date) -> dt.date | None:
    text = " ".join(when.lower().replace(".", " ").replace(",", " ").split())
    if text in {"today", "tonight", "eod", "cob", "end of day", "end of the day"}:
        return received
    if text == "tomorrow":
        return received + dt.timedelta(days=1)
    if text in {"eow", "end of week", "end of the week"}:
        return received + dt.timedelta(days=(4 - received.weekday()) % 7)
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        try:
            return dt.date.fromisoformat(text)
        except ValueError:
            return None
    month = re.search(rf"\b({_MON})\b", text)
    number = re.search(r"\b(\d{1,2})\b", text)
    if month and number:
        index = next(
            i for i, m in enumerate(_MONTHS, 1) if m.lower().startswith(month.group(1)[:3])
        )
        # The next such date, give or take: "by Jan 3" sent on Dec 30 means next year's.
        year = received.year + (dt.date(received.year, index, 1) < received - _HALF_YEAR)
        try:
            return dt.date(year, index, int(number.group(1)))
        except ValueError:
            return None
    weekday = re.search(rf"\b({_DOW})", text)
    if weekday is None:
        return None
    target = next(i for i, d in enumerate(_DAYS) if d.lower().startswith(weekday.group(1)[:3]))
    day = received + dt.timedelta(days=(target - received.weekday()) % 7)
    if text.startswith("next ") and day.isocalendar()[1] == received.isocalendar()[1]:
        day += dt.timedelta(days=7)
    return day


def _task_input(action: _Action) -> dict[str, Any]:
    message = action.message
    notes = f'{_who(message)} asked in "{message.get("subject", "")}"'
    notes += f" ({action.deadline})." if action.deadline else "."
    args: dict[str, Any] = {"title": action.title, "idempotency_key": action.key}
    if action.due:
        args["due"] = action.due.isoformat()
    return args | {"source_id": str(message.get("id")), "notes": notes}


def _who(message: dict[str, Any]) -> str:
    sender = str(message.get("from", ""))
    return parseaddr(sender)[0] or sender or "someone"


# --- writing the brief ---------------------------------------------------------------------------


def _brief(messages: list[Message], calls: list[_Call]) -> str:
    today, zone = _prompt(messages)
    head = "# Daily brief"
    if today:
        head += f": {_DAYS[today.weekday()]} {today.day} {_MONTHS[today.month - 1]} {today.year}"
    lines = [head, f"_Times in {zone}._" if zone else "", "", "## Today"]
    today_events, today_error = _latest_list(calls, "read_calendar", "events", range="today")
    week_events, week_error = _latest_list(calls, "read_calendar", "events", range="week")
    if today_error:
        lines.append(f"- _Could not read today's calendar: {today_error}_")
    if (today_error or not _named(calls, "read_calendar", range="today")) and today:
        # No usable "today" result (failed, never asked, compacted away): the week still has it.
        today_events = [e for e in week_events if _date_of(e.get("start")) == today]
    if not _named(calls, "read_calendar"):
        lines.append("- _The calendar was not read._")
    for event in sorted(today_events, key=lambda e: _sort_time(e.get("start"))):
        where = f" ({event['location']})" if event.get("location") else ""
        times = f"{_hm(event.get('start'))}–{_hm(event.get('end'))}"
        lines.append(f"- {times} {event.get('title', '(untitled)')}{where}")
    if not today_events and not today_error and _named(calls, "read_calendar"):
        lines.append("- Nothing on the calendar today.")

    inbox, inbox_error = _latest_list(calls, "read_inbox", "messages")
    actions = _actions(inbox)
    lines += ["", "## Needs action"]
    if inbox_error:
        lines.append(f"- _Could not read the inbox: {inbox_error}_")
    elif not _named(calls, "read_inbox"):
        lines.append("- _The inbox was not read._")
    for action in actions:
        who, due = _who(action.message), _due_text(action.due, today)
        lines.append(f"- {action.title} (from {who}, {due})")
    if not actions and not inbox_error and _named(calls, "read_inbox"):
        lines.append("- Nothing in the inbox needs you right now.")

    lines += ["", "## Tasks created", *_task_lines(calls, actions, inbox_error)]
    lines += ["", "## This week"]
    if week_error:
        lines.append(f"- _Could not read this week's calendar: {week_error}_")
    lines += _week_lines(week_events, today)
    lines += ["", "## One thing", _one_thing(actions, today_events, today)]
    return "\n".join(lines).replace("\n\n\n", "\n\n").strip() + "\n"


def _task_lines(calls: list[_Call], actions: list[_Action], inbox_error: str | None) -> list[str]:
    lines = []
    _, tasks_error = _latest_list(calls, "read_tasks", "tasks")
    if tasks_error:
        lines.append(f"- _Could not read your existing tasks: {tasks_error}_")
    for call in _named(calls, "create_task"):
        title = call.input.get("title", "(untitled)")
        task = call.result.get("task") if isinstance(call.result, dict) else None
        task_id = task.get("id") if isinstance(task, dict) else None
        ref = f" (`{task_id}`)" if task_id else ""
        if call.error:
            lines.append(f'- Could not create "{title}": {call.error}')
        elif isinstance(call.result, dict) and call.result.get("created") is False:
            lines.append(f"- {title}: already on your list{ref}")
        else:
            lines.append(f"- {title}{ref}")
    if not _named(calls, "create_task"):
        if inbox_error or not _named(calls, "read_inbox"):
            lines.append("- None: without the inbox there was nothing to file.")
        elif actions:
            lines.append("- None new: everything that needs action is already on your task list.")
        else:
            lines.append("- None: nothing in the inbox called for a task.")
    return lines


def _week_lines(events: list[dict], today: dt.date | None) -> list[str]:
    days: dict[dt.date, list[str]] = {}
    for event in sorted(events, key=lambda e: _sort_time(e.get("start"))):
        day = _date_of(event.get("start"))
        if day is not None and (today is None or day > today):
            days.setdefault(day, []).append(f"{_hm(event.get('start'))} {event.get('title')}")
    lines = []
    for day, items in sorted(days.items())[:6]:
        more = f" (+{len(items) - 3} more)" if len(items) > 3 else ""
        lines.append(f"- {_short_date(day)}: {', '.join(items[:3])}{more}")
    return lines or ["- Nothing else on the calendar."]


def _one_thing(actions: list[_Action], events: list[dict], today: dt.date | None) -> str:
    if actions:
        first = actions[0]  # already ordered by due date, then by when it arrived
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


def _parse(iso: object) -> dt.datetime | None:
    try:
        return dt.datetime.fromisoformat(iso) if isinstance(iso, str) else None
    except ValueError:
        return None


def _date_of(iso: object) -> dt.date | None:
    value = _parse(iso)
    return value.date() if value else None


def _sort_time(iso: object) -> str:
    # Times arrive already in the reader's zone, so their wall-clock text orders them.
    value = _parse(iso)
    return value.replace(tzinfo=None).isoformat() if value else "~"


def _hm(iso: object) -> str:
    value = _parse(iso)
    return f"{value.hour:02d}:{value.minute:02d}" if value else "?"


def _short_date(day: dt.date) -> str:
    return f"{_DAYS[day.weekday()][:3]} {day.day} {_MONTHS[day.month - 1][:3]}"
