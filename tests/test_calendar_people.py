"""Who an event is with (`sources.people`): attendees and organizer as name plus address, the
user's own answer (PARTSTAT), busy or free (TRANSP), from ICS and JSON, and what hostile
attendee lists get."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from dayflow.errors import SourceError
from dayflow.sources import IcsCalendar, JsonCalendar, people
from dayflow.sources.ical import parse_events

DAY = dt.date(2026, 11, 5)
MINE = {"alex@example.org", "a.doe@work.example"}


def _me(address: str) -> bool:
    return address in MINE


def _one(*lines: str, me: people.Me = _me) -> dict[str, Any]:
    """The one event of a VEVENT made of `lines` (besides UID, times and title)."""
    body = "\r\n".join(
        [
            "BEGIN:VCALENDAR",
            "VERSION:2.0",
            "BEGIN:VEVENT",
            "UID:one",
            "DTSTART:20261105T100000Z",
            "DTEND:20261105T110000Z",
            "SUMMARY:Review",
            *lines,
            "END:VEVENT",
            "END:VCALENDAR",
            "",
        ]
    )
    parsed = parse_events(body, source="work", tz=ZoneInfo("UTC"), first=DAY, last=DAY, me=me)
    [event] = parsed.events
    return event


def test_attendees_and_organizer_are_name_and_address_and_the_answer_is_the_users() -> None:
    event = _one(
        "ORGANIZER;CN=Sam Okafor:mailto:Sam@Partner.example",
        "ATTENDEE;CN=Sam Okafor;PARTSTAT=ACCEPTED:mailto:sam@partner.example",
        "ATTENDEE;CN=Alex Doe;PARTSTAT=TENTATIVE:MAILTO:alex@example.org",
        "ATTENDEE:mailto:priya@work.example",
    )
    assert event["organizer"] == {"name": "Sam Okafor", "address": "sam@partner.example"}
    assert event["attendees"] == [
        {"name": "Sam Okafor", "address": "sam@partner.example"},
        {"name": "Alex Doe", "address": "alex@example.org"},
        {"name": "", "address": "priya@work.example"},
    ]
    assert event["response"] == "tentative"
    assert "free" not in event and "attendees_more" not in event


@pytest.mark.parametrize(
    ("partstat", "response"),
    [
        (";PARTSTAT=ACCEPTED", "accepted"),
        (";PARTSTAT=declined", "declined"),
        (";PARTSTAT=DELEGATED", "declined"),  # someone else goes
        (";PARTSTAT=NEEDS-ACTION", "needs-action"),
        ("", "needs-action"),  # RFC 5545's default
        (";PARTSTAT=X-MAYBE-LATER", "needs-action"),
    ],
)
def test_the_users_partstat_becomes_one_of_four_answers(partstat: str, response: str) -> None:
    event = _one(f"ATTENDEE{partstat}:mailto:alex@example.org", "ATTENDEE:mailto:b@x.example")
    assert event["response"] == response


def test_listed_under_two_of_the_users_addresses_the_most_committed_answer_wins() -> None:
    event = _one(
        "ATTENDEE;PARTSTAT=DECLINED:mailto:alex@example.org",
        "ATTENDEE;PARTSTAT=ACCEPTED:mailto:a.doe@work.example",
    )
    assert event["response"] == "accepted"


def test_an_organizer_who_is_the_user_and_not_listed_has_accepted() -> None:
    event = _one("ORGANIZER:mailto:a.doe@work.example", "ATTENDEE:mailto:dana@work.example")
    assert event["response"] == "accepted"


def test_no_answer_when_the_user_is_on_neither_list_or_unknown() -> None:
    assert "response" not in _one("ATTENDEE;PARTSTAT=ACCEPTED:mailto:dana@work.example")
    # A reader not told who the user is sees no address as theirs.
    listed = "ATTENDEE;PARTSTAT=ACCEPTED:mailto:alex@example.org"
    assert "response" not in _one(listed, me=people.nobody)


def test_transp_transparent_is_free_and_free_or_declined_take_no_time() -> None:
    free = _one("TRANSP:TRANSPARENT")
    assert free["free"] is True and not people.takes_time(free)
    assert "free" not in _one("TRANSP:OPAQUE") and people.takes_time(_one("TRANSP:OPAQUE"))
    declined = _one("ATTENDEE;PARTSTAT=DECLINED:mailto:alex@example.org")
    assert not people.takes_time(declined)
    assert not people.takes_time(_one("STATUS:CANCELLED"))
    assert people.takes_time(_one("ATTENDEE;PARTSTAT=TENTATIVE:mailto:alex@example.org"))


def test_odd_cn_and_mailto_values_are_cleaned_or_dropped() -> None:
    event = _one(
        'ATTENDEE;CN="Mallory \u202eevil\u200b  name":MAILTO:Mal%40Example.ORG?subject=hi',
        "ATTENDEE;CN=Conference room 4;CUTYPE=ROOM:mailto:room4@work.example",
        "ATTENDEE;CUTYPE=RESOURCE:mailto:projector@work.example",
        "ATTENDEE:urn:uuid:5f0c1a52-0000",  # neither a name nor an address: dropped
        "ATTENDEE;CN=Injected:mailto:<script>@x",  # not an address: the name only
        "ATTENDEE;CN=Twice:mailto:mal@example.org",  # the same address again: once
        f"ATTENDEE;CN={'L' * 5000}:mailto:{'l' * 300}@x.example",
        "ATTENDEE;CN=Bell\x07:mailto:bell@x.example",  # a control character: icalendar drops it
        "ORGANIZER;CN=:mailto:",  # empty both ways: no organizer
    )
    assert event["attendees"] == [
        {"name": "Mallory evil name", "address": "mal@example.org"},
        {"name": "Injected", "address": ""},
        {"name": "L" * people.MAX_NAME, "address": ""},
    ]
    assert "organizer" not in event


def test_a_person_named_by_a_urn_has_the_email_parameters_address() -> None:
    """iCloud and Exchange name some attendees by `urn:uuid:` or a principal URL, with the
    address in EMAIL= (RFC 7986 6.2): that address is theirs, and the user's answer found."""
    event = _one(
        'ATTENDEE;CN=Ben Carter;EMAIL="ben@example.com";PARTSTAT=ACCEPTED:urn:uuid:6f1c2a3b-4d5e',
        "ATTENDEE;EMAIL=a.doe@work.example;PARTSTAT=TENTATIVE:/1234/principal/",
        'ORGANIZER;CN=Ben Carter;EMAIL="ben@example.com":urn:uuid:6f1c2a3b-4d5e',
        'ATTENDEE;CN=Sam;EMAIL="not-this@example.com":mailto:sam@example.com',
    )
    assert event["attendees"] == [
        {"name": "Ben Carter", "address": "ben@example.com"},
        {"name": "", "address": "a.doe@work.example"},
        {"name": "Sam", "address": "sam@example.com"},  # a mailto value wins
    ]
    assert event["organizer"] == {"name": "Ben Carter", "address": "ben@example.com"}
    assert event["response"] == "tentative"


def test_a_huge_attendee_list_keeps_fifty_counts_the_rest_and_still_finds_the_user() -> None:
    lines = [f"ATTENDEE;CN=Person {n}:mailto:p{n}@all-hands.example" for n in range(1200)]
    event = _one(*lines, "ATTENDEE;PARTSTAT=DECLINED:mailto:alex@example.org")
    assert len(event["attendees"]) == people.MAX_ATTENDEES
    assert event["attendees"][0] == {"name": "Person 0", "address": "p0@all-hands.example"}
    assert event["attendees_more"] == 1201 - people.MAX_ATTENDEES
    assert event["response"] == "declined"


def test_every_occurrence_of_a_series_carries_its_people(tmp_path: Path) -> None:
    path = tmp_path / "team.ics"
    path.write_text(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nUID:weekly\r\n"
        "DTSTART:20261102T090000Z\r\nDTEND:20261102T093000Z\r\nRRULE:FREQ=DAILY;COUNT=5\r\n"
        "SUMMARY:Standup\r\nORGANIZER;CN=Dana:mailto:dana@work.example\r\n"
        "ATTENDEE;PARTSTAT=ACCEPTED:mailto:alex@example.org\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
    )
    calendar = IcsCalendar("team", path=path, tz=ZoneInfo("UTC"), me=_me)
    events = calendar.events(dt.date(2026, 11, 2), dt.date(2026, 11, 8))
    assert len(events) == 5
    assert {e["organizer"]["address"] for e in events} == {"dana@work.example"}
    assert {e["response"] for e in events} == {"accepted"}


def _json_calendar(tmp_path: Path, **fields: Any) -> JsonCalendar:
    event = {
        "id": "e1",
        "title": "1:1",
        "start": "2026-11-05T11:00:00+00:00",
        "end": "2026-11-05T11:30:00+00:00",
        **fields,
    }
    path = tmp_path / "calendar.json"
    path.write_text(json.dumps({"events": [event]}))
    return JsonCalendar(path, DAY, me=_me)


def test_a_json_event_names_people_as_name_and_address_and_may_give_the_answer(
    tmp_path: Path,
) -> None:
    calendar = _json_calendar(
        tmp_path,
        attendees=["Dana Whitfield <Dana@Work.example>", "priya@work.example", "Marco"],
        organizer="Dana Whitfield <dana@work.example>",
        response="declined",
        free=True,
    )
    [event] = calendar.events()
    assert event["attendees"] == [
        {"name": "Dana Whitfield", "address": "dana@work.example"},
        {"name": "", "address": "priya@work.example"},
        {"name": "Marco", "address": ""},
    ]
    assert event["organizer"] == {"name": "Dana Whitfield", "address": "dana@work.example"}
    assert event["response"] == "declined" and event["free"] is True


def test_a_json_event_with_an_unknown_response_is_one_error_line(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="event 1 'response' must be one of accepted"):
        _json_calendar(tmp_path, response="maybe").events()
