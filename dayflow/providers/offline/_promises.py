"""The offline model's "You promised" section, from read_followups' you_promised: one line
per open promise (whom to, what, by when, the user's words); no section when there is none."""

from __future__ import annotations

import datetime as dt
from typing import Any

from dayflow.models import Section
from dayflow.providers.offline._reading import DAYS, MONTHS
from dayflow.senders import sender_name


def promise_lines(result: dict[str, Any], today: dt.date | None = None) -> list[str]:
    """The section's heading and lines ([] when the user promised nothing open); a promise
    whose day is before `today` says it is overdue, as a task's line does."""
    items = [p for p in result.get("you_promised") or [] if isinstance(p, dict)]
    if not items:
        return []
    lines = ["", Section.heading(Section.PROMISED)]
    for p in items:
        who = sender_name(p.get("with"))
        due = _due(p, today)
        lines.append(f"- To {who}: {p.get('what')}{due} (`{p.get('key')}`)")
    return lines


def due_promise(result: dict[str, Any], today: dt.date | None) -> str | None:
    """The One thing's line for a promise due today or overdue, the oldest first; None."""
    if today is None:
        return None
    for p in result.get("you_promised") or []:
        if not isinstance(p, dict):
            continue
        day = _date(p.get("due"))
        if day is not None and day <= today:
            who = sender_name(p.get("with"))
            late = "due today" if day == today else f"overdue since {_day(day)}"
            return f"**Keep your promise to {who}: {p.get('what')}, {late}.**"
    return None


def _due(p: dict[str, Any], today: dt.date | None) -> str:
    day = _date(p.get("due"))
    if day is None:
        return ", no date given"
    kind = " (implied)" if p.get("due_kind") == "implied" else ""
    if today is not None and day < today:
        return f", overdue since {_day(day)}{kind}"
    return f", due {_day(day)}{kind}"


def _date(value: Any) -> dt.date | None:
    try:
        return dt.date.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        return None


def _day(day: dt.date) -> str:
    return f"{DAYS[day.weekday()]} {day.day} {MONTHS[day.month - 1]}"
