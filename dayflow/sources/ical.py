"""iCalendar data to Dayflow events, in the user's timezone.

The only module that imports `icalendar`, `recurring-ical-events` and `x-wr-timezone`, and only
inside `parse_events`, so `runs`, `tasks` and `--help` never pay for them. The libraries do the
hard parts (RFC 5545 recurrence, VTIMEZONE, Windows zone names); this module decides what an event
looks like to Dayflow:

- Recurrence: RRULE, RDATE and EXDATE are expanded, and a RECURRENCE-ID override replaces the
  occurrence it moves (recurring-ical-events). An EXDATE'd occurrence is gone.
- Cancelled: an event or an occurrence with STATUS:CANCELLED is *kept*, with
  `"status": "cancelled"`, so the brief can say "the 10:00 with Sam was cancelled" and knows
  that time is free.
- All-day: a DATE start gives `"all_day": true` with `start`/`end` as YYYY-MM-DD, `end` exclusive
  as in RFC 5545 (one day when there is no DTEND). No fake midnight.
- Floating times (no zone, no X-WR-TIMEZONE) are read in the user's timezone.
- Google's `X-WR-TIMEZONE` is applied first (x-wr-timezone), so a weekly 09:00 written in UTC keeps
  09:00 across a DST change in the calendar's zone.
- Outlook's Windows zone names ("W. Europe Standard Time") resolve to IANA zones (icalendar).
- No DTEND: DURATION when given, else a zero-length event (RFC 5545 3.6.1).
- Every time is returned as ISO-8601 with its offset in the user's timezone.

Identity: an event's `id` is `<source>:<short hash of UID and RECURRENCE-ID>` (`home:3fa2...`); a
one-off event hashes its UID alone, so editing its time does not make it a new event.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from dayflow.errors import SourceUnreadable
from dayflow.sources.identity import item_id

_STATUSES = {"CONFIRMED": "confirmed", "TENTATIVE": "tentative", "CANCELLED": "cancelled"}
MAX_ATTENDEES = 50
MAX_OCCURRENCES = 5000  # per series and range: far above a real week, far below a runaway rule


def parse_events(
    data: bytes | str,
    *,
    source: str,
    tz: dt.tzinfo,
    first: dt.date,
    last: dt.date,
) -> list[dict[str, Any]]:
    """The events of an iCalendar text that overlap the local dates first..last (inclusive).

    Malformed data is read best-effort: a broken recurring series is skipped; data that is not
    iCalendar at all raises one `SourceUnreadable` line naming the source.
    """
    import icalendar
    import x_wr_timezone

    text = data if isinstance(data, str) else _decode(data)
    if "BEGIN:VCALENDAR" not in text[:4096].upper():
        raise SourceUnreadable(source, f"not an iCalendar file (it starts with {_start(text)})")
    try:
        calendars = icalendar.Calendar.from_ical(_content_lines(text), multiple=True)
    except Exception as err:  # icalendar raises ValueError and friends on broken structure
        raise SourceUnreadable(source, f"not a valid iCalendar file ({_one_line(err)})") from None
    lo = dt.datetime.combine(first, dt.time(), tz)
    hi = dt.datetime.combine(last + dt.timedelta(days=1), dt.time(), tz)
    seen: dict[str, int] = {}
    out: list[dict[str, Any]] = []
    for calendar in calendars:
        try:
            calendar = x_wr_timezone.to_standard(calendar)
        except Exception as err:
            raise SourceUnreadable(source, f"bad X-WR-TIMEZONE ({_one_line(err)})") from None
        recurring = _recurring_uids(calendar)
        occurrences = _expand(calendar, first, last)
        for component in occurrences:
            event = _event(component, source=source, tz=tz, recurring=recurring)
            if event is None or not _overlaps(event, first, last, lo, hi):
                continue
            # Two events sharing a UID and no recurrence (a broken export) stay two events.
            n = seen.get(event["id"], 0)
            seen[event["id"]] = n + 1
            if n:
                event["id"] = f"{event['id']}-{n + 1}"
            out.append(event)
    out.sort(key=lambda e: (sort_key(e, tz), e["id"]))
    return out


def sort_key(event: dict[str, Any], tz: dt.tzinfo) -> dt.datetime:
    """When an event starts, as an aware datetime (an all-day event at local midnight)."""
    if event.get("all_day"):
        return dt.datetime.combine(dt.date.fromisoformat(event["start"]), dt.time(), tz)
    return dt.datetime.fromisoformat(event["start"])


def _expand(calendar: Any, first: dt.date, last: dt.date) -> list[Any]:
    """Every occurrence between first and last; best effort when some series are broken."""
    import icalendar
    import recurring_ical_events

    # A day wider on each side: all-day and floating occurrences are compared as local dates
    # afterwards, whatever zone the library compared them in.
    lo, hi = first - dt.timedelta(days=1), last + dt.timedelta(days=2)
    for event in list(calendar.subcomponents):
        if event.name == "VEVENT" and (not _has_start(event) or _runaway(event, lo, hi)):
            calendar.subcomponents.remove(event)  # nothing to place, or far too much
    try:
        return list(recurring_ical_events.of(calendar, skip_bad_series=True).between(lo, hi))
    except Exception:
        pass
    # One series at a time, so one broken event costs only itself.
    zones = [c for c in calendar.subcomponents if c.name == "VTIMEZONE"]
    series: dict[str, list[Any]] = {}
    for event in calendar.walk("VEVENT"):
        series.setdefault(str(event.get("UID", "")), []).append(event)
    out: list[Any] = []
    for parts in series.values():
        single = icalendar.Calendar()
        for component in (*zones, *parts):
            single.add_component(component)
        try:
            out.extend(recurring_ical_events.of(single, skip_bad_series=True).between(lo, hi))
        except Exception:
            continue
    return out


_SECONDS = {"SECONDLY": 1, "MINUTELY": 60, "HOURLY": 3600}


def _runaway(event: Any, lo: dt.date, hi: dt.date) -> bool:
    """A rule that would make more than MAX_OCCURRENCES in the range, or step through millions
    before it (FREQ=SECONDLY since 2001, say): skipped, or one feed would cost minutes."""
    rule = event.get("RRULE")
    if rule is None:
        return False
    try:
        step = _SECONDS.get(str(rule.get("FREQ", [""])[0]).upper())
        if step is None:
            return False
        step *= max(1, int(rule.get("INTERVAL", [1])[0]))
        start = event["DTSTART"].dt
        start_day = start.date() if isinstance(start, dt.datetime) else start
        window = (hi - max(lo, start_day)).total_seconds()
        before = max(0.0, (lo - start_day).total_seconds())
        return window / step > MAX_OCCURRENCES or before / step > 5_000_000
    except Exception:
        return False


def _has_start(event: Any) -> bool:
    try:
        return isinstance(event.get("DTSTART").dt, dt.date)
    except Exception:
        return False


def _content_lines(text: str) -> str:
    # Best effort: drop lines that are neither "NAME...:value" nor a folded continuation, as a
    # hand edit or a broken exporter leaves them; icalendar would reject the whole file.
    # A file cut short (a partial download, a full disk) gets its open components closed.
    kept, open_ = [], []
    for line in text.splitlines():
        if line[:1] not in (" ", "\t") and ":" not in line:
            continue
        kept.append(line)
        name, _, value = line.partition(":")
        if name.strip().upper() == "BEGIN":
            open_.append(value.strip())
        elif name.strip().upper() == "END" and open_:
            open_.pop()
    kept.extend(f"END:{component}" for component in reversed(open_))
    return "\r\n".join(kept) + "\r\n"


def _recurring_uids(calendar: Any) -> set[str]:
    uids = set()
    for component in calendar.walk("VEVENT"):
        if any(key in component for key in ("RRULE", "RDATE", "RECURRENCE-ID")):
            uids.add(str(component.get("UID", "")))
    return uids


def _event(
    component: Any, *, source: str, tz: dt.tzinfo, recurring: set[str]
) -> dict[str, Any] | None:
    start_prop = component.get("DTSTART")
    if start_prop is None:
        return None  # nothing to place on a calendar
    start = start_prop.dt
    end_prop = component.get("DTEND")
    end = end_prop.dt if end_prop is not None else None
    if end is None and component.get("DURATION") is not None:
        end = start + component["DURATION"].dt
    uid = str(component.get("UID", "")).strip()
    title = " ".join(str(component.get("SUMMARY", "")).split()) or "(untitled)"
    if not uid:  # best effort for a broken event: what it is and when
        uid = f"no-uid:{title}:{start.isoformat()}"
    recurrence = ""
    if uid in recurring and component.get("RECURRENCE-ID") is not None:
        recurrence = _recurrence_key(component["RECURRENCE-ID"].dt)
    event: dict[str, Any] = {"id": item_id(source, f"{uid}\n{recurrence}"), "source": source}
    event["title"] = title
    if isinstance(start, dt.datetime):
        start = _aware(start, tz)
        end = start if not isinstance(end, dt.datetime) else max(_aware(end, tz), start)
        event.update(start=start.isoformat(), end=end.isoformat(), all_day=False)
    else:
        # A DATE start is all-day; DTEND is exclusive, one day when absent or not after the start.
        if not isinstance(end, dt.date) or isinstance(end, dt.datetime) or end <= start:
            end = start + dt.timedelta(days=1)
        event.update(start=start.isoformat(), end=end.isoformat(), all_day=True)
    event["status"] = _STATUSES.get(str(component.get("STATUS", "")).upper(), "confirmed")
    location = " ".join(str(component.get("LOCATION", "")).split())
    if location:
        event["location"] = location
    attendees = _attendees(component)
    if attendees:
        event["attendees"] = attendees
    description = str(component.get("DESCRIPTION", "")).strip()
    if description:
        event["description"] = description
    return event


def _aware(value: dt.datetime, tz: dt.tzinfo) -> dt.datetime:
    # A floating time is the same wall-clock time wherever the user is: read it in their zone.
    if value.tzinfo is None:
        value = value.replace(tzinfo=tz)
    return value.astimezone(tz)


def _recurrence_key(value: dt.date | dt.datetime) -> str:
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            return value.strftime("%Y%m%dT%H%M%S")
        return value.astimezone(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    return value.strftime("%Y%m%d")


def _attendees(component: Any) -> list[str]:
    raw = component.get("ATTENDEE")
    if raw is None:
        return []
    values = raw if isinstance(raw, list) else [raw]
    names = []
    for value in values[:MAX_ATTENDEES]:
        params = getattr(value, "params", {})
        name = params.get("CN") or str(value).removeprefix("mailto:").removeprefix("MAILTO:")
        name = " ".join(str(name).split())
        if name:
            names.append(name)
    return names


def _overlaps(
    event: dict[str, Any], first: dt.date, last: dt.date, lo: dt.datetime, hi: dt.datetime
) -> bool:
    if event["all_day"]:
        start, end = dt.date.fromisoformat(event["start"]), dt.date.fromisoformat(event["end"])
        return start <= last and end > first
    start, end = dt.datetime.fromisoformat(event["start"]), dt.datetime.fromisoformat(event["end"])
    if start == end:
        return lo <= start < hi
    return start < hi and end > lo


def _decode(data: bytes) -> str:
    # RFC 5545 says UTF-8; old exports are often Windows-1252. Never fail on the bytes alone.
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("cp1252", errors="replace")


def _start(text: str) -> str:
    head = " ".join(text[:40].split())
    return repr(head) if head else "nothing: it is empty"


def _one_line(err: BaseException) -> str:
    text = " ".join(str(err).split()) or type(err).__name__
    return text[:200]
