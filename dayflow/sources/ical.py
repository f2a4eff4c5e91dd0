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
- Who: attendees and organizer as name plus address, the user's own PARTSTAT as `response` and
  TRANSP:TRANSPARENT as `"free": true` (`people`, which bounds and cleans them).

Reading once: `CalendarData` indexes the text once (`ical_text`: a line scan, no parsing) and,
for each range asked, parses only the components that can touch it, keeping each range's events.
A 10,000-event file is scanned once per source object, not parsed whole for every
`read_calendar` call.

Bounds (a calendar is input anyone can write to): recurrence is expanded within the limits of
`recurrence` (a series cut short is reported as a `CutShort`, and the rest is read), the whole
read has a time budget, and texts are cut to MAX_TEXT characters (a 50 MB DESCRIPTION is not
copied into every occurrence).

Identity: an event's `id` is `<source>:<short hash of UID and RECURRENCE-ID>` (`home:3fa2...`); a
one-off event hashes its UID alone, so editing its time does not make it a new event.
"""

from __future__ import annotations

import copy
import datetime as dt
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dayflow.errors import SourceUnreadable
from dayflow.sources import ical_text, people, recurrence
from dayflow.sources.identity import item_id
from dayflow.sources.recurrence import CutShort

_STATUSES = {"CONFIRMED": "confirmed", "TENTATIVE": "tentative", "CANCELLED": "cancelled"}
MAX_TEXT = 4000  # characters kept of a DESCRIPTION (the tools show 500); a title or place: 500
_MARGIN = dt.timedelta(days=2)  # a one-off event's dates, in any zone, against the range


@dataclass(frozen=True)
class Parsed:
    """The events of one range, and the series that were cut short in it."""

    events: list[dict[str, Any]]
    cut_short: list[CutShort] = field(default_factory=list)


class CalendarData:
    """One iCalendar text, indexed once; `read(first, last)` parses only the events that can
    touch the range and were not parsed for an earlier range (each event is parsed once), and
    keeps each range's result (fresh copies are returned)."""

    def __init__(
        self,
        data: bytes | str,
        *,
        source: str,
        tz: dt.tzinfo,
        budget: float = recurrence.BUDGET_S,
        clock: Callable[[], float] = time.monotonic,
        me: people.Me = people.nobody,
    ) -> None:
        text = ical_text.unfold(data) if isinstance(data, str) else ical_text.decode(data)
        if "BEGIN:VCALENDAR" not in text[:4096].upper():
            raise SourceUnreadable(source, f"not an iCalendar file (it starts with {_start(text)})")
        self.source = source
        self._tz = tz
        self._me = me
        self._budget = budget
        self._clock = clock
        self._items = ical_text.index(text)
        self._events = [b for b in ical_text.events(self._items) if not b.refused]
        self._refused = [
            CutShort(source, item.title, item.refused)
            for item in self._items
            if isinstance(item, ical_text.Block) and item.refused
        ]
        self._skeleton: list[Any] | None = None  # the calendars without their events
        self._parsed: dict[int, tuple[int, Any]] = {}  # event number: (calendar, component)
        self._ranges: dict[tuple[dt.date, dt.date], Parsed] = {}

    def read(self, first: dt.date, last: dt.date) -> Parsed:
        """The events overlapping the local dates first..last (inclusive), by start time.

        Malformed data is read best-effort: a broken recurring series is skipped; a structure
        icalendar cannot read at all raises one `SourceUnreadable` line naming the source."""
        kept = self._ranges.get((first, last))
        if kept is None:
            kept = self._ranges[(first, last)] = self._parse(first, last)
        return Parsed([dict(e) for e in kept.events], list(kept.cut_short))

    def _parse(self, first: dt.date, last: dt.date) -> Parsed:
        cut: list[CutShort] = list(self._refused)
        import icalendar  # noqa: F401  (imported before the budget starts: never interrupted)
        import recurring_ical_events  # noqa: F401
        import x_wr_timezone  # noqa: F401

        lo, hi = first - _MARGIN, last + _MARGIN
        wanted = [b.event for b in self._events if b.event is not None and b.touches(lo, hi)]
        try:
            with recurrence.TimeBudget(self._budget, self._clock) as budget:
                self._parse_events({n for n in wanted if n not in self._parsed})
                assert self._skeleton is not None
                calendars = []
                for k, skeleton in enumerate(self._skeleton):
                    calendar = copy.copy(skeleton)  # the calendar's own properties, shared
                    mine = (self._parsed[n] for n in wanted if n in self._parsed)
                    calendar.subcomponents = [
                        *skeleton.subcomponents,
                        *(c for owner, c in mine if owner == k),
                    ]
                    calendars.append(calendar)
                where = _Where(self.source, self._tz, self._me)
                events = _events(calendars, where, first, last, budget, cut)
        except recurrence.OutOfTime:
            raise SourceUnreadable(
                self.source,
                f"reading it took longer than its {self._budget:g} s time budget; refused",
            ) from None
        return Parsed(events, cut)

    def _parse_events(self, numbers: set[int]) -> None:
        """Parse these events (with the calendars' own lines and time zones) and keep them."""
        import icalendar

        if not numbers and self._skeleton is not None:
            return
        try:
            calendars = icalendar.Calendar.from_ical(
                ical_text.text(self._items, numbers), multiple=True
            )
        except Exception as err:  # ValueError and friends on a broken structure
            raise SourceUnreadable(
                self.source, f"not a valid iCalendar file ({_one_line(err)})"
            ) from None
        skeleton = []
        for k, calendar in enumerate(calendars):
            own = []
            for component in calendar.subcomponents:
                mark = component.get(ical_text.MARK) if component.name == "VEVENT" else None
                if mark is None:
                    own.append(component)
                else:
                    self._parsed[int(str(mark))] = (k, component)
            calendar.subcomponents = own
            skeleton.append(calendar)
        if self._skeleton is None:
            self._skeleton = skeleton


def parse_events(
    data: bytes | str,
    *,
    source: str,
    tz: dt.tzinfo,
    first: dt.date,
    last: dt.date,
    me: people.Me = people.nobody,
) -> Parsed:
    """The events of an iCalendar text that overlap the local dates first..last (inclusive)
    (`CalendarData.read`, for a text read once)."""
    return CalendarData(data, source=source, tz=tz, me=me).read(first, last)


@dataclass(frozen=True)
class _Where:
    """What an event is read for: its calendar's name, the user's zone and addresses."""

    source: str
    tz: dt.tzinfo
    me: people.Me


def _events(
    calendars: list[Any],
    where: _Where,
    first: dt.date,
    last: dt.date,
    budget: recurrence.TimeBudget,
    cut: list[CutShort],
) -> list[dict[str, Any]]:
    import x_wr_timezone

    source, tz = where.source, where.tz
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
        for component in _expand(calendar, first, last, source, budget, cut):
            event = _event(component, where, recurring=recurring)
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


def _expand(
    calendar: Any,
    first: dt.date,
    last: dt.date,
    source: str,
    budget: recurrence.TimeBudget,
    cut: list[CutShort],
) -> list[Any]:
    """Every occurrence between first and last, each series within `recurrence`'s bounds; a
    broken series is skipped, one cut short is added to `cut`."""
    import recurring_ical_events

    # A day wider on each side: all-day and floating occurrences are compared as local dates
    # afterwards, whatever zone the library compared them in.
    lo, hi = first - dt.timedelta(days=1), last + dt.timedelta(days=2)
    for event in list(calendar.subcomponents):
        if event.name != "VEVENT":
            continue
        if not _has_start(event):
            calendar.subcomponents.remove(event)  # nothing to place
            continue
        try:
            why = recurrence.too_costly(event, lo, hi)
        except Exception:
            why = None  # a rule the library cannot read either: it skips the series
        if why is not None:
            calendar.subcomponents.remove(event)
            cut.append(CutShort(source, _title(event), f"not expanded: {why}"))
    window = _Window(lo, hi, source, budget, cut)
    try:
        query = recurring_ical_events.of(calendar, skip_bad_series=True)
    except Exception:
        return _one_by_one(calendar, window)
    return _occurrences(query, window)


@dataclass(frozen=True)
class _Window:
    """What one expansion reads between (`lo`..`hi`), for which source, within which time
    budget, and where it notes the series it cut short."""

    lo: dt.date
    hi: dt.date
    source: str
    budget: recurrence.TimeBudget
    cut: list[CutShort]


def _one_by_one(calendar: Any, window: _Window) -> list[Any]:
    """One series at a time, so one event the library cannot take costs only itself."""
    import icalendar
    import recurring_ical_events

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
            query = recurring_ical_events.of(single, skip_bad_series=True)
        except Exception:
            continue
        out.extend(_occurrences(query, window))
    return out


def _occurrences(query: Any, window: _Window) -> list[Any]:
    lo, hi, source, budget, cut = window.lo, window.hi, window.source, window.budget, window.cut
    out: list[Any] = []
    for i, series in enumerate(query.series):
        try:
            if budget.spent():
                raise recurrence.OutOfTime
            for occurrence, stopped in recurrence.bounded(series, lo, hi, budget):
                if stopped:
                    why = f"cut short after {recurrence.MAX_OCCURRENCES} occurrences in the range"
                    cut.append(CutShort(source, _series_title(series), why))
                    break
                out.append(occurrence.as_component(query.keep_recurrence_attributes))
        except recurrence.OutOfTime:  # checked here, or raised inside the library's loop
            left = len(query.series) - i
            why = f"not read: the calendar's {budget.seconds:g} s time budget ran out"
            cut.append(CutShort(source, f"{left} more event(s)", why))
            break
        except Exception:
            continue  # a broken series: skipped, as the library's skip_bad_series does
    return out


def _title(component: Any) -> str:
    return " ".join(_text(component, "SUMMARY", 500).split()) or "(untitled)"


def _text(component: Any, key: str, limit: int) -> str:
    """A text property cut to `limit` before it is copied (str() of 50 MB is 50 MB)."""
    value = component.get(key, "")
    if isinstance(value, list):
        value = value[0] if value else ""
    return str(value[:limit]) if isinstance(value, str) else str(value)[:limit]


def _series_title(series: Any) -> str:
    try:
        return _title(series.components[0].component)
    except Exception:
        return "(untitled)"


def _has_start(event: Any) -> bool:
    try:
        return isinstance(event.get("DTSTART").dt, dt.date)
    except Exception:
        return False


def _recurring_uids(calendar: Any) -> set[str]:
    uids = set()
    for component in calendar.walk("VEVENT"):
        if any(key in component for key in ("RRULE", "RDATE", "RECURRENCE-ID")):
            uids.add(str(component.get("UID", "")))
    return uids


def _event(component: Any, where: _Where, *, recurring: set[str]) -> dict[str, Any] | None:
    start_prop = component.get("DTSTART")
    if start_prop is None:
        return None  # nothing to place on a calendar
    start = start_prop.dt
    end_prop = component.get("DTEND")
    end = end_prop.dt if end_prop is not None else None
    if end is None and component.get("DURATION") is not None:
        end = start + component["DURATION"].dt
    source, tz = where.source, where.tz
    uid = str(component.get("UID", "")).strip()
    title = _title(component)
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
    location = " ".join(_text(component, "LOCATION", 500).split())
    if location:
        event["location"] = location
    event.update(people.from_ical(component, where.me))
    description = _text(component, "DESCRIPTION", MAX_TEXT).strip()
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


def _start(text: str) -> str:
    head = " ".join(text[:40].split())
    return repr(head) if head else "nothing: it is empty"


def _one_line(err: BaseException) -> str:
    text = " ".join(str(err).split()) or type(err).__name__
    return text[:200]
