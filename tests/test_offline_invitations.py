"""The offline model's invitations, each on mail written for the test: a calendar tool's join
block is not quoted history and its answer buttons are an invitation, while its notices ask
nothing; a relayed invitation asks for its RSVP but the service alone asks nothing; an
invitation cut before its RSVP is opened, whoever sent it; in a thread the reader owes a reply
in, an invitation waiting for its answer is a task, a casual "are you free?" only the owed
reply."""

from __future__ import annotations

from dayflow.providers.offline._followups import NoTasks
from dayflow.providers.offline._reading import body_actions, triage_all
from tests.offline_mail import RELAY, found, mail

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
    [(title, due)] = found(body, "Supplier audit debrief")
    assert title.startswith("RSVP to") and "audit" in title.lower() and due == "2026-11-04"


def test_answer_buttons_make_an_invitation_and_a_notice_asks_nothing() -> None:
    body = ("When: Thursday, November 5, 2026 2:00 PM-2:30 PM\nWhere: Zoom\n\n"
            "Accept | Tentative | Decline\n\nWalkthrough of the new billing flow.")  # fmt: skip
    assert [t for t, _ in found(body, "Billing flow walkthrough")] == [
        "RSVP to Billing flow walkthrough"
    ]
    assert found(body, "Declined: Billing flow walkthrough") == []
    assert found(body, "Canceled event: Billing flow walkthrough") == []
    assert found("Going? Yes - Maybe - No\nRooftop drinks at 6.", "Rooftop drinks") == [
        ("RSVP to Rooftop drinks", None)
    ]


def test_answer_buttons_spaced_apart_in_plain_text_make_an_invitation() -> None:
    """Outlook's plain-text invitation, forwarded or sent by a colleague: the buttons are
    words with wide gaps, and the meeting's own time is no deadline."""
    body = ("When: Monday, November 9, 2026 1:00 PM-3:00 PM (UTC-05:00) Eastern Time.\n"
            "Where: Magnolia Room\n\n*~*~*~*~*~*~*~*~*~*\n\nKickoff for the new cohort: "
            "introductions and mentor pairings.\n\n{}")  # fmt: skip
    for buttons in (
        "Accept    Tentative    Decline",
        "Accept Tentative Decline",
        "Zusagen    Mit Vorbehalt    Absagen",
        "Aceptar\tQuizás\tRechazar",
    ):
        assert found(body.format(buttons), "Academy kickoff") == [
            ("RSVP to Academy kickoff", None)
        ], buttons
    # the words in a sentence are no buttons
    assert found("We accept the quote. Please decline the other two.", "Quotes") != [
        ("RSVP to Quotes", None)
    ]


def test_a_relayed_invitation_asks_for_its_rsvp_but_the_service_alone_asks_nothing() -> None:
    body = ("Bram Peeters has sent you an invitation.\n\nBoard games night\nFriday 13 Nov, 7 PM\n\n"
            "Please RSVP by November 9.\n\nPartyful · Unsubscribe")  # fmt: skip
    message = mail(body, "You're invited to Board games night!", **{"from": RELAY})
    assert [(a.title, str(a.due)) for a in body_actions(message, "Alex")] == [
        ("RSVP to Board games night", "2026-11-09")
    ]
    assert triage_all(message | {"snippet": body[:60] + "…", "unread": True}, "Alex")[1]
    promo = mail("New themes are here! Please RSVP to our webinar.\nUnsubscribe", "New themes",
                  **{"from": "Partyful <noreply@partyful.example>"})  # fmt: skip
    assert body_actions(promo, "Alex") == []
    no_ask = mail("Bram Peeters invited you to Board games night.", "Invitation",
                   **{"from": RELAY})  # fmt: skip
    assert body_actions(no_ask, "Alex") == []


def test_an_invitation_cut_before_its_rsvp_is_opened_from_a_person_or_an_office() -> None:
    """The reply-by follows what the listing shows ("Kindly RSVP by November 6"), whether a
    person or an office's address ("events@", an Evite) sent it; a snippet that shows the
    RSVP settles it."""
    body = ("Dear Alex, you are warmly invited to our studio opening on Friday 20 November at "
            "6 pm. Kindly RSVP by November 12 so we can finalize seating.")  # fmt: skip
    person = mail(body, "Invitation: studio opening", snippet=body[:60] + "…", unread=True)
    for sender in (None, "Events <events@studio.example>", "Evite <info@evite.example>"):
        listed = person | ({"from": sender} if sender else {})
        actions, wanted = triage_all(listed, "Alex")
        assert wanted and actions == []
        assert [(a.title, str(a.due)) for a in body_actions(listed, "Alex")] == [
            ("RSVP to studio opening", "2026-11-12")
        ]
    shown = person | {"from": "Calendar <calendar-noreply@cal.example>", "snippet": body}
    assert [(a.title, str(a.due)) for a in triage_all(shown, "Alex")[0]] == [
        ("RSVP to studio opening", "2026-11-12")
    ]


OWED = NoTasks(owed=frozenset({"mail:v1"}))  # mail() is in a thread the reader owes a reply in


def _filed_when_owed(body: str, subject: str) -> list[tuple[str, str | None]]:
    """What of a message in an owed thread is filed as a task (title, due)."""
    actions = [a for a in body_actions(mail(body, subject), "Alex") if OWED.files(a)]
    return [(a.title, a.due.isoformat() if a.due else None) for a in actions]


def test_an_invitation_waiting_for_its_answer_is_a_task_in_an_owed_thread() -> None:
    farewell = ("We're getting the team together for a farewell lunch for Odile on Friday. "
                "Please let us know if you can make it.")  # fmt: skip
    assert _filed_when_owed(farewell, "Farewell lunch") == [("RSVP to Farewell lunch", None)]
    # a meeting's day and time proposed, in four languages
    for body, subject in [
        ("Would Wednesday at 3pm work for a quick planning call?", "Planning call"),
        ("Passt dir Donnerstag um 15 Uhr für das Jahresgespräch?", "Jahresgespräch"),
        ("Est-ce que jeudi à 14h te convient pour le point budget ?", "Point budget"),
        ("¿Te viene bien el martes a las 10 para revisar el presupuesto?", "Presupuesto"),
    ]:
        assert _filed_when_owed(body, subject) == [(f"Reply to Ilse about {subject}", None)]
    # a reply-by date in the sentence after the question is the answer's due date
    coffee = "Are you around for a coffee on Thursday? Let me know by Tuesday so I can book."
    assert _filed_when_owed(coffee, "Coffee") == [("Reply to Ilse about Coffee", "2026-11-03")]
    french = "Merci de confirmer votre présence au séminaire de printemps."
    assert [t for t, _ in _filed_when_owed(french, "Séminaire")] == ["RSVP to Séminaire"]


def test_a_casual_are_you_free_in_an_owed_thread_is_only_the_owed_reply() -> None:
    for body, subject in [
        ("Are you free for a drink on Friday?", "Drinks"),
        ("Are you around this weekend? We could take the kids to the zoo.", "Zoo"),
    ]:
        [action] = body_actions(mail(body, subject), "Alex")
        assert action.title == f"Reply to Ilse about {subject}"
        assert not OWED.files(action) and NoTasks().files(action)  # a task where none is owed


def test_a_meeting_systems_invitation_from_a_no_reply_address_is_a_task() -> None:
    body = ("Henrik Dahl is inviting you to a scheduled video meeting.\n\nTopic: Vendor scorecard "
            "review\nTime: Nov 12, 2026 09:30 AM\n\nHenrik's note: please confirm you can join "
            "by Friday.\n\nJoin: https://meet.example/j/4455")  # fmt: skip
    sender = {"from": "MeetNow <no-reply@meetnow.example>", "bulk": True}
    invite = mail(body, "Henrik Dahl is inviting you to a scheduled video meeting", **sender)
    [action] = body_actions(invite, "Alex")
    assert (action.title, str(action.due)) == ("RSVP to Vendor scorecard review", "2026-11-06")
    assert NoTasks().files(action) and NoTasks(bulk=frozenset({"mail:v1"})).files(action)
    listed = invite | {"snippet": body[:70] + "…", "unread": True}
    assert triage_all(listed, "Alex")[1] and NoTasks().opens(listed)
    # an invitation that asks for no answer, a system's notice, and list mail ask nothing
    webinar = mail("You are invited to our autumn product webinar. Seats are limited!",
                   "Webinar", **sender)  # fmt: skip
    assert body_actions(webinar, "Alex") == []
    moved = invite | {"subject": "Updated invitation: Vendor scorecard review"}
    assert body_actions(moved, "Alex") == []
    club = invite | {"list_id": "<members.club.example>"}
    assert not NoTasks().files(body_actions(club, "Alex")[0]) and not NoTasks().opens(club)


def test_a_person_inviting_you_through_a_relay_with_answer_buttons_asks_for_an_rsvp() -> None:
    relay = {"from": "Omar Haddad via Zoom <no-reply@zoom.example>"}
    body = ("Hi Alex,\n\nOmar Haddad is inviting you to a scheduled Zoom meeting.\n\nTopic: "
            "Kiln vendor shortlist\nTime: Nov 10, 2026 3:00 PM\n\nPlease respond: Accept | "
            "Decline\n\nJoin Zoom Meeting\nhttps://zoom.example/j/5521")  # fmt: skip
    subject = "Omar Haddad has invited you to a Zoom meeting: Kiln vendor shortlist"
    assert found(body, subject, **relay) == [("RSVP to Kiln vendor shortlist", None)]
    # the same relay's notice that asks for no answer, and its reminder, ask nothing
    notice = "Omar Haddad is inviting you to a scheduled Zoom meeting.\n\nTopic: Kiln vendor"
    assert found(notice, subject, **relay) == []
    reminder = "Reminder: Kiln vendor shortlist starts in 10 minutes.\n\nJoin Zoom Meeting"
    assert found(reminder, "Meeting reminder: Kiln vendor shortlist", **relay) == []


def test_a_day_and_time_proposed_as_a_question_in_french_or_spanish_asks_a_reply() -> None:
    asks = [
        "Bonjour Alex,\n\nEst-ce que mardi à 10h vous conviendrait pour revoir les devis ?\n\nLéa",
        "Bonjour Alex,\n\nEst-ce que vendredi matin vous irait pour passer au chantier ?\n\nLéa",
        "Hola Alex,\n\n¿Le vendría bien el lunes a las 9 para revisar los planos?\n\nMarta",
    ]
    for body in asks:
        [(title, due)] = found(body, "Rendez-vous")
        assert title.startswith("Reply to") and due is None
    # the same words that say a time suits the sender, or that it is settled, ask nothing
    for body in [
        "Bonjour Alex,\n\nLe créneau de mardi à 10h nous conviendrait, je vous envoie "
        "l'invitation.\n\nLéa",
        "Bonjour à tous,\n\nLa visite de vendredi est confirmée. Rien à faire.\n\nLéa",
        "Hola Alex,\n\nEl lunes nos viene bien a todos, ya está reservado.\n\nMarta",
    ]:
        assert found(body, "Rendez-vous") == []


def test_are_you_in_is_an_invitation_waiting_for_its_answer_in_an_owed_thread() -> None:
    for body in [
        "We're hosting a cheese and wine night on the 14th! Are you in? Numbers eventually.",
        "Wir machen am Samstag eine Radtour. Bist du dabei?",
        "On organise un brunch dimanche. T'es partante ?",
        "Hacemos paella el domingo. ¿Te apuntas?",
    ]:
        assert [t for t, _ in _filed_when_owed(body, "Weekend")] == ["Reply to Ilse about Weekend"]
    # a casual question with no event to join stays only the owed reply
    assert _filed_when_owed("Are you free for a chat later?", "Chat") == []
