"""The offline model's request cues, each on mail written for the test: terse asks for an ETA or
thoughts beside a link, thanks for an offer as a commitment, formal and roundabout asks, the
reader's own yes, "please don't X and Y", an ask phrased as a need, a signature or a proposal,
the voseo, and an "if" that conditions the ask."""

from __future__ import annotations

import datetime as dt

import pytest

from dayflow.providers.offline._reading import body_actions
from tests.offline_mail import found, mail


@pytest.mark.parametrize(
    ("body", "subject", "title"),
    [
        ("ETA?\n\nSent from my phone", "Re: warehouse labels", "Send Ilse ETA on warehouse labels"),
        ("any update on the vendor list?", "vendors", "Send Ilse update on the vendor list"),
        ("https://board.example/c/ROADMAP7\n\nthoughts?", "q3 roadmap",
         "Give Ilse thoughts on q3 roadmap"),
        ("your thoughts? <https://docs.example/d/abc>", "pricing memo",
         "Give Ilse thoughts on pricing memo"),
    ],
)  # fmt: skip
def test_terse_asks_for_an_eta_or_thoughts_beside_a_link(
    body: str, subject: str, title: str
) -> None:
    assert [t for t, _ in found(body, subject)] == [title]


# --- commitments and roundabout asks ----------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "title"),
    [
        ("Thanks a lot for offering to proofread the grant summary before Friday!",
         "Proofread grant summary"),
        ("Thanks again for agreeing to judge the hackathon demos.", "Judge hackathon demos"),
        ("Really appreciate you saying you'd mentor our new intern.", "Mentor new intern"),
        ("We would be grateful if you could return the signed consent form.",
         "Return signed consent form"),
        ("Would it be possible for you to send the floor plan to our architect?",
         "Send floor plan to architect"),
        ("I wanted to ask if you could review the survey questions whenever you have a moment.",
         "Review survey questions"),
    ],
)  # fmt: skip
def test_thanks_for_an_offer_and_roundabout_asks(body: str, title: str) -> None:
    assert [t for t, _ in found(body)][:1] == [title]


def test_the_readers_yes_is_a_commitment_and_while_ends_the_clause() -> None:
    mine = mail("Sure, I can water your plants on Saturday while you're away, Ilse.",
                 "Re: plants", **{"from": "Alex Moreau <alex@home.example>"})  # fmt: skip
    [action] = body_actions(mine, "Alex")
    assert action.title == "Water plants" and action.due == dt.date(2026, 11, 7)


def test_a_negated_please_asks_only_what_follows_it() -> None:
    assert found("Please don't reply-all to the thread.") == []
    assert [t for t, _ in found("Please don't merge it yet and send the logs to Dev.")] == [
        "Send logs to Dev"
    ]


@pytest.mark.parametrize(
    ("body", "subject", "title", "due"),
    [
        ("Dear Member,\n\nPlease renew your locker rental by 11/20 at the front desk.", "Lockers",
         "Renew locker rental at front desk", "2026-11-20"),
        ("if you want it in the 2.0 release, please squash your commits by Friday.", "PR 88",
         "Squash commits", "2026-11-06"),
        ("Alex, the supplier contract needs your signature before noon tomorrow.", "Contract",
         "Sign supplier contract", "2026-11-03"),
        ("It has to be countersigned and returned to me by 9 Nov.", "Vendor MSA",
         "Countersign Vendor MSA", "2026-11-09"),
        ("Hey, does Wednesday at 4 work for a short sync on the hiring plan?", "hiring plan",
         "Reply to Ilse about hiring plan", None),
        ("Hätten Sie kommende Woche Zeit für ein Gespräch?", "Gespräch",
         "Reply to Ilse about Gespräch", None),
        ("¿Podés mandarme el presupuesto cuando puedas?", "presupuesto",
         "Mandar presupuesto a Ilse", None),
    ],
)  # fmt: skip
def test_asks_as_a_need_a_signature_a_proposal_or_in_voseo(
    body: str, subject: str, title: str, due: str | None
) -> None:
    actions = found(body, subject)
    assert actions[:1] == [(title, due)]


def test_an_if_that_is_not_the_readers_wish_still_conditions_the_ask() -> None:
    assert found("If this was not you, please reset your password.", "Sign-in") == []
