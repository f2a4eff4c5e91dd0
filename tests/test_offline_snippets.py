"""Snippets cut with no mark (issue 23): a listing says whether its snippet is the
whole message when it knows, and the offline model opens a message whose snippet may be cut."""

from __future__ import annotations

import datetime as dt
import time
from typing import Any

import pytest

from dayflow.providers.offline._reading import snippet_whole, triage_all
from dayflow.sources.envelope import Envelope
from dayflow.sources.mail import MailItem, is_whole
from tests.offline_mail import found, mail

UTC = dt.UTC


def _item(snippet: str, body: str | None, **extra: Any) -> MailItem:
    return MailItem(
        source="inbox",
        stable_id="s1",
        key="mail:s1",
        sender="Quinn Ashby <quinn@harbour.example>",
        subject="Shelving order",
        received_at=dt.datetime(2026, 11, 2, 9, 0, tzinfo=UTC),
        snippet=snippet,
        unread=True,
        thread_id=None,
        position="0",
        body=body,
        **extra,
    )


def test_the_listing_says_a_snippet_is_whole_when_it_shows_all_of_the_body() -> None:
    body = "Thanks for the shelving\nquote, all good."
    listed = _item("Thanks for the shelving quote, all good.", body).listing_json(UTC)
    assert listed["snippet_is_whole"] is True


def test_the_listing_says_a_snippet_cut_without_a_mark_is_not_whole() -> None:
    body = "Could you check the shelving quote and send it back to the joiner by Thursday?"
    listed = _item(body[:40], body).listing_json(UTC)
    assert listed["snippet_is_whole"] is False


def test_a_listing_that_dropped_the_body_keeps_what_it_knew() -> None:
    listed = _item("Short note.", None, snippet_whole=False).listing_json(UTC)
    assert listed["snippet_is_whole"] is False


def test_a_listing_that_never_read_the_body_says_nothing() -> None:
    assert "snippet_is_whole" not in _item("Short note.", None).listing_json(UTC)
    assert is_whole("Short note.", None) is None


@pytest.mark.parametrize(
    ("snippet", "whole"),
    [
        ("Thanks, the crates arrived.", True),
        ("Can you check the crate count?", True),
        ('He said "fine."', True),
        ("Thanks, the crates arrived", False),  # no sentence end: maybe cut
        ("Could you look over the crate manifest and tell me whether the count is", False),
        ("Can you check the crates? " * 5, False),  # long enough to be a source's cut
        ("Can you check the crate count...", False),
        ("Can you check the crate count…", False),
    ],
)
def test_without_the_listings_word_only_a_short_finished_sentence_is_whole(
    snippet: str, whole: bool
) -> None:
    assert snippet_whole({"snippet": snippet}) is whole


def test_the_listings_word_wins_over_the_shape_of_the_snippet() -> None:
    cut = {"snippet": "Thanks, the crates arrived.", "snippet_is_whole": False}
    assert snippet_whole(cut) is False
    assert snippet_whole({"snippet": "Thanks, the crates arrived", "snippet_is_whole": True})


def _message(snippet: str, **extra: Any) -> dict[str, Any]:
    return {
        "id": "m1",
        "from": "Quinn Ashby <quinn@harbour.example>",
        "subject": "Crates",
        "received_at": "2026-11-02T09:00:00-05:00",
        "snippet": snippet,
        "unread": True,
        **extra,
    }


def test_a_snippet_cut_mid_word_is_opened_not_taken_for_the_message() -> None:
    cut = "Hi Alex, the crates for the Harbour St fit-out came in short. Could you call the depo"
    actions, wanted = triage_all(_message(cut, snippet_is_whole=False), "Alex")
    assert wanted
    assert not any(a.due for a in actions)


def test_a_whole_snippet_is_read_as_the_body_and_not_opened() -> None:
    text = "Alex, could you send the crate count to Quinn by Friday?"
    actions, wanted = triage_all(_message(text, snippet_is_whole=True), "Alex")
    assert not wanted
    assert [a.due for a in actions] == [dt.date(2026, 11, 6)]


def test_html_entities_in_a_snippet_are_read_as_text() -> None:
    text = "Alex, could you send Quinn&#39;s crate count to the depot by Friday?"
    actions, _ = triage_all(_message(text, snippet_is_whole=True), "Alex")
    assert actions and "&#39;" not in actions[0].title


def test_the_whole_snippet_check_is_linear_on_hostile_input() -> None:
    hostile = ".!?" * 20_000 + "x"
    started = time.perf_counter()
    assert snippet_whole({"snippet": hostile}) is False
    assert snippet_whole({"snippet": "&" * 50_000}) is False
    assert time.perf_counter() - started < 1.0


def test_a_morning_of_400_asks_in_cut_snippets_is_briefed_within_the_default_steps(
    tmp_path: Any,
) -> None:
    """After a week away every message may need opening: at eight a turn, 400 would outlast
    --max-steps 40 and the run would stop with no brief. The opening is paced by the run's
    step so that the reading ends with room to file and write."""
    import json

    from tests.harness import invoke, offline_model

    context = "Some long context about the project and its many parts. " * 8
    messages = [
        {
            "id": f"x{i}",
            "from": f"Bo {i} <bo{i}@x.example>",
            "subject": f"Project {i}",
            "received_at": f"2026-11-05T0{i % 7}:{i % 60:02d}:{i % 59:02d}+00:00",
            "body": f"Hi Alex, {context}Could you send me the figures for item {i} by Friday?",
            "unread": True,
        }
        for i in range(400)
    ]
    inbox = tmp_path / "inbox.json"
    inbox.write_text(json.dumps({"messages": messages}))
    db = tmp_path / "d.db"
    result = invoke(db, offline_model, "brief", "--inbox", str(inbox), "--format", "json")
    assert result.code == 0, result.err
    run = json.loads(result.out)["run"]
    assert run["status"] == "done" and run["steps"] <= 40
    assert "## One thing" in json.loads(result.out)["brief"]


@pytest.mark.parametrize(
    ("envelope", "bulk"),
    [
        (Envelope(), False),
        (Envelope(listed=True), True),  # List-Id, List-Unsubscribe, Precedence: list/bulk
        (Envelope(automated=True), True),  # Auto-Submitted, noreply, bounces
    ],
)
def test_the_listing_marks_list_bulk_and_automated_mail_on_the_message(
    envelope: Envelope, bulk: bool
) -> None:
    """The mark travels with the message: read_followups' `bulk` list is capped."""
    listed = _item("Please fill in the survey.", None, envelope=envelope).listing_json(UTC)
    assert listed.get("bulk", False) is bulk
    assert ("bulk" in listed) is bulk  # plain mail's listing is as it was


def test_a_snippet_cut_inside_the_asking_sentence_is_opened_not_dated_by_what_came_before() -> None:
    body = ("Hi Alex, sorry for the Sunday mail. Could you proofread the grant summary by "
            "Tuesday noon? Thanks!")  # fmt: skip
    cut = mail(body, "grant", snippet=body[:70], unread=True)  # "...proofread the gr"
    assert triage_all(cut, "Alex") == ([], True)
    shown = mail(body, "grant", snippet=body[:95] + "…", unread=True)  # the ask and its day
    [action] = triage_all(shown, "Alex")[0]
    assert action.due == dt.date(2026, 11, 3)


@pytest.mark.parametrize(
    ("subject", "snippet"),
    [
        # the subject joins two things: the second may be past the cut
        ("thurs + water heater", "can you pick up Ava's costume from the tailor on Thursday? They"),
        ("badge & parking", "can you pick up Ava's costume from the tailor on Thursday? They"),
        # words after the first ask add one ("also pl", "One more thing")
        ("thurs", "can you pick Maya up from swim on Thursday? I have a late call. also pl"),
        ("thurs", "can you pick Maya up from swim on Thursday? One more thing: the"),
    ],
)
def test_a_cut_snippet_that_says_another_ask_follows_is_opened(subject: str, snippet: str) -> None:
    """A dated ask in a cut snippet settles the message only when nothing says a second ask
    may follow it; here something does, so the message is opened."""
    cut = mail(snippet + " and more", subject, snippet=snippet, snippet_is_whole=False, unread=True)
    assert triage_all(cut, "Alex") == ([], True)


def test_a_cut_snippet_with_one_dated_ask_and_nothing_more_is_settled() -> None:
    """The near miss: a subject of one thing, and what follows the ask adds nothing ("I have
    the late shift"): the snippet's ask is taken, the message is not opened."""
    snippet = "can you pick up Ava's costume from the tailor on Thursday? I have the late sh"
    cut = mail(snippet + "ift.", "thursday", snippet=snippet, snippet_is_whole=False, unread=True)
    actions, wanted = triage_all(cut, "Alex")
    assert [a.title for a in actions] == ["Pick up Ava's costume from tailor"] and not wanted


def test_a_cut_snippet_showing_an_inline_list_of_asks_is_opened() -> None:
    """A snippet runs a list's lines together ("Handoff from today: - can you ... - need you
    to ..."): its first ask dated by the heading's day does not settle the message, which is
    opened, and each ask is dated by its own line."""
    body = (
        "Handoff from today:\n\n- can you order more filters? we're down to two boxes\n"
        "- need you to check the pressure on tank 2 before you leave today\n"
    )
    snippet = " ".join(body.split())[:80] + "…"  # "... two boxes - need you to…"
    cut = mail(body, "handoff notes", snippet=snippet, snippet_is_whole=False, unread=False)
    assert triage_all(cut, "Alex") == ([], True)
    assert found(body, "handoff notes") == [
        ("Order more filters", None),
        ("Check pressure on tank 2", "2026-11-02"),
    ]
