"""Spam and scams are no task, by their signs (issue 34): bait (a prize, funds to release, an
account to "verify", a deal) beside a second sign (pressure, a spammer's style, a sender domain
that names itself a promotion); one sign alone is ordinary mail and keeps its task. An
auto-reply that says so on its first line is no task either. All mail written for the test."""

from __future__ import annotations

import pytest

from dayflow.providers.offline._reading import triage_all
from dayflow.providers.offline._scam import looks_like_scam
from tests.offline_mail import found, mail

SCAMS = [
    # (from, subject, body)
    (
        "Claims Desk <desk@kestrel-claims.example>",
        "Your unclaimed inheritance",
        "Dear friend, you are the beneficiary of $4.5 million. Reply with your banking details "
        "within 48 hours to release the funds.",
    ),
    (
        "Prize Team <team@mega-prize-win.example>",
        "Congratulations",
        "You have won a new tablet! Click here to claim your prize before Friday.",
    ),
    (
        "Security <security@kestrel-mail.example>",
        "Action required",
        "Your account will be suspended. Verify your account now: click the link below.",
    ),
    (
        "Rafa <rafa@coins.example>",
        "alex k. - double ur money",
        "Bitcoin pays guaranteed returns. Please send 0.1 BTC to the wallet below today.",
    ),
    (
        "Dr. Pharm <sales@pharmadeals.biz>",
        "special offer inside!!!",
        "Lowest prices on pain killers. Order now, please reply with your card details.",
    ),
    (
        "Deals <d@kestrel.example>",
        "cheap meds",
        "would you like pharmacy savings ? please visit http : / / www . pills . example /",
    ),
    # a sales pitch's scarce seat, under pressure
    (
        "Jo Park <jo@summitstage.example>",
        "Final hours: secure your VIP package",
        "Following up on the expo. Two VIP packages remain and the offer is closing tonight. "
        "Could you confirm by 5 PM so I can hold one for you?",
    ),
    (
        "Events <hello@forumlive.example>",
        "Only 3 hours left to claim your booth",
        "Your reserved spot at the Growth Forum is waiting. Can you reply with your card number "
        "before noon?",
    ),
    # a stock tout, and a pill pusher from a promotion's domain
    (
        "Tip Desk <desk@marketmovers.example>",
        "this one is about to move",
        "watch this stock on friday ! please buy before the news breaks . to be removed reply "
        "with remove me .",
    ),
    (
        "Vita <vita@vita-offers.example>",
        "(no subject)",
        "tired of low libido ? then please read this new report today .",
    ),
]


@pytest.mark.parametrize(("sender", "subject", "body"), SCAMS)
def test_a_scam_is_no_task_and_is_not_opened(sender: str, subject: str, body: str) -> None:
    assert looks_like_scam(subject, body, sender)
    assert found(body, subject, **{"from": sender}) == []
    listed = mail("", subject, **{"from": sender}, snippet=body, unread=True)
    listed.pop("body")
    assert triage_all(listed, "Alex") == ([], False)


@pytest.mark.parametrize(
    ("subject", "body", "task"),
    [
        # one sign alone: bait without pressure, pressure without bait
        (
            "Refund",
            "Could you send me your bank details for the refund by Friday?",
            ("Send bank details for refund to Ilse", "2026-11-06"),
        ),
        (
            "Offsite",
            "Last chance: please book your seat for the offsite by Friday.",
            ("Book seat for offsite", "2026-11-06"),
        ),
        (
            "Sponsors",
            "Could you confirm the gold sponsorship package for the meetup by Friday?",
            ("Confirm gold sponsorship package for meetup", "2026-11-06"),
        ),
        (
            "Raffle",
            "Ben won the raffle prize. Could you order the gift card by Friday?",
            ("Order gift card", "2026-11-06"),
        ),
    ],
)
def test_one_sign_alone_is_ordinary_mail_and_keeps_its_task(
    subject: str, body: str, task: tuple[str, str]
) -> None:
    assert not looks_like_scam(subject, body, "Ilse Varga <ilse@kestrel.example>")
    assert task in found(body, subject)


def test_an_auto_reply_under_a_persons_subject_is_no_task() -> None:
    body = (
        "Auto-Reply: Out of Office\n\nI am away until Monday. For anything urgent, please "
        "contact Mara Jensen or reply to this thread."
    )
    assert found(body, "Re: Budget review") == []
    # a person's sentence that opens with the words is still theirs
    assert found("Out of office next week, so could you send the deck by Friday?", "Deck") == [
        ("Send deck", "2026-11-06")
    ]
