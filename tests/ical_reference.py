"""What plain `icalendar`, `x-wr-timezone` and `recurring-ical-events` say a calendar holds, as
the event fields Dayflow's brief uses: the reference `tests/test_ical_conformance.py` holds
Dayflow's reader to.

The syntax (unfolding, content lines, parameters, values, time zones) and the recurrence
(RRULE, RDATE, EXDATE, RECURRENCE-ID overrides) are all the libraries' own, on the whole file,
with no pre-pass. Only what Dayflow documents as its own rules for an event is applied here,
written out again rather than imported: an event overlaps the user's local dates, an all-day
event's end is exclusive and one day when absent, no end is DURATION or zero length, times are
shown in the user's zone, a floating time is read in it, and an event's id hashes its UID (and
RECURRENCE-ID within a series). People's names and addresses are cleaned by `people`'s value
rules (they take values the library has already parsed); a person named by a `urn:uuid:` has
the EMAIL parameter's address (RFC 7986).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import icalendar
import recurring_ical_events
import x_wr_timezone

from dayflow.sources import people
from dayflow.sources.identity import item_id

SOURCE = "cal"
nobody = people.nobody
_STATUSES = {"CONFIRMED": "confirmed", "TENTATIVE": "tentative", "CANCELLED": "cancelled"}


def calendars(data: bytes) -> list[Any]:
    """The calendars of a file as the libraries read it (X-WR-TIMEZONE applied), without the
    events that have no DTSTART (Dayflow's rule: nothing to place; the library raises)."""
    out = []
    for calendar in icalendar.Calendar.from_ical(data, multiple=True):
        if calendar.name != "VCALENDAR":
            continue
        calendar.subcomponents = [
            c for c in calendar.subcomponents if c.name != "VEVENT" or _dated(c)
        ]
        out.append(x_wr_timezone.to_standard(calendar))
    return out


def _dated(event: Any) -> bool:
    try:
        return isinstance(event["DTSTART"].dt, dt.date)
    except Exception:
        return False


def start_dates(parsed: list[Any], tz: dt.tzinfo) -> list[dt.date]:
    """The local dates the file's events start on (each once, sorted)."""
    out = set()
    for calendar in parsed:
        for event in calendar.walk("VEVENT"):
            try:
                value = event["DTSTART"].dt
            except Exception:
                continue
            if isinstance(value, dt.datetime):
                value = _aware(value, tz).date()
            if isinstance(value, dt.date) and dt.date(1900, 1, 1) < value < dt.date(2200, 1, 1):
                out.add(value)
    return sorted(out)


def events(
    parsed: list[Any], tz: dt.tzinfo, first: dt.date, last: dt.date, me: people.Me
) -> list[dict[str, Any]]:
    """The events overlapping the local dates first..last, as Dayflow's fields."""
    lo = dt.datetime.combine(first, dt.time(), tz)
    hi = dt.datetime.combine(last + dt.timedelta(days=1), dt.time(), tz)
    out: list[dict[str, Any]] = []
    for calendar in parsed:
        recurring = {
            str(e.get("UID", ""))
            for e in calendar.walk("VEVENT")
            if any(k in e for k in ("RRULE", "RDATE", "RECURRENCE-ID"))
        }
        query = recurring_ical_events.of(calendar, skip_bad_series=True)
        for component in query.between(first - dt.timedelta(days=1), last + dt.timedelta(days=2)):
            event = _event(component, tz, recurring, me)
            if event is not None and _overlaps(event, first, last, lo, hi):
                out.append(event)
    return out


def _event(component: Any, tz: dt.tzinfo, recurring: set[str], me: people.Me) -> dict | None:
    if component.name != "VEVENT" or component.get("DTSTART") is None:
        return None
    start = component["DTSTART"].dt
    end = component["DTEND"].dt if component.get("DTEND") is not None else None
    if end is None and component.get("DURATION") is not None:
        end = start + component["DURATION"].dt
    uid = str(component.get("UID", "")).strip()
    title = " ".join(str(component.get("SUMMARY", ""))[:500].split()) or "(untitled)"
    if not uid:
        uid = f"no-uid:{title}:{start.isoformat()}"
    key = ""
    if uid in recurring and component.get("RECURRENCE-ID") is not None:
        rid = component["RECURRENCE-ID"].dt
        if isinstance(rid, dt.datetime):
            key = (
                rid.strftime("%Y%m%dT%H%M%S")
                if rid.tzinfo is None
                else rid.astimezone(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
            )
        else:
            key = rid.strftime("%Y%m%d")
    event: dict[str, Any] = {"id": item_id(SOURCE, f"{uid}\n{key}"), "title": title}
    if isinstance(start, dt.datetime):
        start = _aware(start, tz)
        end = start if not isinstance(end, dt.datetime) else max(_aware(end, tz), start)
        event.update(start=start.isoformat(), end=end.isoformat(), all_day=False)
    else:
        if not isinstance(end, dt.date) or isinstance(end, dt.datetime) or end <= start:
            end = start + dt.timedelta(days=1)
        event.update(start=start.isoformat(), end=end.isoformat(), all_day=True)
    event["status"] = _STATUSES.get(str(component.get("STATUS", "")).upper(), "confirmed")
    location = " ".join(str(component.get("LOCATION", ""))[:500].split())
    if location:
        event["location"] = location
    listed = []
    for value in _all(component.get("ATTENDEE")):
        params = value.params
        if str(params.get("CUTYPE", "")).upper() in {"ROOM", "RESOURCE"}:
            continue
        who = people.person(params.get("CN"), _address(value))
        if who is not None:
            partstat = str(params.get("PARTSTAT", "NEEDS-ACTION")).strip().upper()
            answer = {"DELEGATED": "declined"}.get(partstat, partstat.lower())
            listed.append((who, answer if answer in people.RESPONSES else "needs-action"))
    organizer = component.get("ORGANIZER")
    who = None
    if organizer is not None and not isinstance(organizer, list):
        who = people.person(organizer.params.get("CN"), _address(organizer))
    free = str(component.get("TRANSP", "")).strip().upper() == "TRANSPARENT"
    event.update(people.fields(listed, who, me, free=free))
    description = str(component.get("DESCRIPTION", ""))[:4000].strip()
    if description:
        event["description"] = description
    return event


def _address(value: Any) -> Any:
    """The value when it is an address, else the EMAIL parameter (RFC 7986 6.2), as the library
    parsed them."""
    if people.clean_address(value) or not value.params.get("EMAIL"):
        return value
    return value.params["EMAIL"]


def _all(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [] if value is None else [value]


def _aware(value: dt.datetime, tz: dt.tzinfo) -> dt.datetime:
    return (value.replace(tzinfo=tz) if value.tzinfo is None else value).astimezone(tz)


def _overlaps(
    event: dict[str, Any], first: dt.date, last: dt.date, lo: dt.datetime, hi: dt.datetime
) -> bool:
    if event["all_day"]:
        start, end = dt.date.fromisoformat(event["start"]), dt.date.fromisoformat(event["end"])
        return start <= last and end > first
    start, end = dt.datetime.fromisoformat(event["start"]), dt.datetime.fromisoformat(event["end"])
    return lo <= start < hi if start == end else start < hi and end > lo
