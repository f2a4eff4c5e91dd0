"""Real-calendar correctness: each fixture in tests/ical/ with the events it must give.

The expected values are written out by hand from the fixture and the zone rules (EU summer time
ends 2026-10-25, US on 2026-11-01), not produced by the code under test.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from dayflow.errors import SourceError, SourceUnreadable
from dayflow.sources import IcsCalendar

FIXTURES = Path(__file__).parent / "ical"
D = dt.date.fromisoformat


def _events(name: str, tz: str, first: str, last: str | None = None) -> list[dict[str, Any]]:
    calendar = IcsCalendar("home", path=FIXTURES / f"{name}.ics", tz=ZoneInfo(tz))
    return calendar.events(D(first), D(last or first))


def _when(events: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    return [(e["title"], e["start"], e["end"]) for e in events]


def test_rrule_exdate_rdate_moved_and_cancelled_occurrences() -> None:
    events = _events("recurrence", "Europe/Berlin", "2026-11-02", "2026-11-08")
    assert _when(events) == [
        ("Team standup", "2026-11-02T09:30:00+01:00", "2026-11-02T09:45:00+01:00"),
        ("Team standup", "2026-11-03T09:30:00+01:00", "2026-11-03T09:45:00+01:00"),
        # Wednesday's standup is an EXDATE: gone. The dentist is a one-off.
        ("Dentist", "2026-11-04T15:00:00+01:00", "2026-11-04T16:00:00+01:00"),
        # Thursday's occurrence was moved to 11:00 (RECURRENCE-ID override).
        ("Team standup (moved)", "2026-11-05T11:00:00+01:00", "2026-11-05T11:15:00+01:00"),
        # Friday's occurrence is cancelled: kept, and marked.
        ("Team standup", "2026-11-06T09:30:00+01:00", "2026-11-06T09:45:00+01:00"),
        # Saturday's extra one comes from RDATE (with the series' 15 minutes).
        ("Team standup", "2026-11-07T10:00:00+01:00", "2026-11-07T10:15:00+01:00"),
    ]
    assert [e["status"] for e in events] == ["confirmed"] * 4 + ["cancelled", "confirmed"]
    assert events[3]["location"] == "Room 2" and events[0]["location"] == "Room 4"
    assert events[2]["attendees"] == [
        {"name": "Dr. Ana Ruiz", "address": "ana@clinic.example"},
        {"name": "", "address": "me@example.org"},
    ]
    assert all(e["source"] == "home" and e["all_day"] is False for e in events)
    ids = [e["id"] for e in events]
    assert len(set(ids)) == len(ids) and all(re.fullmatch(r"home:[0-9a-f]{12}", i) for i in ids)


def test_an_occurrence_keeps_its_id_when_moved_and_a_one_off_when_edited(tmp_path: Path) -> None:
    text = (FIXTURES / "recurrence.ics").read_text()
    first, last = D("2026-11-02"), D("2026-11-08")
    before = {
        e["start"][:10]: e["id"] for e in _events("recurrence", "UTC", "2026-11-02", "2026-11-08")
    }
    blocks = text.split("BEGIN:VEVENT")
    # Without the override, Thursday's occurrence is back at 09:30 under the same id.
    unmoved = "BEGIN:VEVENT".join(
        b for b in blocks if "RECURRENCE-ID;TZID=Europe/Berlin:20261105" not in b
    )
    # Moving the one-off dentist by an hour does not make it a new event.
    moved = text.replace("20261104T160000", "20261104T170000").replace(
        "20261104T150000", "20261104T160000"
    )
    for variant in (unmoved, moved):
        assert variant != text
        path = tmp_path / "variant.ics"
        path.write_text(variant)
        after = IcsCalendar("home", path=path, tz=ZoneInfo("UTC")).events(first, last)
        assert {e["start"][:10]: e["id"] for e in after} == before


def test_a_recurring_event_keeps_its_wall_clock_time_across_dst() -> None:
    assert _when(_events("dst", "America/New_York", "2026-10-19", "2026-11-08")) == [
        ("New York weekly", "2026-10-20T09:00:00-04:00", "2026-10-20T09:30:00-04:00"),
        ("New York weekly", "2026-10-27T09:00:00-04:00", "2026-10-27T09:30:00-04:00"),
        ("New York weekly", "2026-11-03T09:00:00-05:00", "2026-11-03T09:30:00-05:00"),
    ]
    # Seen from London, where the clocks changed a week earlier: 14:00, 13:00, 14:00.
    assert _when(_events("dst", "Europe/London", "2026-10-19", "2026-11-08")) == [
        ("New York weekly", "2026-10-20T14:00:00+01:00", "2026-10-20T14:30:00+01:00"),
        ("New York weekly", "2026-10-27T13:00:00+00:00", "2026-10-27T13:30:00+00:00"),
        ("New York weekly", "2026-11-03T14:00:00+00:00", "2026-11-03T14:30:00+00:00"),
    ]


def test_all_day_events_are_dates_with_an_exclusive_end_in_any_zone() -> None:
    for tz in ("Asia/Tokyo", "America/Los_Angeles"):
        events = _events("allday", tz, "2026-11-05")
        assert [(e["title"], e["start"], e["end"], e["all_day"]) for e in events] == [
            ("Conference", "2026-11-04", "2026-11-07", True),
            ("Public holiday", "2026-11-05", "2026-11-06", True),
            # No DTEND on a date: one day. The yearly rule is expanded from 1990.
            ("Sam's birthday", "2026-11-05", "2026-11-06", True),
        ]
    # The end is exclusive: the conference is still on on the 6th, over on the 7th.
    assert [e["title"] for e in _events("allday", "UTC", "2026-11-06")] == ["Conference"]
    assert _events("allday", "UTC", "2026-11-07") == []


def test_floating_times_are_read_in_the_users_timezone() -> None:
    assert _when(_events("floating", "Asia/Tokyo", "2026-11-05")) == [
        ("Morning run", "2026-11-05T07:00:00+09:00", "2026-11-05T08:00:00+09:00")
    ]
    assert _when(_events("floating", "America/New_York", "2026-11-05")) == [
        ("Morning run", "2026-11-05T07:00:00-05:00", "2026-11-05T08:00:00-05:00")
    ]


def test_google_x_wr_timezone_keeps_the_calendars_wall_clock_across_dst() -> None:
    # Google writes 10:00 Berlin as 08:00Z; a weekly rule must stay at 10:00 Berlin after the
    # change (09:00Z), not drift to 09:00 Berlin. Floating times are the calendar's zone, too.
    assert _when(_events("google", "Europe/Berlin", "2026-10-19", "2026-11-08")) == [
        ("Piano lesson", "2026-10-20T10:00:00+02:00", "2026-10-20T11:00:00+02:00"),
        ("Piano lesson", "2026-10-27T10:00:00+01:00", "2026-10-27T11:00:00+01:00"),
        ("Piano lesson", "2026-11-03T10:00:00+01:00", "2026-11-03T11:00:00+01:00"),
        ("Call the bank", "2026-11-05T09:00:00+01:00", "2026-11-05T09:30:00+01:00"),
    ]
    # Shown in New York: the same instants.
    assert _when(_events("google", "America/New_York", "2026-11-05")) == [
        ("Call the bank", "2026-11-05T03:00:00-05:00", "2026-11-05T03:30:00-05:00"),
    ]


def test_outlook_windows_zone_names_with_and_without_a_vtimezone() -> None:
    assert _when(_events("outlook", "Europe/Berlin", "2026-10-19", "2026-11-08")) == [
        ("Steering committee", "2026-10-20T09:00:00+02:00", "2026-10-20T10:00:00+02:00"),
        ("Steering committee", "2026-10-27T09:00:00+01:00", "2026-10-27T10:00:00+01:00"),
        ("Steering committee", "2026-11-03T09:00:00+01:00", "2026-11-03T10:00:00+01:00"),
        # "Pacific Standard Time" with no VTIMEZONE in the file: 08:00 PST is 17:00 in Berlin.
        ("Call with Seattle", "2026-11-05T17:00:00+01:00", "2026-11-05T17:30:00+01:00"),
    ]


def test_events_without_dtend_use_duration_or_are_instants() -> None:
    assert _when(_events("noend", "Europe/Lisbon", "2026-11-05")) == [
        ("Interview", "2026-11-05T14:00:00+00:00", "2026-11-05T14:45:00+00:00"),
        ("Parcel arrives", "2026-11-05T16:00:00+00:00", "2026-11-05T16:00:00+00:00"),
    ]


def test_a_range_keeps_events_that_overlap_it_in_the_users_day() -> None:
    # 14:00Z is 23:00 on the 5th in Tokyo; 16:00Z is 01:00 on the 6th.
    assert [e["title"] for e in _events("noend", "Asia/Tokyo", "2026-11-05")] == ["Interview"]
    assert [e["title"] for e in _events("noend", "Asia/Tokyo", "2026-11-06")] == ["Parcel arrives"]
    # An event that started the day before and runs into the range is in it.
    assert [e["title"] for e in _events("allday", "UTC", "2026-11-06")] == ["Conference"]


def test_a_malformed_file_is_read_best_effort() -> None:
    # A junk line, a series with a broken RRULE, an event with no start, one with a garbage start.
    assert _when(_events("malformed", "UTC", "2026-11-05")) == [
        ("Still readable", "2026-11-05T10:00:00+00:00", "2026-11-05T11:00:00+00:00"),
        ("After the junk line", "2026-11-05T13:00:00+00:00", "2026-11-05T13:30:00+00:00"),
    ]


def test_a_file_cut_short_still_gives_its_complete_events(tmp_path: Path) -> None:
    text = (FIXTURES / "noend.ics").read_text()
    path = tmp_path / "cut.ics"
    path.write_text(text[: text.index("END:VEVENT") + len("END:VEVENT")])
    calendar = IcsCalendar("home", path=path, tz=ZoneInfo("UTC"))
    assert [e["title"] for e in calendar.events(D("2026-11-05"), D("2026-11-05"))] == ["Interview"]


def test_a_windows_1252_file_is_read(tmp_path: Path) -> None:
    text = (FIXTURES / "noend.ics").read_text().replace("Interview", "Entretien café")
    path = tmp_path / "legacy.ics"
    path.write_bytes(text.encode("cp1252"))
    calendar = IcsCalendar("home", path=path, tz=ZoneInfo("UTC"))
    assert calendar.events(D("2026-11-05"), D("2026-11-05"))[0]["title"] == "Entretien café"


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"", "not an iCalendar file (it starts with nothing: it is empty)"),
        (b"<!DOCTYPE html><html>Sign in", "not an iCalendar file (it starts with '<!DOCTYPE html>"),
        (b"\x00\x01\x02", "not an iCalendar file"),
    ],
)
def test_what_is_not_icalendar_fails_with_one_line_naming_the_source(
    tmp_path: Path, content: bytes, reason: str
) -> None:
    path = tmp_path / "bad.ics"
    path.write_bytes(content)
    with pytest.raises(SourceUnreadable) as caught:
        IcsCalendar("work", path=path, tz=ZoneInfo("UTC")).events(D("2026-11-05"), D("2026-11-05"))
    assert caught.value.source == "work"
    assert str(caught.value).startswith(f"source 'work' could not be read: {reason}")
    assert "\n" not in str(caught.value)


def test_a_missing_file_and_a_directory_name_the_source_and_the_path(tmp_path: Path) -> None:
    for path, reason in ((tmp_path / "gone.ics", "file not found"), (tmp_path, "is a directory")):
        with pytest.raises(SourceUnreadable, match=rf"source 'home'.*{reason}"):
            IcsCalendar("home", path=path, tz=ZoneInfo("UTC")).events(
                D("2026-11-05"), D("2026-11-05")
            )


def test_a_source_needs_exactly_one_of_path_and_url_and_a_web_url() -> None:
    utc = ZoneInfo("UTC")
    with pytest.raises(SourceError, match="exactly one of 'path' or 'url'"):
        IcsCalendar("home", tz=utc)
    with pytest.raises(SourceError, match="exactly one of 'path' or 'url'"):
        IcsCalendar("home", tz=utc, path="a.ics", url="https://example.org/a.ics")
    for url in ("ftp://example.org/a.ics", "file:///etc/passwd", "calendar.ics", "https://"):
        with pytest.raises(SourceError, match="must be an http://, https:// or webcal://"):
            IcsCalendar("home", tz=utc, url=url)
    with pytest.raises(SourceError, match="'timeout' must be a positive"):
        IcsCalendar("home", tz=utc, url="https://example.org/a.ics", timeout=0)


def test_making_a_source_reads_nothing(tmp_path: Path) -> None:
    """resume builds sources for every step: only `events()` may touch the file or network."""
    IcsCalendar("home", path=tmp_path / "not-yet.ics", tz=ZoneInfo("UTC"))
    IcsCalendar("home", url="http://127.0.0.1:9/never.ics", tz=ZoneInfo("UTC"))


def test_without_a_range_a_source_reads_the_week_from_its_today() -> None:
    calendar = IcsCalendar(
        "home", path=FIXTURES / "recurrence.ics", tz=ZoneInfo("UTC"), today=D("2026-11-04")
    )
    assert [e["start"][:10] for e in calendar.events()] == [
        "2026-11-04",
        "2026-11-05",
        "2026-11-06",
        "2026-11-07",
        "2026-11-09",
        "2026-11-10",
    ]
    with pytest.raises(ValueError, match="needs a range"):
        IcsCalendar("home", path=FIXTURES / "recurrence.ics", tz=ZoneInfo("UTC")).events()


def test_a_runaway_rule_is_skipped_and_the_rest_is_read(tmp_path: Path) -> None:
    """FREQ=SECONDLY would make 600,000 occurrences in a week: that series is left out."""
    text = (FIXTURES / "noend.ics").read_text()
    path = tmp_path / "runaway.ics"
    path.write_text(text.replace("DURATION:PT45M", "DURATION:PT45M\nRRULE:FREQ=SECONDLY"))
    calendar = IcsCalendar("home", path=path, tz=ZoneInfo("UTC"))
    assert _when(calendar.events(D("2026-11-05"), D("2026-11-11"))) == [
        ("Parcel arrives", "2026-11-05T16:00:00+00:00", "2026-11-05T16:00:00+00:00")
    ]
    # An hourly rule is a real (if busy) one: kept.
    path.write_text(text.replace("DURATION:PT45M", "DURATION:PT45M\nRRULE:FREQ=HOURLY;COUNT=3"))
    again = IcsCalendar("home", path=path, tz=ZoneInfo("UTC"))
    assert [e["start"][11:16] for e in again.events(D("2026-11-05"), D("2026-11-05"))] == [
        "14:00",
        "15:00",
        "16:00",
        "16:00",
    ]


def test_a_file_over_the_size_limit_is_refused_without_reading_it_all(tmp_path: Path) -> None:
    path = tmp_path / "huge.ics"
    with path.open("wb") as f:
        f.truncate(60 * 1024 * 1024)  # sparse: costs no disk
    with pytest.raises(SourceUnreadable, match=r"huge.ics is larger than 50 MB; refused"):
        IcsCalendar("home", path=path, tz=ZoneInfo("UTC")).events(D("2026-11-05"), D("2026-11-05"))
