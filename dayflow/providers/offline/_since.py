"""The offline model's "Since yesterday" section, from read_since's result: one line per
change, in the tool's order; one line when nothing changed; no section on a first brief (or
when the run never read it)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from dayflow.models import Section
from dayflow.providers.offline._conversation import Call, named
from dayflow.providers.offline._reading import DAYS, MONTHS, parse_time


def since_lines(calls: list[Call]) -> list[str]:
    """The section's heading and lines ([] when there is nothing to compare with)."""
    found = named(calls, "read_since")
    if not found:
        return []
    call = found[-1]
    if call.error:
        return ["", Section.heading(Section.SINCE), f"- _Could not compare: {call.error}_"]
    result = call.result if isinstance(call.result, dict) else {}
    previous = result.get("previous")
    if not isinstance(previous, dict):
        return []
    lines = ["", Section.heading(Section.SINCE)]
    if result.get("nothing"):
        day = _date(previous.get("brief_date"))
        since = f" since your brief of {_day(day)}" if day else ""
        return [*lines, f"- Nothing changed{since}."]
    for kind, say in _SAYS:
        for item in _dicts(result.get(kind)):
            lines.append("- " + say(item))
        more = result.get(kind + "_more")
        if isinstance(more, int) and more > 0:
            lines.append(f"- and {more} more")
    return lines


def _replied(item: dict[str, Any]) -> str:
    return f"You replied to {_name(item.get('with'))} about {_subject(item)}."


def _answered(item: dict[str, Any]) -> str:
    return f"{_name(item.get('by'))} answered {_subject(item)}."


def _done(item: dict[str, Any]) -> str:
    return f"Done: {item.get('title') or '(untitled)'}."


def _gone(item: dict[str, Any]) -> str:
    return f"No longer on your list: {item.get('title') or '(untitled)'}."


def _moved(item: dict[str, Any]) -> str:
    was, now = item.get("was") or {}, item.get("now") or {}
    same = _date(str(was.get("start"))[:10]) == _date(str(now.get("start"))[:10])
    return f"Moved: {_title(item)}, {_span(was)} → {_span(now, day=not same)}."


def _cancelled(item: dict[str, Any]) -> str:
    return f"Cancelled: {_title(item)} (was {_span(item)})."


def _new(item: dict[str, Any]) -> str:
    return f"New today: {_title(item)}, {_span(item, day=False)}."


def _conflict(item: dict[str, Any]) -> str:
    titles = [str(t) for t in item.get("titles") or [] if t]
    what = " and ".join(titles) if titles else "two events"
    return f"New conflict: {what}."


_SAYS = (
    ("replies_sent", _replied),
    ("answered", _answered),
    ("tasks_done", _done),
    ("tasks_gone", _gone),
    ("meetings_moved", _moved),
    ("meetings_cancelled", _cancelled),
    ("meetings_new", _new),
    ("conflicts_new", _conflict),
)


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _name(party: Any) -> str:
    if not isinstance(party, dict):
        return "someone"
    return str(party.get("name") or party.get("address") or "someone")


def _subject(item: dict[str, Any]) -> str:
    return f'"{item.get("subject") or "(no subject)"}"'


def _title(item: dict[str, Any]) -> str:
    return str(item.get("title") or "(untitled)")


def _span(when: dict[str, Any], *, day: bool = True) -> str:
    start, end = parse_time(when.get("start")), parse_time(when.get("end"))
    if start is None:
        return str(when.get("start") or "?")
    text = f"{start:%H:%M}" + (f"–{end:%H:%M}" if end is not None else "")
    return f"{_day(start.date())} {text}" if day else text


def _date(value: Any) -> dt.date | None:
    try:
        return dt.date.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        return None


def _day(day: dt.date | None) -> str:
    return f"{DAYS[day.weekday()]} {day.day} {MONTHS[day.month - 1]}" if day else ""
