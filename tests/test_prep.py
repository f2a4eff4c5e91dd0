"""Prep for today's meetings (`meetings.prep`): the window's threads with the people an event
is with, newest first, and the open tasks from their mail; who gets none, and the bounds."""

from __future__ import annotations

import datetime as dt
from email.utils import format_datetime
from typing import Any

from dayflow.followups import Followups, Record, Window, build_followups, parse_me
from dayflow.meetings import prep
from dayflow.meetings._prep import MAX_EVENTS, MAX_THREADS
from dayflow.models import Task
from dayflow.sources.mail import MailItem
from dayflow.sources.mime import parse_message

ME = parse_me(["alex@example.org"])
NOW = dt.datetime(2026, 11, 18, 8, 0, tzinfo=dt.UTC)
SAM = "Sam Okafor <sam@partner.example>"
PRIYA = "Priya Raman <priya@work.example>"
ALEX = "Alex Doe <alex@example.org>"


def _record(mid: str, sender: str, to: str, subject: str, days: float, *, refs: str = "",
            sent: bool = False) -> Record:  # fmt: skip
    when = NOW - dt.timedelta(days=days)
    lines = [f"From: {sender}", f"To: {to}", f"Subject: {subject}",
             f"Date: {format_datetime(when)}", f"Message-ID: <{mid}>"]  # fmt: skip
    lines += [f"In-Reply-To: <{refs}>", f"References: <{refs}>"] if refs else []
    data = ("\r\n".join([*lines, "", "Text."]) + "\r\n").encode()
    item = MailItem.of("work", parse_message(data, fallback_time=NOW), unread=False, position="")
    return Record.of(item, sent=sent)


def _followups(*records: Record) -> Followups:
    return build_followups(list(records), Window(ME, NOW, dt.UTC))


def _event(eid: str, *people: str, **fields: Any) -> dict[str, Any]:
    attendees = [{"address": a} for a in people]
    return {"id": eid, "title": eid, "start": "2026-11-18T10:00:00+00:00",
            "end": "2026-11-18T11:00:00+00:00", "attendees": attendees, **fields}  # fmt: skip


def _task(key: str, status: str = "open") -> Task:
    return Task(
        id=f"t_{key[-4:]}",
        title=f"Task {key}",
        due=None,
        status=status,
        source_id=None,
        notes=None,
        idempotency_key=key,
        run_id="r",
        created_at="2026-11-17T08:00:00Z",
    )


def test_an_event_gets_the_threads_with_its_people_newest_first_and_their_open_tasks() -> None:
    budget = _record("b1@x", SAM, ALEX, "Budget", 3)
    reply = _record("b2@x", ALEX, SAM, "Re: Budget", 2, refs="b1@x", sent=True)
    venue = _record("v1@x", PRIYA, ALEX, "Venue", 1)
    other = _record("o1@x", "Bo <bo@else.example>", ALEX, "Unrelated", 0.5)
    followups = _followups(budget, reply, venue, other)
    tasks = [_task(budget.key), _task(f"{venue.key}#2"), _task(other.key), _task(venue.key, "done")]
    event = _event("review", "sam@partner.example", "priya@work.example", "alex@example.org")
    [item], more = prep([event], followups, tasks, dt.UTC)
    assert more == 0
    assert item["with"] == [{"address": "sam@partner.example"}, {"address": "priya@work.example"}]
    assert [(t["subject"], t.get("latest_from_me", False)) for t in item["threads"]] == [
        ("Venue", False),
        ("Re: Budget", True),
    ]
    assert item["threads"][0]["latest_from"] == {"name": "Priya Raman",
                                                 "address": "priya@work.example"}  # fmt: skip
    assert item["threads"][1]["messages"] == 2
    assert item["threads"][0]["key"].startswith("thread:")
    assert [t["key"] for t in item["tasks"]] == [budget.key, f"{venue.key}#2"]


def test_no_prep_for_an_event_with_only_the_user_or_that_is_cancelled_or_declined() -> None:
    followups = _followups(_record("b1@x", SAM, ALEX, "Budget", 3))
    events = [
        _event("alone", "alex@example.org"),
        _event("nobody"),
        _event("cancelled", "sam@partner.example", status="cancelled"),
        _event("declined", "sam@partner.example", response="declined"),
        # The user's address with a +tag is still the user.
        _event("tagged", "alex+cal@example.org", organizer={"address": "ALEX@example.org"}),
    ]
    assert prep(events, followups, [], dt.UTC) == ([], 0)


def test_the_organizer_counts_and_people_without_mail_get_an_empty_prep() -> None:
    followups = _followups(_record("b1@x", SAM, ALEX, "Budget", 3))
    organized = _event("intro", organizer={"name": "Sam Okafor", "address": "sam@partner.example"})
    named = {"id": "lunch", "title": "Lunch", "attendees": [{"name": "Marco"}]}
    items, _ = prep([organized, named], followups, [], dt.UTC)
    assert [i["id"] for i in items] == ["intro", "lunch"]
    assert [t["subject"] for t in items[0]["threads"]] == ["Budget"]
    assert items[1]["with"] == [{"name": "Marco"}] and items[1]["threads"] == []


def test_mail_older_than_the_window_is_not_prep() -> None:
    followups = _followups(_record("b1@x", SAM, ALEX, "Budget", 20))
    [item], _ = prep([_event("review", "sam@partner.example")], followups, [], dt.UTC)
    assert item["threads"] == []


def test_prep_is_bounded_in_events_and_threads() -> None:
    records = [_record(f"m{n}@x", SAM, ALEX, f"Topic {n}", 1 + n / 100) for n in range(12)]
    followups = _followups(*records)
    events = [_event(f"e{n:02d}", "sam@partner.example") for n in range(MAX_EVENTS + 4)]
    items, more = prep(events, followups, [], dt.UTC)
    assert len(items) == MAX_EVENTS and more == 4
    assert len(items[0]["threads"]) == MAX_THREADS and items[0]["threads_more"] == 12 - MAX_THREADS
    assert items[0]["threads"][0]["subject"] == "Topic 0"  # the newest
