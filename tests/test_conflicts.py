"""Clashes in a day (`meetings.conflicts`): busy events that overlap, back-to-back events in
different physical places, what takes no time, what is not a place, and a hostile day."""

from __future__ import annotations

from typing import Any

import pytest

from dayflow.meetings import MAX_CONFLICTS, conflicts, place


def _event(eid: str, start: str, end: str, **fields: Any) -> dict[str, Any]:
    day = "2026-11-05T"
    return {"id": eid, "title": eid.title(), "start": f"{day}{start}:00+01:00",
            "end": f"{day}{end}:00+01:00", **fields}  # fmt: skip


def _clash(kind: str, a: str, b: str, start: str, end: str, **fields: Any) -> dict[str, Any]:
    """The clash `conflicts` reports between events `a` and `b` (as `_event` made them)."""
    day = "2026-11-05T"
    return {"kind": kind, "events": [a, b], "titles": [a.title(), b.title()],
            "start": f"{day}{start}:00+01:00", "end": f"{day}{end}:00+01:00", **fields}  # fmt: skip


def test_busy_events_that_overlap_are_one_clash_each_pair() -> None:
    events = [
        _event("standup", "09:30", "09:45"),
        _event("review", "10:00", "11:00"),
        _event("call", "10:30", "11:30"),
        _event("lunch", "11:30", "12:30"),  # starts as the call ends: no overlap
    ]
    assert conflicts(events) == ([_clash("overlap", "review", "call", "10:30", "11:00")], 0)


@pytest.mark.parametrize(
    "fields",
    [{"status": "cancelled"}, {"free": True}, {"response": "declined"}, {"all_day": True}],
)
def test_what_takes_no_time_clashes_with_nothing(fields: dict[str, Any]) -> None:
    events = [_event("review", "10:00", "11:00"), _event("other", "10:15", "10:45", **fields)]
    if fields.get("all_day"):
        events[1].update(start="2026-11-05", end="2026-11-06")
    assert conflicts(events) == ([], 0)


def test_tentative_and_unanswered_events_hold_time() -> None:
    events = [
        _event("review", "10:00", "11:00", response="tentative"),
        _event("other", "10:15", "10:45", response="needs-action"),
    ]
    assert [c["events"] for c in conflicts(events)[0]] == [["review", "other"]]


def test_back_to_back_in_different_physical_places_is_a_travel_clash() -> None:
    events = [
        _event("one", "09:00", "10:00", location="Room 2, HQ"),
        _event("two", "10:00", "11:00", location="Cafe Nero, High St"),
        _event("three", "11:10", "12:00", location="https://zoom.us/j/123"),  # not a place
        _event("four", "12:00", "13:00", location="Cafe Nero, High St"),
        _event("five", "13:00", "14:00", location="cafe nero,  high st"),  # the same place
        _event("six", "14:30", "15:00", location="Room 9"),  # 30 minutes later: not back to back
    ]
    places = ["Room 2, HQ", "Cafe Nero, High St"]
    travel = _clash("travel", "one", "two", "10:00", "10:00", places=places, gap_minutes=0)
    assert conflicts(events) == ([travel], 0)


def test_a_short_gap_still_counts_as_back_to_back() -> None:
    events = [
        _event("one", "09:00", "10:00", location="Office"),
        _event("two", "10:15", "11:00", location="Client site"),
    ]
    [clash] = conflicts(events)[0]
    assert clash["kind"] == "travel" and clash["gap_minutes"] == 15
    events[1].update(start="2026-11-05T10:16:00+01:00")
    assert conflicts(events) == ([], 0)


@pytest.mark.parametrize(
    ("location", "expected"),
    [
        ("Room 4", "Room 4"),
        ("Dana's office", "Dana's office"),
        ("Room 2; https://meet.google.com/abc-defg-hij", "Room 2"),
        ("https://zoom.us/j/123?pwd=x", None),
        ("meet.google.com/abc-defg-hij", None),
        ("Microsoft Teams Meeting", None),
        ("Zoom", None),
        ("Online", None),
        ("Phone call", None),
        ("tel:+15551234", None),
        ("Meeting ID: 123 456 789 Passcode: abc", None),
        ("", None),
        (None, None),
    ],
)
def test_a_video_link_or_a_call_is_not_a_place(location: str | None, expected: str | None) -> None:
    assert place(location) == expected


def test_clashes_are_listed_earliest_first_whatever_their_kind() -> None:
    events = [
        _event("a", "09:00", "10:00", location="Room 1"),
        _event("b", "10:00", "10:30", location="Room 7"),
        _event("c", "10:00", "10:20"),
        _event("d", "08:00", "08:30"),
        _event("e", "08:15", "08:45"),
    ]
    found, _ = conflicts(events)
    assert [(c["kind"], c["events"]) for c in found] == [
        ("overlap", ["d", "e"]),
        ("overlap", ["c", "b"]),  # ordered by end: c ends first
        ("travel", ["a", "b"]),  # c, starting with b, is in no place
    ]


def test_a_day_of_thousands_of_clashing_events_lists_twenty_and_counts_the_rest() -> None:
    """10,000 events at the same hour: 49,995,000 overlapping pairs, swept, not enumerated."""
    events = [_event(f"e{n:05d}", "09:00", "10:00") for n in range(10_000)]
    found, more = conflicts(events)
    assert len(found) == MAX_CONFLICTS
    assert more == 10_000 * 9_999 // 2 - MAX_CONFLICTS
    assert found[0]["events"] == ["e00000", "e00001"]


def test_events_with_unreadable_times_are_skipped() -> None:
    events = [_event("a", "09:00", "10:00"), {"id": "b", "start": "soon", "end": "later"}]
    assert conflicts(events) == ([], 0)
