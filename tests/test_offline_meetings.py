"""The offline model's meeting lines (`providers/offline/_meetings`): today's conflicts, the prep
lines under each event, and the mark of an event that takes no time."""

from __future__ import annotations

import datetime as dt
from typing import Any

from dayflow.providers.offline._conversation import Call
from dayflow.providers.offline._meetings import (
    conflict_lines,
    event_mark,
    prep_lines,
)

TODAY = dt.date(2026, 11, 18)


def _at(hm: str, day: str = "2026-11-18") -> str:
    return f"{day}T{hm}:00+01:00"


def _calendar(span: str, result: dict[str, Any]) -> Call:
    return Call("read_calendar", {"range": span}, result, None)


def test_todays_conflicts_are_one_line_each() -> None:
    result = {
        "events": [],
        "conflicts": [
            {"kind": "travel", "events": ["a", "b"], "titles": ["Review", "1:1 with Dana"],
             "start": _at("11:00"), "end": _at("11:00"), "places": ["Partner office", "Room 2"],
             "gap_minutes": 0},
            {"kind": "overlap", "events": ["c", "d"], "titles": ["Design review", "Dentist"],
             "start": _at("14:30"), "end": _at("15:00")},
            {"kind": "overlap", "events": ["e", "f"], "titles": ["Tomorrow", "Also"],
             "start": _at("09:00", "2026-11-19"), "end": _at("10:00", "2026-11-19")},
        ],
    }  # fmt: skip
    assert conflict_lines([_calendar("week", result)], TODAY) == [
        "- Conflict: Review ends at 11:00 in Partner office and 1:1 with Dana starts at 11:00 in "
        "Room 2: no time to get there.",
        "- Conflict: Design review and Dentist overlap, 14:30–15:00.",
    ]


def test_conflicts_are_worked_out_again_from_a_compacted_calendar_read() -> None:
    """A compaction summary keeps the events (with response and free), not the conflicts."""
    events = [
        {"id": "a", "title": "Review", "start": _at("10:00"), "end": _at("11:00")},
        {"id": "b", "title": "Budget", "start": _at("10:30"), "end": _at("11:30")},
        {"id": "c", "title": "Offsite", "start": _at("10:30"), "end": _at("11:30"),
         "response": "declined"},
    ]  # fmt: skip
    lines = conflict_lines([_calendar("today", {"events": events})], TODAY)
    assert lines == ["- Conflict: Review and Budget overlap, 10:30–11:00."]


def test_no_calendar_read_or_a_failed_one_gives_no_conflict_lines() -> None:
    assert conflict_lines([], TODAY) == []
    failed = Call("read_calendar", {"range": "today"}, None, "source 'work' could not be read")
    assert conflict_lines([failed], TODAY) == []


def test_prep_lines_list_threads_then_open_tasks_under_their_event() -> None:
    sam = {"name": "Sam Okafor", "address": "sam@partner.example"}
    threads = [
        {"key": "thread:1", "subject": "Q4\n one-pager", "latest_at": _at("16:12", "2026-11-16"),
         "latest_from": sam},
        {"key": "thread:2", "subject": "Contract", "latest_at": _at("09:00", "2026-11-10"),
         "latest_from_me": True},
    ]  # fmt: skip
    task = {"id": "t_1", "title": "Send edits to Sam", "due": "2026-11-19", "key": "mail:1"}
    prep = {
        "events": [
            {"id": "review", "title": "Review", "with": [sam], "threads": threads,
             "threads_more": 2, "tasks": [task]},
            {"id": "lunch", "title": "Lunch", "with": [{"name": "Marco"}], "threads": [],
             "tasks": []},
        ]
    }  # fmt: skip
    lines = prep_lines([Call("read_prep", {}, prep, None)])
    assert lines == {
        "review": [
            '  - Mail: "Q4 one-pager" (latest from Sam Okafor, Mon 16 Nov)',
            '  - Mail: "Contract" (latest from you, Tue 10 Nov)',
            "  - and 2 older threads with them",
            "  - Open task: Send edits to Sam (due Thu 19 Nov)",
        ]
    }
    assert prep_lines([Call("read_prep", {}, None, "the inbox could not be read")]) == {}


def test_one_more_thread_or_task_is_said_in_the_singular() -> None:
    prep = {
        "events": [
            {"id": "sync", "title": "Sync", "with": [{"name": "Ben"}], "threads": [],
             "threads_more": 1, "tasks": [], "tasks_more": 1},
        ]
    }  # fmt: skip
    assert prep_lines([Call("read_prep", {}, prep, None)]) == {
        "sync": ["  - and 1 older thread with them", "  - and 1 more open task from their mail"]
    }


def test_an_event_that_takes_no_time_says_why() -> None:
    assert event_mark({"status": "cancelled", "response": "declined"}) == " (cancelled)"
    assert event_mark({"response": "declined"}) == " (declined)"
    assert event_mark({"free": True}) == " (free)"
    assert event_mark({"response": "tentative"}) == ""
