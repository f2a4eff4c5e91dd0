"""Clashes in a day's calendar: busy events that overlap, and back-to-back events in different
physical places.

Only what holds the user's time counts (`people.takes_time`: not cancelled, not free, not
declined); all-day entries (holidays, birthdays, a trip) and instants are left out, as neither
blocks a slot. Two busy events overlap when one starts before the other ends. Two are back to
back when the second is the next to start, at most BACK_TO_BACK after the first ends (events
starting together are each the next); that is a clash only when both are in physical places
and the places differ (`place`): "Room 2" then "Cafe Nero" is a walk in no time, a video-call
link or a dial-in is not a place at all.

Bounded, whatever the calendar holds: the events are swept once in start order (a heap of the
running ones), so a day of 10,000 events all at 09:00 costs its sort, not its 50 million pairs;
at most MAX_CONFLICTS clashes are listed and the rest are counted.
"""

from __future__ import annotations

import bisect
import datetime as dt
import heapq
import re
from dataclasses import dataclass
from typing import Any

from dayflow.sources.people import takes_time

BACK_TO_BACK = dt.timedelta(minutes=15)
MAX_CONFLICTS = 20
_NEXT = 10  # next events starting together that one event is checked against
# A link or a dial-in, written with or without a scheme: never a place.
_LINK = re.compile(
    r"(?i)(?:\b[a-z][a-z0-9+.-]*://\S*|\b(?:tel|sip|sips|callto|facetime):\S*"
    r"|\bwww\.\S*|\b[\w-]+(?:\.[\w-]+)+/\S*)"
)
# What calendars write for a meeting that happens on a screen or a phone.
_VIRTUAL = re.compile(
    r"(?i)\b(?:microsoft\s+teams(?:\s+meeting)?|teams(?:\s+meeting)?|zoom(?:\s+meeting)?|"
    r"google\s+meet|hangouts?(?:\s+meet)?|meet|webex|skype(?:\s+meeting)?|jitsi(?:\s+meet)?|"
    r"whereby|gotomeeting|bluejeans|facetime|video(?:\s*call)?|conference\s+call|"
    r"(?:phone\s+)?call|phone|online|virtual|remote|dial[-\s]?in|"
    r"(?:meeting\s+)?id:?\s*[\d\s]+|pass(?:code|word):?\s*\S+|pin:?\s*\d+)\b"
)


@dataclass(frozen=True)
class _Busy:
    start: dt.datetime
    end: dt.datetime
    event: dict[str, Any]


def place(location: str | None) -> str | None:
    """The physical place a location names, or None for a link, a call, or nothing."""
    if not location:
        return None
    rest = _VIRTUAL.sub(" ", _LINK.sub(" ", location))
    if not any(c.isalnum() for c in rest):
        return None
    return " ".join(_LINK.sub(" ", location).split()).strip(" ,;|/-") or None


def conflicts(events: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """The clashes among `events` (read_calendar's items: local ISO times), the earliest first,
    at most MAX_CONFLICTS, and how many more there were."""
    busy = sorted(_busy(events), key=lambda b: (b.start, b.end, b.event["id"]))
    overlaps, overlapping = _overlaps(busy)
    travels, travelling = _travels(busy)
    found = sorted([*overlaps, *travels], key=lambda f: f[0])[:MAX_CONFLICTS]
    return [item for _, item in found], overlapping + travelling - len(found)


_Found = list[tuple[tuple[dt.datetime, int], dict[str, Any]]]  # (when, order), the clash


def _busy(events: list[dict[str, Any]]) -> list[_Busy]:
    out = []
    for event in events:
        if event.get("all_day") or not takes_time(event):
            continue
        try:
            start = dt.datetime.fromisoformat(event["start"])
            end = dt.datetime.fromisoformat(event["end"])
        except (KeyError, TypeError, ValueError):
            continue
        if start < end:
            out.append(_Busy(start, end, event))
    return out


def _overlaps(busy: list[_Busy]) -> tuple[_Found, int]:
    """The first MAX_CONFLICTS overlapping pairs, by the later one's start, and how many there
    are in all (each event meets only the events still running when it starts)."""
    running: list[tuple[dt.datetime, int]] = []  # (end, index) of the events not yet over
    found: _Found = []
    total = 0
    for n, later in enumerate(busy):
        while running and running[0][0] <= later.start:
            heapq.heappop(running)
        total += len(running)
        room = MAX_CONFLICTS - len(found)
        for _, k in heapq.nsmallest(room, running, key=lambda r: r[1]) if room > 0 else []:
            earlier = busy[k]
            item = _pair("overlap", earlier, later)
            item["start"] = later.start.isoformat()
            item["end"] = min(earlier.end, later.end).isoformat()
            found.append(((later.start, len(found)), item))
        heapq.heappush(running, (later.end, n))
    return found, total


def _travels(busy: list[_Busy]) -> tuple[_Found, int]:
    """Each busy event and the next ones (the first to start within BACK_TO_BACK of its end, at
    most _NEXT of them starting together) when both are in physical places that differ: the
    first MAX_CONFLICTS, and how many in all."""
    starts = [b.start for b in busy]
    places = [place(b.event.get("location")) for b in busy]
    found: _Found = []
    total = 0
    for n, first in enumerate(busy):
        k = bisect.bisect_left(starts, first.end)
        if places[n] is None or k == len(busy) or busy[k].start - first.end > BACK_TO_BACK:
            continue
        for m in range(k, min(bisect.bisect_right(starts, busy[k].start), k + _NEXT)):
            here, there = places[n], places[m]
            if here is None or there is None or _same(here, there):
                continue
            total += 1
            if len(found) < MAX_CONFLICTS:
                item = _pair("travel", first, busy[m])
                item["start"] = first.end.isoformat()  # the gap there is to get there in
                item["end"] = busy[m].start.isoformat()
                item["places"] = [here, there]
                item["gap_minutes"] = int((busy[m].start - first.end).total_seconds() // 60)
                found.append(((busy[m].start, MAX_CONFLICTS + len(found)), item))
    return found, total


def _pair(kind: str, a: _Busy, b: _Busy) -> dict[str, Any]:
    return {
        "kind": kind,
        "events": [a.event["id"], b.event["id"]],
        "titles": [a.event.get("title", ""), b.event.get("title", "")],
    }


def _same(a: str, b: str) -> bool:
    return " ".join(a.casefold().split()) == " ".join(b.casefold().split())
