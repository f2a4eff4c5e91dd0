"""Dayflow's calendar reader against plain icalendar + recurring-ical-events, field by field.

`dayflow.sources.ical` parses only the events a range can touch, from the text its pre-pass
(`ical_text`) chose. Whatever that pre-pass gets wrong about iCalendar's syntax, the brief gets
wrong without an error (a Google export lost its attendees that way). So every event field the
brief uses (id from UID and RECURRENCE-ID, title, start, end, all-day, location, status,
free/busy, organizer, attendees with their names and addresses, the user's PARTSTAT,
description) must equal what the libraries give for the whole file (`tests/ical_reference.py`),
in several ranges per file, on:

- every calendar file of icalendar's and recurring-ical-events' own test suites
  (`tests/ical_corpus/`, see its README for source, commit and licence);
- exports written to the shapes of Google, Outlook/Exchange, Apple, Fastmail, Proton and
  Nextcloud (`tests/provider_exports.py`).

A file the libraries reject, or that is not a calendar, is not passed over: each is listed in
DIFFERENT with what Dayflow does instead, and that is checked. The whole module (272 cases)
takes about 6 s of CPU (15 s of wall time at a load of 8 on two cores, 2026-12-02); a file
over 100 KB is compared on 2 ranges, not 6.
"""

from __future__ import annotations

import datetime as dt
import re
import warnings
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from dayflow.errors import SourceUnreadable
from dayflow.sources import ical_text
from dayflow.sources.ical import CalendarData
from tests import ical_reference as ref
from tests import provider_exports

CORPUS = Path(__file__).parent / "ical_corpus"
FILES = sorted(str(p.relative_to(CORPUS)) for p in CORPUS.rglob("*.ics"))
TZ = ZoneInfo("Europe/Berlin")
RANGES = 6  # start dates per file, spread over the file's events (2 for a file over 100 KB)

# What the library does not read as a calendar, or reads differently on purpose, and what
# Dayflow does instead (checked below).
UNREADABLE = "Dayflow refuses it: not an iCalendar file"
DIFFERENT: dict[str, tuple[str, str]] = {
    "icalendar/calendars/fuzz_testcase_invalid_month.ics": (
        "refused", "fuzzer output with no VCALENDAR; icalendar raises ValueError"),
    "icalendar/calendars/fuzz_testcase_vtimezone_lone_cr.ics": (
        "refused", "fuzzer output (a lone VTIMEZONE, bare CRs); icalendar raises ValueError"),
    "icalendar/fuzzing/Index_Error.ics": (
        "refused", "fuzzer seed of garbage; icalendar raises ValueError"),
    "icalendar/fuzzing/Type_Error.ics": (
        "refused", "fuzzer seed of garbage; icalendar raises ValueError"),
    "icalendar/calendars/parsing_error_in_UTC_offset.ics": (
        "refused", "a VTIMEZONE offset of +5744; icalendar raises ValueError, Dayflow names it"),
    "icalendar/calendars/issue_104_broken_calendar.ics": (
        "lenient", "a line 'X' at the calendar's level: icalendar rejects the whole file, "
        "Dayflow drops that line (best effort) and reads the event the library reads when the "
        "line is removed"),
    "icalendar/calendars/multiple_timezones.ics": (
        "lenient", "each of its three series has an RDATE;VALUE=TIME (not a legal RDATE type): "
        "recurring-ical-events raises TypeError inside dateutil for the whole calendar; Dayflow "
        "skips each broken series (the library's skip_bad_series rule) without an error"),
    "recurring_ical_events/alarm_absolute_edited.ics": (
        "duplicates", "two one-off VEVENTs share a UID (no RECURRENCE-ID): the library keeps "
        "one, Dayflow keeps each as an event of its own (ical_text's docstring)"),
}  # fmt: skip


def _dayflow(data: bytes, first: dt.date, last: dt.date, reader: CalendarData) -> list[dict]:
    events = reader.read(first, last).events
    for e in events:
        assert e.pop("source") == ref.SOURCE
    return events


def _key(event: dict[str, Any]) -> tuple[str, str, str]:
    return event["start"], event["id"], event["title"]


def _base_ids(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Events with the suffix Dayflow gives a second occurrence under one id taken off (two
    events sharing an id stay two; the library gives them the same UID)."""
    ids = [e["id"] for e in events]
    assert len(set(ids)) == len(ids), "Dayflow's ids are unique within a range"
    return [{**e, "id": re.sub(r"-\d+$", "", e["id"])} for e in events]


def _ranges(parsed: list[Any], size: int = 0) -> list[tuple[dt.date, dt.date]]:
    dates = ref.start_dates(parsed, TZ)
    most = RANGES if size <= 100_000 else 2
    picks = dates[:: max(1, len(dates) // most)][:most]
    return [(d - dt.timedelta(days=1), d + dt.timedelta(days=1)) for d in picks]


def _addresses(events: list[dict[str, Any]]) -> list[str]:
    seen = {a["address"] for e in events for a in e.get("attendees", []) if a["address"]}
    return sorted(seen)[:4]


def _compare(name: str, data: bytes, reference: bytes | None = None) -> int:
    """Check Dayflow against the reference (on `reference`, else the same bytes) on one file;
    the number of events compared."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the library's guesses about vendor TZIDs
        parsed = ref.calendars(data if reference is None else reference)
        compared = 0
        reader = CalendarData(data, source=ref.SOURCE, tz=TZ)
        for first, last in _ranges(parsed, len(data)):
            want = sorted(ref.events(parsed, TZ, first, last, ref.nobody), key=_key)
            got = sorted(_base_ids(_dayflow(data, first, last, reader)), key=_key)
            assert got == want, f"{name} {first}..{last}"
            compared += len(want)
            for address in _addresses(want):  # each attendee's PARTSTAT, as the user's answer
                me = address.__eq__
                mine = CalendarData(data, source=ref.SOURCE, tz=TZ, me=me)
                want = sorted(ref.events(parsed, TZ, first, last, me), key=_key)
                got = sorted(_base_ids(_dayflow(data, first, last, mine)), key=_key)
                assert [e.get("response") for e in got] == [e.get("response") for e in want]
                assert got == want, f"{name} {first}..{last} as {address}"
    return compared


@pytest.mark.parametrize("name", [f for f in FILES if f not in DIFFERENT])
def test_every_event_field_equals_the_libraries_on_their_own_test_calendars(name: str) -> None:
    data = (CORPUS / name).read_bytes()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import icalendar

        top = [c.name for c in icalendar.Calendar.from_ical(data, multiple=True)]
    if "VCALENDAR" not in top and b"BEGIN:VCALENDAR" in data[:4096].upper():
        # Cut short: the library drops what is still open, Dayflow closes it (best effort).
        closed = data + b"\r\nEND:VCALENDAR\r\n"
        _compare(name, data, closed)
        return
    if "VCALENDAR" not in top:
        # A lone VEVENT, VTODO, VALARM... from the library's unit tests: not a calendar file.
        with pytest.raises(SourceUnreadable, match="not an iCalendar file"):
            CalendarData(data, source=ref.SOURCE, tz=TZ)
        return
    _compare(name, data)


@pytest.mark.parametrize("name", sorted(DIFFERENT))
def test_files_the_libraries_reject_or_read_otherwise_are_treated_as_stated(name: str) -> None:
    data = (CORPUS / name).read_bytes()
    how, why = DIFFERENT[name]
    assert why
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if how == "refused":
            with pytest.raises(ValueError):
                ref.calendars(data)
            with pytest.raises(SourceUnreadable):
                CalendarData(data, source=ref.SOURCE, tz=TZ).read(D("2000-01-01"), D("2030-12-31"))
        elif how == "lenient":
            with pytest.raises((ValueError, TypeError)):
                for first, last in _ranges(ref.calendars(data)):
                    ref.events(ref.calendars(data), TZ, first, last, ref.nobody)
            if name.endswith("issue_104_broken_calendar.ics"):
                fixed = data.replace(b"\nX\n", b"\n").replace(b"\r\nX\r\n", b"\r\n")
                assert fixed != data
                _compare(name, fixed)
                got = CalendarData(data, source=ref.SOURCE, tz=TZ).read(
                    D("2014-04-01"), D("2014-04-01")
                )
                assert [e["title"] for e in got.events] == ["Broken Eevnt"]
            else:
                got = CalendarData(data, source=ref.SOURCE, tz=TZ).read(
                    D("2021-03-01"), D("2021-03-03")
                )
                assert got.events == []  # read, no error: every series is a broken one
        else:
            parsed = ref.calendars(data)
            for first, last in _ranges(parsed):
                want = ref.events(parsed, TZ, first, last, ref.nobody)
                kept = _dayflow(data, first, last, CalendarData(data, source=ref.SOURCE, tz=TZ))
                plain = [{k: v for k, v in e.items() if k != "id"} for e in want]
                assert {e["id"] for e in want} <= {e["id"] for e in kept}
                assert all({k: v for k, v in e.items() if k != "id"} in plain for e in kept)
                assert len(kept) > len(want)


def D(text: str) -> dt.date:
    return dt.date.fromisoformat(text)


@pytest.mark.parametrize("provider", sorted(provider_exports.EXPORTS))
def test_every_event_field_equals_the_libraries_on_each_providers_export(provider: str) -> None:
    data = provider_exports.EXPORTS[provider]()
    assert _compare(provider, data) > 0
    day = D(provider_exports.DAY)
    events = CalendarData(data, source="cal", tz=TZ).read(day, day).events
    assert len(events) >= 2
    # Ben Carter is in today's meeting of every export, with his address (the prep's thread).
    with_ben = [e for e in events if any(
        p["address"] == provider_exports.BEN
        for p in [*e.get("attendees", []), *([e["organizer"]] if "organizer" in e else [])]
    )]  # fmt: skip
    assert with_ben, provider


def test_a_google_attendee_folded_inside_its_parameters_keeps_name_address_and_answer() -> None:
    text = (
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nX-WR-TIMEZONE:Europe/Berlin\r\nBEGIN:VEVENT\r\n"
        "UID:a@google.com\r\nDTSTART:20261118T090000Z\r\nDTEND:20261118T100000Z\r\n"
        "SUMMARY:Review\r\nORGANIZER;CN=Ben Carter:mailto:ben@example.com\r\n"
        "ATTENDEE;CUTYPE=INDIVIDUAL;ROLE=REQ-PARTICIPANT;PARTSTAT=ACCEPTED;CN=Ben Ca\r\n"
        " rter;X-NUM-GUESTS=0:mailto:ben@example.com\r\n"
        "ATTENDEE;CUTYPE=INDIVIDUAL;ROLE=REQ-PARTICIPANT;PARTSTAT=DECLINED;RSVP=TRUE\r\n"
        " ;CN=me@example.org;X-NUM-GUESTS=0:mailto:me@example.org\r\n"
        "END:VEVENT\r\nEND:VCALENDAR\r\n"
    )
    [event] = (
        CalendarData(text, source="cal", tz=TZ, me="me@example.org".__eq__)
        .read(D("2026-11-18"), D("2026-11-18"))
        .events
    )
    assert event["attendees"] == [
        {"name": "Ben Carter", "address": "ben@example.com"},
        {"name": "me@example.org", "address": "me@example.org"},
    ]
    assert event["organizer"] == {"name": "Ben Carter", "address": "ben@example.com"}
    assert event["response"] == "declined" and "description" not in event


def test_a_fold_inside_a_utf8_character_restores_the_character() -> None:
    title = "Verträge – Café"
    line = f"SUMMARY:{title}".encode()
    cut = line.index("ä".encode()) + 1  # between the two octets of "ä"
    data = (
        b"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nUID:u\r\nDTSTART:20261118T090000Z\r\n"
        + line[:cut] + b"\r\n " + line[cut:] + b"\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
    )  # fmt: skip
    [event] = CalendarData(data, source="cal", tz=TZ).read(D("2026-11-18"), D("2026-11-18")).events
    assert event["title"] == title


def test_line_breaks_other_than_crlf_and_lf_are_text_inside_a_value() -> None:
    """U+2028, NEL and a bare CR are not line ends in iCalendar (str.splitlines says they
    are): a description holding them keeps its text and the event after it is still read."""
    text = (
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nUID:u\r\nDTSTART:20261118T090000Z\r\n"
        "SUMMARY:Call\r\nDESCRIPTION:first\u2028UID:injected\x85second\rthird\r\nEND:VEVENT\r\n"
        "END:VCALENDAR\r\n"
    )
    [event] = CalendarData(text, source="cal", tz=TZ).read(D("2026-11-18"), D("2026-11-18")).events
    assert event["description"] == "first\u2028UID:injected\x85second\rthird"
    plain = CalendarData(text.replace("\u2028UID:injected", ""), source="cal", tz=TZ)
    assert event["id"] == plain.read(D("2026-11-18"), D("2026-11-18")).events[0]["id"]


def test_a_quoted_parameter_holding_colons_does_not_end_the_name_part() -> None:
    """The value starts at the first ':' outside quotes: a SUMMARY with an ALTREP URL keeps its
    title, also in the line naming an event too big to read, and a quoted TZID-like parameter
    holding ':' leaves DTSTART's date readable (the event is parsed for its day only)."""
    event = [
        "BEGIN:VEVENT", "UID:u", 'DTSTART;X-NOTE="at: 9;00, sharp":20261118T090000Z',
        'SUMMARY;ALTREP="http://example.com/a:b":Budget: final', "END:VEVENT",
    ]  # fmt: skip
    big = [*event[:-1], *(f"X-FILLER:{n}" for n in range(5001)), "END:VEVENT"]
    big[1] = "UID:big"
    text = "\r\n".join(["BEGIN:VCALENDAR", "VERSION:2.0", *event, *big, "END:VCALENDAR", ""])
    items = ical_text.index(text)
    assert "UID:u" not in ical_text.select(items, D("2025-01-01"), D("2025-01-01"))
    assert "UID:u" in ical_text.select(items, D("2026-11-18"), D("2026-11-18"))
    reader = CalendarData(text, source="cal", tz=TZ)
    parsed = reader.read(D("2026-11-18"), D("2026-11-18"))
    assert [e["title"] for e in parsed.events] == ["Budget: final"]
    assert [c.title for c in parsed.cut_short] == ["Budget: final"]
