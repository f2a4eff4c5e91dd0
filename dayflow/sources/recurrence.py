"""Expanding recurring events within bounds, whatever the rules say.

Anyone who can put an event into a calendar Dayflow reads can write a rule that never ends
(`INTERVAL=0`), one that is secondly in effect (`FREQ=DAILY;BYHOUR=0..23;BYMINUTE=0..59;
BYSECOND=0..59`), or one that steps through a billion occurrences before the week asked for.
Expansion is bounded three ways, and a series that is cut short is *named* (`CutShort`), so the
brief and `sources check` say so while the rest of the calendar is read:

1. Before expanding, each rule's cost is bounded from its shape (`_too_costly`): how many
   candidates per day its FREQ, INTERVAL and BY* lists make at most, times the days from its
   DTSTART to the range (the library steps through all of them) and within the range. A rule over
   either limit, or with an INTERVAL below 1, is not expanded at all.
2. While expanding, each series yields at most MAX_OCCURRENCES occurrences in the range.
3. A time budget for the whole calendar (`TimeBudget`): checked between occurrences, and, for a
   loop inside a library that never returns to Dayflow (a hostile VTIMEZONE rule, say), enforced
   by raising `OutOfTime` into the reading thread when it runs out. `OutOfTime` derives from
   BaseException so that no library's `except Exception` swallows it; it is raised at most once
   per budget, and a pending one is cleared when the budget ends, so it never escapes the
   `with` block.
"""

from __future__ import annotations

import ctypes
import datetime as dt
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import TracebackType
from typing import Any

MAX_OCCURRENCES = 5000  # per series and range: far above a real week, far below a runaway rule
MAX_STEPS_BEFORE = 100_000  # candidates a rule may step through before the range
BUDGET_S = 20.0  # for reading one calendar's range, parse and expansion together

_PER_DAY = {"SECONDLY": 86400.0, "MINUTELY": 1440.0, "HOURLY": 24.0, "DAILY": 1.0}
_PERIOD_DAYS = {"WEEKLY": 7, "MONTHLY": 31, "YEARLY": 366}
_DAY_PARTS = ("BYDAY", "BYMONTHDAY", "BYYEARDAY", "BYWEEKNO", "BYMONTH")


@dataclass(frozen=True)
class CutShort:
    """A recurring series (or the rest of a calendar) not expanded in full, and why."""

    source: str
    title: str
    reason: str

    def to_json(self) -> dict[str, str]:
        return {"source": self.source, "series": self.title, "reason": self.reason}

    def text(self) -> str:
        return f"{self.title!r} ({self.reason})"


class OutOfTime(BaseException):
    """The calendar's time budget ran out (raised into the reading thread)."""


class TimeBudget:
    """`with TimeBudget(seconds) as budget:` bounds the block's time; `budget.spent()` says
    whether it ran out (for the checks Dayflow's own loops make, on `clock`). A loop that never
    checks is stopped GRACE_S later by `OutOfTime`, on the real clock."""

    GRACE_S = 0.5

    def __init__(self, seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds = seconds
        self._clock = clock
        self._deadline = 0.0
        self._lock = threading.Lock()
        self._armed = False
        self._thread = 0
        self._timer: threading.Timer | None = None

    def __enter__(self) -> TimeBudget:
        self._deadline = self._clock() + self.seconds
        self._thread = threading.get_ident()
        self._armed = True
        self._timer = threading.Timer(self.seconds + self.GRACE_S, self._fire)
        self._timer.daemon = True
        self._timer.start()
        return self

    def spent(self) -> bool:
        return self._clock() >= self._deadline

    def _fire(self) -> None:
        with self._lock:
            if self._armed:
                self._armed = False
                _async_raise(self._thread, OutOfTime)

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        with self._lock:
            self._armed = False
        if self._timer is not None:
            self._timer.cancel()
        _async_raise(self._thread, None)  # clear one fired but not yet raised


def _async_raise(thread: int, exc: type[BaseException] | None) -> None:
    target = ctypes.c_ulong(thread)
    if exc is None:
        ctypes.pythonapi.PyThreadState_SetAsyncExc(target, ctypes.c_void_p(None))
    else:
        ctypes.pythonapi.PyThreadState_SetAsyncExc(target, ctypes.py_object(exc))


def too_costly(event: Any, lo: dt.date, hi: dt.date) -> str | None:
    """Why the rules of `event` must not be expanded for lo..hi, or None."""
    rules = event.get("RRULE")
    if rules is None:
        return None
    start = event["DTSTART"].dt
    start_day = start.date() if isinstance(start, dt.datetime) else start
    per_day = 0.0
    ends: list[dt.date] = []
    for rule in rules if isinstance(rules, list) else [rules]:
        try:
            interval = int(_first(rule, "INTERVAL", 1))
        except (TypeError, ValueError):
            return "its INTERVAL is not a number"
        if interval < 1:
            return f"INTERVAL={interval} never moves on"
        per_day += _candidates_per_day(rule, interval)
        until = _first(rule, "UNTIL", None)
        if isinstance(until, dt.datetime):
            ends.append(until.date())
        elif isinstance(until, dt.date):
            ends.append(until)
        else:
            ends.append(dt.date.max)
    end = min(hi, max(ends))
    before = max(0, (min(lo, end) - start_day).days)
    within = max(0, (end - max(lo, start_day)).days + 1)
    if per_day * within > 10 * MAX_OCCURRENCES:
        return f"about {_round(per_day * within)} occurrences in the range"
    if per_day * before > MAX_STEPS_BEFORE:
        return f"about {_round(per_day * before)} occurrences to step through before the range"
    return None


def _first(rule: Any, key: str, default: Any) -> Any:
    values = rule.get(key)
    return values[0] if values else default


def _candidates_per_day(rule: Any, interval: int) -> float:
    """At most how many candidate times a rule makes a day (the library visits each)."""
    freq = str(_first(rule, "FREQ", "")).upper()

    def size(key: str) -> int:
        return max(1, len(rule.get(key) or ()))

    if freq == "SECONDLY":
        per_period = 1
    elif freq == "MINUTELY":
        per_period = size("BYSECOND")
    elif freq == "HOURLY":
        per_period = size("BYMINUTE") * size("BYSECOND")
    else:
        per_period = size("BYHOUR") * size("BYMINUTE") * size("BYSECOND")
    per_period *= size("BYSETPOS")
    if freq in _PER_DAY:
        return _PER_DAY[freq] / interval * per_period
    days = _PERIOD_DAYS.get(freq, 1)
    filled = days if any(rule.get(k) for k in _DAY_PARTS) else 1
    return filled * per_period / (days * interval)


def _round(n: float) -> str:
    return f"{n:,.0f}" if n < 1e6 else f"{n / 1e6:,.0f} million"


def bounded(series: Any, lo: Any, hi: Any, budget: TimeBudget) -> Iterator[tuple[Any, bool]]:
    """The occurrences of one series in lo..hi, at most MAX_OCCURRENCES; `(occurrence, False)`
    each, then `(None, True)` when the series was cut there. OutOfTime when the budget is
    spent."""
    for n, occurrence in enumerate(series.between(lo, hi)):
        if budget.spent():
            raise OutOfTime
        if n >= MAX_OCCURRENCES:
            yield None, True
            return
        yield occurrence, False
