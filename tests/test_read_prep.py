"""The read_prep tool over real sources: a Maildir with INBOX and Sent, an ICS calendar whose
attendees wrote some of that mail, open tasks filed from it; what a calendar or mail failure
gives; and that the tool is a saved read (its schema refuses arguments)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from dayflow import tools
from dayflow.followups import Feed
from dayflow.sources import IcsCalendar
from dayflow.sources.inbox import Inbox
from dayflow.sources.mail import MailSource
from dayflow.sources.maildir import MaildirSource
from dayflow.sources.me import parse_me
from dayflow.store import Store
from tests.conftest import call_tool
from tests.mailkit import deliver, thread_mail

BERLIN = ZoneInfo("Europe/Berlin")
DAY = dt.date(2026, 11, 18)
ME = parse_me(["a.doe@work.example"])
SAM = "Sam Okafor <sam@partner.example>"
ALEX = "Alex Doe <a.doe@work.example>"
CALENDAR = """BEGIN:VCALENDAR\r
VERSION:2.0\r
BEGIN:VEVENT\r
UID:review\r
SUMMARY:Partnership review\r
DTSTART:20261118T090000Z\r
DTEND:20261118T100000Z\r
ORGANIZER;CN=Sam Okafor:mailto:sam@partner.example\r
ATTENDEE;PARTSTAT=ACCEPTED:mailto:a.doe@work.example\r
END:VEVENT\r
BEGIN:VEVENT\r
UID:solo\r
SUMMARY:Focus\r
DTSTART:20261118T130000Z\r
DTEND:20261118T140000Z\r
END:VEVENT\r
END:VCALENDAR\r
"""


def _at(day: int, hour: int) -> dt.datetime:
    return dt.datetime(2026, 11, day, hour, tzinfo=dt.UTC)


def _env(store: Store, tmp_path: Path, *, calendar: str = CALENDAR) -> tools.ToolEnv:
    inbox, sent = tmp_path / "INBOX", tmp_path / "Sent"
    ask = thread_mail("s1@p", sender=SAM, to=ALEX, subject="One-pager", when=_at(13, 16),
                      body="Could you send the edits?")  # fmt: skip
    deliver(inbox, ask, _at(13, 16))
    deliver(sent, thread_mail("a1@w", sender=ALEX, to=SAM, subject="Contract", when=_at(12, 15),
                              body="Here it is."), _at(12, 15))  # fmt: skip
    deliver(inbox, thread_mail("x1@o", sender="Bo <bo@else.example>", to=ALEX, subject="Other",
                               when=_at(17, 9)), _at(17, 9))  # fmt: skip
    mail: list[MailSource] = [MaildirSource("work", inbox)]
    sources = Inbox(mail)
    sources.followups = Feed(mail, [MaildirSource("work/sent", sent)], me=ME, brief_date=DAY,
                             tz=BERLIN)  # fmt: skip
    path = tmp_path / "calendar.ics"
    path.write_text(calendar, newline="")
    return tools.ToolEnv(
        tasks=store.tasks,
        run_id="r",
        inbox=sources,
        calendar=IcsCalendar("work", path=path, tz=BERLIN, me=ME),
        brief_date=DAY,
        tz=BERLIN,
        task_cap=20,
    )


def _call(env: tools.ToolEnv, args: Any) -> tuple[Any, bool]:
    return call_tool("read_prep", env, args)


def test_prep_lists_the_threads_with_the_events_people_and_the_open_tasks_from_them(
    store: Store, tmp_path: Path
) -> None:
    env = _env(store, tmp_path)
    assert env.mail.followups is not None
    [asked] = [t for t in env.mail.followups().threads if t.subject == "One-pager"]
    key = asked.messages[0].key
    store.tasks.create(title="Send the edits to Sam", idempotency_key=key, run_id=None)
    store.tasks.create(title="Unrelated", idempotency_key="model:other", run_id=None)
    result, is_error = _call(env, {})
    assert not is_error
    [review] = result["events"]  # Focus has nobody else on it
    assert review["title"] == "Partnership review"
    assert review["with"] == [{"name": "Sam Okafor", "address": "sam@partner.example"}]
    assert [(t["subject"], t.get("latest_from_me", False)) for t in review["threads"]] == [
        ("One-pager", False),
        ("Contract", True),
    ]
    assert review["threads"][0]["latest_at"] == "2026-11-13T17:00:00+01:00"
    assert [t["title"] for t in review["tasks"]] == ["Send the edits to Sam"]
    assert "unavailable" not in result and "note" not in result


def test_a_calendar_that_cannot_be_read_is_one_error_line(store: Store, tmp_path: Path) -> None:
    result, is_error = _call(_env(store, tmp_path, calendar="<html>login</html>"), {})
    assert is_error and "not an iCalendar file" in result


def test_mail_that_cannot_be_read_leaves_the_events_without_threads(
    store: Store, tmp_path: Path
) -> None:
    env = _env(store, tmp_path)
    env.mail.followups = None
    result, _ = _call(env, {})
    assert result["events"] == []
    assert result["unavailable"] == [{"source": "mail", "reason": tools.NO_MAIL_SOURCE}]


def test_read_prep_takes_no_arguments_and_reads_a_server_only_when_one_is_configured(
    store: Store, tmp_path: Path
) -> None:
    env = _env(store, tmp_path)
    result, is_error = _call(env, {"range": "week"})
    assert is_error and "range" in result
    assert tools.reads_network("read_prep", env) is False


def test_read_prep_is_a_read_offered_after_the_tools_before_it() -> None:
    """The order is part of every request: tools added since (draft_reply, read_since,
    move_due) come after read_prep, so an older run's tool list is the head of today's."""
    before = ["read_inbox", "read_message", "read_calendar", "read_tasks", "create_task"]
    assert list(tools.TOOLS)[:7] == [*before, "read_followups", "read_prep"]
    assert not tools.TOOLS["read_prep"].effect
    offered = [d["name"] for d in tools.definitions()]
    assert "draft_reply" not in offered and offered[:7] == list(tools.TOOLS)[:7]
    assert [d["name"] for d in tools.definitions(drafts=True)] == list(tools.TOOLS)
