"""Writing the offline model's brief from what the run read and noted. `snippet_actions` gives the
"Needs action" order, which is also the order the plain flow files its tasks in.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, replace
from typing import Any

from dayflow.compaction import summarised_unavailable
from dayflow.models import Message, Section
from dayflow.providers.offline._conversation import (
    Call,
    Created,
    Memory,
    latest_list,
    named,
    prompt_facts,
    visible_creates,
)
from dayflow.providers.offline._followups import (
    Owed,
    followup_sections,
    no_tasks,
    not_theirs,
    weighs_more,
)
from dayflow.providers.offline._meetings import conflict_lines, event_mark, prep_lines
from dayflow.providers.offline._promises import due_promise
from dayflow.providers.offline._quoted import evidence_line, injected_lines
from dayflow.providers.offline._reading import (
    DAYS,
    MONTHS,
    Action,
    date_of,
    listed_actions,
    parse_time,
    reader_of,
    urgent_action,
    who,
)
from dayflow.providers.offline._since import moves_made, since_lines
from dayflow.providers.offline._titles import clean_subject
from dayflow.senders import sender_name
from dayflow.sources.identity import SAMPLE_SOURCE
from dayflow.tools import refused_by_cap

_URGENT_MARK = re.compile(r"^\s*(?:urgent|dringend|urgente?|asap)\s*[:!-]*\s*", re.IGNORECASE)
_SAMPLE = f"{SAMPLE_SOURCE}:"  # the bundled sample's task keys


@dataclass(frozen=True)
class _Need:
    title: str
    who: str  # "" for a task already on the list whose mail this brief did not read
    due: dt.date | None
    urgent: bool = False  # the message says so (an outage, "urgent", "ASAP")
    key: str = ""  # the request's mail key: a task filed for it has the same one
    about: str = ""  # an urgent request's subject, which "One thing" names beside a short title
    # Its sender is not who it says (a forged "note to yourself" among them): listed after
    # every real request, never urgent, never the One thing.
    unverified: bool = False
    important: bool = False  # its sender is one the user marked important: listed first
    evidence: str = ""  # the sender's sentence the request was found in
    phrase: str = ""  # the words its due date came from ("by Friday")
    moved: str = ""  # the later message's words that moved its due date this run (move_due)
    # The id of the task on the list whose due date (an earlier brief's move) it takes.
    listed: str = ""


def snippet_actions(inbox: list[dict[str, Any]]) -> list[Action]:
    reader = reader_of(inbox)
    found = [a for m in inbox for a in listed_actions(m, reader)]
    found.sort(key=action_order)
    return found


def action_order(action: Action) -> tuple[dt.date, str, str]:
    return action.due or dt.date.max, _sort_time(action.message.get("received_at")), action.key


@dataclass(frozen=True)
class _Calendar:
    """What the run's calendar reads gave the brief."""

    today: list[dict[str, Any]]
    today_error: str | None
    week: list[dict[str, Any]]
    week_error: str | None
    unread: list[tuple[str, str]]  # calendars that could not be read
    read: bool  # whether the calendar was read at all


@dataclass(frozen=True)
class _Mail:
    """What the run's inbox reads (or the reading flow's notes) gave the brief."""

    needs: list[_Need]
    creates: list[Created]
    error: str | None
    read: bool
    unread: list[tuple[str, str]]  # mail sources that could not be read


def write_brief(
    messages: list[Message],
    calls: list[Call],
    memory: Memory | None = None,
    *,
    limit: int | None = None,
) -> str:
    """The brief; with `limit`, at most that many lines under Needs action and Tasks created
    (the most pressing first), the rest counted, so that a huge morning still fits an answer."""
    today, zone = prompt_facts(messages)
    head = "# Daily brief"
    if today:
        head += f": {DAYS[today.weekday()]} {today.day} {MONTHS[today.month - 1]} {today.year}"
    cal = _calendar(messages, calls, today)
    mail = _mail(messages, calls, memory, today)
    lines = [head, f"_Times in {zone}._" if zone else "", "", Section.heading(Section.TODAY)]
    lines += _today_lines(cal, calls, today)
    lines += since_lines(calls)
    lines += ["", Section.heading(Section.NEEDS_ACTION), *_needs_lines(mail, today, limit)]
    lines += injected_lines(messages)
    followups, owed = followup_sections(calls, today)
    lines += followups
    _, tasks_error = latest_list(calls, "read_tasks", "tasks")
    creates = mail.creates
    lines += ["", Section.heading(Section.TASKS_CREATED)]
    lines += _task_lines(
        creates[:limit], tasks_error, bool(mail.needs), mail.error or not mail.read
    )
    if limit is not None and len(creates) > limit:
        lines.append(f"- and {len(creates) - limit} more (`dayflow tasks`)")
    lines += _capped_lines(mail)
    lines += ["", Section.heading(Section.THIS_WEEK)]
    if cal.week_error:
        lines.append(f"- _Could not read this week's calendar: {cal.week_error}_")
    # "Nothing else on the calendar" only when the calendar said so, not when it failed.
    lines += _week_lines(cal.week, today, empty=[] if cal.week_error else None)
    unread = _unread_sources(
        inbox="the inbox" if mail.error or not mail.read else None,
        mail=[n for n, _ in mail.unread],
        calendar="the calendar" if cal.today_error or cal.week_error or not cal.read else None,
        calendars=[n for n, _ in cal.unread],
    )
    follow = named(calls, "read_followups")
    result = follow[-1].result if follow and isinstance(follow[-1].result, dict) else {}
    one = _one_thing(mail.needs, cal.today, today, unread, owed, due_promise(result, today))
    lines += ["", Section.heading(Section.ONE_THING), one]
    return "\n".join(lines).replace("\n\n\n", "\n\n").strip() + "\n"


def _calendar(messages: list[Message], calls: list[Call], today: dt.date | None) -> _Calendar:
    today_events, today_error = latest_list(calls, "read_calendar", "events", range="today")
    week_events, week_error = latest_list(calls, "read_calendar", "events", range="week")
    if (today_error or not named(calls, "read_calendar", range="today")) and today:
        # No usable "today" result (failed, never asked, compacted away): the week still has it.
        today_events = [e for e in week_events if date_of(e.get("start")) == today]
    unread = _unavailable(messages, calls, "read_calendar")
    read = bool(named(calls, "read_calendar"))
    return _Calendar(today_events, today_error, week_events, week_error, unread, read)


def _today_lines(cal: _Calendar, calls: list[Call], today: dt.date | None) -> list[str]:
    """Today's events, each with its prep lines under it, then today's conflicts."""
    lines = []
    prep = prep_lines(calls)
    if cal.today_error:
        lines.append(f"- _Could not read today's calendar: {cal.today_error}_")
    lines += [f"- _Could not read {n}: {why}_" for n, why in cal.unread]
    lines += _cut_short_lines(calls)
    if not cal.read:
        lines.append("- _The calendar was not read._")
    for event in sorted(cal.today, key=lambda e: _sort_time(e.get("start"))):
        where = f" ({event['location']})" if event.get("location") else ""
        times = (
            "All day"
            if event.get("all_day")
            else f"{_hm(event.get('start'))}–{_hm(event.get('end'))}"
        )
        lines.append(f"- {times} {event.get('title', '(untitled)')}{where}{event_mark(event)}")
        lines += prep.get(str(event.get("id")), [])
    lines += conflict_lines(calls, today)
    empty = not cal.today and not cal.today_error and cal.read
    lines += _nothing(empty, bool(cal.unread), _NO_EVENTS)
    return lines


def _mail(
    messages: list[Message], calls: list[Call], memory: Memory | None, today: dt.date | None
) -> _Mail:
    if memory is not None and memory.plan is not None:  # the reading flow remembers its finds
        error, read, creates = None, True, memory.creates
        # A request whose task the user already marked done needs nothing more.
        done = {c.key for c in creates if c.done}
        needs = [
            _Need(
                str(r.get("title")),
                str(r.get("from")),
                date_of(r.get("due")),
                r.get("urgent") is True,
                str(r.get("key") or ""),
                str(r.get("about") or ""),
                important=r.get("important") is True,
                evidence=str(r.get("evidence") or ""),
                phrase=str(r.get("deadline") or ""),
            )
            for r in _unique_requests(memory.requests)
            if r.get("key") not in done
        ]
    else:
        inbox, error = latest_list(calls, "read_inbox", "messages")
        read, creates = bool(named(calls, "read_inbox")), visible_creates(calls)
        done = {c.key for c in creates if c.done}
        needs = [
            _Need(
                a.title,
                who(a.message),
                a.due,
                urgent := urgent_action(a),
                a.key,
                clean_subject(str(a.message.get("subject", ""))) if urgent else "",
                important=a.message.get("important") is True,
                evidence=a.evidence,
                phrase=a.deadline or "",
            )
            for a in no_tasks(calls).keep(snippet_actions(inbox))
            if a.key not in done
        ]
    moved = _moved_dues(calls)
    # A moved due date's source is the move; the line's evidence stays the ask.
    needs = [
        replace(n, due=moved[base].due, moved=moved[base].words)
        if (base := n.key.split("#", 1)[0]) in moved
        else n
        for n in needs
    ]
    needs = _listed_dues(calls, needs)
    needs += _listed_and_due(calls, needs, today, moved)
    forged = not_theirs(calls)
    needs = [
        replace(n, urgent=False, about="", unverified=True)
        if n.key and n.key.split("#", 1)[0] in forged
        else n
        for n in needs
    ]
    # What is due today first, then what is overdue, then the rest by date (stable: ties keep
    # the order above), so that "One thing" is today's most pressing item, not last week's;
    # a request whose sender is not who it says after all of them.
    # What the user marked important before all of it (dayflow important).
    needs.sort(key=lambda n: (n.unverified, not n.important, _urgency(n.due, today), not n.urgent))
    return _Mail(needs, creates, error, read, _unavailable(messages, calls, "read_inbox"))


@dataclass(frozen=True)
class _Move:
    """A due date this run moved: the new day, the later message's words that moved it, and
    the task's own ask in its sender's words (move_due's `asked`; "" from a record saved
    before it carried one)."""

    due: dt.date
    words: str
    asked: str
    who: str = ""  # who asked (read_since's `asked_by`), for a task whose mail is not read


def _moved_dues(calls: list[Call]) -> dict[str, _Move]:
    """The due dates this run moved (move_due's answers, or said again: `moves_made`), by the
    task's item key (from the tasks read): a request whose task a later message moved is due
    on its new day, with the words that moved it, not the day its own mail named."""
    tasks, _ = latest_list(calls, "read_tasks", "tasks")
    key_of = {str(t.get("id")): str(t.get("idempotency_key") or "") for t in tasks}
    # And the tasks this run filed: an ask and the later message that moved its deadline may
    # both be new this morning (read_since, read again after the filing, proposed the move).
    key_of |= {c.task_id: str(c.key or "") for c in visible_creates(calls) if c.task_id}
    asker = {
        str(item.get("id")): sender_name(item.get("asked_by"), "")
        for c in named(calls, "read_since")
        if isinstance(c.result, dict)
        for item in c.result.get("due_moved") or []
        if isinstance(item, dict) and isinstance(item.get("asked_by"), dict)
    }
    out: dict[str, _Move] = {}
    for made in moves_made(calls):
        key, day = key_of.get(str(made.get("id")), "").split("#", 1)[0], date_of(made.get("now"))
        if key and day is not None:
            words, asked = str(made.get("evidence") or ""), str(made.get("asked") or "")
            out[key] = _Move(day, words, asked, asker.get(str(made.get("id")), ""))
    return out


def _listed_dues(calls: list[Call], needs: list[_Need]) -> list[_Need]:
    """Each request already on the list as an open task is due on the task's date when the
    task has one and its mail names another: an earlier brief moved it (a later message said
    so), and `dayflow tasks` and `why` show the task's date. The line says whose date it is;
    a date this run moved says its words instead."""
    tasks, _ = latest_list(calls, "read_tasks", "tasks")
    due_of = {
        str(t.get("idempotency_key") or ""): (day, str(t.get("id") or ""))
        for t in tasks
        if t.get("status", "open") == "open" and (day := date_of(t.get("due"))) is not None
    }
    out = []
    for need in needs:
        listed = due_of.get(need.key) if need.key and not need.moved else None
        if listed is not None and listed[0] != need.due:
            need = replace(need, due=listed[0], listed=listed[1])
        out.append(need)
    return out


def _listed_and_due(
    calls: list[Call],
    needs: list[_Need],
    today: dt.date | None,
    moved: dict[str, _Move],
) -> list[_Need]:
    """Open tasks already on the list (read before this run filed any) that are due today or
    overdue and that none of this brief's requests stands for: their mail is older than the
    window this brief read, and they need doing today all the same. A due date this run moved
    (`moved`, move_due's answers) is the task's: a task due today that a later message moved
    to next week is not due today. The bundled sample's tasks (`sample:` keys, left by a first
    brief) are not the user's: they are never listed."""
    if today is None:
        return []
    tasks, _ = latest_list(calls, "read_tasks", "tasks")
    keys = {n.key.split("#", 1)[0] for n in needs if n.key}
    titles = {n.title.casefold() for n in needs}
    out = []
    for task in tasks:
        due, title = date_of(task.get("due")), str(task.get("title") or "")
        key = str(task.get("idempotency_key") or "").split("#", 1)[0]
        move = moved.get(key)
        due = move.due if move else due
        # A task this run moved is listed on its new day, however far ahead: the Since
        # yesterday line says it moved, and its mail may be older than this brief's window.
        # A task whose snooze ends today (read_tasks marks it) is back today, though due later.
        back = task.get("snooze_ended") is True
        if task.get("status", "open") != "open" or (due is None and not back) or not title:
            continue
        if due is not None and due > today and move is None and not back:
            continue
        if (key and key in keys) or title.casefold() in titles or key.startswith(_SAMPLE):
            continue
        # Its sender one the user marked important (read_tasks says so): first in Needs action.
        important = task.get("important") is True
        if move:  # its ask in its sender's words, the move as its due date's source
            need = _Need(title, move.who, due, key=key, evidence=move.asked, moved=move.words)
            out.append(replace(need, important=important))
        else:
            out.append(_Need(title, "", due, key=key, important=important))
    return out


def _needs_lines(mail: _Mail, today: dt.date | None, limit: int | None) -> list[str]:
    lines = []
    if mail.error:
        lines.append(f"- _Could not read the inbox: {mail.error}_")
    elif not mail.read:
        lines.append("- _The inbox was not read._")
    lines += [f"- _Could not read {n}: {why}_" for n, why in mail.unread]
    for need in mail.needs[:limit]:
        whence = f"from {need.who}" if need.who else "on your task list"
        if need.unverified:
            whence += ", sender not verified"
        lines.append(f"- {need.title} ({whence}, {_due_text(need.due, today)})")
        lines += evidence_line(
            need.evidence, need.due, need.phrase, moved=need.moved, listed=need.listed
        )
    if limit is not None and len(mail.needs) > limit:
        lines.append(
            f"- {len(mail.needs) - limit} more, due later or with no deadline: `dayflow tasks` "
            "lists every task filed."
        )
    lines += _nothing(not mail.needs and not mail.error and mail.read, bool(mail.unread), _NO_NEEDS)
    return lines


# What an empty section says: (when some of its sources could not be read, when all were).
_NO_EVENTS = (
    "- Nothing today on the calendars that could be read.",
    "- Nothing on the calendar today.",
)
_NO_NEEDS = (
    "- Nothing in the mail that could be read needs you.",
    "- Nothing in the inbox needs you right now.",
)


def _nothing(empty: bool, partly: bool, lines: tuple[str, str]) -> list[str]:
    """The line a section shows when it is `empty`: what could be read, when some of its
    sources could not be (`partly`), else the plain line."""
    if not empty:
        return []
    return [lines[0] if partly else lines[1]]


def _capped_lines(mail: _Mail) -> list[str]:
    """The line saying how many requests the task cap left unfiled (none when it was not hit)."""
    creates = mail.creates
    if not any(refused_by_cap(c.error) for c in creates):
        return []
    tried = [c.title.rstrip("…") for c in creates if not c.error]
    left = [n for n in mail.needs if not any(n.title.startswith(t) for t in tried)]
    if not left:
        return []
    return [
        f"- {len(left)} more not filed: this run reached its task cap (`--task-cap`); "
        "they are listed under Needs action."
    ]


def _urgency(due: dt.date | None, today: dt.date | None) -> tuple[int, dt.date]:
    if due is None:
        return 3, dt.date.max
    if today is None or due > today:
        return 2, due
    return (0, due) if due == today else (1, due)


def _unique_requests(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each noted request once (a note may be written again after a compaction)."""
    seen: set[tuple[str, str]] = set()
    out = []
    for r in requests:
        mark = (str(r.get("id")), str(r.get("key") or r.get("title")))
        if mark not in seen:
            seen.add(mark)
            out.append(r)
    return out


def _cut_short_lines(calls: list[Call]) -> list[str]:
    """The recurring series the calendar did not expand in full, by name (latest read)."""
    found = named(calls, "read_calendar")
    result = found[-1].result if found else None
    listed = result.get("cut_short") if isinstance(result, dict) else None
    return [
        f"- _Calendar {c.get('source')}: {c.get('series')!r} was not read in full "
        f"({c.get('reason')}); the rest of the calendar was._"
        for c in listed or []
        if isinstance(c, dict)
    ]


def _unavailable(messages: list[Message], calls: list[Call], name: str) -> list[tuple[str, str]]:
    """The sources the latest such call could not read: (name, reason); from the compaction
    summary when the call itself was compacted away."""
    found = named(calls, name)
    if not found:
        said = [summarised_unavailable(m).get(name) for m in messages]
        names = next((n for n in reversed(said) if n is not None), [])
        return [(n, "it could not be read (earlier in this run)") for n in names]
    result = found[-1].result
    listed = result.get("unavailable") if isinstance(result, dict) else None
    return [
        (str(u.get("source")), str(u.get("reason"))) for u in listed or [] if isinstance(u, dict)
    ]


def _unread_sources(
    *, inbox: str | None, mail: list[str], calendar: str | None, calendars: list[str]
) -> list[str]:
    """What the brief could not read, once each: a whole side (the inbox, the calendar) or
    the named sources of it that failed (or are not configured)."""
    out = [inbox] if inbox else mail
    out += [calendar] if calendar else calendars
    return list(dict.fromkeys(out))


def _task_lines(
    creates: list[Created], tasks_error: str | None, has_needs: bool, no_inbox: bool | str
) -> list[str]:
    lines = []
    if tasks_error:
        lines.append(f"- _Could not read your existing tasks: {tasks_error}_")
    for c in creates:
        ref = f" (`{c.task_id}`)" if c.task_id else ""
        if refused_by_cap(c.error):
            continue  # counted in the "more not filed" line instead
        if c.error:
            lines.append(f'- Could not create "{c.title}": {c.error}')
        elif c.done:
            lines.append(f"- {c.title}: you already marked it done{ref}")
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


def _week_lines(
    events: list[dict], today: dt.date | None, *, empty: list[str] | None = None
) -> list[str]:
    days: dict[dt.date, list[str]] = {}
    for event in sorted(events, key=lambda e: _sort_time(e.get("start"))):
        day = date_of(event.get("start"))
        if day is not None and (today is None or day > today):
            when = "all day:" if event.get("all_day") else _hm(event.get("start"))
            gone = " (cancelled)" if event.get("status") == "cancelled" else ""
            days.setdefault(day, []).append(f"{when} {event.get('title')}{gone}")
    lines = []
    for day, items in sorted(days.items())[:6]:
        more = f" (+{len(items) - 3} more)" if len(items) > 3 else ""
        lines.append(f"- {_short_date(day)}: {', '.join(items[:3])}{more}")
    if lines:
        return lines
    return ["- Nothing else on the calendar."] if empty is None else empty


def _one_thing(
    needs: list[_Need],
    events: list[dict],
    today: dt.date | None,
    unread: list[str],
    owed: Owed | None = None,
    promise: str | None = None,
) -> str:
    # A request whose sender is not who it says is never the One thing.
    needs = [n for n in needs if not n.unverified]
    # A reply owed for days outweighs requests not due yet; what is due today, overdue or
    # urgent still comes first.
    pressing = bool(needs) and (needs[0].urgent or _urgency(needs[0].due, today)[0] < 2)
    # The user's important senders are preferred: a request of theirs over any owed reply,
    # an owed reply to them over any request of someone else's.
    if needs and needs[0].important and not (owed is not None and owed.important):
        owed = None
    elif owed is not None and owed.important and not (needs and needs[0].important):
        needs = []
    if promise is not None and not pressing:  # a promise of the user's, due today or before
        return promise
    if owed is not None and (not needs or weighs_more(owed, pressing)):
        return owed.one_thing()
    if needs:
        first = needs[0]  # already ordered by due date, then by when it arrived
        due = f", {_due_text(first.due, today)}" if first.due else ""
        return f"**{_with_about(first.title, first.about)}{due}.**"
    if unread:
        # Never an all-clear over a source that could not be read: say which, first.
        names = ", ".join(unread[:-1]) + " and " + unread[-1] if len(unread) > 1 else unread[0]
        return (
            f"**Check {names} yourself: {'it' if len(unread) == 1 else 'they'} could not be "
            "read, so this brief cannot tell whether anything needs you.**"
        )
    # A cancelled event takes no time, and an all-day one has no time to be ready by.
    events = [e for e in events if e.get("status") != "cancelled" and not e.get("all_day")]
    if events:
        first_event = min(events, key=lambda e: _sort_time(e.get("start")))
        return f"**Be ready for {first_event.get('title')} at {_hm(first_event.get('start'))}.**"
    return "**Nothing urgent: a clear day to get ahead.**"


def _with_about(title: str, about: str) -> str:
    """An urgent item's title with what it is about when the title does not say it: "Join
    incident bridge (SEV1: checkout down)": the first thing to do, said so it can be done."""
    about = _URGENT_MARK.sub("", about).strip()
    theirs = re.findall(r"\w+", about.lower())
    mine = set(re.findall(r"\w+", title.lower()))
    if not theirs or 2 * sum(w in mine for w in theirs) >= len(theirs):
        return title
    return f"{title} ({about})"


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
