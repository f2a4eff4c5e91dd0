"""CalDAV against a real Radicale on 127.0.0.1: discovery, calendar choice, recurrence, failures,
and proof that Dayflow only reads (the server's storage is byte-identical afterwards)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from dayflow.errors import SourceUnreadable
from dayflow.sources.caldav import CalDavCalendar
from tests.davserver import PASSWORD, USER, DavServer

pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).parent / "ical"
BERLIN = ZoneInfo("Europe/Berlin")
MONDAY, SUNDAY = dt.date(2026, 11, 2), dt.date(2026, 11, 8)
TASKS = b"""BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//Dayflow tests//tasks//EN
BEGIN:VTODO
UID:todo-1@example.org
DTSTAMP:20261001T000000Z
SUMMARY:A task, not an event
DUE:20261105T120000Z
END:VTODO
END:VCALENDAR
"""


@pytest.fixture(scope="module")
def dav(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DavServer]:
    with DavServer(tmp_path_factory.mktemp("radicale")) as server:
        server.make_calendar("personal", "Personal")
        server.put("personal", "standup.ics", (FIXTURES / "recurrence.ics").read_bytes())
        server.put("personal", "allday.ics", (FIXTURES / "allday.ics").read_bytes())
        server.make_calendar("work", "Work")
        server.put("work", "dst.ics", (FIXTURES / "dst.ics").read_bytes())
        server.put("work", "noend.ics", (FIXTURES / "noend.ics").read_bytes())
        server.make_calendar("todo", "Todo", components="VTODO")
        server.put("todo", "task.ics", TASKS)
        yield server


def _source(url: str, password: str = PASSWORD, **kwargs: object) -> CalDavCalendar:
    kwargs.setdefault("plain_ok", True)  # the test server is http:// on loopback
    return CalDavCalendar("nextcloud", url=url, user=USER, password=lambda: password, tz=BERLIN,
                          **kwargs)  # type: ignore[arg-type]  # fmt: skip


def _seen(events: list[dict[str, object]]) -> list[tuple[object, ...]]:
    return [(e["calendar"], e["title"], e["start"], e.get("status")) for e in events]


def test_discovers_every_event_calendar_from_the_server_root(dav: DavServer) -> None:
    events = _source(dav.base_url + "/").events(first=MONDAY, last=SUNDAY)
    assert _seen(events) == [
        ("Personal", "Team standup", "2026-11-02T09:30:00+01:00", "confirmed"),
        ("Personal", "Team standup", "2026-11-03T09:30:00+01:00", "confirmed"),
        ("Work", "New York weekly", "2026-11-03T15:00:00+01:00", "confirmed"),
        ("Personal", "Conference", "2026-11-04", "confirmed"),
        ("Personal", "Dentist", "2026-11-04T15:00:00+01:00", "confirmed"),
        ("Personal", "Public holiday", "2026-11-05", "confirmed"),
        ("Personal", "Sam's birthday", "2026-11-05", "confirmed"),
        ("Personal", "Team standup (moved)", "2026-11-05T11:00:00+01:00", "confirmed"),
        ("Work", "Interview", "2026-11-05T15:00:00+01:00", "confirmed"),
        ("Work", "Parcel arrives", "2026-11-05T17:00:00+01:00", "confirmed"),
        ("Personal", "Team standup", "2026-11-06T09:30:00+01:00", "cancelled"),
        ("Personal", "Team standup", "2026-11-07T10:00:00+01:00", "confirmed"),
    ]
    assert all(e["source"] == "nextcloud" for e in events)


def test_calendars_picks_by_display_name_or_path(dav: DavServer) -> None:
    work = _source(dav.base_url + "/", calendars=["Work"]).events(first=MONDAY, last=SUNDAY)
    assert {e["calendar"] for e in work} == {"Work"} and len(work) == 3
    personal = _source(dav.base_url, calendars=["personal"]).events(first=MONDAY, last=SUNDAY)
    assert {e["calendar"] for e in personal} == {"Personal"} and len(personal) == 9


def test_a_url_that_is_one_calendar_reads_only_that_calendar(dav: DavServer) -> None:
    events = _source(f"{dav.base_url}/{USER}/work/").events(first=MONDAY, last=SUNDAY)
    assert [e["title"] for e in events] == ["New York weekly", "Interview", "Parcel arrives"]


def test_an_unknown_calendar_name_says_which_exist(dav: DavServer) -> None:
    with pytest.raises(SourceUnreadable) as caught:
        _source(dav.base_url, calendars=["Gym"]).events(first=MONDAY, last=SUNDAY)
    assert caught.value.reason == (
        f"no calendar named 'Gym' on {dav.base_url}/ (found: Personal, Work)"
    )


def test_a_wrong_password_is_one_line_without_the_password(dav: DavServer) -> None:
    with pytest.raises(SourceUnreadable) as caught:
        _source(dav.base_url, password="hunter2").events(first=MONDAY, last=SUNDAY)
    assert caught.value.source == "nextcloud"
    assert caught.value.reason == f"{dav.base_url}/ refused the user name or password (HTTP 401)"
    assert "hunter2" not in str(caught.value)


def test_the_password_is_fetched_on_the_first_request_only(dav: DavServer) -> None:
    asked: list[int] = []

    def password() -> str:
        asked.append(1)
        return PASSWORD

    source = CalDavCalendar(
        "nc", url=dav.base_url, user=USER, password=password, tz=BERLIN, plain_ok=True
    )
    assert asked == []
    source.events(first=MONDAY, last=SUNDAY)
    source.events(first=MONDAY, last=MONDAY)
    assert asked == [1]

    def broken() -> str:
        raise RuntimeError("pass: no such entry")

    failing = CalDavCalendar(
        "nc", url=dav.base_url, user=USER, password=broken, tz=BERLIN, plain_ok=True
    )
    with pytest.raises(SourceUnreadable, match="cannot get the password"):
        failing.events(first=MONDAY, last=SUNDAY)


def test_an_unreachable_server(tmp_path: Path) -> None:
    with pytest.raises(SourceUnreadable) as caught:
        _source("http://127.0.0.1:9/remote.php/dav/").events(first=MONDAY, last=SUNDAY)
    assert caught.value.reason.startswith("cannot reach http://127.0.0.1:9/… (")


def test_dayflow_only_reads_and_asks_once_per_range(dav: DavServer) -> None:
    before, served = dav.snapshot(), len(dav.requests())
    source = _source(dav.base_url)
    source.events(first=MONDAY, last=SUNDAY)
    asked = dav.requests()[served:]
    source.events(first=MONDAY, last=SUNDAY)  # the same object, the same range: no request
    assert dav.requests()[served:] == asked
    assert {method for method, _ in asked} == {"PROPFIND", "REPORT"}
    # root, principal, home listing, then one REPORT per event calendar (not the task list)
    assert [m for m, _ in asked].count("REPORT") == 2
    assert dav.snapshot() == before


def test_caldav_events_carry_attendees_and_the_users_answer(dav: DavServer) -> None:
    source = _source(dav.base_url, calendars=["Personal"], me="me@example.org".__eq__)
    [dentist] = [e for e in source.events(first=MONDAY, last=SUNDAY) if e["title"] == "Dentist"]
    assert dentist["attendees"] == [
        {"name": "Dr. Ana Ruiz", "address": "ana@clinic.example"},
        {"name": "", "address": "me@example.org"},
    ]
    assert dentist["response"] == "needs-action"  # no PARTSTAT: RFC 5545's default


def test_a_password_never_goes_over_plain_http_unless_the_entry_says_plain(
    dav: DavServer,
) -> None:
    """Issue 32.7's class: a CalDAV password (Basic) over http:// went in clear with no word.
    IMAP's rule now holds for it as for a token: refused when the config is read, and before
    the password is even asked for."""
    from tests.conftest import config_problems, parse_sources

    toml = (
        '[[calendar]]\nname = "nc"\nkind = "caldav"\nurl = "http://cloud.example.org/dav"\n'
        'user = "me"\npassword_env = "NC_PASSWORD"\n'
    )
    [problem] = config_problems(toml)
    assert "a password is sent only over https:// (the url is plain http://)" in problem
    parse_sources(toml + 'security = "plain"\n')  # said so: accepted
    feed = '[[calendar]]\nname = "f"\nkind = "ics"\nurl = "http://u:pw@cal.example.org/x.ics"\n'
    assert "a password is sent only over https://" in config_problems(feed)[0]
    asked: list[int] = []
    served = len(dav.requests())

    def password() -> str:
        asked.append(1)
        return PASSWORD

    clear = CalDavCalendar("nc", url=dav.base_url, user=USER, password=password, tz=BERLIN)
    with pytest.raises(SourceUnreadable, match=r"is plain http://: a password is sent only"):
        clear.events(first=MONDAY, last=SUNDAY)
    assert asked == [] and len(dav.requests()) == served  # nothing asked, nothing sent


def test_a_folded_google_event_served_over_caldav_keeps_its_attendees(tmp_path: Path) -> None:
    """CalDAV answers go through the same reader as files: an event whose ATTENDEE lines are
    folded inside their parameters (and whose line ends the XML made LF) keeps every attendee,
    as the same export read from a file does."""
    from dayflow.sources.ical import CalendarData
    from tests import provider_exports

    day = dt.date.fromisoformat(provider_exports.DAY)
    data = provider_exports.google()
    assert b"RSVP=TRUE\r\n ;CN=Ben Carter" in data
    with DavServer(tmp_path) as server:
        server.make_calendar("google", "Google")
        server.put("google", "export.ics", data)
        served = _source(server.base_url, calendars=["Google"]).events(first=day, last=day)
    from_file = CalendarData(data, source="nextcloud", tz=BERLIN).read(day, day).events
    people = [(e["title"], e.get("attendees"), e.get("organizer")) for e in served]
    assert people == [(e["title"], e.get("attendees"), e.get("organizer")) for e in from_file]
    meeting = next(e for e in served if e["title"].startswith("Quarterly review"))
    assert {"name": "Ben Carter", "address": provider_exports.BEN} in meeting["attendees"]
