from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dayflow.errors import DayflowError, SourceError
from dayflow.sources import (
    SAMPLES,
    CalendarSource,
    InboxSource,
    JsonCalendar,
    JsonInbox,
    local_date,
    to_timezone,
)

ANCHOR = dt.date(2026, 11, 5)
UTC = dt.UTC
TOKYO = dt.timezone(dt.timedelta(hours=9))
NEW_YORK = dt.timezone(dt.timedelta(hours=-5))


MESSAGE = {
    "id": "x1",
    "from": "Ada Quill <ada@example.com>",
    "subject": "Hello",
    "received_at": "2026-11-04T10:00:00+00:00",
    "snippet": "Just saying hello.",
    "body": "Just saying hello. Nothing else.",
    "unread": True,
}
EVENT = {
    "id": "e1",
    "title": "Planning",
    "start": "2026-11-05T10:00:00+00:00",
    "end": "2026-11-05T11:00:00+00:00",
}


def _with(base: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """`base` with `overrides` applied; a field overridden with `...` is left out."""
    return {k: v for k, v in (base | overrides).items() if v is not ...}


def _message(**overrides: Any) -> dict[str, Any]:
    return _with(MESSAGE, overrides)


def _event(**overrides: Any) -> dict[str, Any]:
    return _with(EVENT, overrides)


def _write(tmp_path: Path, data: object, name: str = "data.json") -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def _start_dates(events: list[dict[str, Any]]) -> list[dt.date]:
    return [dt.datetime.fromisoformat(e["start"]).date() for e in events]


# --- the bundled fixtures -----------------------------------------------------------------------


def test_bundled_fixtures_satisfy_the_protocols() -> None:
    inbox: InboxSource = JsonInbox(None, ANCHOR)
    calendar = JsonCalendar(None, ANCHOR)
    as_source: CalendarSource = calendar
    assert len(inbox.messages()) >= 18
    assert len(calendar.events()) >= 10 and as_source is calendar


def test_bundled_inbox_is_unchanged_on_its_anchor_date() -> None:
    by_id = {m["id"]: m for m in JsonInbox(None, ANCHOR).messages()}
    assert by_id["m12"]["received_at"] == "2026-11-04T16:12:00+00:00"
    assert by_id["m12"]["thread_id"] == by_id["m03"]["thread_id"]
    assert by_id["m12"]["subject"] == "Re: " + by_id["m03"]["subject"]


def test_bundled_messages_look_like_a_mail_api() -> None:
    messages = JsonInbox(None, ANCHOR).messages()
    for message in messages:
        assert len(message["snippet"]) <= 200
        assert len(message["body"]) >= len(message["snippet"]) - 3
        assert re.search(r"@[\w.-]+\.example(?:\.com)?>$|@example\.com>$", message["from"])
    days = {dt.datetime.fromisoformat(m["received_at"]).date() for m in messages}
    assert ANCHOR in days and ANCHOR - dt.timedelta(days=3) in days
    assert max(days) == ANCHOR


def test_bundled_calendar_has_at_least_four_events_on_the_anchor_date() -> None:
    events = JsonCalendar(None, ANCHOR).events()
    assert _start_dates(events).count(ANCHOR) >= 4
    assert max(_start_dates(events)) <= ANCHOR + dt.timedelta(days=6)


# --- the sample inboxes -------------------------------------------------------------------------


def test_samples_are_standard_and_large_and_standard_is_the_default() -> None:
    assert SAMPLES == ("standard", "large")
    assert (
        JsonInbox(None, ANCHOR).messages() == JsonInbox(None, ANCHOR, sample="standard").messages()
    )
    assert JsonInbox(None, ANCHOR, sample="large").label == "inbox_large.json"


def test_unknown_sample_is_a_source_error_listing_the_choices() -> None:
    with pytest.raises(
        SourceError, match=r"unknown sample inbox 'huge' \(choose one of: standard, large\)"
    ):
        JsonInbox(None, ANCHOR, sample="huge")


def test_a_path_wins_over_the_sample(tmp_path: Path) -> None:
    path = _write(tmp_path, [_message()])
    assert [m["id"] for m in JsonInbox(path, ANCHOR, sample="large").messages()] == ["x1"]


def test_large_sample_is_a_long_inbox_with_threads_and_long_bodies() -> None:
    messages = JsonInbox(None, ANCHOR, sample="large").messages()
    assert len(messages) >= 60
    standard_ids = {m["id"] for m in JsonInbox(None, ANCHOR).messages()}
    assert not standard_ids & {m["id"] for m in messages}  # task keys never collide
    threads = [m["thread_id"] for m in messages if m["thread_id"]]
    assert len(set(threads)) >= 5 and len(threads) - len(set(threads)) >= 6
    long_bodies = [m for m in messages if m["body"].count("\n\n") >= 3 and len(m["body"]) > 400]
    assert len(long_bodies) >= 30
    assert sum("\n> " in m["body"] for m in messages) >= 5  # quoted reply chains
    for message in messages:
        assert len(message["snippet"]) <= 200
        assert re.search(r"@[\w.-]+\.example>$", message["from"])
    days = {dt.datetime.fromisoformat(m["received_at"]).date() for m in messages}
    assert max(days) == ANCHOR and min(days) < ANCHOR - dt.timedelta(days=10)


def test_large_sample_shifts_with_the_brief_date() -> None:
    brief = dt.date(2027, 2, 11)
    newest = JsonInbox(None, brief, sample="large").messages()[0]
    assert newest["received_at"].startswith("2027-02-11")


# --- anchor shifting ----------------------------------------------------------------------------


def test_anchor_shift_moves_events_to_brief_date() -> None:
    brief = dt.date(2027, 3, 2)
    on_anchor = _start_dates(JsonCalendar(None, ANCHOR).events()).count(ANCHOR)
    shifted = JsonCalendar(None, brief).events()
    assert _start_dates(shifted).count(brief) == on_anchor
    staff_sync = next(e for e in shifted if e["title"] == "Weekly staff sync")
    assert staff_sync["start"] == "2027-03-02T13:00:00+00:00"


def test_anchor_shift_keeps_late_events_on_the_brief_date() -> None:
    """The 22:30 event on the anchor date must not slide into tomorrow."""
    brief = dt.date(2026, 11, 20)
    late = [e for e in JsonCalendar(None, brief).events() if e["start"].endswith("22:30:00+00:00")]
    assert late and all(e["start"].startswith("2026-11-20") for e in late)


def test_anchor_shift_moves_messages_backwards_too() -> None:
    brief = dt.date(2026, 10, 1)
    by_id = {m["id"]: m for m in JsonInbox(None, brief).messages()}
    assert by_id["m12"]["received_at"] == "2026-09-30T16:12:00+00:00"


def test_anchor_shift_keeps_wall_clock_time_and_offset(tmp_path: Path) -> None:
    """A shift never detours through UTC, which could change the local date."""
    event = _event(start="2026-11-05T23:30:00-08:00", end="2026-11-05T23:59:00-08:00")
    path = _write(tmp_path, {"anchor_date": "2026-11-05", "events": [event]})
    [shifted] = JsonCalendar(path, dt.date(2026, 11, 8)).events()
    assert shifted["start"] == "2026-11-08T23:30:00-08:00"
    assert shifted["end"] == "2026-11-08T23:59:00-08:00"


def test_file_without_anchor_is_taken_as_is(tmp_path: Path) -> None:
    path = _write(tmp_path, {"messages": [_message(received_at="2025-01-02T03:04:05+01:00")]})
    [message] = JsonInbox(path, dt.date(2030, 6, 1)).messages()
    assert message["received_at"] == "2025-01-02T03:04:05+01:00"


def test_bare_list_is_accepted_and_never_shifted(tmp_path: Path) -> None:
    path = _write(tmp_path, [_event()])
    [event] = JsonCalendar(path, dt.date(2030, 6, 1)).events()
    assert event["start"] == "2026-11-05T10:00:00+00:00"


def test_z_suffix_is_normalised_to_an_offset(tmp_path: Path) -> None:
    path = _write(tmp_path, [_event(start="2026-11-05T10:00:00Z", end="2026-11-05T10:30:00Z")])
    [event] = JsonCalendar(path, ANCHOR).events()
    assert event["start"] == "2026-11-05T10:00:00+00:00"


# --- shape, defaults and order ------------------------------------------------------------------


def test_optional_message_fields_get_defaults(tmp_path: Path) -> None:
    long_body = "word " * 100
    message = _message(snippet=..., body=long_body, unread=..., id="a")
    only_snippet = _message(id="b", body=..., snippet="short")
    path = _write(tmp_path, [message, only_snippet])
    by_id = {m["id"]: m for m in JsonInbox(path, ANCHOR).messages()}
    assert len(by_id["a"]["snippet"]) <= 200 and by_id["a"]["snippet"].endswith("...")
    assert by_id["a"]["unread"] is False and by_id["a"]["thread_id"] is None
    assert by_id["b"]["body"] == "short"


def test_optional_event_fields_get_defaults(tmp_path: Path) -> None:
    [event] = JsonCalendar(_write(tmp_path, [_event()]), ANCHOR).events()
    assert event["location"] is None and event["attendees"] == []


def test_messages_are_sorted_newest_first_by_instant(tmp_path: Path) -> None:
    """09:00+02:00 is 07:00 UTC: earlier than 08:00+00:00 although its text sorts later."""
    messages = [
        _message(id="old", received_at="2026-11-03T08:00:00+00:00"),
        _message(id="east", received_at="2026-11-04T09:00:00+02:00"),
        _message(id="utc", received_at="2026-11-04T08:00:00+00:00"),
    ]
    path = _write(tmp_path, {"messages": messages})
    assert [m["id"] for m in JsonInbox(path, ANCHOR).messages()] == ["utc", "east", "old"]


def test_bundled_messages_are_sorted_newest_first() -> None:
    times = [
        dt.datetime.fromisoformat(m["received_at"]) for m in JsonInbox(None, ANCHOR).messages()
    ]
    assert times == sorted(times, reverse=True)


def test_events_are_sorted_by_start(tmp_path: Path) -> None:
    events = [
        _event(id="late", start="2026-11-05T15:00:00+00:00", end="2026-11-05T16:00:00+00:00"),
        _event(id="early", start="2026-11-05T08:00:00+00:00", end="2026-11-05T09:00:00+00:00"),
    ]
    path = _write(tmp_path, {"events": events})
    assert [e["id"] for e in JsonCalendar(path, ANCHOR).events()] == ["early", "late"]
    starts = [dt.datetime.fromisoformat(e["start"]) for e in JsonCalendar(None, ANCHOR).events()]
    assert starts == sorted(starts)


def test_callers_get_copies_they_may_mutate() -> None:
    inbox = JsonInbox(None, ANCHOR)
    first = inbox.messages()
    first[0]["subject"] = "changed"
    first.clear()
    assert inbox.messages()[0]["subject"] != "changed"
    calendar = JsonCalendar(None, ANCHOR)
    calendar.events()[0]["attendees"].append("intruder")
    assert "intruder" not in calendar.events()[0]["attendees"]


# --- validation ---------------------------------------------------------------------------------


def _read_error(path: Path, read: Callable[[], object]) -> str:
    """The one-line error `read` raises, which starts with the file's path."""
    with pytest.raises(SourceError) as info:
        read()
    text = str(info.value)
    assert text.startswith(f"{path}: ") and "\n" not in text
    return text


def _inbox_error(tmp_path: Path, data: object) -> str:
    path = _write(tmp_path, data, "inbox.json")
    return _read_error(path, JsonInbox(path, ANCHOR).messages)


def _calendar_error(tmp_path: Path, data: object) -> str:
    path = _write(tmp_path, data, "calendar.json")
    return _read_error(path, JsonCalendar(path, ANCHOR).events)


def test_missing_file_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.json"
    with pytest.raises(SourceError, match=r"nope\.json: file not found$"):
        JsonInbox(path, ANCHOR).messages()


def test_directory_instead_of_file_is_a_source_error(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="is a directory"):
        JsonCalendar(tmp_path, ANCHOR).events()


def test_non_utf8_file_is_a_source_error(tmp_path: Path) -> None:
    path = tmp_path / "inbox.json"
    path.write_bytes(b'{"messages": ["\xff\xfe"]}')
    with pytest.raises(SourceError, match="not UTF-8"):
        JsonInbox(path, ANCHOR).messages()


def test_invalid_json_reports_line_and_column(tmp_path: Path) -> None:
    text = _inbox_error(tmp_path, '{"messages": [\n  {"id": "m1",}\n]}')
    assert "invalid JSON at line 2" in text


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ({"anchor_date": "2026-11-05"}, "has no 'messages' list"),
        ({"messages": {"id": "m1"}}, "'messages' must be a list, not an object"),
        ("42", "'messages' must be a list, not a number"),
        ({"anchor_date": "Nov 5", "messages": []}, "'anchor_date' is not a YYYY-MM-DD date"),
        ({"anchor_date": 20261105, "messages": []}, "'anchor_date' must be a YYYY-MM-DD string"),
        ([_message(), "hello"], "message 2 must be an object, not a string"),
        ([_message(id=...)], "message 1 has no 'id'"),
        ([_message(id="  ")], "message 1 has an empty 'id'"),
        ([_message(id="1"), _message(id="2"), _message(subject=...)], "message 3 has no 'subject'"),
        ([_message(**{"from": ...})], "message 1 has no 'from'"),
        ([_message(received_at=...)], "message 1 has no 'received_at'"),
        ([_message(received_at=None)], "message 1 has no 'received_at'"),
        ([_message(subject=7)], "message 1 'subject' must be a string, not a number"),
        ([_message(unread="yes")], "message 1 'unread' must be a boolean, not a string"),
        ([_message(id=1)], "message 1 'id' must be a string, not a number"),
        ([_message(snippet=["a"])], "message 1 'snippet' must be a string, not a list"),
        ([_message(received_at="yesterday")], "'received_at' is not an ISO-8601 timestamp"),
        ([_message(received_at="2026-11-04T10:00:00")], "'received_at' has no UTC offset"),
        ([_message(received_at=True)], "'received_at' must be a string, not a boolean"),
        ([_message(id="a"), _message(id="a")], "message 2 repeats the id 'a'"),
    ],
)
def test_malformed_inbox_raises_one_line_source_error(
    tmp_path: Path, data: object, problem: str
) -> None:
    assert problem in _inbox_error(tmp_path, data)


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ({"messages": []}, "has no 'events' list"),
        ([_event(title=...)], "event 1 has no 'title'"),
        ([_event(start=...)], "event 1 has no 'start'"),
        ([_event(end=...)], "event 1 has no 'end'"),
        ([_event(end="2026-11-05T09:00:00+00:00")], "event 1 ends before it starts"),
        ([_event(start="10am")], "event 1 'start' is not an ISO-8601 timestamp"),
        ([_event(end="2026-11-05T11:00:00")], "event 1 'end' has no UTC offset"),
        ([_event(location=4)], "event 1 'location' must be a string, not a number"),
        ([_event(attendees="Dana")], "event 1 'attendees' must be a list, not a string"),
        ([_event(attendees=["Dana", 3])], "event 1 'attendees' must be a list of strings"),
        ([_event(), _event()], "event 2 repeats the id 'e1'"),
    ],
)
def test_malformed_calendar_raises_one_line_source_error(
    tmp_path: Path, data: object, problem: str
) -> None:
    assert problem in _calendar_error(tmp_path, data)


def test_source_error_is_a_dayflow_error_with_exit_code_4() -> None:
    assert issubclass(SourceError, DayflowError) and SourceError.exit_code == 4


def test_a_json_message_keeps_its_envelope_for_the_followups(tmp_path: Path) -> None:
    """`to`, `cc` and the thread headers reach the envelope: with `me`, owed replies and
    threads are told from a JSON inbox as from any other (they were dropped before)."""
    from dayflow.sources.mail import DictMail

    given = _message(to=["Alex <alex@x.example>"], cc="dana@x.example", message_id="<a@x>",
                     in_reply_to="<b@x>", list_id="<team.x.example>")  # fmt: skip
    path = _write(tmp_path, [given], "inbox.json")
    (item,) = DictMail("inbox", JsonInbox(path, ANCHOR)).page(
        since=None, after=None, limit=5, unread_only=False
    )
    env = item.envelope
    assert env.to == (("Alex", "alex@x.example"),) and env.cc == (("", "dana@x.example"),)
    assert env.message_id == "a@x" and env.in_reply_to == "b@x" and env.listed
    assert "to" not in JsonInbox(_write(tmp_path, [_message()]), ANCHOR).messages()[0]
    assert "message 1 'to' must be a string or a list, not a number" in _inbox_error(
        tmp_path, [_message(to=3)]
    )
    assert "message 1 'cc' must be a string or a list of strings" in _inbox_error(
        tmp_path, [_message(cc=["a@x.example", 3])]
    )


def test_the_bundled_sample_has_a_user_sent_mail_prep_and_a_conflict() -> None:
    """The sample's user is `SAMPLE_ME`, whom its messages are to; its sent mail is anchored
    like the inbox; its calendar names attendees by address and has two meetings that
    overlap on the anchor day."""
    from dayflow.sources.json_files import SAMPLE_ME, sample_sent

    inbox = JsonInbox(None, ANCHOR).messages()
    assert sum(SAMPLE_ME in str(m.get("to")) for m in inbox) >= 5
    sent = sample_sent(ANCHOR + dt.timedelta(days=3)).messages()
    assert sent and all(SAMPLE_ME in m["from"] and m["to"] for m in sent)
    assert {m["id"]: m["received_at"][:10] for m in sent} == {
        "s01": "2026-11-02", "s02": "2026-11-06"
    }  # fmt: skip
    today = [e for e in JsonCalendar(None, ANCHOR).events() if e["start"] < "2026-11-06"]
    assert any(a["address"] for e in today for a in e.get("attendees", []))
    spans = sorted((e["start"], e["end"]) for e in today)
    assert any(later[0] < earlier[1] for earlier, later in zip(spans, spans[1:], strict=False))


def test_bundled_file_errors_name_the_bundled_file() -> None:
    assert JsonInbox(None, ANCHOR).label == "inbox.json"
    assert JsonCalendar(None, ANCHOR).label == "calendar.json"


# --- time helpers -------------------------------------------------------------------------------


def test_to_timezone_renders_in_the_users_zone() -> None:
    assert to_timezone("2026-11-05T22:30:00+00:00", TOKYO) == "2026-11-06T07:30:00+09:00"
    assert to_timezone("2026-11-05T22:30:00+00:00", NEW_YORK) == "2026-11-05T17:30:00-05:00"
    assert to_timezone("2026-11-05T22:30:00Z", UTC) == "2026-11-05T22:30:00+00:00"


def test_local_date_is_the_date_in_the_users_zone() -> None:
    assert local_date("2026-11-05T22:30:00+00:00", TOKYO) == dt.date(2026, 11, 6)
    assert local_date("2026-11-05T22:30:00+00:00", UTC) == dt.date(2026, 11, 5)


@pytest.mark.parametrize("bad", ["2026-11-05T22:30:00", "tomorrow", ""])
def test_to_timezone_rejects_naive_or_malformed_timestamps(bad: str) -> None:
    with pytest.raises(SourceError):
        to_timezone(bad, UTC)


def test_sample_times_keep_their_wall_clock_in_the_users_zone(tmp_path: Path) -> None:
    from zoneinfo import ZoneInfo

    berlin = ZoneInfo("Europe/Berlin")
    events = JsonCalendar(None, dt.date(2026, 11, 5), tz=berlin).events()
    standup = next(e for e in events if e["title"] == "Team standup")
    start = dt.datetime.fromisoformat(standup["start"])
    assert (start.date(), start.strftime("%H:%M"), start.utcoffset()) == (
        dt.date(2026, 11, 5),
        "09:30",
        dt.timedelta(hours=1),
    )
    # A user's own export (no anchor) is taken as is, whatever the zone.
    own = tmp_path / "cal.json"
    own.write_text(
        '{"events": [{"id": "e1", "title": "Call", "start": "2026-11-05T09:30:00+00:00",'
        ' "end": "2026-11-05T10:00:00+00:00"}]}'
    )
    (event,) = JsonCalendar(own, dt.date(2026, 11, 5), tz=berlin).events()
    assert event["start"] == "2026-11-05T09:30:00+00:00"
