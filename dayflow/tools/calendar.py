"""The calendar tool: `read_calendar` (a day, a week or a range of days, in the user's zone)."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from dayflow import meetings
from dayflow.sources import people
from dayflow.tools.spec import (
    ISO_DATE,
    MAX_RESULT_CHARS,
    Tool,
    ToolEnv,
    ToolError,
    reading,
    result_text,
)

NO_CALENDAR_SOURCE = "no calendar is configured ([[calendar]] in the config file)"
MAX_EVENTS = 100  # per read_calendar result; the rest is counted in "more"
MAX_RANGE_DAYS = 62
_TEXT_CAPS = {"title": 200, "location": 200, "description": 500}
MAX_ATTENDEES = 20


def calendar_range(args: dict[str, Any], today: date) -> tuple[date, date]:
    """The first and last day (inclusive) a read_calendar call asks for."""
    if "range" in args and ("start" in args or "end" in args):
        raise ToolError("give either 'range' or 'start'/'end', not both")
    if "range" in args:
        return today, today if args["range"] == "today" else today + timedelta(days=6)
    if "start" not in args:
        raise ToolError("give 'range' (today or week) or a 'start' date (and optionally 'end')")
    first = _date_arg(args, "start")
    last = _date_arg(args, "end") if "end" in args else first
    if last < first:
        raise ToolError(f"'end' ({last}) is before 'start' ({first})")
    if (last - first).days + 1 > MAX_RANGE_DAYS:
        raise ToolError(f"a range may span at most {MAX_RANGE_DAYS} days")
    return first, last


def _date_arg(args: dict[str, Any], name: str) -> date:
    value = args[name]
    try:
        if not ISO_DATE.fullmatch(value):
            raise ValueError(value)
        return date.fromisoformat(value)
    except ValueError:
        raise ToolError(f"'{name}' must be a real date as YYYY-MM-DD, got {value!r}") from None


def read_calendar(args: dict[str, Any], env: ToolEnv) -> dict[str, Any]:
    first, last = calendar_range(args, env.brief_date)
    lo = datetime.combine(first, datetime.min.time(), env.tz)
    hi = datetime.combine(last + timedelta(days=1), datetime.min.time(), env.tz)
    with reading(""):
        events = env.calendars.events(first=first, last=last)
    found = []
    for e in events:
        if e.get("all_day"):
            start_day, end_day = date.fromisoformat(e["start"]), date.fromisoformat(e["end"])
            if not (start_day <= last and end_day > first):
                continue
            when = {"start": e["start"], "end": e["end"], "all_day": True}
            order = datetime.combine(start_day, datetime.min.time(), env.tz)
        else:
            start, end = _local(e["start"], env.tz), _local(e["end"], env.tz)
            if not (lo <= start < hi if start == end else start < hi and end > lo):
                continue
            when = {"start": start.isoformat(), "end": end.isoformat()}
            order = start
        found.append((order, e["id"], _calendar_item(e, when)))
    found.sort(key=lambda f: (f[0], f[1]))
    out: dict[str, Any] = {"events": [item for _, _, item in found[:MAX_EVENTS]]}
    clashes, more = meetings.conflicts([item for _, _, item in found])
    if clashes:  # over every event of the range, not only those listed
        out["conflicts"] = clashes
    if more:
        out["conflicts_more"] = more
    failures = env.calendars.failures
    if failures:  # some calendars answered, these did not
        out["unavailable"] = [{"source": n, "reason": w} for n, w in failures]
    cut = env.calendars.cut_short
    if cut:  # recurring series not expanded in full: the rest of the calendar was read
        out["cut_short"] = [c.to_json() for c in cut[:20]]
    if not env.calendars.configured():  # none configured: not an empty day
        out["unavailable"] = [{"source": "calendar", "reason": NO_CALENDAR_SOURCE}]
    return _fit_events(out, len(found))


def _fit_events(out: dict[str, Any], total: int) -> dict[str, Any]:
    """The result under MAX_RESULT_CHARS: descriptions go first, then the latest events (counted
    in "more"), so a busy week is shortened instead of refused as too large."""
    limit = MAX_RESULT_CHARS - 200

    def size() -> int:
        return len(result_text({**out, "more": total}))

    if size() > limit:
        out["events"] = [{k: v for k, v in e.items() if k != "description"} for e in out["events"]]
        out["note"] = "descriptions left out to fit; ask for fewer days to see them"
    while out["events"] and size() > limit:
        out["events"].pop()
    if len(out["events"]) < total:
        out["more"] = total - len(out["events"])
    return out


def _calendar_item(e: dict[str, Any], when: dict[str, Any]) -> dict[str, Any]:
    item: dict[str, Any] = {"id": e["id"], "title": _cap(e["title"], _TEXT_CAPS["title"])}
    item.update(when)
    if e.get("status") and e["status"] != "confirmed":
        item["status"] = e["status"]
    if e.get("source"):
        item["source"] = e["source"]
    for key in ("location", "description"):
        if e.get(key):
            item[key] = _cap(e[key], _TEXT_CAPS[key])
    item.update(people.for_model(e, MAX_ATTENDEES))
    return item


def _cap(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _local(iso_ts: str, tz: ZoneInfo) -> datetime:
    return datetime.fromisoformat(iso_ts).astimezone(tz)


READ_CALENDAR = Tool(
    "read_calendar",
    "Read the user's calendar events in the user's timezone: 'range' today or week (the "
    "7 days starting today), or the days 'start' to 'end' (inclusive). An all-day event "
    "has all_day true and dates, its end exclusive. Attendees and the organizer are "
    "name and address; 'response' is the user's own answer (accepted, tentative, declined, "
    "needs-action). A cancelled, declined or free (free true) event takes no time. "
    "'conflicts' lists busy events that overlap (kind overlap) and back-to-back events in "
    "different places (kind travel): flag them. 'cut_short' lists recurring series that "
    "were not expanded in full (a runaway rule): say so in the brief.",
    {
        "type": "object",
        "properties": {
            "range": {"type": "string", "enum": ["today", "week"]},
            "start": {"type": "string", "description": "First day, YYYY-MM-DD."},
            "end": {"type": "string", "description": "Last day, YYYY-MM-DD (inclusive)."},
        },
        "additionalProperties": False,
    },
    read_calendar,
)
