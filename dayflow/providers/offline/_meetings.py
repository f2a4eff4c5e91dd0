"""The offline model's lines about meetings, for `## Today`: the day's conflicts, the prep lines
under each event that has some, and the mark of an event that takes no time.

Written from the tools' results alone, deterministically: the conflicts `read_calendar` listed
for today (or, when its result was compacted to the events it showed, the same `conflicts`
worked out again from them), and the threads and open tasks `read_prep` gave for each event.
Text from mail and calendars (titles, subjects, names) is put on one line; the sinks make the
brief inert (`safe_text`).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from dayflow.meetings import conflicts
from dayflow.providers.offline._conversation import Call, latest_list, named
from dayflow.providers.offline._reading import DAYS, MONTHS, date_of, parse_time
from dayflow.senders import sender_name

PREP = "read_prep"


def event_mark(event: dict[str, Any]) -> str:
    """What follows an event's line when it takes none of the user's time."""
    if event.get("status") == "cancelled":
        return " (cancelled)"
    if event.get("response") == "declined":
        return " (declined)"
    if event.get("free") is True:
        return " (free)"
    return ""


def conflict_lines(calls: list[Call], today: dt.date | None) -> list[str]:
    """One line for each of today's conflicts, the earliest first."""
    result = _calendar_result(calls, "today") or _calendar_result(calls, "week")
    if result is None:
        return []
    events = [e for e in result.get("events", []) if isinstance(e, dict)]
    listed = result.get("conflicts")
    found = listed if isinstance(listed, list) else conflicts(events)[0]
    lines = []
    for clash in found:
        if isinstance(clash, dict) and (today is None or date_of(clash.get("start")) == today):
            lines.append(_conflict_line(clash))
    more = result.get("conflicts_more")
    if isinstance(more, int) and more > 0 and _calendar_result(calls, "today") is result:
        lines.append(f"- And {more} more conflicts today.")
    return lines


def prep_lines(calls: list[Call]) -> dict[str, list[str]]:
    """The lines to put under each of today's events (by id) that has prep: its threads, newest
    first, then its open tasks."""
    items, _ = latest_list(calls, PREP, "events")
    out: dict[str, list[str]] = {}
    for item in items:
        lines = [_thread_line(t) for t in item.get("threads") or [] if isinstance(t, dict)]
        if isinstance(item.get("threads_more"), int):
            lines.append(f"  - and {_count(item['threads_more'], 'older thread')} with them")
        lines += [_task_line(t) for t in item.get("tasks") or [] if isinstance(t, dict)]
        if isinstance(item.get("tasks_more"), int):
            more = _count(item["tasks_more"], "more open task")
            lines.append(f"  - and {more} from their mail")
        if lines and isinstance(item.get("id"), str):
            out[item["id"]] = lines
    return out


def prep_read(calls: list[Call]) -> bool:
    """Whether prep was asked for in this run (and its result is still in view)."""
    return bool(named(calls, PREP))


def _calendar_result(calls: list[Call], span: str) -> dict[str, Any] | None:
    found = named(calls, "read_calendar", range=span)
    if not found or found[-1].error or not isinstance(found[-1].result, dict):
        return None
    return found[-1].result


def _conflict_line(clash: dict[str, Any]) -> str:
    titles = [_one_line(t) for t in clash.get("titles") or []] + ["?", "?"]
    start, end = _hm(clash.get("start")), _hm(clash.get("end"))
    if clash.get("kind") == "travel":
        places = [_one_line(p) for p in clash.get("places") or []] + ["?", "?"]
        gap = clash.get("gap_minutes")
        room = "no time" if not gap else f"{gap} minutes"
        return (
            f"- Conflict: {titles[0]} ends at {start} in {places[0]} and {titles[1]} starts at "
            f"{end} in {places[1]}: {room} to get there."
        )
    return f"- Conflict: {titles[0]} and {titles[1]} overlap, {start}–{end}."


def _thread_line(thread: dict[str, Any]) -> str:
    if thread.get("latest_from_me"):
        who = "you"
    else:
        who = _one_line(sender_name(thread.get("latest_from"), "them"))
    when = parse_time(thread.get("latest_at"))
    on = f", {_short_date(when.date())}" if when else ""
    return f'  - Mail: "{_one_line(thread.get("subject"))}" (latest from {who}{on})'


def _task_line(task: dict[str, Any]) -> str:
    due = date_of(task.get("due"))
    return f"  - Open task: {_one_line(task.get('title'))}" + (
        f" (due {_short_date(due)})" if due else ""
    )


def _count(n: int, noun: str) -> str:
    """`n` and `noun`, the noun's last word plural unless `n` is 1 ("1 older thread")."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _one_line(text: object) -> str:
    return " ".join(str(text or "").split()) or "(untitled)"


def _hm(iso: object) -> str:
    value = parse_time(iso)
    return f"{value.hour:02d}:{value.minute:02d}" if value else "?"


def _short_date(day: dt.date) -> str:
    return f"{DAYS[day.weekday()][:3]} {day.day} {MONTHS[day.month - 1][:3]}"
