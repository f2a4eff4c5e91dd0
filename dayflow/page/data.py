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
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dayflow.models import BRIEF_SECTIONS, Message, Section, Task
from dayflow.page.lines import (
    SUBJECT,
    Evidence,
    Line,
    clip,
    date_of,
    dicts_in,
    event_id,
    hm,
    person_text,
    results_of,
    short_day,
    unavailable_in,
    unread_lines,
    when,
)
from dayflow.page.since import since_lines
from dayflow.senders import from_line, sender_name
from dayflow.shown import injections, latest_result, messages_read, shown_in


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


class _Reads:
    """The run's reads, looked up by what each section needs."""

    def __init__(self, conversation: list[Message], proof: Mapping[str, Task]) -> None:
        self.proof = proof
        self.conversation = conversation
        self.mail: dict[str, dict[str, Any]] = {}
        inbox = latest_result(conversation, "read_inbox")
        self.inbox_read = isinstance(inbox, dict)
        for m in dicts_in(inbox, "messages"):
            self.mail[str(m.get("id"))] = m
        self.sample = any(str(k).startswith("sample:") for k in self.mail)
        for opened in results_of(conversation, "read_message"):
            found = opened.get("message")
            if isinstance(found, dict) and found.get("id"):
                self.mail.setdefault(str(found["id"]), found)
        self.inbox_unread = unavailable_in(inbox)
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
            clip(from_line(m.get("from"))),
            str(m.get("received_at") or ""),
            quote=clip(quote) if quote else "",
        )

    def today(self, day: dt.date) -> list[Line] | None:
        result = latest_result(self.conversation, "read_calendar", range="today")
        if not isinstance(result, dict):
            return None
        prep = {
            str(e.get("id")): e
            for e in dicts_in(latest_result(self.conversation, "read_prep"), "events")
        }
        lines = unread_lines(result)
        for event in sorted(dicts_in(result, "events"), key=lambda e: str(e.get("start"))):
            times = (
                "All day"
                if event.get("all_day")
                else f"{hm(event.get('start'))}–{hm(event.get('end'))}"
            )
            detail = clip(event.get("location") or "")
            if event.get("status") == "cancelled":
                detail = ", ".join(x for x in (detail, "cancelled") if x)
            threads = dicts_in(prep.get(str(event.get("id"))), "threads")
            sub = tuple(self._thread_line(t) for t in threads)
            lines.append(
                Line(
                    f"{times} {clip(event.get('title') or '(untitled)')}",
                    detail,
                    why=event_id(event),
                    sub=sub,
                )
            )
        for c in dicts_in(result, "conflicts"):
            titles = " and ".join(clip(t, 120) for t in c.get("titles") or [] if isinstance(t, str))
            lines.append(
                Line(
                    f"Conflict: {titles} overlap",
                    f"{hm(c.get('start'))}–{hm(c.get('end'))}",
                    warn=True,
                )
            )
        return lines

    def _thread_line(self, thread: dict[str, Any]) -> Line:
        sender = thread.get("latest_from")
        who = person_text(sender, addresses=False) if isinstance(sender, dict) else ""
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
        for payload in results_of(self.conversation, "create_task"):
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
        for t in dicts_in(latest_result(self.conversation, "read_tasks"), "tasks"):
            due = date_of(t.get("due"))
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
            key=lambda t: (t.get("source_id") not in first, date_of(t.get("due")) or dt.date.max)
        )
        for t in tasks:
            ev = self.evidence(t.get("source_id"), t.get("evidence") or "")
            bits = [f"from {_sender_name(ev.sender)}" if ev else "on your task list"]
            bits.append(_due_text(date_of(t.get("due")), day, t.get("due_kind")))
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
            sender = _sender_name(ev.sender) if ev else clip(sender_name(m.get("from"), ""))
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
        for item in dicts_in(result, which):
            person = item.get("with")
            who = person_text(person) if isinstance(person, dict) else "someone"
            subject = clip(item.get("subject") or "(no subject)", SUBJECT)
            days = item.get("age_days")
            since = short_day(date_of(item.get("latest_at")))
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
        """ "Since yesterday" (`page/since.py`), when the run compared with an earlier brief."""
        if self.since_read is None:
            return None
        return since_lines(self.since_read, self.conversation, self.evidence)

    def week(self, day: dt.date) -> list[Line] | None:
        result = latest_result(self.conversation, "read_calendar", range="week")
        if not isinstance(result, dict):
            return None
        days: dict[dt.date, list[Line]] = {}
        for event in sorted(dicts_in(result, "events"), key=lambda e: str(e.get("start"))):
            on = date_of(event.get("start"))
            if on is None or on <= day:
                continue
            when = "all day" if event.get("all_day") else hm(event.get("start"))
            gone = " (cancelled)" if event.get("status") == "cancelled" else ""
            title = clip(event.get("title") or "(untitled)")
            days.setdefault(on, []).append(Line(f"{when} {title}{gone}", why=event_id(event)))
        return unread_lines(result) + [
            Line(short_day(d), sub=tuple(ls)) for d, ls in sorted(days.items())
        ]


def _sender_name(sender: object) -> str:
    """ "Dana Whitfield <dana@x>" as "Dana Whitfield" (`dayflow.senders`)."""
    return clip(sender_name(sender))


def _due_text(due: dt.date | None, today: dt.date, kind: object = None) -> str:
    implied = " (implied)" if kind == "implied" else ""
    if due is None:
        return "no deadline given"
    if due == today:
        return "due today" + implied
    if due == today + dt.timedelta(days=1):
        return "due tomorrow" + implied
    if due < today:
        return f"overdue since {short_day(due)}"
    return f"due {short_day(due)}{implied}"


__all__ = ["Entry", "Evidence", "Line", "Page", "Part", "clip", "page_of", "when", "written_lines"]
