"""A page's lines and what they stand on (`Line`, `Evidence`), and the small readings every
section's builder shares: a field clipped to one printable line, a read's results and lists, an
event's id, a person, a day and a time as the page shows them."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Any

from dayflow.models import Message
from dayflow.printable import plain
from dayflow.senders import sender_name, with_address

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


def clip(value: object, limit: int = MAX_FIELD) -> str:
    """A field as a page shows it: one line, `plain`, at most `limit` characters."""
    text = _SPACE.sub(" ", plain(str(value))).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def results_of(conversation: list[Message], name: str) -> list[dict[str, Any]]:
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


def dicts_in(value: Any, key: str) -> list[dict[str, Any]]:
    listed = value.get(key) if isinstance(value, dict) else None
    return [v for v in listed if isinstance(v, dict)] if isinstance(listed, list) else []


def unavailable_in(result: Any) -> list[tuple[str, str]]:
    return [(clip(u.get("source")), clip(u.get("reason"))) for u in dicts_in(result, "unavailable")]


def unread_lines(result: Any) -> list[Line]:
    return [Line(f"Could not read {s}", why, warn=True) for s, why in unavailable_in(result)]


def event_id(event: dict[str, Any]) -> str | None:
    """An event is its own evidence: its id is what a `/why/ID` page would show."""
    return str(event["id"]) if event.get("id") else None


def person_text(person: dict[str, Any], *, addresses: bool = True) -> str:
    """A party as "Name (address)", or by its name alone (`dayflow.senders`)."""
    return clip(with_address(person) if addresses else sender_name(person), 240)


def time_of(iso: object) -> dt.datetime | None:
    try:
        return dt.datetime.fromisoformat(str(iso))
    except ValueError:
        return None


def date_of(iso: object) -> dt.date | None:
    if not iso:
        return None
    value = time_of(iso)
    if value is not None:
        return value.date()
    try:
        return dt.date.fromisoformat(str(iso)[:10])
    except ValueError:
        return None


def hm(iso: object) -> str:
    value = time_of(iso)
    return f"{value:%H:%M}" if value else "?"


def short_day(day: dt.date | None) -> str:
    return f"{_DAYS[day.weekday()]} {day.day} {_MONTHS[day.month - 1]}" if day else "?"


def when(iso: str) -> str:
    """An evidence's time as a page shows it: "Tue 1 Dec 09:40"."""
    value = time_of(iso)
    if value is None:
        day = date_of(iso)
        return short_day(day) if day else ""
    return f"{short_day(value.date())} {value:%H:%M}"
