"""The calendar's text before parsing: which components a range parses, and what is dropped or
refused on the way (nesting, huge lines, date floods), each named."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from zoneinfo import ZoneInfo

from hypothesis import given, settings
from hypothesis import strategies as st

from dayflow.sources import IcsCalendar, ical_text
from dayflow.sources.ical import CalendarData

D = dt.date.fromisoformat


def _vevent(uid: str, *lines: str) -> str:
    return "\r\n".join(["BEGIN:VEVENT", f"UID:{uid}", *lines, "END:VEVENT"])


def _cal(*events: str) -> str:
    return "\r\n".join(["BEGIN:VCALENDAR", "VERSION:2.0", *events, "END:VCALENDAR"]) + "\r\n"


TEXT = _cal(
    _vevent("far@x", "DTSTART:20250101T090000Z", "SUMMARY:Long ago"),
    _vevent("near@x", "DTSTART:20261106T090000Z", "SUMMARY:This week"),
    _vevent("weekly@x", "DTSTART:20200101T090000Z", "RRULE:FREQ=WEEKLY", "SUMMARY:Weekly"),
    _vevent("trip@x", "DTSTART;VALUE=DATE:20261020", "DTEND;VALUE=DATE:20261110", "SUMMARY:Trip"),
    _vevent("retreat@x", "DTSTART:20261101T090000Z", "DURATION:P9D", "SUMMARY:Retreat"),
    _vevent("moved@x", "RECURRENCE-ID:20261104T090000Z", "DTSTART:20261201T090000Z"),
    _vevent("nostart@x", "SUMMARY:No start"),
)


def test_a_range_parses_only_the_components_that_can_touch_it() -> None:
    text = ical_text.select(ical_text.index(TEXT), D("2026-11-03"), D("2026-11-13"))
    assert "Long ago" not in text
    for kept in ("This week", "Weekly", "Trip", "Retreat", "moved@x", "No start"):
        assert kept in text  # in range, recurring, spanning it, or not datable: parsed
    everything = ical_text.select(ical_text.index(TEXT), dt.date.min, dt.date.max)
    assert "Long ago" in everything


def test_events_spanning_into_the_range_from_far_before_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "c.ics"
    path.write_text(TEXT)
    calendar = IcsCalendar("home", path=path, tz=ZoneInfo("Europe/Berlin"))
    titles = [e["title"] for e in calendar.events(D("2026-11-05"), D("2026-11-11"))]
    assert titles == ["Trip", "Retreat", "This week", "Weekly"]


def test_each_range_is_parsed_once_and_given_as_fresh_copies() -> None:
    data = CalendarData(TEXT, source="home", tz=dt.UTC)
    first = data.read(D("2026-11-05"), D("2026-11-11"))
    first.events[0]["title"] = "changed by a caller"
    again = data.read(D("2026-11-05"), D("2026-11-11"))
    assert again.events[0]["title"] == "Trip"
    assert {e["title"] for e in data.read(D("2025-01-01"), D("2025-01-01")).events} == {
        "Long ago",
        "Weekly",
    }


def test_a_file_is_read_once_per_source_object(tmp_path: Path) -> None:
    """The index outlives the file: later ranges of the same run need no second read."""
    path = tmp_path / "c.ics"
    path.write_text(TEXT)
    calendar = IcsCalendar("home", path=path, tz=dt.UTC)
    assert calendar.events(D("2026-11-05"), D("2026-11-05")) != []
    path.unlink()
    assert {e["title"] for e in calendar.events(D("2025-01-01"), D("2025-01-01"))} == {
        "Long ago",
        "Weekly",
    }


def test_one_off_events_sharing_a_uid_keep_their_ids_in_every_range() -> None:
    text = _cal(
        _vevent("dup@x", "DTSTART:20261020T090000Z", "SUMMARY:First"),
        _vevent("dup@x", "DTSTART:20261106T090000Z", "SUMMARY:Second"),
    )
    data = CalendarData(text, source="home", tz=dt.UTC)
    whole = {e["title"]: e["id"] for e in data.read(D("2026-10-01"), D("2026-11-30")).events}
    week = {e["title"]: e["id"] for e in data.read(D("2026-11-05"), D("2026-11-11")).events}
    assert week == {"Second": whole["Second"]} and whole["First"] != whole["Second"]
    assert week["Second"] == data.read(D("2026-11-06"), D("2026-11-06")).events[0]["id"]


def test_too_deep_nesting_is_dropped_and_a_file_cut_short_is_closed() -> None:
    deep = "\r\n".join([f"BEGIN:X{i}" for i in range(50)] + [f"END:X{i}" for i in range(50)])
    items = ical_text.index(_cal(deep, _vevent("a@x", "DTSTART:20261106T090000Z")))
    text = ical_text.select(items, dt.date.min, dt.date.max)
    assert f"BEGIN:X{ical_text.MAX_DEPTH}" not in text and "BEGIN:X0" in text
    cut = ical_text.index("BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:a\r\nDTSTART:20261106")
    assert ical_text.select(cut, dt.date.min, dt.date.max).endswith(
        "END:VEVENT\r\nEND:VCALENDAR\r\n"
    )


def test_a_huge_text_line_is_cut_and_a_huge_rule_or_date_list_refuses_its_event() -> None:
    folded = "DESCRIPTION:" + "\r\n ".join(["x" * 70] * 20_000)  # 1.4 MB, folded
    rule = "RRULE:FREQ=DAILY;BYHOUR=" + ",".join(["9"] * 50_000)
    dates = "RDATE:" + ",".join(["20261106T090000Z"] * (ical_text.MAX_DATES + 1))
    items = ical_text.index(
        _cal(
            _vevent("long@x", "DTSTART:20261106T090000Z", folded),
            _vevent("rule@x", "DTSTART:20261106T090000Z", rule, "SUMMARY:Rule\\, huge"),
            _vevent("dates@x", "DTSTART:20261106T090000Z", dates, "SUMMARY:Dates"),
        )
    )
    blocks = [item for item in items if isinstance(item, ical_text.Block)]
    assert len(blocks[0].text) < ical_text.MAX_LINE + 200
    assert (blocks[1].title, blocks[1].refused) == (
        "Rule, huge",
        "not read: its RRULE line is over 97 KB",
    )
    assert blocks[2].refused == "not read: it lists 5,001 RDATE/EXDATE dates"


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="\r\n \tab:", max_size=40))
def test_unfolding_equals_icalendars_on_any_text_and_its_bytes(text: str) -> None:
    """The fast unfolding (literal replacements unless blank lines precede a continuation) is
    icalendar's regex exactly, on text and on bytes."""
    from icalendar.parser.content_line import UFOLD

    assert ical_text.unfold(text) == UFOLD.sub("", text)
    assert ical_text.decode(text.encode()) == UFOLD.sub("", text)


def test_a_folded_first_part_without_a_colon_is_joined_not_dropped() -> None:
    """Google folds ATTENDEE inside its parameters: the part before the fold has no ':'. It is
    joined with its continuation, and the property before it is left as it was."""
    text = _cal(
        "\r\n".join(
            [
                "BEGIN:VEVENT",
                "UID:g@google.com",
                "DTSTART:20261118T090000Z",
                "SUMMARY:Review",
                "ATTENDEE;CUTYPE=INDIVIDUAL;ROLE=REQ-PARTICIPANT;PARTSTAT=ACCEPTED;CN=Ben Ca",
                " rter;X-NUM-GUESTS=0:mailto:ben@example.com",
                "END:VEVENT",
            ]
        )  # fmt: skip
    )
    chosen = ical_text.select(ical_text.index(text), D("2026-11-18"), D("2026-11-18"))
    assert "SUMMARY:Review\r\n" in chosen
    assert (
        "ATTENDEE;CUTYPE=INDIVIDUAL;ROLE=REQ-PARTICIPANT;PARTSTAT=ACCEPTED;CN=Ben Carter;"
        "X-NUM-GUESTS=0:mailto:ben@example.com\r\n" in chosen
    )


def test_content_lines_split_at_the_first_colon_outside_quotes() -> None:
    assert ical_text.split("SUMMARY:a:b") == ("SUMMARY", "", "a:b")
    assert ical_text.split('ATTENDEE;CN="Carter: Ben; Jr, Dr":mailto:b@x') == (
        "ATTENDEE",
        'CN="Carter: Ben; Jr, Dr"',
        "mailto:b@x",
    )
    assert ical_text.split("dtStart ;TZID=Europe/Berlin:20261118T090000") == (
        "DTSTART",
        "TZID=Europe/Berlin",
        "20261118T090000",
    )
    assert ical_text.split('X-A;P="no end:here') is None
    assert ical_text.split("ATTENDEE;CN=Ben Ca") is None
