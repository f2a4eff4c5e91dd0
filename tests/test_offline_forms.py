"""The offline model's request forms (issue 23), each on mail written for the test (no
sentence of any split): request forms in four languages, deadlines before the cue or after
EOD, terse asks in a reply, proposals closed by a question, RSVPs in a body, an Outlook
invitation's rule line (hostile input: test_offline_hostile)."""

from __future__ import annotations

from typing import Any

import pytest

from dayflow.dates import find_deadline
from dayflow.providers.offline._reading import body_actions, triage_all
from tests.test_offline_requests import _mail as requests_mail

FRI = "2026-10-30T10:00:00-04:00"  # a Friday
MON = "2026-11-02T08:00:00-05:00"
INES = "Inés Valcárcel <ines@tallermar.example>"


def _found(
    body: str, subject: str = "Hola", received: str = FRI, **fields: Any
) -> list[tuple[str, str | None]]:
    message = requests_mail(body, subject, **{"from": INES, "received_at": received} | fields)
    return [(a.title, a.due.isoformat() if a.due else None) for a in body_actions(message, "Alex")]


@pytest.mark.parametrize(
    ("body", "title", "due"),
    [
        ("Le agradecería que nos enviara el albarán firmado antes del martes.",
         "Enviar albarán firmado a Inés", "2026-11-03"),
        ("Te pido que revises las medidas del mueble a más tardar el lunes.",
         "Revisar medidas del mueble", "2026-11-02"),
        ("Le rogamos que confirme la reserva antes del jueves.", "Confirmar reserva", "2026-11-05"),
        ("Favor de enviar el inventario mañana.", "Enviar inventario", "2026-10-31"),
        ("I'd appreciate it if you could countersign the lease by Wednesday.",
         "Countersign lease", "2026-11-04"),
        ("We would really appreciate it if you send the floor plan by Nov 9.",
         "Send floor plan", "2026-11-09"),
    ],
)  # fmt: skip
def test_formal_and_polite_request_forms(body: str, title: str, due: str) -> None:
    assert _found(body) == [(title, due)]


@pytest.mark.parametrize(
    ("body", "due"),
    [
        ("First thing Monday, could you send the pallet count to Joaquín?", "2026-11-02"),
        ("Can you update the cutting list by EOD tomorrow? Thanks", "2026-10-31"),
        ("Please file the expenses by end of business day Monday.", "2026-11-02"),
        ("Tomorrow, can you check the kiln temperatures?", "2026-10-31"),
    ],
)
def test_a_deadline_before_the_cue_or_after_eod_is_the_requests(body: str, due: str) -> None:
    assert [d for _, d in _found(body)] == [due]


@pytest.mark.parametrize(
    ("phrase", "iso"),
    [
        ("by EOD tomorrow", "2026-10-31"),
        ("by COB Monday", "2026-11-02"),
        ("by end of day tomorrow", "2026-10-31"),
        ("hoy mismo", "2026-10-30"),
        ("heute noch", "2026-10-30"),
        ("aujourd'hui même", "2026-10-30"),
    ],
)
def test_eod_with_a_day_and_emphatic_today_resolve(phrase: str, iso: str) -> None:
    import datetime as dt

    found = find_deadline(f"please do it {phrase}", dt.date(2026, 10, 30))
    assert found is not None and found.due is not None and found.due.isoformat() == iso


def test_now_asked_is_today_but_now_in_a_statement_is_no_deadline() -> None:
    assert _found("Can you dial into the incident call now?", received=MON)[0][1] == "2026-11-02"
    assert _found("The kiln is fixed now. Can you check the glaze?")[0][1] is None


@pytest.mark.parametrize(
    ("body", "subject", "title"),
    [
        ("Thoughts?", "Re: shelf layout v2", "Give Inés thoughts on shelf layout v2"),
        ("Any thoughts?", "RE: kiln quote", "Give Inés thoughts on kiln quote"),
        ("Qu'en penses-tu ?", "Re: devis menuiserie", "Give Inés thoughts on devis menuiserie"),
        ("Sign-off?", "Re: spring catalogue copy", "Sign off on spring catalogue copy"),
    ],
)
def test_a_terse_ask_in_a_reply_is_about_the_thread(body: str, subject: str, title: str) -> None:
    assert _found(body, subject) == [(title, None)]


def test_a_thanks_in_a_reply_asks_nothing() -> None:
    assert _found("Thanks, all good.", "Re: shelf layout v2") == []


@pytest.mark.parametrize(
    "body",
    [
        "Je te propose un point jeudi à 10h pour caler le chantier. Ça te va ?",
        "Te propongo una llamada el martes por la tarde. ¿Te parece bien?",
        "How about Wednesday at 4 for the walkthrough? Does that work for you?",
        "Ich schlage Dienstag um 9 Uhr für die Abnahme vor. Passt dir das?",
    ],
)
def test_a_proposal_closed_by_a_question_wants_a_reply(body: str) -> None:
    assert _found(body, "Obra Calle Mayor") == [("Reply to Inés about Obra Calle Mayor", None)]


@pytest.mark.parametrize(
    ("body", "due"),
    [
        ("Please accept or decline by Tuesday so I can book the room.", "2026-11-03"),
        ("Bitte sagen Sie bis zum 6. November zu oder ab.", "2026-11-06"),
        ("Merci de confirmer ta présence avant jeudi.", "2026-11-05"),
    ],
)
def test_an_answer_to_an_invitation_is_an_rsvp(body: str, due: str) -> None:
    assert _found(body, "Glaze workshop") == [("RSVP to Glaze workshop", due)]


def test_an_outlook_invitations_rule_line_is_not_quoted_history() -> None:
    body = (
        "When: Wednesday, November 4, 2026 2:00 PM-3:00 PM (UTC-05:00) Eastern Time\n"
        "Where: Room 3 / Teams\n\n________________________________\n\nHi Alex,\n\n"
        "We need someone from product. Please accept or decline by Monday.\n\nInés"
    )
    assert _found(body, "Supplier audit prep") == [("RSVP to Supplier audit prep", "2026-11-02")]


def test_a_rule_line_after_the_senders_words_still_starts_quoted_history() -> None:
    body = (
        "Done, thanks.\n\n________________________________\nFrom: Alex Morgan\n"
        "Sent: Thursday\nCan you send the kiln quote by Friday?"
    )
    assert _found(body, "RE: kiln") == []


def test_the_passive_with_a_deadline_covers_uploads() -> None:
    body = "Final drawings must be uploaded to the client portal by November 12."
    assert _found(body) == [("Upload Final drawings", "2026-11-12")]


def test_a_cut_snippet_from_a_read_message_with_a_needy_subject_is_opened() -> None:
    message = requests_mail(
        "Sorry for the weekend ping. The staging database migration failed and the demo for",
        "need your approval today",
        **{"from": INES, "received_at": FRI, "unread": False, "snippet_is_whole": False},
    )
    message["snippet"] = message["body"]
    assert triage_all(message, "Alex")[1] is True


@pytest.mark.parametrize(
    ("subject", "opened"),
    [
        ("Choir permission slip - Harbour Museum, Nov 19", True),  # a form to return
        ("Trip money due Nov 13", True),  # a thing falling due
        ("Class photos back by Friday", True),  # its deadline's lead
        ("Choir trip - Harbour Museum, Nov 19", True),  # only the event's date: still opened
    ],
)
def test_a_read_message_cut_short_is_opened_whatever_its_subject(
    subject: str, opened: bool
) -> None:
    """A group's letter opens with a greeting and a description ("Dear Year 4 Families, Our
    class will visit ..."): the ask to return the form comes past the snippet, so a person's
    message cut short is opened, read or not, whatever its subject names."""
    snippet = (
        "Dear Year 4 Families, Our class will visit the Harbour Museum on Thursday, November 19"
        " for our river unit. We will leave at 9:00 and be back by 2:15. Students should..."
    )
    message = requests_mail(snippet, subject, **{"from": INES, "received_at": FRI, "unread": False})
    message["snippet"], message["snippet_is_whole"] = snippet, False
    assert triage_all(message, "Alex") == ([], opened)


def test_in_a_list_of_owners_only_the_readers_items_are_the_readers() -> None:
    body = (
        "Hi all,\n\nFor Monday's fit-out review, owners:\n\n- Bea: please order the hinges.\n"
        "- Alex: can you sign the supplier contract by Tuesday?\n- Tom: please book the van.\n"
    )
    assert _found(body, "Fit-out owners") == [("Sign supplier contract", "2026-11-03")]


NOTES = (
    "Notes, kiln review 29/10\n\nAction items:\n- Bea: order the cones and the shelf posts by "
    "Fri.\n- Tom: book the van for the market.\n- Ines: send the glaze recipes to Ruth.\n\n"
    "Next review Wed, 2pm."
)


def test_action_items_that_name_only_others_give_the_reader_nothing() -> None:
    """Meeting notes under an action items heading, each item an owner's, none the reader's:
    the reader has nothing to do (an item for the reader, or for all, is theirs)."""
    assert _found(NOTES, "Kiln review notes") == []
    mine = NOTES.replace("- Tom: book the van", "- Alex: book the van by Tue")
    assert _found(mine, "Kiln review notes") == [("Book van for market", "2026-11-03")]
    everyone = NOTES.replace("\n\nNext", "\n- All: please send me your stall hours by Tue.\n\n")
    assert _found(everyone, "Kiln review notes") == [("Send stall hours to Inés", "2026-11-03")]


def test_an_action_item_for_the_reader_by_a_longer_name_is_still_theirs() -> None:
    """ "Alexander:" may be the reader Alex (a colleague's full name for them): not another's."""
    longer = NOTES.replace("- Tom: book the van", "- Alexander: book the van by Tue")
    assert _found(longer, "Kiln review notes") == [("Book van for market", "2026-11-03")]


def test_owners_without_an_action_items_heading_are_left_as_they_are() -> None:
    """Without the heading a label may be a topic ("- Budget: ..."), so the list stays."""
    body = NOTES.replace("Action items:\n", "")
    assert _found(body, "Kiln review notes") != []


def test_labels_that_are_things_still_ask_the_reader() -> None:
    body = "Hi Alex,\n\n- Budget: please send the numbers by Friday.\n- Slides: review by Monday."
    assert [d for _, d in _found(body)] == ["2026-11-06", "2026-11-02"]


def test_a_list_under_a_decisions_heading_asks_nothing() -> None:
    body = (
        "Notes from the kiln session (Alex, Bea, Tom):\n\nDecisions\n- Drop the glaze B trial.\n"
        "- Keep the Friday firing.\n\nAction items\n- Bea: order cones (Fri)\n\nNext in two weeks."
    )
    assert _found(body, "notes: kiln session") == []


def test_no_action_needed_further_down_silences_bare_list_items() -> None:
    body = (
        "Hi all,\n\nShipped:\n- New booking page\n- Fix for the calendar sync\n\n"
        "Risks:\n- Supplier delays; we're watching it.\n\n"
        "No action needed from anyone, just keeping you posted.\n\nInés"
    )
    assert _found(body, "Weekly update") == []


def test_no_action_said_to_someone_else_leaves_the_readers_asks() -> None:
    body = (
        "Bea, Alex\n\nAlex - two asks: approve the kiln order by tomorrow noon, and decide on "
        "the shelf supplier.\n\nBea - fyi the labels are final, nothing needed.\n\nInés"
    )
    assert [t for t, _ in _found(body, "Kiln order")][:1] == ["Approve kiln order"]


def test_an_outright_ask_survives_a_no_action_line() -> None:
    body = (
        "Hi Alex,\n\nThe new draft is in the folder. It has the kiln figures. Can you review it"
        " by Friday? No action needed on the old one."
    )
    assert _found(body, "Draft") == [("Review Draft", "2026-11-06")]


def test_a_list_intro_with_a_deadline_dates_its_items() -> None:
    body = (
        "Hello Alex,\n\nTwo things before our site visit on the 9th, please:\n\n"
        "* send us the updated snag list, and\n* bring someone from the joinery team.\n\nHarriet"
    )
    assert [d for _, d in _found(body, "Site visit")] == ["2026-11-09", "2026-11-09"]


@pytest.mark.parametrize(
    "body",
    [
        "Alex, te pido dos cosas para la feria:\n1) que me confirmes el horario del stand, y\n"
        "2) que me mandes el logo antes del miércoles.",
        "Alex, je te demande deux choses pour le salon :\n- confirmer l'horaire du stand\n"
        "- m'envoyer le logo avant mercredi",
    ],
)
def test_asking_for_a_list_of_things_is_a_list_of_needs(body: str) -> None:
    assert [d for _, d in _found(body, "Feria")] == [None, "2026-11-04"]


def test_an_item_of_someone_elses_recap_that_says_you_will_is_the_readers() -> None:
    body = (
        "Hi Alex,\n\nThanks for the call. Recap:\n\n- you'll send the revised floor plan to our "
        "facilities team by Nov 6\n- I'll get the lease redlines back to you\n"
        "- you'll receive the invoice next week"
    )
    assert _found(body, "call recap") == [
        ("Send revised floor plan to facilities team", "2026-11-06")
    ]


def test_an_items_deadline_is_not_left_in_its_title() -> None:
    body = "Hi Alex, I'm asking for two things: the venue list, and the budget by Friday."
    assert _found(body) == [
        ("Send venue list to Inés", None),
        ("Send budget to Inés", "2026-11-06"),
    ]


def test_an_ask_to_sign_and_one_to_return_the_signed_thing_are_one_task() -> None:
    """One ask said twice ("I need the lease addendum signed by you. Please return the
    signed addendum by Nov 9."): one task, named by the fuller phrase, due by its date;
    a different thing to return stays a task of its own."""
    body = (
        "To close the file I still need the Lease Addendum (attached) signed by you as tenant. "
        "Please return the signed addendum by November 9."
    )
    assert _found(body, "Lease addendum", MON) == [("Return signed Lease Addendum", "2026-11-09")]
    two = (
        "To close the file I still need the Lease Addendum (attached) signed by you as tenant. "
        "Please return the signed parking form by November 9."
    )
    assert [t for t, _ in _found(two, "Lease addendum", MON)] == [
        "Sign Lease Addendum",
        "Return signed parking form",
    ]
