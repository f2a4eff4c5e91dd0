"""The read_calendar tool: today / week / an explicit start..end, all-day and cancelled events,
the source's name, a capped result, and a failing source as one is_error line."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from dayflow import tools
from dayflow.errors import SourceUnreadable
from dayflow.sources import IcsCalendar, JsonCalendar
from dayflow.store import Store
from tests.conftest import call_tool

FIXTURES = Path(__file__).parent / "ical"
TODAY = dt.date(2026, 11, 5)


class FakeCalendar:
    """A calendar that returns the events it is given and records the ranges asked for."""

    def __init__(self, events: list[dict[str, Any]], error: Exception | None = None) -> None:
        self._events, self._error = events, error
        self.asked: list[tuple[dt.date, dt.date]] = []

    def events(self, first: dt.date, last: dt.date) -> list[dict[str, Any]]:
        self.asked.append((first, last))
        if self._error is not None:
            raise self._error
        return [dict(e) for e in self._events]


def _env(store: Store, calendar: Any, tz: str = "Europe/Berlin") -> tools.ToolEnv:
    return tools.ToolEnv(
        tasks=store.tasks,
        run_id="r",
        inbox=None,  # type: ignore[arg-type]
        calendar=calendar,
        brief_date=TODAY,
        tz=ZoneInfo(tz),
        task_cap=20,
    )


def _call(env: tools.ToolEnv, args: Any) -> tuple[Any, bool]:
    return call_tool("read_calendar", env, args)


def _ics(tz: str = "Europe/Berlin") -> IcsCalendar:
    return IcsCalendar("family", path=FIXTURES / "recurrence.ics", tz=ZoneInfo(tz))


def test_start_and_end_read_an_explicit_range_of_days(store: Store) -> None:
    result, is_error = _call(_env(store, _ics()), {"start": "2026-11-05", "end": "2026-11-06"})
    assert not is_error
    assert [(e["title"], e["start"]) for e in result["events"]] == [
        ("Team standup (moved)", "2026-11-05T11:00:00+01:00"),
        ("Team standup", "2026-11-06T09:30:00+01:00"),
    ]
    moved, cancelled = result["events"]
    assert moved["source"] == "family" and moved["id"].startswith("family:")
    assert moved["id"] != cancelled["id"]
    assert "status" not in moved and cancelled["status"] == "cancelled"


def test_start_alone_is_one_day_and_the_source_is_asked_for_that_range(store: Store) -> None:
    calendar = FakeCalendar([])
    _call(_env(store, calendar), {"start": "2026-11-04"})
    _call(_env(store, calendar), {"range": "week"})
    _call(_env(store, calendar), {"range": "today"})
    assert calendar.asked == [
        (dt.date(2026, 11, 4), dt.date(2026, 11, 4)),
        (TODAY, dt.date(2026, 11, 11)),
        (TODAY, TODAY),
    ]


def test_all_day_events_are_flagged_dates_with_an_exclusive_end(store: Store) -> None:
    calendar = IcsCalendar("home", path=FIXTURES / "allday.ics", tz=ZoneInfo("Asia/Tokyo"))
    result, _ = _call(_env(store, calendar, "Asia/Tokyo"), {"range": "today"})
    assert [(e["title"], e["start"], e["end"], e["all_day"]) for e in result["events"]] == [
        ("Conference", "2026-11-04", "2026-11-07", True),
        ("Public holiday", "2026-11-05", "2026-11-06", True),
        ("Sam's birthday", "2026-11-05", "2026-11-06", True),
    ]


@pytest.mark.parametrize(
    ("args", "error"),
    [
        ({}, "give 'range' (today or week) or a 'start' date"),
        ({"range": "today", "start": "2026-11-05"}, "either 'range' or 'start'/'end', not both"),
        ({"end": "2026-11-05"}, "give 'range' (today or week) or a 'start' date"),
        ({"start": "2026-11-31"}, "'start' must be a real date as YYYY-MM-DD"),
        ({"start": "20261105"}, "'start' must be a real date as YYYY-MM-DD"),
        ({"start": "2026-11-06", "end": "2026-11-05"}, "'end' (2026-11-05) is before 'start'"),
        ({"start": "2026-01-01", "end": "2026-12-31"}, "a range may span at most 62 days"),
        ({"start": 20261105}, "'start' must be a string"),
    ],
)
def test_bad_ranges_are_errors_the_model_can_act_on(
    store: Store, args: dict[str, Any], error: str
) -> None:
    text, is_error = _call(_env(store, FakeCalendar([])), args)
    assert is_error and error in text


def test_a_failing_source_is_an_error_result_naming_it(store: Store) -> None:
    failing = FakeCalendar(
        [], SourceUnreadable("work", "no answer from https://x.example/… in 5 s")
    )
    text, is_error = _call(_env(store, failing), {"range": "today"})
    assert is_error
    assert text == (
        "Error: source 'work' could not be read: no answer from https://x.example/… in 5 s"
    )


def test_the_result_is_capped(store: Store) -> None:
    start = dt.datetime(2026, 11, 5, 8, tzinfo=dt.UTC)
    many = [
        {
            "id": f"big:{i:04d}",
            "title": "T" * 5000,
            "start": (start + dt.timedelta(seconds=i)).isoformat(),
            "end": (start + dt.timedelta(seconds=i + 60)).isoformat(),
            "description": "D" * 100_000,
            "location": "L" * 5000,
            "attendees": [{"name": f"person {n}", "address": ""} for n in range(1000)],
        }
        for i in range(5000)
    ]
    result, is_error = _call(_env(store, FakeCalendar(many)), {"range": "today"})
    assert not is_error
    # Everything fits the limit on any tool result: descriptions dropped, then the latest events.
    assert len(tools.result_text(result)) <= tools.MAX_RESULT_CHARS
    shown = result["events"]
    assert 0 < len(shown) < tools.MAX_EVENTS and result["more"] == 5000 - len(shown)
    assert [e["id"] for e in shown] == [f"big:{i:04d}" for i in range(len(shown))]
    assert "description" not in shown[0] and "ask for fewer days" in result["note"]
    first = shown[0]
    assert len(first["title"]) == 200 and first["title"].endswith("…")
    assert len(first["location"]) == 200
    assert first["attendees"][-1] == {"name": "person 19"} and len(first["attendees"]) == 20
    assert first["attendees_more"] == 980


def test_a_busy_but_plain_week_is_shown_whole_up_to_100_events(store: Store) -> None:
    start = dt.datetime(2026, 11, 5, 8, tzinfo=dt.UTC)
    plain = [
        {
            "id": f"e:{i:03d}",
            "title": f"Meeting {i}",
            "start": (start + dt.timedelta(minutes=i)).isoformat(),
            "end": (start + dt.timedelta(minutes=i + 30)).isoformat(),
            "description": "Agenda: " + "x" * 100,
        }
        for i in range(150)
    ]
    result, _ = _call(_env(store, FakeCalendar(plain)), {"range": "today"})
    assert len(result["events"]) == tools.MAX_EVENTS and result["more"] == 50
    assert all(e["description"].startswith("Agenda") for e in result["events"])
    assert "note" not in result


def test_the_bundled_json_calendar_reads_as_before(store: Store) -> None:
    calendar = JsonCalendar(None, TODAY, tz=ZoneInfo("UTC"))
    result, _ = _call(_env(store, calendar, "UTC"), {"range": "today"})
    assert result["events"] and all(set(e) <= {"id", "title", "start", "end", "location",
                                                "attendees"} for e in result["events"])  # fmt: skip


def test_events_show_people_the_users_answer_free_and_the_days_conflicts(store: Store) -> None:
    def event(eid: str, start: str, end: str, **fields: Any) -> dict[str, Any]:
        return {"id": eid, "title": eid, "start": f"2026-11-05T{start}:00+01:00",
                "end": f"2026-11-05T{end}:00+01:00", **fields}  # fmt: skip

    review = event(
        "review",
        "10:00",
        "11:00",
        location="Room 2",
        attendees=[
            {"name": "Sam Okafor", "address": "sam@partner.example"},
            {"name": "", "address": "alex@example.org"},
        ],
        organizer={"name": "Sam Okafor", "address": "sam@partner.example"},
        response="accepted",
    )
    events = [
        review,
        event("call", "10:30", "11:30", response="tentative"),
        event("lunch", "10:45", "11:15", response="declined"),
        event("focus", "10:00", "12:00", free=True),
        event("visit", "11:30", "12:30", location="Client site, Main St"),
    ]
    result, _ = _call(_env(store, FakeCalendar(events)), {"range": "today"})
    shown = {e["id"]: e for e in result["events"]}
    assert shown["review"]["attendees"] == [
        {"name": "Sam Okafor", "address": "sam@partner.example"},
        {"address": "alex@example.org"},
    ]
    assert shown["review"]["organizer"] == {"name": "Sam Okafor", "address": "sam@partner.example"}
    assert shown["review"]["response"] == "accepted" and shown["focus"]["free"] is True
    assert shown["lunch"]["response"] == "declined"
    # The declined lunch and the free focus time clash with nothing; the call and the review
    # overlap; the call ends where the visit starts, but a call is in no place.
    assert [(c["kind"], c["events"]) for c in result["conflicts"]] == [
        ("overlap", ["review", "call"])
    ]
    assert "conflicts_more" not in result
