"""The offline model's rules of issue 23's fifth round, each on mail written for the test:
"One thing" puts an ask to be done now (its own deadline "right away", "now", "ASAP") over one
merely dated today and says what it is about; a calendar tool's join block is not quoted
history and its answer buttons are an invitation, while its notices ask nothing; terse asks
for an ETA or thoughts beside a link; thanks for an offer as a commitment; formal and
roundabout asks; "please don't X and Y"; and each new rule against hostile input."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from dayflow.providers.offline._brief import _Need, _one_thing
from dayflow.providers.offline._reading import body_actions, triage_all, urgent_action

MON = "2026-11-02T08:05:00-05:00"  # the brief's morning
TODAY = dt.date(2026, 11, 2)
FROM = "Ilse Varga <ilse@kestrel.example>"


def _mail(body: str, subject: str = "Hello", **fields: Any) -> dict[str, Any]:
    message = {"id": "v1", "key": "mail:v1", "from": FROM, "subject": subject,
               "received_at": MON, "body": body}  # fmt: skip
    return message | fields


def _found(body: str, subject: str = "Hello", **fields: Any) -> list[tuple[str, str | None]]:
    actions = body_actions(_mail(body, subject, **fields), "Alex")
    return [(a.title, a.due.isoformat() if a.due else None) for a in actions]


# --- One thing: what to do first -------------------------------------------------------------


def test_an_ask_to_be_done_right_away_is_urgent_though_the_snippet_cut_it_off() -> None:
    body = ("Hi Alex, the badge reader logged your card at two doors at once. Please don't "
            "badge in again and bring your card to the front desk right away.")  # fmt: skip
    message = _mail(body, "your badge", snippet=body[:70] + "…")
    [action] = body_actions(message, "Alex")
    assert action.title.startswith("Bring") and action.due == TODAY
    assert urgent_action(action)
    calm = body_actions(_mail("Could you file the expense report today?", "expenses"), "Alex")
    assert calm[0].due == TODAY and not urgent_action(calm[0])


def test_one_thing_puts_the_urgent_same_day_ask_first_and_says_what_it_is_about() -> None:
    needs = [
        _Need("Join war room", "Bo", TODAY, True, "k1", "SEV2: invoices not sending"),
        _Need("Prepare slides", "Cy", TODAY, False, "k2"),
    ]
    assert _one_thing(needs, [], TODAY, []) == (
        "**Join war room (SEV2: invoices not sending), due today.**"
    )
    # a title that already says it needs no more
    said = [
        _Need("Call Bo about invoices not sending", "Bo", TODAY, True, "k", "invoices not sending")
    ]
    assert _one_thing(said, [], TODAY, []) == "**Call Bo about invoices not sending, due today.**"


def test_now_of_the_ask_is_today_but_for_now_is_not_a_deadline() -> None:
    [(_, due)] = _found("Need you in the ops channel now to approve the rollback.")
    assert due == "2026-11-02"
    assert all(d is None for _, d in _found("For now, could you keep the old pricing page up?"))


# --- invitations ---------------------------------------------------------------------------


JOIN_BLOCK = (
    "________________________________________________________________________________\n"
    "Microsoft Teams meeting\nJoin on your computer, mobile app or room device\n"
    "Click here to join the meeting\nMeeting ID: 901 222 333 44\nPasscode: aB3dE\n"
    "________________________________________________________________________________\n"
)


def test_a_join_block_over_the_message_is_not_quoted_history() -> None:
    body = (
        JOIN_BLOCK
        + "\nHello all, the supplier audit debrief. Please accept or decline by Wednesday."
    )
    [(title, due)] = _found(body, "Supplier audit debrief")
    assert title.startswith("RSVP to") and "audit" in title.lower() and due == "2026-11-04"


def test_answer_buttons_make_an_invitation_and_a_notice_asks_nothing() -> None:
    body = ("When: Thursday, November 5, 2026 2:00 PM-2:30 PM\nWhere: Zoom\n\n"
            "Accept | Tentative | Decline\n\nWalkthrough of the new billing flow.")  # fmt: skip
    assert [t for t, _ in _found(body, "Billing flow walkthrough")] == [
        "RSVP to Billing flow walkthrough"
    ]
    assert _found(body, "Declined: Billing flow walkthrough") == []
    assert _found(body, "Canceled event: Billing flow walkthrough") == []
    assert _found("Going? Yes - Maybe - No\nRooftop drinks at 6.", "Rooftop drinks") == [
        ("RSVP to Rooftop drinks", None)
    ]


# --- terse asks ------------------------------------------------------------------------------


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
    assert [t for t, _ in _found(body, subject)] == [title]


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
    assert [t for t, _ in _found(body)][:1] == [title]


def test_the_readers_yes_is_a_commitment_and_while_ends_the_clause() -> None:
    mine = _mail("Sure, I can water your plants on Saturday while you're away, Ilse.",
                 "Re: plants", **{"from": "Alex Moreau <alex@home.example>"})  # fmt: skip
    [action] = body_actions(mine, "Alex")
    assert action.title == "Water plants" and action.due == dt.date(2026, 11, 7)


def test_a_negated_please_asks_only_what_follows_it() -> None:
    assert _found("Please don't reply-all to the thread.") == []
    assert [t for t, _ in _found("Please don't merge it yet and send the logs to Dev.")] == [
        "Send logs to Dev"
    ]


# --- hostile input -----------------------------------------------------------------------------


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
    message = _mail(body, "Re: hostile", snippet=body[:200] + "...", unread=False)
    assert len(body_actions(message, "Alex")) <= 5
    actions, wanted = triage_all(message, "Alex")
    assert len(actions) <= 1 and isinstance(wanted, bool)


# --- more ways to ask (second part of the round) ----------------------------------------------


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
def test_more_ways_to_ask_this_round(body: str, subject: str, title: str, due: str | None) -> None:
    found = _found(body, subject)
    assert found[:1] == [(title, due)]


def test_an_if_that_is_not_the_readers_wish_still_conditions_the_ask() -> None:
    assert _found("If this was not you, please reset your password.", "Sign-in") == []


RELAY = "Bram Peeters via Partyful <noreply@partyful.example>"


def test_a_relayed_invitation_asks_for_its_rsvp_but_the_service_alone_asks_nothing() -> None:
    body = ("Bram Peeters has sent you an invitation.\n\nBoard games night\nFriday 13 Nov, 7 PM\n\n"
            "Please RSVP by November 9.\n\nPartyful · Unsubscribe")  # fmt: skip
    message = _mail(body, "You're invited to Board games night!", **{"from": RELAY})
    assert [(a.title, str(a.due)) for a in body_actions(message, "Alex")] == [
        ("RSVP to Board games night", "2026-11-09")
    ]
    assert triage_all(message | {"snippet": body[:60] + "…", "unread": True}, "Alex")[1]
    promo = _mail("New themes are here! Please RSVP to our webinar.\nUnsubscribe", "New themes",
                  **{"from": "Partyful <noreply@partyful.example>"})  # fmt: skip
    assert body_actions(promo, "Alex") == []
    no_ask = _mail("Bram Peeters invited you to Board games night.", "Invitation",
                   **{"from": RELAY})  # fmt: skip
    assert body_actions(no_ask, "Alex") == []


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
        message = _mail(body, "Re: hostile", snippet=body[:200] + "...", unread=True,
                        **{"from": sender})  # fmt: skip
        assert len(body_actions(message, "Alex")) <= 5
        actions, wanted = triage_all(message, "Alex")
        assert len(actions) <= 1 and isinstance(wanted, bool)


def test_a_sentence_opening_with_a_deadline_dates_the_ask_before_it() -> None:
    body = "Could you send the venue the final guest list? By Wednesday would be great."
    assert _found(body, "Gala") == [("Send venue final guest list", "2026-11-04")]
    # one that does not open with it stays the sentence's own
    later = "Could you send the venue the final guest list? The caterer wants it by Wednesday."
    assert _found(later, "Gala")[0][1] == "2026-11-04"


def test_a_snippet_cut_inside_the_asking_sentence_is_opened_not_dated_by_what_came_before() -> None:
    body = ("Hi Alex, sorry for the Sunday mail. Could you proofread the grant summary by "
            "Tuesday noon? Thanks!")  # fmt: skip
    cut = _mail(body, "grant", snippet=body[:70], unread=True)  # "...proofread the gr"
    assert triage_all(cut, "Alex") == ([], True)
    shown = _mail(body, "grant", snippet=body[:95] + "…", unread=True)  # the ask and its day
    [action] = triage_all(shown, "Alex")[0]
    assert action.due == dt.date(2026, 11, 3)


def test_a_persons_invitation_cut_before_its_rsvp_is_opened() -> None:
    body = ("Dear Alex, you are warmly invited to our studio opening on Friday 20 November at "
            "6 pm. Please RSVP by November 12.")  # fmt: skip
    person = _mail(body, "Invitation: studio opening", snippet=body[:60] + "…", unread=True)
    actions, wanted = triage_all(person, "Alex")
    assert wanted and actions == []
    assert [(a.title, str(a.due)) for a in body_actions(person, "Alex")][0][1] == "2026-11-12"
    tool = person | {"from": "Calendar <calendar-noreply@cal.example>"}
    assert [a.title for a in triage_all(tool, "Alex")[0]] == ["RSVP to studio opening"]


@pytest.mark.parametrize("snippet", ["could you send " * 20_000, "a. " * 100_000 + "please"])
def test_a_long_cut_snippet_is_triaged_in_linear_time(snippet: str) -> None:
    actions, wanted = triage_all(_mail("x", "Re: long", snippet=snippet, unread=False), "Alex")
    assert len(actions) <= 1 and isinstance(wanted, bool)
