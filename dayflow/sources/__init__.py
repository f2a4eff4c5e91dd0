"""Where mail and events come from: small protocols, and the readers behind them.

`json_files` reads Dayflow's own JSON shape and the bundled samples.
"""

from __future__ import annotations

from typing import Any, Protocol

from dayflow.sources.json_files import (
    SAMPLES,
    SNIPPET_CHARS,
    JsonCalendar,
    JsonInbox,
    local_date,
    to_timezone,
)

__all__ = [
    "SAMPLES",
    "SNIPPET_CHARS",
    "CalendarSource",
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

    def events(self) -> list[dict[str, Any]]:
        """All events, by start time, as fresh copies."""
        ...
