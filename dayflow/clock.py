"""The only reader of the system time. Tests pass a `FixedClock`."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime:
        """An aware UTC datetime."""
        ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)


class FixedClock:
    """A clock that only moves when told to (`advance`)."""

    def __init__(self, start: datetime | str = "2026-11-05T07:30:00+00:00") -> None:
        self._now = datetime.fromisoformat(start) if isinstance(start, str) else start

    def now(self) -> datetime:
        return self._now

    def advance(self, seconds: float) -> None:
        self._now += timedelta(seconds=seconds)


def iso(dt: datetime) -> str:
    """Aware UTC ISO-8601 with milliseconds, as stored in the database (a step's events are
    often within one second of each other; `trace` puts them on a real time axis)."""
    return dt.astimezone(UTC).isoformat(timespec="milliseconds")
