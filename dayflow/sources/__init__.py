"""Where mail and events come from: small protocols, and the readers behind them.

`json_files` reads Dayflow's own JSON shape and the bundled samples; `ics` reads iCalendar files
and feeds, `caldav` a CalDAV server (`ical` turns iCalendar into events, `http` fetches). Nothing
here imports a calendar library at import time: `runs`, `tasks` and `--help` never pay for one.
"""

from __future__ import annotations

from dayflow.sources.caldav import CalDavCalendar
from dayflow.sources.ics import IcsCalendar
from dayflow.sources.json_files import (
    SAMPLES,
    SNIPPET_CHARS,
    JsonCalendar,
    JsonInbox,
    local_date,
    to_timezone,
)
from dayflow.sources.protocols import CalendarSource, InboxSource, as_calendar

__all__ = [
    "CalDavCalendar",
    "SAMPLES",
    "SNIPPET_CHARS",
    "as_calendar",
    "CalendarSource",
    "IcsCalendar",
    "InboxSource",
    "JsonCalendar",
    "JsonInbox",
    "local_date",
    "to_timezone",
]
