"""Where mail and events come from: small protocols, and the readers behind them.

`json_files` reads Dayflow's own JSON shape and the bundled samples; `ics` reads iCalendar files
and feeds, `caldav` a CalDAV server (`ical` turns iCalendar into events, `http` fetches). Nothing
here imports a calendar library at import time: `runs`, `tasks` and `--help` never pay for one.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Protocol

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

__all__ = [
    "CalDavCalendar",
    "SAMPLES",
    "SNIPPET_CHARS",
    "CalendarSource",
    "IcsCalendar",
    "InboxSource",
    "JsonCalendar",
    "JsonInbox",
    "local_date",
    "to_timezone",
]


class InboxSource(Protocol):
    """Where messages come from."""

    def messages(self) -> list[dict[str, Any]]:
        """All messages, newest first, as fresh copies."""
        ...


class CalendarSource(Protocol):
    """Where events come from."""

    def events(self, *, first: dt.date, last: dt.date) -> list[dict[str, Any]]:
        """The events overlapping the user's dates first..last (inclusive), by start time, as
        fresh copies; a source may return more (the caller filters). Raises SourceError."""
        ...
