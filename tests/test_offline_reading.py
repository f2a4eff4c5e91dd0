"""The offline model's reading of mail (issue 23): deadlines in four languages, several requests
in one message, invitations, commitments, terse requests, and the flow over a long inbox (every
page read, "One thing" today's most pressing item)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from dayflow.agent import BriefOptions, Loop, start_run
from dayflow.dates import find_deadline
from dayflow.models import Limits, RunSettings
from dayflow.providers.offline import OfflineModel
from dayflow.providers.offline._reading import body_actions, reader_of
from dayflow.store import open_store

WED = dt.date(2026, 10, 28)
FRI = dt.date(2026, 10, 30)
MON = dt.date(2026, 11, 2)


@pytest.mark.parametrize(
    ("text", "received", "due"),
    [
        ("Could you finish it by the end of next week?", WED, "2026-11-06"),
        ("Please complete it by the end of the month.", WED, "2026-10-31"),
        ("Can you have the slides ready first thing Monday?", FRI, "2026-11-02"),
        ("Can you proofread the notes tomorrow?", FRI, "2026-10-31"),  # a Saturday
        ("Can you review my teardown by Monday?", MON, "2026-11-09"),  # sent on a Monday
        ("Could you sign off by next Tuesday?", WED, "2026-11-03"),
        ("Please confirm within 48 hours.", FRI, "2026-11-01"),
        ("Could you send the list by the 15th?", dt.date(2026, 10, 29), "2026-11-15"),
        ("Review the addendum before our call on Tuesday.", FRI, "2026-11-03"),
        ("Approve the text before 9:30.", MON, "2026-11-02"),
        ("Sign it by Friday, November 13.", WED, "2026-11-13"),
        ("Renew it before 10/31.", WED, "2026-10-31"),
        ("bitte reich sie bis Ende des Monats ein.", WED, "2026-10-31"),
        ("Sag mir bitte bis morgen Bescheid.", WED, "2026-10-29"),
        ("bitte senden Sie uns die Vollmacht bis zum 6.11. zurück", WED, "2026-11-06"),
        ("merci de l'envoyer d'ici la fin de la semaine", WED, "2026-10-30"),
        ("Merci de confirmer avant le 6 novembre.", WED, "2026-11-06"),
        ("Por favor, responda antes del 5 de noviembre.", WED, "2026-11-05"),
        ("envíame el informe para fin de mes.", WED, "2026-10-31"),
        ("The meeting is on Friday.", WED, None),  # a day, but no deadline
        ("The warning light came on again this morning", WED, "2026-10-28"),  # bare: in context
    ],
)
def test_deadline_phrases_resolve_from_the_day_received(
    text: str, received: dt.date, due: str | None
) -> None:
    found = find_deadline(text, received)
    assert (found.due.isoformat() if found and found.due else None) == due


def _mail(body: str, **fields: Any) -> dict[str, Any]:
    message = {
        "id": "x1",
        "key": "mail:x1",
        "from": "Dana Whitfield <dana@lumen.example>",
        "subject": "A few things",
        "received_at": "2026-10-28T10:00:00-04:00",
        "body": body,
    }
    return message | fields


def _found(message: dict[str, Any], user: str | None = None) -> list[tuple[str, str | None]]:
    return [(a.title, a.due.isoformat() if a.due else None) for a in body_actions(message, user)]


def test_several_requests_in_one_message_are_several_actions_with_their_own_keys() -> None:
    body = (
        "Hi Alex,\n\nThree things before the offsite:\n\n1. Send me your top three risks by "
        "Monday.\n2. Book your train to Hudson by Friday.\n3. Pick a dinner spot.\n\nDana"
    )
    actions = body_actions(_mail(body))
    assert [(a.title, a.due and a.due.isoformat()) for a in actions] == [
        ("Send top three risks to Dana", "2026-11-02"),
        ("Book train to Hudson", "2026-10-30"),
        ("Pick dinner spot", None),
    ]
    assert [a.key for a in actions] == ["mail:x1", "mail:x1#2", "mail:x1#3"]


def test_two_asks_in_one_sentence_each_keep_their_deadline() -> None:
    body = (
        "Alex, can you approve the pricing copy by Wednesday, and can you send me the list by "
        "Thursday?"
    )
    assert _found(_mail(body, received_at="2026-10-27T10:00:00-04:00")) == [
        ("Approve pricing copy", "2026-10-28"),
        ("Send list to Dana", "2026-10-29"),
    ]


@pytest.mark.parametrize(
    ("sender", "body", "title", "due"),
    [
        (
            "Jonas Weber <jonas@x.example>",
            "Hallo Alex,\n\nkannst du bitte das Marketingbudget für Q1 bis Freitag freigeben?",
            "Marketingbudget für Q1 freigeben",
            "2026-10-30",
        ),
        (
            "Camille Laurent <camille@x.example>",
            "Bonjour Alex,\n\nPourriez-vous valider le devis de l'agence avant jeudi ?",
            "Valider devis de l'agence",  # articles go, as in English titles
            "2026-10-29",
        ),
        (
            "Lucía Fernández <lucia@x.example>",
            "Hola Alex,\n\n¿Puedes revisar el presupuesto de la campaña antes del viernes?",
            "Revisar presupuesto de campaña",
            "2026-10-30",
        ),
    ],
)
def test_requests_in_german_french_and_spanish(
    sender: str, body: str, title: str, due: str
) -> None:
    assert _found(_mail(body, **{"from": sender})) == [(title, due)]


def test_a_commitment_the_reader_made_is_a_task_and_another_persons_is_not() -> None:
    thanks = _mail("Thanks for offering to run the launch retro on Thursday!")
    assert _found(thanks) == [("Run launch retro", "2026-10-29")]
    own = _mail("Hi Dana,\n\nI'll send you the hiring plan on Friday.", **{"from": "Alex M <a@x>"})
    assert _found(own, user="Alex") == [("Send Dana hiring plan", "2026-10-30")]
    assert _found(own, user="Sam") == []  # someone else's promise


def test_an_invitation_waiting_for_an_answer_is_an_rsvp_and_its_update_is_not() -> None:
    invite = _mail(
        "Dana invited you.\n\nGoing? Yes - Maybe - No\n\nPlease respond by Thursday.",
        **{"from": "Calendar <calendar-notification@g.example>"},
        subject="Invitation: Q4 roadmap review @ Tue Nov 10, 2026 10am",
    )
    assert _found(invite) == [("RSVP to Q4 roadmap review", "2026-10-29")]
    update = _mail("This event has been changed.", **{"from": invite["from"]})
    assert _found(update | {"subject": "Updated invitation: Q4 roadmap review"}) == []


def test_a_newsletter_that_says_please_asks_nothing() -> None:
    body = "Leaf pickup starts Monday: please rake leaves to the curb. Unsubscribe at any time."
    assert _found(_mail(body, **{"from": "News <editor@news.example>"})) == []


def test_a_request_quoted_inline_in_a_snippet_does_not_count() -> None:
    snippet = (
        "Great, see you at 7 then! On Thu, Oct 29, 2026, Jamie wrote: > Are you free Saturday?"
    )
    assert _found(_mail(snippet)) == []


def test_the_reader_is_the_name_the_inbox_greets() -> None:
    inbox = [
        {"snippet": "Hi Alex, could you..."},
        {"snippet": "Alex, can you..."},
        {"snippet": "x"},
    ]
    assert reader_of(inbox) == "Alex"
    assert reader_of([{"snippet": "Hi Alex,"}]) is None  # once is not enough


# --- the flow over a long inbox ---------------------------------------------------------------


NAMES = ("Rosa Lindqvist", "Omar Haddad", "Ines Costa", "Felix Brandt", "Nora Morgan")


def _message(n: int, received: str, subject: str, body: str, sender: str = "") -> dict[str, Any]:
    return {
        "id": f"m{n:03d}",
        "from": sender or f"{NAMES[n % len(NAMES)]} <p{n}@x.example>",
        "subject": subject,
        "received_at": received,
        "body": body,
        "unread": True,
    }


def _brief_over(tmp_path: Path, messages: list[dict[str, Any]], day: dt.date) -> tuple[Any, str]:
    path = tmp_path / "inbox.json"
    path.write_text(json.dumps({"messages": messages}), encoding="utf-8")
    with open_store(tmp_path / "d.db") as store:
        options = BriefOptions(
            brief_date=day,
            limits=Limits(max_steps=100, task_cap=100),
            settings=RunSettings(tz="America/New_York", inbox=str(path)),
        )
        result = start_run(Loop(store, OfflineModel()), options)
        return store.tasks.list(), result.text or ""


def test_a_long_inbox_is_read_page_by_page_to_its_oldest_message(tmp_path: Path) -> None:
    """150 messages: the one request is the oldest, three pages down (old code read one)."""
    messages = [
        _message(n, f"2026-11-01T{n % 24:02d}:{n % 60:02d}:00-05:00", f"Update {n}", "Thanks!")
        for n in range(1, 150)
    ]
    messages.append(
        _message(
            150, "2026-10-20T09:00:00-04:00", "Contract", "Could you sign the contract by Friday?"
        )
    )
    tasks, brief = _brief_over(tmp_path, messages, MON)
    assert [(t.title, t.due, t.source_id) for t in tasks] == [
        ("Sign contract", "2026-10-23", "inbox:m150")
    ]
    assert "Sign contract" in brief.split("## Needs action")[1]


def test_one_thing_is_the_urgent_same_day_item_not_an_overdue_or_later_one(
    tmp_path: Path,
) -> None:
    messages = [
        _message(1, "2026-10-27T09:00:00-04:00", "Form", "Please return the form by Thursday."),
        _message(2, "2026-11-01T09:00:00-05:00", "Deck", "Could you send me the deck by Friday?"),
        _message(
            3, "2026-11-02T06:40:00-05:00", "Outage", "Checkout is down. Can you call me today?"
        ),
    ]
    _, brief = _brief_over(tmp_path, messages, MON)
    assert brief.split("## One thing")[1].strip() == "**Call Felix about Outage, due today.**"


def test_tomorrow_is_read_in_the_readers_zone_across_the_dst_change(tmp_path: Path) -> None:
    """04:30 UTC on 2 November is 23:30 on 1 November in New York (EST since that morning)."""
    messages = [
        _message(
            1, "2026-11-02T04:30:00+00:00", "Slides", "Could you send me the slides by tomorrow?"
        )
    ]
    tasks, _ = _brief_over(tmp_path, messages, MON)
    assert [(t.title, t.due) for t in tasks] == [("Send slides to Omar", "2026-11-02")]


def test_a_page_with_more_requests_than_a_turn_holds_is_read_again_for_the_rest(
    tmp_path: Path,
) -> None:
    """45 messages asking two things each: 90 notes do not fit one answer of 4,096 tokens, so
    the page is noted in parts, and every request is filed; the run ends done, not cut."""
    messages = [
        _message(
            n,
            f"2026-11-01T{n % 24:02d}:{n % 60:02d}:00-05:00",
            f"Two things {n}",
            f"Could you approve budget line {n} by Friday, and can you send me the invoice {n}?",
        )
        for n in range(1, 46)
    ]
    tasks, brief = _brief_over(tmp_path, messages, MON)
    assert len(tasks) == 90 and len({t.idempotency_key for t in tasks}) == 90
    assert "## One thing" in brief


def test_a_brief_too_long_for_one_answer_lists_the_most_pressing_and_counts_the_rest(
    tmp_path: Path,
) -> None:
    messages = [
        _message(
            n,
            f"2026-11-01T{n % 24:02d}:{n % 60:02d}:00-05:00",
            f"Request {n}",
            f"Could you review the quarterly vendor contract renewal paperwork number {n}?",
        )
        for n in range(1, 100)
    ]
    messages.append(_message(100, "2026-11-02T06:00:00-05:00", "Now", "Can you call me today?"))
    tasks, brief = _brief_over(tmp_path, messages, MON)
    needs = brief.split("## Needs action")[1].split("##")[0].strip().splitlines()
    assert len(tasks) == 100
    assert needs[0].startswith("- Call ") and "due today" in needs[0]
    assert needs[-1].startswith("- ") and "more, due later or with no deadline" in needs[-1]
