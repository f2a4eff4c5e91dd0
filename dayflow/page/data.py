"""The brief as a page's data: its sections and lines, each line with its evidence, built from
the run's committed reads and the tasks it filed (the structured record), not from the model's
Markdown.

Why not the Markdown: a model's text names no message, so a line written from it cannot link
to the mail that justifies it, and turning a model's Markdown into HTML is one more parser of
untrusted text. The run's tool results are data: an event has its times, a task its source
message, a followup its thread's latest message. The model's own words appear where no read
stands for them: the "One thing", and a section whose read the run never made.

A page depends only on the run's committed rows and its final text, so a redone delivery
writes the same bytes.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from dayflow.models import BRIEF_SECTIONS, SINCE_DUE_MOVED, SINCE_LINES, Message, Section, Task
from dayflow.printable import plain
from dayflow.shown import injections, latest_result, messages_read, shown_in

# One field of a page at most this long: a 1 MB subject is mail's, not the page's.
MAX_FIELD = 500
SUBJECT = 200
_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Evidence:
    """What a line stands on: a message (its subject, sender and date) or a thread's latest
    message (a calendar event's line is its own evidence). `ref` is the id `dayflow why`
    takes (a message or thread id); `quote` the ask in the sender's words, when the task
    carries one (issue 34's `evidence`)."""

    ref: str
    subject: str
    sender: str = ""
    at: str = ""  # ISO time, as the read gave it (already in the reader's zone)
    kind: str = "mail"  # mail (a message read) | thread (a thread's latest, as listed)
    quote: str = ""

    @property
    def key(self) -> tuple[str, str]:
        """The message it is, whichever read gave it: its subject and time."""
        return self.subject, self.at


@dataclass(frozen=True)
class Line:
    """One line of a section: its text, a detail shown smaller, its evidence, the lines under
    it (an event's prep), and `warn` for a source that could not be read."""

    text: str
    detail: str = ""
    evidence: Evidence | None = None
    why: str | None = None  # the id a `/why/ID` page explains (a task id, else the evidence's)
    sub: tuple[Line, ...] = ()
    warn: bool = False
    strong: bool = False


@dataclass(frozen=True)
class Part:
    """A section of the page: its name (one of `models.BRIEF_SECTIONS`) and lines; `empty` is
    what it says when it has none."""

    name: str
    lines: tuple[Line, ...]
    empty: str = "Nothing."


@dataclass(frozen=True)
class Page:
    """The brief of one run as a page: title, the update's label, the zone, the sections,
    and the addresses the run read (the only ones a link may go to)."""

    run_id: str
    title: str
    zone: str
    parts: tuple[Part, ...]
    links: frozenset[str] = frozenset()
    label: str | None = None
    model: str = ""
    sample: bool = False

    def evidence(self) -> list[Entry]:
        """The page's last list: each message its lines stand on, once, in page order (a
        message a task came from and the same one as a thread's latest are one entry)."""
        entries: dict[tuple[str, str], Entry] = {}
        for part in self.parts:
            for line in _walk(part.lines):
                ev = line.evidence
                if ev is None:
                    continue
                key = ev.key
                found = entries.get(key)
                if found is None:
                    anchor = f"e-{_anchor(self.run_id)}-{len(entries) + 1}"
                    found = entries[key] = Entry(anchor, ev.subject, ev.sender, ev.at, (), "")
                quotes = found.quotes + ((ev.quote,) if ev.quote not in ("", *found.quotes) else ())
                mail = ev.kind == "mail"
                entries[key] = Entry(
                    found.anchor,
                    found.subject,
                    ev.sender if mail and ev.sender else found.sender,
                    found.at,
                    quotes,
                    found.ref or (ev.ref if mail else ""),
                )
        return list(entries.values())


@dataclass(frozen=True)
class Entry:
    """One message of the page's evidence list: where the lines link (`anchor`), what it
    is, the asks quoted from it, and the id `dayflow why` answers for it ("" for none)."""

    anchor: str
    subject: str
    sender: str
    at: str
    quotes: tuple[str, ...]
    ref: str


def _walk(lines: tuple[Line, ...]) -> list[Line]:
    return [x for line in lines for x in (line, *_walk(line.sub))]


def _anchor(value: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "-", value)


def page_of(
    conversation: list[Message],
    text: str,
    *,
    run_id: str,
    brief_date: str,
    zone: str,
    label: str | None = None,
    model: str = "",
    proof: Mapping[str, Task] | None = None,
) -> Page:
    """The page of a run from its committed conversation and its final `text`. `proof`: the
    filed tasks by id, for what create_task's answer to the model leaves out (the evidence
    quote and whether the due date was stated): fields fixed when a task is filed, so a
    redone delivery still writes the same bytes."""
    day = dt.date.fromisoformat(brief_date)
    reads = _Reads(conversation, proof or {})
    parts = {
        Section.TODAY: reads.today(day),
        Section.SINCE: reads.since(),
        Section.NEEDS_ACTION: reads.needs(day),
        Section.YOU_OWE: reads.followups("you_owe", day),
        Section.WAITING_ON: reads.followups("waiting_on", day),
        Section.PROMISED: None,
        Section.TASKS_CREATED: reads.created(),
        Section.THIS_WEEK: reads.week(day),
        Section.ONE_THING: None,
    }
    built = []
    for name in BRIEF_SECTIONS:
        if name == Section.SINCE and not reads.compared:
            continue  # a first brief (or one that never compared): no such section
        if name == Section.PROMISED and not reads.promised:
            continue  # no promise open: no such section
        lines, empty = parts[name], _EMPTY[name]
        if lines is None:  # no read stands for it: the model's own lines
            written = written_lines(text, name)
            lines = [Line(w, strong=name == Section.ONE_THING) for w in written]
            empty = "Nothing said." if name == Section.ONE_THING else "Not read by this brief."
        built.append(Part(name, tuple(lines), empty))
    title = f"Daily brief: {day:%A} {day.day} {day:%B %Y}"
    return Page(
        run_id,
        title,
        zone,
        tuple(built),
        shown_in(conversation).urls,
        label,
        model,
        sample=reads.sample,
    )


_EMPTY = {
    Section.TODAY: "Nothing on the calendar today.",
    Section.SINCE: Section.SINCE_NOTHING,
    Section.NEEDS_ACTION: "Nothing in the inbox needs you right now.",
    Section.YOU_OWE: "No reply owed.",
    Section.WAITING_ON: "Nobody owes you a reply.",
    Section.PROMISED: "No promise open.",
    Section.TASKS_CREATED: "None.",
    Section.THIS_WEEK: "Nothing else on the calendar.",
    Section.ONE_THING: "Nothing said.",
}


def written_lines(text: str, name: str) -> list[str]:
    """The lines the model wrote under section `name` (its `##` heading by `Section`), each
    without its list mark and emphasis marks: text, never markup."""
    out: list[str] = []
    inside = False
    for raw in text.splitlines():
        if raw.startswith("#"):
            inside = raw.lstrip("#").strip().casefold() == name.casefold()
            continue
        line = raw.strip()
        if inside and line:
            line = re.sub(r"^(?:[-*+]|\d+[.)])\s+", "", line)
            out.append(clip(line.replace("**", "").replace("__", "")))
    return out


def clip(value: object, limit: int = MAX_FIELD) -> str:
    """A field as a page shows it: one line, `plain`, at most `limit` characters."""
    text = _SPACE.sub(" ", plain(str(value))).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


class _Reads:
    """The run's reads, looked up by what each section needs."""

    def __init__(self, conversation: list[Message], proof: Mapping[str, Task]) -> None:
        self.proof = proof
        self.conversation = conversation
        self.mail: dict[str, dict[str, Any]] = {}
        inbox = latest_result(conversation, "read_inbox")
        self.inbox_read = isinstance(inbox, dict)
        for m in _dicts(inbox, "messages"):
            self.mail[str(m.get("id"))] = m
        self.sample = any(str(k).startswith("sample:") for k in self.mail)
        for opened in _results(conversation, "read_message"):
            found = opened.get("message")
            if isinstance(found, dict) and found.get("id"):
                self.mail.setdefault(str(found["id"]), found)
        self.inbox_unread = _unavailable(inbox)
        since = latest_result(conversation, "read_since")
        # Compared with an earlier brief (read_since, issue 35).
        self.compared = isinstance(since, dict) and isinstance(since.get("previous"), dict)
        self.since_read = since if self.compared else None
        follow = latest_result(conversation, "read_followups")
        self.promised = isinstance(follow, dict) and bool(follow.get("you_promised"))
        self.filed = self._filed()
        self.by_subject: dict[tuple[str, str], str] = {}
        for item_id in self.mail:
            found = self.evidence(item_id)
            if found is not None:
                self.by_subject.setdefault(found.key, item_id)

    def evidence(self, message_id: object, quote: object = "") -> Evidence | None:
        m = self.mail.get(str(message_id))
        if m is None:
            return None
        return Evidence(
            str(m.get("id")),
            clip(m.get("subject") or "(no subject)", SUBJECT),
            clip(m.get("from") or ""),
            str(m.get("received_at") or ""),
            quote=clip(quote) if quote else "",
        )

    def today(self, day: dt.date) -> list[Line] | None:
        result = latest_result(self.conversation, "read_calendar", range="today")
        if not isinstance(result, dict):
            return None
        prep = {
            str(e.get("id")): e
            for e in _dicts(latest_result(self.conversation, "read_prep"), "events")
        }
        lines = _unread_lines(result)
        for event in sorted(_dicts(result, "events"), key=lambda e: str(e.get("start"))):
            times = (
                "All day"
                if event.get("all_day")
                else f"{_hm(event.get('start'))}–{_hm(event.get('end'))}"
            )
            detail = clip(event.get("location") or "")
            if event.get("status") == "cancelled":
                detail = ", ".join(x for x in (detail, "cancelled") if x)
            threads = _dicts(prep.get(str(event.get("id"))), "threads")
            sub = tuple(self._thread_line(t) for t in threads)
            lines.append(
                Line(
                    f"{times} {clip(event.get('title') or '(untitled)')}",
                    detail,
                    why=_event_id(event),
                    sub=sub,
                )
            )
        for c in _dicts(result, "conflicts"):
            titles = " and ".join(clip(t, 120) for t in c.get("titles") or [] if isinstance(t, str))
            lines.append(
                Line(
                    f"Conflict: {titles} overlap",
                    f"{_hm(c.get('start'))}–{_hm(c.get('end'))}",
                    warn=True,
                )
            )
        return lines

    def _thread_line(self, thread: dict[str, Any]) -> Line:
        sender = thread.get("latest_from")
        who = _person(sender, addresses=False) if isinstance(sender, dict) else ""
        if thread.get("latest_from_me"):
            who = "you"
        ev = Evidence(
            str(thread.get("key") or ""),
            clip(thread.get("subject") or "(no subject)", SUBJECT),
            who,
            str(thread.get("latest_at") or ""),
            kind="thread",
        )
        count = thread.get("messages")
        more = f", {count} messages" if isinstance(count, int) and count > 1 else ""
        # A thread's key is no id `dayflow why` answers; its latest message, when this run
        # read it, is (found by subject and time).
        read = self.by_subject.get(ev.key)
        if read is not None:
            ev = self.evidence(read) or ev
        why = ev.ref if ev.kind == "mail" else None
        return Line(f"Latest from {who}{more}" if who else "A thread", evidence=ev, why=why)

    def _filed(self) -> list[dict[str, Any]]:
        """The tasks this run filed (or found already filed), once each, in filing order."""
        seen: dict[str, dict[str, Any]] = {}
        for payload in _results(self.conversation, "create_task"):
            task = payload.get("task")
            if isinstance(task, dict) and task.get("id"):
                row = self.proof.get(str(task["id"]))
                if row is not None:
                    task = dict(task, evidence=row.evidence, due_kind=row.due_kind)
                seen.setdefault(str(task["id"]), dict(task, created=payload.get("created")))
        return list(seen.values())

    def needs(self, day: dt.date) -> list[Line] | None:
        if not self.inbox_read and not self.filed:
            return None
        lines = [Line(f"Could not read {s}", why, warn=True) for s, why in self.inbox_unread]
        tasks = [t for t in self.filed if t.get("status", "open") == "open"]
        known = {str(t.get("id")) for t in tasks}
        for t in _dicts(latest_result(self.conversation, "read_tasks"), "tasks"):
            due = _date(t.get("due"))
            if (
                str(t.get("id")) not in known
                and t.get("status", "open") == "open"
                and due is not None
                and due <= day
                and not str(t.get("idempotency_key") or "").startswith("sample:")
            ):
                tasks.append(t)
        # A sender the user marked important first (dayflow important), then by due date.
        first = {m.get("id") for m in messages_read(self.conversation) if m.get("important")}
        tasks.sort(
            key=lambda t: (t.get("source_id") not in first, _date(t.get("due")) or dt.date.max)
        )
        for t in tasks:
            ev = self.evidence(t.get("source_id"), t.get("evidence") or "")
            bits = [f"from {_sender_name(ev.sender)}" if ev else "on your task list"]
            bits.append(_due_text(_date(t.get("due")), day, t.get("due_kind")))
            lines.append(
                Line(
                    clip(t.get("title") or "(untitled)"), ", ".join(bits), ev, why=str(t.get("id"))
                )
            )
        return lines + self._injected()

    def _injected(self) -> list[Line]:
        """A line for each message that tried to instruct an assistant: its subject and
        sender, and that nothing was done; never its text (`dayflow why` quotes it)."""
        lines = []
        for m in injections(self.conversation) or []:
            ev = self.evidence(m["id"])
            subject = ev.subject if ev else clip(m.get("subject") or "(no subject)", SUBJECT)
            sender = _sender_name(ev.sender) if ev else clip(m.get("from") or "")
            detail = f"from {sender} · {m['note']}" if sender else str(m["note"])
            lines.append(Line(f"Not a task: “{subject}”", detail, ev, why=str(m["id"])))
        return lines

    def created(self) -> list[Line] | None:
        tasks = self.filed
        if not tasks and not self.inbox_read:
            return None
        lines = []
        for t in tasks:
            how = "new" if t.get("created") else "already on your list"
            if t.get("status") == "done":
                how = "you already marked it done"
            ev = self.evidence(t.get("source_id"), t.get("evidence") or "")
            lines.append(
                Line(
                    clip(t.get("title") or "(untitled)"),
                    f"{t.get('id')} · {how}",
                    ev,
                    why=str(t.get("id")),
                )
            )
        return lines

    def followups(self, which: str, day: dt.date) -> list[Line] | None:
        result = latest_result(self.conversation, "read_followups")
        if not isinstance(result, dict):
            return None
        lines = []
        for item in _dicts(result, which):
            person = item.get("with")
            who = _person(person) if isinstance(person, dict) else "someone"
            subject = clip(item.get("subject") or "(no subject)", SUBJECT)
            days = item.get("age_days")
            since = _short(_date(item.get("latest_at")))
            age = f"{days} working day{'' if days == 1 else 's'}" if isinstance(days, int) else ""
            if which == "you_owe":
                text, detail = f"Reply to {who}", f"waiting {age} (since {since})"
            else:
                text, detail = who, f"no answer for {age} (since {since})"
            ev = self.evidence(item.get("id")) or Evidence(
                str(item.get("id") or item.get("key") or ""),
                subject,
                who if which == "you_owe" else "you",  # the question awaiting an answer
                str(item.get("latest_at") or ""),
                kind="thread",
            )
            lines.append(Line(text, detail, ev, why=ev.ref))
        return lines

    def since(self) -> list[Line] | None:
        """ "Since yesterday" from read_since's changes (and the moves move_due made): the brief
        it compares with first, then each change with the message it stands on, as the other
        sections have (a reply sent, an answer, a task's mail, a moved deadline's words)."""
        result = self.since_read
        if result is None:
            return None
        previous = result.get("previous") or {}
        lines = [Line(Section.compared_with(previous.get("brief_date")))]
        lines += _unread_lines(result)
        for kind, words, _ in SINCE_LINES:
            lines += [_SINCE_LINES[kind](self, item, words) for item in _dicts(result, kind)]
            more = result.get(kind + "_more")
            if isinstance(more, int) and more > 0:
                lines.append(Line(f"and {more} more"))
        proposed = {(i.get("id"), i.get("now")): i for i in _dicts(result, "due_moved")}
        for made in _results(self.conversation, "move_due"):
            moved = made.get("moved")
            if isinstance(moved, dict):
                was = proposed.get((moved.get("id"), moved.get("now")), {}).get("was")
                lines.append(self._due_moved(moved | ({"was": was} if was else {})))
        if result.get("nothing"):
            lines.append(Line(Section.SINCE_NOTHING))
        return lines

    def _mail_or_thread(self, item: dict[str, Any], sender: str) -> Evidence:
        """The message a change stands on: as this run read it, else as read_since names it."""
        return self.evidence(item.get("id")) or Evidence(
            str(item.get("id") or item.get("key") or ""),
            clip(item.get("subject") or "(no subject)", SUBJECT),
            sender,
            str(item.get("at") or ""),
            kind="thread",
        )

    def _replied(self, item: dict[str, Any], words: str) -> Line:
        who = _person(item["with"]) if isinstance(item.get("with"), dict) else "someone"
        ev = self._mail_or_thread(item, "you")
        return Line(words.format(who=who), f"“{ev.subject}”", ev, why=ev.ref)

    def _answered(self, item: dict[str, Any], words: str) -> Line:
        who = _person(item["by"], addresses=False) if isinstance(item.get("by"), dict) else ""
        ev = self._mail_or_thread(item, who)
        return Line(words.format(who=who or "someone"), f"“{ev.subject}”", ev, why=ev.ref)

    def _task_line(self, item: dict[str, Any], words: str, *, done: bool = False) -> Line:
        ev = self.evidence(item.get("source_id"))
        why = str(item["id"]) if done and item.get("id") else None
        title = clip(item.get("title") or "(untitled)")
        return Line(words.format(title=title), evidence=ev, why=why or (ev.ref if ev else None))

    def _due_moved(self, item: dict[str, Any]) -> Line:
        was, now = _date(item.get("was")), _date(item.get("now"))
        ev = self.evidence(item.get("source_id"), item.get("evidence") or "")
        detail = f"{_short(was)} → {_short(now)}" if was else f"now {_short(now)}"
        text = SINCE_DUE_MOVED[0].format(title=clip(item.get("title") or "(untitled)"))
        return Line(text, detail, ev, why=str(item.get("id") or "") or None)

    def week(self, day: dt.date) -> list[Line] | None:
        result = latest_result(self.conversation, "read_calendar", range="week")
        if not isinstance(result, dict):
            return None
        days: dict[dt.date, list[Line]] = {}
        for event in sorted(_dicts(result, "events"), key=lambda e: str(e.get("start"))):
            on = _date(event.get("start"))
            if on is None or on <= day:
                continue
            when = "all day" if event.get("all_day") else _hm(event.get("start"))
            gone = " (cancelled)" if event.get("status") == "cancelled" else ""
            title = clip(event.get("title") or "(untitled)")
            days.setdefault(on, []).append(Line(f"{when} {title}{gone}", why=_event_id(event)))
        return _unread_lines(result) + [
            Line(_short(d), sub=tuple(ls)) for d, ls in sorted(days.items())
        ]


def _span(when: dict[str, Any], *, day: bool = True) -> str:
    if when.get("all_day"):
        return f"{_short(_date(when.get('start')))} all day" if day else "all day"
    hours = f"{_hm(when.get('start'))}–{_hm(when.get('end'))}"
    return f"{_short(_date(when.get('start')))} {hours}" if day else hours


def _moved(_: _Reads, item: dict[str, Any], words: str) -> Line:
    was, now = item.get("was") or {}, item.get("now") or {}
    same = _date(was.get("start")) == _date(now.get("start"))
    detail = f"{_span(was)} → {_span(now, day=not same)}"
    title = clip(item.get("title") or "(untitled)")
    return Line(words.format(title=title), detail, why=_event_id(item))


def _cancelled(_: _Reads, item: dict[str, Any], words: str) -> Line:
    title = clip(item.get("title") or "(untitled)")
    return Line(words.format(title=title), f"was {_span(item)}", why=_event_id(item))


def _new(_: _Reads, item: dict[str, Any], words: str) -> Line:
    title = clip(item.get("title") or "(untitled)")
    return Line(words.format(title=title), _span(item, day=False), why=_event_id(item))


def _conflict(_: _Reads, item: dict[str, Any], words: str) -> Line:
    titles = " and ".join(clip(t, 120) for t in item.get("titles") or [] if isinstance(t, str))
    return Line(words.format(titles=titles or "two events"), warn=True)


# Each kind's line (its words, and the section's order, are `SINCE_LINES`'; the due dates
# moved come after, from move_due's answers: the moves made, not proposed).
_SINCE_LINES: dict[str, Callable[[_Reads, dict[str, Any], str], Line]] = {
    "replies_sent": _Reads._replied,
    "answered": _Reads._answered,
    "tasks_done": lambda r, item, words: r._task_line(item, words, done=True),
    "tasks_gone": _Reads._task_line,
    "meetings_moved": _moved,
    "meetings_cancelled": _cancelled,
    "meetings_new": _new,
    "conflicts_new": _conflict,
}


def _results(conversation: list[Message], name: str) -> list[dict[str, Any]]:
    """The parsed results of each successful call of tool `name`, in order."""
    import json

    calls: set[str] = set()
    out = []
    for message in conversation:
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use" and block.get("name") == name:
                calls.add(str(block.get("id")))
            elif (
                block.get("type") == "tool_result"
                and not block.get("is_error")
                and str(block.get("tool_use_id")) in calls
            ):
                raw = block.get("content")
                if isinstance(raw, list):
                    raw = "".join(b.get("text", "") for b in raw if isinstance(b, dict))
                try:
                    parsed = json.loads(raw) if isinstance(raw, str) else None
                except (ValueError, RecursionError):
                    continue
                if isinstance(parsed, dict):
                    out.append(parsed)
    return out


def _dicts(value: Any, key: str) -> list[dict[str, Any]]:
    listed = value.get(key) if isinstance(value, dict) else None
    return [v for v in listed if isinstance(v, dict)] if isinstance(listed, list) else []


def _unavailable(result: Any) -> list[tuple[str, str]]:
    return [(clip(u.get("source")), clip(u.get("reason"))) for u in _dicts(result, "unavailable")]


def _unread_lines(result: Any) -> list[Line]:
    return [Line(f"Could not read {s}", why, warn=True) for s, why in _unavailable(result)]


def _event_id(event: dict[str, Any]) -> str | None:
    """An event is its own evidence: its id is what a `/why/ID` page would show."""
    return str(event["id"]) if event.get("id") else None


def _person(person: dict[str, Any], *, addresses: bool = True) -> str:
    name, address = clip(person.get("name") or "", 120), clip(person.get("address") or "", 120)
    if name and address and addresses:
        return f"{name} ({address})"
    return name or address or "someone"


def _sender_name(sender: str) -> str:
    """ "Dana Whitfield <dana@x>" as "Dana Whitfield"; an address alone, or one under an empty
    name (`"" <dana@x>`), as itself."""
    from email.utils import parseaddr  # only when a page is built

    name, address = parseaddr(sender)
    return " ".join(name.split()) or address or sender.strip() or "someone"


def _time(iso: object) -> dt.datetime | None:
    try:
        return dt.datetime.fromisoformat(str(iso))
    except ValueError:
        return None


def _date(iso: object) -> dt.date | None:
    if not iso:
        return None
    value = _time(iso)
    if value is not None:
        return value.date()
    try:
        return dt.date.fromisoformat(str(iso)[:10])
    except ValueError:
        return None


def _hm(iso: object) -> str:
    value = _time(iso)
    return f"{value:%H:%M}" if value else "?"


def _short(day: dt.date | None) -> str:
    return f"{_DAYS[day.weekday()]} {day.day} {_MONTHS[day.month - 1]}" if day else "?"


def when(iso: str) -> str:
    """An evidence's time as a page shows it: "Tue 1 Dec 09:40"."""
    value = _time(iso)
    if value is None:
        day = _date(iso)
        return _short(day) if day else ""
    return f"{_short(value.date())} {value:%H:%M}"


def _due_text(due: dt.date | None, today: dt.date, kind: object = None) -> str:
    implied = " (implied)" if kind == "implied" else ""
    if due is None:
        return "no deadline given"
    if due == today:
        return "due today" + implied
    if due == today + dt.timedelta(days=1):
        return "due tomorrow" + implied
    if due < today:
        return f"overdue since {_short(due)}"
    return f"due {_short(due)}{implied}"


__all__ = ["Entry", "Evidence", "Line", "Page", "Part", "clip", "page_of", "when", "written_lines"]
