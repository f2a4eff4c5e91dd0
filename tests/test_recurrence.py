"""Bounded expansion: a hostile rule, date list or nesting in one event costs only that event,
which is named (`cut_short`) in the tool result, the offline brief and `sources check`, while
the rest of the calendar is read. Memory was checked by hand (see the report), not here."""

from __future__ import annotations

import datetime as dt
import itertools
import time
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from dayflow import tools
from dayflow.sources import IcsCalendar, recurrence
from dayflow.sources.factory import Calendar
from dayflow.sources.ical import CalendarData
from dayflow.store import Store
from tests.harness import home_calendar, invoke, offline_model

DAY = dt.date(2026, 11, 5)  # the harness clock's day
WEEK = (DAY, DAY + dt.timedelta(days=6))
HEAD = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\n"
REAL = (
    "BEGIN:VEVENT\r\nUID:real@x\r\nDTSTART:20261106T090000Z\r\nDTEND:20261106T100000Z\r\n"
    "SUMMARY:Real meeting\r\nEND:VEVENT\r\n"
)
HOURS = ",".join(map(str, range(24)))
SIXTY = ",".join(map(str, range(60)))


def _event(extra: str, start: str = "20261101T000000Z", uid: str = "bad@x") -> str:
    return (
        f"BEGIN:VEVENT\r\nUID:{uid}\r\nDTSTART:{start}\r\nSUMMARY:Hostile\r\n{extra}END:VEVENT\r\n"
    )


def _calendar(tmp_path: Path, body: str) -> IcsCalendar:
    path = tmp_path / "cal.ics"
    path.write_text(HEAD + REAL + body + "END:VCALENDAR\r\n")
    return IcsCalendar("home", path=path, tz=ZoneInfo("Europe/Berlin"))


def _dates(n: int, since: dt.datetime, step: dt.timedelta) -> str:
    return ",".join(f"{since + i * step:%Y%m%dT%H%M%S}Z" for i in range(n))


COUSINS = {
    "interval 0 never moves on": _event("RRULE:FREQ=DAILY;INTERVAL=0\r\n"),
    "daily, secondly in effect": _event(
        f"RRULE:FREQ=DAILY;BYHOUR={HOURS};BYMINUTE={SIXTY};BYSECOND={SIXTY}\r\n"
    ),
    "secondly, COUNT=10^9": _event("RRULE:FREQ=SECONDLY;COUNT=1000000000\r\n"),
    "minutely until 9999 since 2001": _event(
        "RRULE:FREQ=MINUTELY;UNTIL=99991231T000000Z\r\n", start="20010101T000000Z"
    ),
    "secondly until 9999": _event("RRULE:FREQ=SECONDLY;UNTIL=99991231T000000Z\r\n"),
    "a BYSETPOS list of 20,000": _event(
        "RRULE:FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS="
        + ",".join(str(i % 300 + 1) for i in range(20_000))
        + "\r\n"
    ),
    "100,000 RDATEs": _event(
        "RDATE:"
        + _dates(100_000, dt.datetime(2026, 11, 1, tzinfo=dt.UTC), dt.timedelta(minutes=1))
        + "\r\n"
    ),
    "an EXDATE flood": _event(
        "RRULE:FREQ=DAILY\r\nEXDATE:"
        + _dates(100_000, dt.datetime(2000, 1, 1, tzinfo=dt.UTC), dt.timedelta(days=1))
        + "\r\n",
        start="20000101T000000Z",
    ),
    "10,000 properties": _event("".join(f"X-N{i}:{i}\r\n" for i in range(10_000))),
}


@pytest.mark.parametrize("case", list(COUSINS))
def test_a_hostile_series_is_named_and_the_rest_of_the_calendar_is_read(
    tmp_path: Path, case: str
) -> None:
    calendar = _calendar(tmp_path, COUSINS[case])
    events = calendar.events(*WEEK)
    assert [e["title"] for e in events] == ["Real meeting"]
    [cut] = calendar.cut_short
    assert cut.source == "home" and cut.title == "Hostile" and cut.reason


def test_a_busy_series_gives_its_first_occurrences_and_is_named_cut_short(
    tmp_path: Path,
) -> None:
    """Minutely for a week is 10,080 occurrences: the first 5,000 are kept."""
    calendar = _calendar(tmp_path, _event("RRULE:FREQ=MINUTELY\r\n", start="20261105T000000Z"))
    events = calendar.events(*WEEK)
    assert sum(e["title"] == "Hostile" for e in events) == recurrence.MAX_OCCURRENCES
    assert "Real meeting" in {e["title"] for e in events}
    [cut] = calendar.cut_short
    assert cut.reason == f"cut short after {recurrence.MAX_OCCURRENCES} occurrences in the range"


def test_a_real_busy_week_is_not_cut(tmp_path: Path) -> None:
    rules = (
        "RRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;BYHOUR=9,11,14,16\r\n",
        "RRULE:FREQ=DAILY;INTERVAL=1\r\n",
        "RRULE:FREQ=HOURLY;COUNT=30\r\n",
    )
    body = "".join(
        _event(rule, start="20200106T080000Z", uid=f"u{i}@x") for i, rule in enumerate(rules)
    )
    calendar = _calendar(tmp_path, body)
    events = calendar.events(*WEEK)
    assert calendar.cut_short == []
    assert sum(e["title"] == "Hostile" for e in events) == 5 * 4 + 7  # the hourly one is over


def test_a_50_mb_description_is_cut_before_it_is_copied(tmp_path: Path) -> None:
    """A daily event whose DESCRIPTION is 10 MB (the file limit is 50 MB): each occurrence keeps
    at most MAX_TEXT characters."""
    calendar = _calendar(
        tmp_path, _event("RRULE:FREQ=DAILY\r\nDESCRIPTION:" + "A" * 10**7 + "\r\n")
    )
    hostile = [e for e in calendar.events(*WEEK) if e["title"] == "Hostile"]
    assert len(hostile) == 7
    assert {len(e["description"]) for e in hostile} <= {4000}


def test_nesting_thousands_deep_is_dropped_and_the_rest_is_read(tmp_path: Path) -> None:
    depth = 20_000
    nested = "".join(f"BEGIN:X{i}\r\n" for i in range(depth))
    nested += "".join(f"END:X{i}\r\n" for i in reversed(range(depth)))
    calendar = _calendar(tmp_path, nested)
    assert [e["title"] for e in calendar.events(*WEEK)] == ["Real meeting"]


class _Ticks:
    """A clock that moves on ten minutes each time it is read."""

    def __init__(self) -> None:
        self.now = itertools.count(step=600)

    def __call__(self) -> float:
        return float(next(self.now))


def test_the_time_budget_names_what_it_did_not_read(tmp_path: Path) -> None:
    body = "".join(
        _event("RRULE:FREQ=DAILY\r\n", start="20261105T080000Z", uid=f"u{i}@x") for i in range(5)
    )
    data = (HEAD + REAL + body + "END:VCALENDAR\r\n").encode()
    read = CalendarData(data, source="home", tz=dt.UTC, budget=7200, clock=_Ticks()).read(*WEEK)
    [cut] = read.cut_short
    assert cut.reason == "not read: the calendar's 7200 s time budget ran out"
    assert cut.title.endswith("more event(s)")
    assert read.events  # what was read before the budget ran out is kept


def test_a_loop_that_never_checks_is_stopped_by_the_budget() -> None:
    started = time.monotonic()
    with pytest.raises(recurrence.OutOfTime), recurrence.TimeBudget(0.05):
        while time.monotonic() < started + 60:  # a library loop that never returns
            pass
    assert time.monotonic() < started + 60
    for _ in range(100_000):  # nothing pending escapes the block
        pass


def test_the_tool_result_and_the_offline_brief_name_a_series_cut_short(
    tmp_path: Path, store: Store
) -> None:
    calendar = Calendar([("home", _calendar(tmp_path, COUSINS["interval 0 never moves on"]))])
    env = tools.ToolEnv(
        tasks=store.tasks,
        run_id="r",
        inbox=None,  # type: ignore[arg-type]
        calendar=calendar,
        brief_date=DAY,
        tz=ZoneInfo("Europe/Berlin"),
        task_cap=20,
    )
    result: dict[str, Any] = tools.TOOLS["read_calendar"].handler({"range": "week"}, env)
    assert [e["title"] for e in result["events"]] == ["Real meeting"]
    assert result["cut_short"] == [
        {"source": "home", "series": "Hostile", "reason": "not expanded: INTERVAL=0 never moves on"}
    ]

    cli_env = home_calendar(tmp_path)  # the calendar written above
    brief = invoke(tmp_path / "d.db", offline_model, "brief", env=cli_env)
    assert brief.code == 0, brief.err
    assert (
        "Calendar home: 'Hostile' was not read in full (not expanded: INTERVAL=0 never moves on);"
        " the rest of the calendar was." in brief.out
    )
    assert "Real meeting" in brief.out

    check = invoke(None, offline_model, "sources", "check", env=cli_env)
    assert check.code == 0, check.err
    assert "cut short: 'Hostile' (not expanded: INTERVAL=0 never moves on)" in check.out
