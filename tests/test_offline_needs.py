"""The offline model's asks as needs (issue 23), each on mail written for the test: a
request phrased as a need or an obligation, a list of needs (English, Spanish), formal German,
terse requests beside an attachment or a phone's sign-off, "heads up" openers, read messages
that greet the reader, payments that fall due, deadlines that stay with their own clause
(hostile input: test_offline_hostile)."""

from __future__ import annotations

from typing import Any

import pytest

from dayflow.providers.offline._reading import body_actions, triage_all
from tests.offline_mail import found
from tests.test_offline_requests import _mail as requests_mail

FRI = "2026-10-30T10:00:00-04:00"  # a Friday
PRIYA = "Priya Natarajan <priya@harbor.example>"


def _mail(body: str, subject: str = "Hello", **fields: Any) -> dict[str, Any]:
    """test_offline_requests' message, from Priya on a Friday."""
    return requests_mail(body, subject, **{"from": PRIYA, "received_at": FRI} | fields)


def _found(body: str, subject: str = "Hello", **fields: Any) -> list[tuple[str, str | None]]:
    actions = body_actions(_mail(body, subject, **fields), "Alex")
    return [(a.title, a.due.isoformat() if a.due else None) for a in actions]


@pytest.mark.parametrize(
    ("body", "title", "due"),
    [
        ("You need to renew the parking permit in the portal before Tuesday.",
         "Renew parking permit in portal", "2026-11-03"),
        ("Everyone needs to complete the safety training by November 13.",
         "Complete safety training", "2026-11-13"),
        ("I need your updated travel budget (the one with the train option) by Nov 9.",
         "Send updated travel budget to Priya", "2026-11-09"),
        ("We'll need your signed waiver uploaded to the club site by Thursday.",
         "Upload signed waiver to club site", "2026-11-05"),
        ("need a quick +1 on the banner text by EOD", "Send quick +1 on banner text to Priya",
         "2026-10-30"),
        ("thank u for saying you'd drop the keys at the office tomorrow!",
         "Drop keys at office", "2026-10-31"),
    ],
)  # fmt: skip
def test_a_need_or_an_obligation_is_a_request(body: str, title: str, due: str) -> None:
    assert _found(body) == [(title, due)]


def test_a_list_of_needs_makes_one_task_a_thing_each_due_when_named_later() -> None:
    body = (
        "Hi Alex,\n\nFor the board pack I need three things from you:\n\n- a short summary\n"
        "- the hiring plan (a draft is fine)\n- your risk notes\n\n"
        "Summary and hiring plan by Wednesday, please. The risk notes can wait."
    )
    assert _found(body) == [
        ("Send short summary to Priya", "2026-11-04"),
        ("Send hiring plan to Priya", "2026-11-04"),
        ("Send risk notes to Priya", None),
    ]


def test_needs_in_one_sentence_and_a_decision_among_them() -> None:
    body = "I need two things from you: a price sheet (by Monday), and a yes or no on the pilot."
    assert _found(body) == [
        ("Send price sheet to Priya", "2026-11-02"),
        ("Decide on pilot", None),
    ]


def test_a_spanish_list_of_needs_in_the_subjunctive() -> None:
    body = (
        "Hola Alex,\n\nnecesito dos cosas:\n\n1) que me confirmes el horario, y\n"
        "2) que me mandes el presupuesto, como muy tarde el 9 de noviembre."
    )
    assert _found(body) == [
        ("Confirmar horario a Priya", None),
        ("Mandar presupuesto a Priya", "2026-11-09"),
    ]


def test_a_formal_german_plea_with_a_zu_infinitive_and_a_german_date() -> None:
    body = (
        "Sehr geehrter Herr Morgan,\n\nbitte beachten Sie die neue Adresse. Wir bitten Sie, den "
        "Antrag bis spätestens 20. November an uns zurückzuschicken."
    )
    assert _found(body) == [("Antrag an Priya zurückschicken", "2026-11-20")]


def test_terse_beside_an_attachment_or_a_phones_sign_off() -> None:
    assert _found("Sign?\n\n[lease-renewal.pdf]\n\nSent from my iPhone", "Lease renewal") == [
        ("Sign Lease renewal", None)
    ]
    snippet = "Pls approve today. -P Sent from my phone. Confidential, do not forward."
    assert _found(snippet, "Budget transfer") == [("Approve Budget transfer", "2026-10-30")]


def test_a_heads_up_warns_but_what_follows_may_ask() -> None:
    body = "Alex, heads up: the auditors arrive at noon. Can you send the access list this morning?"
    assert _found(body) == [("Send access list", "2026-10-30")]
    message = _mail(body, snippet=body[:44] + "...", unread=True)
    assert triage_all(message, "Alex") == ([], True)  # the snippet says heads up: opened
    assert _found("Heads up: the office is closed Monday. Nothing you need to do.") == []


def test_a_read_message_is_opened_whoever_it_greets() -> None:
    """Its ask may come after the snippet ("Hey both, ... Can you send me your share by Nov
    4?"): a person's message cut short is opened, read or not, greeting the reader or not."""
    snippet = "Hi Alex, The committee met on Tuesday and talked through the plan for the..."
    assert triage_all(_mail("", snippet=snippet, unread=False), "Alex") == ([], True)
    other = "Hey both, The committee met on Tuesday and talked through the plan for the..."
    assert triage_all(_mail("", snippet=other, unread=False), "Alex") == ([], True)
    fyi = "FYI: the committee met on Tuesday and talked through the plan for the..."
    assert triage_all(_mail("", snippet=fyi, unread=False), "Alex") == ([], False)


def test_a_snippet_that_announces_several_asks_is_opened_even_with_a_deadline() -> None:
    snippet = "Two things: 1) book the van by Monday 2) send the..."
    _, wanted = triage_all(_mail("", snippet=snippet, unread=True), "Alex")
    assert wanted


def test_a_payment_that_falls_due_and_a_lower_case_list_of_asks() -> None:
    assert _found("The spring tuition of $1,200 is due by 11/20.") == [
        ("Pay spring tuition of $1,200", "2026-11-20")
    ]
    assert _found("The quarterly report is due by 11/20.") == []  # no payment: only a fact
    body = "can u pick up the cake before 5 today? also call the florist about sunday"
    assert [t for t, _ in _found(body)] == ["Pick up cake", "Call florist about sunday"]


def test_a_deadline_stays_with_its_own_clause_and_those_before_it() -> None:
    body = "Could you approve the quote by Monday noon, and decide whether we keep the old vendor?"
    assert _found(body) == [
        ("Approve quote", "2026-11-02"),
        ("Decide whether we keep old vendor", None),
    ]
    assert _found("Could you sign it and send it to Omar by Tuesday?", "Lease") == [
        ("Sign Lease", "2026-11-03"),
        ("Send Lease to Omar", "2026-11-03"),
    ]


def test_titles_say_what_to_do_with_a_contract() -> None:
    body = "Please execute the signature page (p. 4) and return a scanned copy to me by Monday."
    assert _found(body) == [("Sign signature page", "2026-11-02")]
    assert _found("Can you get it back to me signed by Tuesday?", "Lease addendum") == [
        ("Return Lease addendum signed to Priya", "2026-11-03")
    ]


@pytest.mark.parametrize(
    ("body", "subject", "title"),
    [
        ("Pourrais-tu la relire avant lundi ?", "Charte graphique", "Relire Charte graphique"),
        ("Would you be OK moving it to May?", "Offsite",
         "Tell Priya whether you'll move it to May"),
        ("Would you be open to introducing me to your CFO?", "Intro",
         "Introduce Priya to CFO"),
        ("I need your sign-off on the brief by Monday.", "Brief", "Sign off on brief"),
        ("Can you double check the totals on tab 3?", "Totals", "Double-check totals on tab 3"),
        ("Can you tell me if you want the appendix in or out, it's long either way?", "Deck",
         "Tell Priya if you want the appendix in or out"),
    ],
)  # fmt: skip
def test_titles_of_asks_to_reread_move_introduce_sign_off_and_tell(
    body: str, subject: str, title: str
) -> None:
    assert [t for t, _ in _found(body, subject)] == [title]


def test_a_french_meeting_ask_and_an_invitation_subject_without_its_time() -> None:
    ask = "serais-tu dispo jeudi à 10h pour un point sur le budget ?"
    assert [t for t, _ in _found(ask, "Point budget")] == ["Reply to Priya about Point budget"]
    invite = "You have been invited to: Budget review\nPlease respond by Wednesday."
    subject = "Invitation: Budget review - Thu Nov 12, 2:00 PM-3:00 PM"
    assert _found(invite, subject) == [("RSVP to Budget review", "2026-11-04")]


def test_a_word_between_your_and_the_sign_off_still_asks_for_it() -> None:
    """'I need your final sign-off today': the adjective does not hide the need."""
    assert found("I need your final sign-off today so the order can ship.", "Order 4471") == [
        ("Sign off on Order 4471", "2026-11-02")
    ]
    assert found("Your final sign-off came through yesterday, thanks.", "Order 4471") == []


def test_a_menu_path_is_no_quoted_reply_and_a_role_greeting_is_the_reader() -> None:
    """'(Reports > Q3 > Draft)' is where a file is, not a quoted reply's '>'; 'Dear
    Licensee,' and 'Dear Families,' greet the reader by their role, not another person."""
    crumbs = ("The vendor list is on the wiki (Reports > Q3 > Draft). Could you check it by "
              "Wednesday?")  # fmt: skip
    assert [d for _, d in found(crumbs, "Vendor list")] == ["2026-11-04"]
    path = "Please add Priya as an editor (Settings > Team > Roles) by Friday."
    assert found(path, "Roles") == [("Add Priya as editor", "2026-11-06")]
    quoted = "Thanks! > Could you check the vendor list by Wednesday?"
    assert found(quoted, "Re: Vendor list") == []
    for greeting in ("Dear Licensee,", "Dear Families,"):
        body = f"{greeting}\n\nPlease return the signed permit form by Thursday."
        assert found(body, "Permit") == [("Return signed permit form", "2026-11-05")]
    assert found("Dear Marguerite,\n\nPlease return the signed permit form.", "Permit") == []


def test_an_obligation_on_everyone_in_the_readers_role_with_a_deadline_is_a_task() -> None:
    """'Every team lead must submit ... by Friday' asks each reader in that role; without a
    deadline ('every visitor must sign in') it is a house rule, no task."""
    body = ("Hi team leads,\n\nEvery team lead who manages contractors must submit the Q4 "
            "access review in Sailpoint by Friday. It takes ten minutes.")  # fmt: skip
    assert found(body, "Access review") == [("Submit Q4 access review in Sailpoint", "2026-11-06")]
    each = "Each cost-centre owner must approve their December accruals by Thursday."
    assert found(each, "Accruals") == [("Approve December accruals", "2026-11-05")]
    assert found("Every visitor must sign in at the front desk.", "Visitors") == []
    assert found("Every desk must be cleared by Friday for the carpet crew.", "Carpets") == []


def test_a_note_of_whom_an_internal_mail_went_to_is_no_newsletter() -> None:
    """'This message was sent to all budget holders.' closes a colleague's mail; a
    newsletter's 'This email was sent to you because ...' still marks it bulk."""
    body = ("Please send your revised 2027 travel budget by Thursday.\n\n"
            "This message was sent to all budget holders.")  # fmt: skip
    assert found(body, "Travel budget") == [("Send revised 2027 travel budget", "2026-11-05")]
    promo = body.replace("to all budget holders", "to ilse@kestrel.example because you opted in")
    assert found(promo, "Travel budget") == []


def test_a_need_after_a_lead_in_or_with_dates_in_its_object_is_still_a_need() -> None:
    """'A reminder that under clause 4.2(b) we need the signed waiver no later than 11/13'
    and 'the 1/1/26-6/30/26 sales figures': the lead-in and the dates in the thing keep it."""
    body = "A reminder that under clause 4.2(b) we need the signed waiver no later than 11/13."
    assert found(body, "Waiver") == [("Send signed waiver to Ilse", "2026-11-13")]
    figures = "I need the 1/1/26-6/30/26 sales figures by region by 11/10."
    assert found(figures, "Sales") == [("Send 1/1/26-6/30/26 sales figures to Ilse", "2026-11-10")]
    assert found("Do you need the signed waiver by Friday?", "Waiver") == []


def test_a_thing_needed_within_hours_or_days_is_sent_by_then() -> None:
    body = (
        "Hi Alex,\n\nThe survey office rejected the plat. We need the stamped drawings within "
        "72 hours to hold the permit slot.\n\nPriya"
    )
    assert _found(body) == [("Send stamped drawings to Priya", "2026-11-02")]
    assert _found("I need your completed timesheet within two days.") == [
        ("Send completed timesheet to Priya", "2026-11-01")
    ]


@pytest.mark.parametrize(
    "body",
    [
        # a state needed of a place, told to everyone: no thing to send
        "Hi all,\n\nWe need the conference room cleared within 2 hours for the fire inspection."
        "\n\nPriya",
        "Hi everyone,\n\nWe need the parking lot empty within 24 hours for the resurfacing crew."
        "\n\nThanks,\nPriya",
        # an approval is given, not sent
        "Hi Alex,\n\nI need the director's approval on the new budget within 48 hours.\n\nPriya",
        # a service's automated notice
        "We received your claim. We need the supporting documents within 30 days. This is an "
        "automated message, do not reply to this email.",
    ],
)
def test_a_need_within_hours_that_is_no_thing_to_send_is_no_send_task(body: str) -> None:
    assert not [t for t, _ in _found(body) if t.startswith("Send ")]


def test_so_we_can_get_started_is_a_persons_words_not_a_services_button() -> None:
    body = (
        "Hi Alex,\n\nThe lease is attached. Please countersign and send it back by 20 November "
        "so we can get started on the fit-out.\n\nPriya"
    )
    assert [due for _, due in _found(body)] == ["2026-11-20"]
    assert _found("Welcome aboard! Get started with your free workspace today.\n\nThe Team") == []
    fyi = "Hi Alex,\n\nThe contractor will get started on the roof next week.\n\nPriya"
    assert _found(fyi) == []


def test_a_need_after_but_is_still_a_need_and_after_and_context_stays_context() -> None:
    """'I have placeholders for the liner, but I need your request for it by November 13':
    what follows "but" is the need. The near miss: a statement joined by "and" ("our system
    shows it changed, and we need your card before the visit") gives no second task beside
    the ask that follows it."""
    body = "I have a placeholder for the pool liner, but I need your request for it by November 13."
    assert found(body, "Capital requests") == [("Send request for it to Ilse", "2026-11-13")]
    told = (
        "Our system shows your insurance changed, and we need your updated card on file before "
        "your visit on November 10th. Could you email us a photo of the card by Friday?"
    )
    assert [t for t, _ in found(told, "Insurance card")] == ["Email photo of card to Ilse"]


@pytest.mark.parametrize(
    ("body", "title"),
    [
        ("Need a yes or no from you on the repair tomorrow morning.", "Decide on repair"),
        ("We need a decision on the vendor by Friday.", "Decide on vendor"),
        # the near miss: a thing needed is still sent
        ("We need the signed waiver by Friday.", "Send signed waiver to Ilse"),
    ],
)
def test_a_decision_needed_is_made_not_sent(body: str, title: str) -> None:
    assert [t for t, _ in found(body, "Hello")] == [title]


@pytest.mark.parametrize(
    ("body", "title"),
    [
        ("Can you get our spreadsheet updated by end of next week?", "Update spreadsheet"),
        ("Could you get the form signed by Friday?", "Sign form"),
        ("Can you get me the revised schedule by Friday?", "Send revised schedule to Ilse"),
        ("Could you get the forms to me by Friday?", "Send forms to Ilse"),
        # near misses: a place to get to, and a signed thing to return, stay as they were
        ("Could you get the car to the garage?", "Get car to garage"),
        ("Can you get it back to me signed by Friday?", "Return Lease signed to Ilse"),
    ],
)
def test_get_a_thing_done_or_get_me_a_thing_is_its_verb(body: str, title: str) -> None:
    """'get X updated' is updating X; 'get me X' and 'get X to me' are sending X."""
    assert [t for t, _ in found(body, "Lease")] == [title]


@pytest.mark.parametrize(
    ("body", "subject", "title", "due"),
    [
        # a need whose deadline is "by then": the date the sentence named before it
        ("Printer needs final copy Wednesday Nov 4 by noon, so I need the tasting notes + "
         "ABV/IBU for the three winter releases (Ember Lane, Hollow Oak) from you by then.",
         "menu boards", "Send tasting notes + ABV/IBU for three winter releases to Priya",
         "2026-11-04"),
        # a sign-off wished for, on the thing the subject names
        ("It's due on the 15th but I'd really like your sign-off by Thursday, Nov 5.",
         "Brewer's Report", "Sign off on Brewer's Report", "2026-11-05"),
        # "it", needed done: the subject's thing
        ("We'll need it signed by end of next week to lock in the pricing.",
         "Contract addendum", "Sign Contract addendum to lock in pricing", "2026-11-06"),
        # being somewhere is the way to the task after "to"
        ("I need you on the floor this afternoon to decide whether we dump or rework.",
         "Line on hold", "Decide whether we dump or rework", "2026-10-30"),
        # a need in German, Spanish and French
        ("Außerdem brauchen wir bis zum 13.11. Ihre aktualisierte Lieferadresse für das "
         "neue Lager.", "Malz", "Aktualisierte Lieferadresse an Priya senden", "2026-11-13"),
        ("Necesitamos el certificado de análisis antes del 6 de noviembre.", "Pedido",
         "Enviar el certificado de análisis a Priya", "2026-11-06"),
        ("Lo necesitamos antes del 6 de noviembre para la declaración.", "Certificado",
         "Enviar Certificado a Priya", "2026-11-06"),
        ("J'ai besoin du devis signé avant jeudi.", "Devis", "Envoyer devis signé à Priya",
         "2026-11-05"),
    ],
)  # fmt: skip
def test_a_need_stated_is_the_readers_task(body: str, subject: str, title: str, due: str) -> None:
    assert _found(body, subject) == [(title, due)]


@pytest.mark.parametrize(
    ("body", "subject", "title"),
    [
        # a request put as a wish, in three languages
        ("If you could book me a hotel near the brewery for the night of the 9th, that would "
         "be great.", "hotel", "Book Priya hotel near brewery for night of 9th"),
        ("Et si tu pouvais me réserver un hôtel près de la gare, ce serait top.", "hôtel",
         "Réserver hôtel près de gare à Priya"),
        # whether a thing is possible, or a choice to make: the reader answers
        ("Would a tour of the brewery be possible on the afternoon of November 14?", "Tour",
         "Reply to Priya about Tour"),
        ("Wäre am 14. November nachmittags eine Führung durch Ihre Brauerei möglich?",
         "Führung", "Reply to Priya about Führung"),
        ("Möchten Sie das Wiener Malz wieder in Säcken oder lieber im Big Bag?", "Malz",
         "Reply to Priya about Malz"),
        ("Tu préfères mardi ou jeudi pour la visite ?", "Visite", "Reply to Priya about Visite"),
        # "you guys in?" answers an invitation; the event's Saturday is no deadline
        ("We're having a bonfire Saturday night, 7ish. You guys in?", "bonfire",
         "Reply to Priya about bonfire"),
    ],
)  # fmt: skip
def test_a_wish_a_possibility_or_a_choice_asks_the_reader(
    body: str, subject: str, title: str
) -> None:
    assert _found(body, subject) == [(title, None)]


def test_a_wish_is_not_every_condition() -> None:
    """Only a wish that calls the ask good is one: a real condition still asks nothing."""
    assert _found("If you could see the river from the hotel, that was luck.") == []
    assert _found("If you can't make it, that's fine.") == []


def test_the_senders_own_doing_before_an_ask_does_not_date_it() -> None:
    body = "Je t'envoie la recette finale demain. Peux-tu me réserver un hôtel pour le groupe ?"
    assert _found(body, "Brassin") == [("Réserver hôtel pour groupe à Priya", None)]


@pytest.mark.parametrize(
    ("body", "subject", "title"),
    [
        ("OK to apply the $1,140 credit to the Nov invoice?", "credit memo",
         "Approve applying $1,140 credit to Nov invoice"),
        ("Okay if we move the tasting to 40 people?", "tasting",
         "Approve moving tasting to 40 people"),
        ("Taste before racking? Sample's in the lab fridge.", "FV6", "Taste FV6 before racking"),
    ],
)  # fmt: skip
def test_a_terse_leave_or_verb_question_is_a_request(body: str, subject: str, title: str) -> None:
    assert _found(body, subject) == [(title, None)]


def test_a_purpose_after_an_asks_deadline_does_not_share_it_with_the_ask_before() -> None:
    """ "...so legal has them" names the redlines, not the memo: the 15th is theirs only."""
    body = (
        "please add a section on pricing risks to the board memo, and send Nadia the contract "
        "redlines by the 15th so legal has them before the renewal."
    )
    assert _found(body, "Board memo") == [
        ("Add section on pricing risks to board memo", None),
        ("Send Nadia contract redlines", "2026-11-15"),
    ]


@pytest.mark.parametrize(
    ("body", "subject", "found"),
    [
        # leave asked without a subject, its object a doing
        ("We're oversold by 4 tonight. Need your OK to walk 4 guests — brand policy needs GM "
         "approval. Today please, arrivals start at 3.", "Oversold",
         [("Approve walking 4 guests", "2026-10-30")]),
        # a need with an aside before its deadline
        ("I need the hotel's 2027 capital plan, with the PIP items split out from the "
         "discretionary projects, by 11/9 at the latest.", "Capital plan",
         [("Send hotel's 2027 capital plan to Priya", "2026-11-09")]),
        # a third person's need of the reader's doing; "it" is the thing named before it
        ("The addendum is in your DocuSign queue. Julia needs it countersigned by Nov 3 so "
         "she can get it through their board.", "SCEA addendum",
         [("Countersign addendum", "2026-11-03")]),
        # "would you and Jamie ...": the reader and another, asked together
        ("His price is $2,100, so roughly $1,050 each. Would you and Jamie be OK splitting it "
         "50/50?", "fence", [("Tell Priya whether you'll split it 50/50", None)]),
        # items announced as requests, dated by "both" after them
        ("Two requests ahead of the investment committee:\n\n(a) a one-page explanation of "
         "the September variance, and\n(b) the status of the bathroom renovations.\n\nI'd like "
         "both by Friday.", "IC prep",
         [("Send one-page explanation of September variance to Priya", "2026-11-06"),
          ("Send status of bathroom renovations to Priya", "2026-11-06")]),
        # a bullet's thing "needs your signature"; a bare yes-or-no on the statement before it
        ("Three quick ones:\n\n• Mercer BEO — needs your signature, it goes back to their "
         "planner by Tuesday.\n• SCEA is asking us to comp the AV for the reception ($1,850). "
         "Yes or no?\n• The linen overage for the gala came in $1,240 over the quote. OK to "
         "approve?", "Three quick ones",
         [("Sign Mercer BEO", "2026-11-03"),
          ("Decide whether to comp AV for reception", None),
          ("Approve linen overage for gala", None)]),
    ],
)  # fmt: skip
def test_needs_leave_and_bare_decisions_asked_of_the_reader(
    body: str, subject: str, found: list[tuple[str, str | None]]
) -> None:
    assert _found(body, subject) == found


def test_a_deadline_and_a_plea_after_an_ask_is_its_deadline_not_a_task() -> None:
    body = "Could you send me the rooming list? Thursday at the latest, please."
    assert _found(body, "Rooming list") == [("Send rooming list to Priya", "2026-11-05")]


@pytest.mark.parametrize(
    ("body", "subject", "title"),
    [
        ("Approve?\n\nLaurel Finch | Director of Finance\nThe Lumen Savannah", "Check run",
         "Approve Check run"),
        ("Close them out? We're at 92% with the wedding.", "Nov 14 - close out discounts?",
         "Approve closing out Nov 14 - discounts"),
        ("milk + eggs tonight pls, we're out", "milk", "Pick up milk + eggs"),
    ],
)  # fmt: skip
def test_terse_asks_under_a_signature_or_of_a_thing_wanted(
    body: str, subject: str, title: str
) -> None:
    assert [t for t, _ in _found(body, subject, **{"from": "Laurel Finch <l@x.example>"})] == [
        title
    ]


def test_an_ask_of_verbs_only_is_the_ask_before_it_that_names_its_object() -> None:
    body = (
        "I need your approval on the October reforecast before I submit it. Can you review "
        "and approve by Oct 29?"
    )
    assert _found(body, "Reforecast") == [("Approve October reforecast", "2026-10-29")]


def test_a_weekday_in_a_possessive_is_the_day_of_the_thing_not_the_asks() -> None:
    body = "Can you text Coach Ray that Theo will miss next Tuesday's practice (dentist)?"
    assert _found(body, "stuff") == [
        ("Text Coach Ray that Theo will miss next Tuesday's practice", None)
    ]


def test_a_terse_ask_above_a_rule_line_and_its_details_is_terse() -> None:
    body = "Approve?\n\n-----\nCasco invoice 88213: $41,906.10 vs PO $39,870.00 (index up 4.9%)."
    assert _found(body, "Casco fuel invoice variance") == [
        ("Approve Casco fuel invoice variance", None)
    ]


def test_a_german_ask_with_two_cues_around_a_pronoun_is_one_ask() -> None:
    body = "Könnten Sie uns diese bitte bis Freitag mitteilen?"
    assert len(_found(body, "Betriebsstunden")) == 1


@pytest.mark.parametrize(
    ("body", "title", "due"),
    [
        ("Nous vous prions de bien vouloir procéder au règlement de la facture avant le 15 "
         "novembre.", "Procéder au règlement de facture", "2026-11-15"),
        ("J'aurais besoin que tu relises le dossier avant lundi.", "Relire dossier", "2026-11-02"),
        ("Necesito que me digas si vienes el sábado.", "Decir a Priya si vienes el sábado", None),
    ],
)  # fmt: skip
def test_formal_french_pleas_and_irregular_subjunctives(
    body: str, title: str, due: str | None
) -> None:
    assert _found(body) == [(title, due)]


def test_a_formal_german_plea_for_a_thing_is_a_request() -> None:
    found = _found("Anbei unser Angebot. Wir bitten um Ihre Rückmeldung bis zum 6. November.")
    assert [due for _, due in found] == ["2026-11-06"]


@pytest.mark.parametrize(
    ("body", "title", "due"),
    [
        ("I was hoping you could cover my shift on Saturday.", "Cover Priya's shift",
         "2026-10-31"),
        ("Just a reminder to submit your expense report by the 5th.", "Submit expense report",
         "2026-11-05"),
        ("Gentle reminder: your timesheet is due Monday.", "Submit timesheet", "2026-11-02"),
        ("Can I get your sign-off on the launch plan today?", "Sign off on launch plan",
         "2026-10-30"),
        ("You'll need to renew the parking permit before November 15.", "Renew parking permit",
         "2026-11-15"),
        ("Could I ask you to review the contract by Monday?", "Review contract", "2026-11-02"),
        ("Still need your W-9 to process the payment.", "Send W-9 to Priya", None),
        ("I'm still waiting on the revised quote from you.", "Send revised quote to Priya", None),
        ("Can we get the final headcount by Wednesday?", "Send final headcount to Priya",
         "2026-11-04"),
        ("It'd be great if you could send me the photos.", "Send photos to Priya", None),
        ("The board needs your decision on the lease by the 10th.", "Decide on lease",
         "2026-11-10"),
        ("I'll need the final numbers from you by next Tuesday.", "Send final numbers to Priya",
         "2026-11-03"),
    ],
)  # fmt: skip
def test_everyday_english_asks_the_rules_read(body: str, title: str, due: str | None) -> None:
    assert _found(body) == [(title, due)]


def test_time_to_meet_is_an_invitation_and_time_to_look_is_a_request() -> None:
    assert _found("Do you have time to look at the proposal this week?") != []
    assert [t for t, _ in _found("Do you have time to meet on Thursday?", "Sync")] == [
        "Reply to Priya about Sync"
    ]


@pytest.mark.parametrize(
    ("body", "subject", "found"),
    [
        # a name, then the need, no comma; a need after a colon or a phrase, "back"
        ("Alex need the VIN and purchase price on the new feed truck before 10/31 so I can "
         "get it on the policy.", "feed truck",
         [("Send VIN and purchase price on new feed truck to Priya", "2026-10-31")]),
        ("To keep it in this cycle I need the signed CPA-1200 back by Friday, November 13.",
         "EQIP", [("Sign and return CPA-1200", "2026-11-13")]),
        ("Quick one: I need the spreading records for October by the end of the month.",
         "Records", [("Send spreading records for October to Priya", "2026-10-31")]),
        # "they need" is someone else's need, not the sender's of the reader
        ("They need a PO number from you before they'll book it. Can you send me the PO by "
         "Friday?", "Service visit", [("Send PO to Priya", "2026-11-06")]),
        ("any chance we could borrow your round bale spear for a day or two?", "bale spear",
         [("Lend Priya round bale spear", None)]),
        # "la necesito para el jueves": the ask before it, dated
        ("¿Me puede firmar una carta de empleo? La necesito para el jueves.", "carta",
         [("Firmar una carta de empleo a Priya", "2026-11-05")]),
        # a date set off by commas beside its weekday stays in the deadline
        ("Könnten Sie uns bitte bis Freitag, den 6. November, den unterschriebenen Vertrag "
         "zurücksenden?", "Vertrag",
         [("Unterschriebenen Vertrag an Priya zurücksenden", "2026-11-06")]),
    ],
)  # fmt: skip
def test_needs_named_borrowed_and_dated_by_a_pronoun(
    body: str, subject: str, found: list[tuple[str, str | None]]
) -> None:
    assert _found(body, subject) == found


@pytest.mark.parametrize(
    ("body", "subject", "title"),
    [
        ("bins out before 7!! truck comes early on Mondays now", "trash", "Put bins out"),
        ("OK to order? Quote attached.", "Auger parts quote", "Approve Auger parts quote"),
        ("Approve? $8,420 from Climatech, attached.", "Dehumidifier quote",
         "Approve Dehumidifier quote"),
    ],
)  # fmt: skip
def test_terse_asks_with_details_after_them(body: str, subject: str, title: str) -> None:
    assert [t for t, _ in _found(body, subject)] == [title]


def test_a_group_mail_turning_to_the_reader_part_way_is_theirs() -> None:
    body = (
        "Hi all,\n\nSaturday's meeting is at the Grange hall at 10. Sara is doing the sign-in "
        "table, and Alex, thanks so much for offering to bring the cider and donuts on Saturday!"
    )
    found = _found(body, "Saturday meeting", to_group=True)
    assert found == [("Bring cider and donuts", "2026-10-31")]


def test_a_shops_shipping_notice_in_spanish_is_automated() -> None:
    body = "¡Hola Alex! Tu pedido ha sido enviado. Puedes seguir el envío con el número ES77."
    assert _found(body, "Tu pedido", **{"from": "Tienda Ocre <pedidos@tiendaocre.example>"}) == []


@pytest.mark.parametrize(
    "body",
    [
        "Eddie told me he'll retire in January. He wants to announce it himself on the 12th, so "
        "please keep it under your hat until then.",
        "Te cuento en confianza: me ofrecieron un puesto. Por favor, que quede entre nosotros.",
        "Je pars en mars. Que cela reste entre nous pour l'instant.",
        "Ich höre im März auf. Das bleibt bitte erst mal unter uns.",
    ],
)
def test_news_to_keep_to_oneself_is_no_task(body: str) -> None:
    assert _found(body, "In confidence") == []


@pytest.mark.parametrize(
    ("body", "subject", "found"),
    [
        # a deadline an earlier sentence gave the thing the ask names again
        ("The last thing they need is the signed rep letter, and they need it by November 4 to "
         "hold the board date.\n\nIt's in the shared drive. Can you sign it and send it back to "
         "me?", "Rep letter", [("Sign Rep letter", "2026-11-04")]),
        # a dash, then when; a question of which the reader wants
        ("Three for month-end:\n\n1. Please approve the card statement in Ramp - ideally today, "
         "the books close Monday.\n2. What GL code do you want the inspection on - engineering "
         "or capital? Let me know.", "month-end",
         [("Approve card statement in Ramp", "2026-10-30"),
          ("Tell Priya what GL code you want inspection on", None)]),
        # an item that says no deadline takes none from the lead-in
        ("Two things before the livestream tomorrow:\n\n- can you record the intro video "
         "today?\n- and approve the homepage design whenever you get a sec", "Livestream",
         [("Record intro video", "2026-10-30"), ("Approve homepage design", None)]),
        ("I'd like your take before I bring it to the committee.", "Hour - 7 or 8?",
         [("Give Priya take on Hour - 7 or 8", None)]),
        ("I have called twice. I would appreciate a call back from you personally.", "Pledge",
         [("Call Priya back", None)]),
        ("Nuestro departamento jurídico necesita la autorización firmada para el 5 de "
         "noviembre.", "Autorización", [("Enviar la autorización firmada a Priya", "2026-11-05")]),
        ("Thoughts?\n\nDraft: \"Tuesday night, WLMN is your home for results from the Capitol to "
         "the county line, all night long.\"", "Draft promo copy",
         [("Give Priya thoughts on Draft promo copy", None)]),
    ],
)  # fmt: skip
def test_deadlines_stated_before_and_asks_of_choice_take_and_calls(
    body: str, subject: str, found: list[tuple[str, str | None]]
) -> None:
    assert _found(body, subject) == found


def test_a_lower_case_subject_with_a_dash_is_no_spammers_named_opening() -> None:
    body = (
        "The stream is down. StreamPath says the account is suspended for nonpayment. Can you "
        "call their billing line right away?"
    )
    assert [t for t, _ in _found(body, "stream down - CDN account suspended??")] == [
        "Call their billing line"
    ]
