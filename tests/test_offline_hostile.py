"""The offline model against hostile input: one corpus of long runs of each rule's words, deep
nesting and one long line, each body cut to the real input cap (`read_message` never hands over
more than `BODY_CHARS` of a body, so a larger one tests nothing real). Each is read in linear
time, gives at most a few tasks and splits into sentences that say something."""

from __future__ import annotations

import time

import pytest

from dayflow.providers.offline._reading import body_actions, triage_all
from dayflow.providers.offline._sentences import sentences
from dayflow.sources.mail import BODY_CHARS
from tests.offline_mail import FROM, RELAY, mail


def at_cap(head: str, run: str, tail: str = "") -> str:
    """`head`, then `run` as often as fits, then `tail`: a body of (nearly) BODY_CHARS."""
    return head + run * ((BODY_CHARS - len(head) - len(tail)) // len(run)) + tail


def lines_at_cap(head: str, line: str, tail: str = "") -> str:
    """`head`, then numbered lines (`line` formatted with 0, 1, ...) while they fit, then `tail`."""
    parts, size, i = [head], len(head) + len(tail), 0
    while size + len(line.format(i)) + 1 <= BODY_CHARS:
        parts.append(line.format(i))
        size, i = size + len(line.format(i)) + 1, i + 1
    return "\n".join(parts) + tail


RUNS = [
    # invitations: a join block, answer buttons, a relayed invitation
    ("", "_" * 40 + "\nMeeting ID: 1\n", ""),
    ("", "Accept | ", "Decline"),
    ("", "has sent you an invitation ", "RSVP"),
    ("", "When: x\n", "_" * 10_000),
    ("", "accept or decline ", ""),
    ("", "zu oder ab ", ""),
    # cues, commitments and roundabout asks
    ("please don't ", "and x ", ""),
    ("", "thanks a lot for ", "offering to help"),
    ("", "we would be grateful if you ", ""),
    ("", "I'd appreciate it if you ", ""),
    ("", "- you'll send ", ""),
    ("if you want ", "3.2 ", ", please send it"),
    ("Hey, does ", "x ", "work?"),
    ("Hätten Sie ", "x ", "Zeit?"),
    ("", "Ça te va ", "?"),
    ("", "dès que tu ", ""),
    ("", "please send it ", ""),
    ("", "Please send it. ", ""),
    (">", ">", " can you send it?"),
    # terse asks
    ("ETA on ", "x ", "?"),
    ("https://x.example/", "a", " thoughts?"),
    ("Thoughts", "?", ""),
    ("", "Sign-off ", "?"),
    ("", "ok? ", ""),
    # needs, obligations and lists of needs
    ("the ", "form ", "needs your signature by Friday"),
    ("", "It has to be ", "signed by Friday"),
    ("", "I need things from you:", ""),
    ("we'll need your ", "x ", "uploaded"),
    ("the ", "fee ", "is due by Friday"),
    ("", "Everyone needs to ", ""),
    ("te pido dos cosas ", "x ", ":"),
    ("", "Two things before ", ":"),
    ("", "- Alex: x\n", ""),
    ("Decisions\n", "- drop it\n", ""),
    ("", "no action needed ", "please send it"),
    # deadlines
    ("", "now ", ""),
    ("", "now ", "?"),
    ("", "by EOD ", "tomorrow"),
    ("Can you send it ", "hoy mismo ", ""),
    ("Can you send it ", "today ", ""),  # quadratic once: a run of spaces left behind
    ("Can you send the ", "word ", "by Friday?"),
    # sentences, sign-offs, nesting and one long line
    ("", " ", ""),
    ("", "(", "by Friday"),
    ("", "[", ""),
    ("[", "a", ""),
    ("", "abc. ", ""),
    ("", "13. ", ""),
    ("", "zurückzu", "en"),
    ("", "Sent from my ", ""),
]
CORPUS = [at_cap(*run) for run in RUNS] + [
    lines_at_cap("", "- a thing {}", "\nI need three things from you:"),
    lines_at_cap("I need three things from you:", "- item {}"),
]


def test_the_corpus_is_at_the_cap() -> None:
    for (head, run, tail), body in zip(RUNS, CORPUS, strict=False):
        assert BODY_CHARS - len(run) < len(body) <= BODY_CHARS, (head, run, tail)
    assert all(BODY_CHARS - 40 < len(body) <= BODY_CHARS for body in CORPUS[len(RUNS) :])


@pytest.mark.parametrize("body", CORPUS)
def test_hostile_input_is_read_without_blowing_up(body: str) -> None:
    started = time.perf_counter()
    for sender in (FROM, RELAY):
        for unread in (False, True):
            message = mail(body, "Re: hostile", snippet=body[:200] + "...", unread=unread,
                           **{"from": sender})  # fmt: skip
            assert len(body_actions(message, "Alex")) <= 5
            actions, wanted = triage_all(message, "Alex")
            assert len(actions) <= 1 and isinstance(wanted, bool)
    assert all(s.text.strip() for s in sentences(body))
    assert time.perf_counter() - started < 10


@pytest.mark.parametrize("snippet", ["could you send " * 20_000, "a. " * 100_000 + "please"])
def test_a_long_cut_snippet_is_triaged_in_linear_time(snippet: str) -> None:
    actions, wanted = triage_all(mail("x", "Re: long", snippet=snippet, unread=False), "Alex")
    assert len(actions) <= 1 and isinstance(wanted, bool)
