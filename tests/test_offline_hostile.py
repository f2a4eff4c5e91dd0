"""The offline model against hostile input: long runs of each rule's words, in a body and in a
cut snippet, are read in linear time and give at most a few tasks."""

from __future__ import annotations

import pytest

from dayflow.providers.offline._reading import body_actions, triage_all
from tests.offline_mail import FROM, RELAY, mail


@pytest.mark.parametrize(
    "body",
    [
        ("_" * 40 + "\n" + "Meeting ID: 1\n") * 20_000,
        "Accept | " * 50_000 + "Decline",
        "please don't " + "and x " * 100_000,
        "thanks a lot for " * 30_000 + "offering to help",
        "we would be grateful if you " * 20_000,
        "ETA on " + "x " * 100_000 + "?",
        "now " * 100_000,
        "https://x.example/" + "a" * 500_000 + " thoughts?",
    ],
)
def test_hostile_input_is_read_without_blowing_up(body: str) -> None:
    message = mail(body, "Re: hostile", snippet=body[:200] + "...", unread=False)
    assert len(body_actions(message, "Alex")) <= 5
    actions, wanted = triage_all(message, "Alex")
    assert len(actions) <= 1 and isinstance(wanted, bool)


@pytest.mark.parametrize(
    "body",
    [
        "if you want " + "3.2 " * 100_000 + ", please send it",
        "the " + "form " * 100_000 + "needs your signature by Friday",
        "It has to be " * 50_000 + "signed by Friday",
        "Hey, does " + "x " * 100_000 + "work?",
        "Hätten Sie " + "x " * 100_000 + "Zeit?",
        "has sent you an invitation " * 30_000 + "RSVP",
    ],
)
def test_hostile_input_of_the_second_part(body: str) -> None:
    for sender in (FROM, RELAY):
        message = mail(body, "Re: hostile", snippet=body[:200] + "...", unread=True,
                        **{"from": sender})  # fmt: skip
        assert len(body_actions(message, "Alex")) <= 5
        actions, wanted = triage_all(message, "Alex")
        assert len(actions) <= 1 and isinstance(wanted, bool)


@pytest.mark.parametrize("snippet", ["could you send " * 20_000, "a. " * 100_000 + "please"])
def test_a_long_cut_snippet_is_triaged_in_linear_time(snippet: str) -> None:
    actions, wanted = triage_all(mail("x", "Re: long", snippet=snippet, unread=False), "Alex")
    assert len(actions) <= 1 and isinstance(wanted, bool)
