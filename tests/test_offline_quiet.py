"""Quiet mail that asks the reader nothing though it says "please" (issue 34, the classes of
quiet9's false alarms), each on sentences written for the test beside the near miss that must
stay a task: an announcement's plea for how everyone is to behave, an out-of-office reply's
"for anything urgent, contact ...", thanks said as "merci de votre ...", and a service's
digest of what other people posted."""

from __future__ import annotations

import pytest

from tests.offline_mail import found

# --- an announcement's plea with no errand in it is how everyone is to behave ---------------------


@pytest.mark.parametrize(
    "body",
    [
        "Dear residents,\n\nThe snow plough is out this week. Please move bins off the "
        "pavement and please clear the ice from your front steps.",
        "Hi all,\n\nThe new autoclave is in. Please rinse instruments before loading them, "
        "and please log out of the terminal when you finish.",
        "Dear parents,\n\nOur pumpkin patch trip is next week. Please dress your child in "
        "layers and pack a water bottle with their name on it.",
        "Team,\n\nThe kitchen is being deep-cleaned. Please take your mugs home.",
        "Hallo zusammen,\n\nbitte lasst die Fenster im Labor geschlossen.",
        "Chers voisins,\n\nmerci de rentrer vos poubelles le soir même.",
        "Estimadas familias:\n\npor favor, marquen la ropa de abrigo de los niños.",
    ],
)
def test_an_announcements_plea_without_an_errand_is_no_task(body: str) -> None:
    assert found(body, "Notice") == []


@pytest.mark.parametrize(
    "body",
    [
        "Dear friends,\n\nA gentle reminder that the clocks change this weekend. Please "
        "remember to put your clocks forward before bed on Saturday.",
        "Hi all,\n\nPlease remember to water the plants in reception on Friday.",
    ],
)
def test_an_announcements_reminder_with_a_day_but_no_errand_is_no_task(body: str) -> None:
    assert found(body, "Reminder") == []


@pytest.mark.parametrize(
    ("body", "task"),
    [
        ("Dear parents,\n\nPlease pay the $8 museum fee on the school portal.",
         ("Pay $8 museum fee on school portal", None)),
        ("Hi all,\n\nPlease remember to submit your mileage claims by Thursday.",
         ("Submit mileage claims", "2026-11-05")),
        ("Dear residents,\n\nPlease move your car from the north lot by Wednesday.",
         ("Move car from north lot", "2026-11-04")),
        ("Hallo zusammen,\n\nbitte unterschreibt den Ausflugszettel bis Freitag.",
         ("Unterschreibt Ausflugszettel", "2026-11-06")),
    ],
)  # fmt: skip
def test_an_announcements_errand_or_dated_ask_is_still_a_task(
    body: str, task: tuple[str, str | None]
) -> None:
    [(title, due)] = found(body, "Ask")
    assert due == task[1]
    assert task[0].split()[0].lower() in title.lower()


def test_the_readers_promise_beside_an_announcements_plea_is_kept() -> None:
    body = "Team,\n\nI'll send the rota by Friday; please keep swapping shifts on the board."
    titles = [t for t, _ in found(body, "Rota", **{"from": "Alex Morgan <alex@kestrel.example>"})]
    assert "Send rota" in titles


def test_a_plea_naming_its_date_elsewhere_is_still_a_task() -> None:
    body = "Dear owners,\n\nPlease handle your renewals by the date listed in the portal."
    assert len(found(body, "Renewals")) == 1


def test_the_same_plea_said_to_the_reader_alone_is_still_a_task() -> None:
    body = "Hi Alex,\n\nPlease move the bins off the pavement before Thursday."
    assert [due for _, due in found(body, "Bins")] == ["2026-11-05"]


# --- an out-of-office reply's "for anything urgent" is an offer -----------------------------------


@pytest.mark.parametrize(
    "body",
    [
        "I am on leave until Monday 9 November. For urgent matters please contact "
        "desk@harbourvets.example.",
        "Thanks for your message. In my absence, please reach Tom Ruiz on 555-0199.",
        "Ich bin bis 10. November nicht im Büro. In dringenden Fällen wenden Sie sich bitte "
        "an empfang@praxis.example.",
        "Je suis en congé. En cas d'urgence, merci d'appeler le standard.",
        "Estoy de vacaciones. Para cualquier urgencia, por favor escriba a "
        "soporte@clinica.example.",
    ],
)
def test_whom_to_turn_to_if_urgent_is_no_task(body: str) -> None:
    assert found(body, "Away") == []


def test_an_urgent_ask_is_still_a_task() -> None:
    body = "This is urgent: please call the lab about the Hughes biopsy by noon today."
    assert len(found(body, "Biopsy")) == 1


# --- thanks said as "merci de votre ..." ----------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        "La salle d'attente sera fermée lundi. Merci de votre patience.",
        "Le système est de nouveau en ligne. Merci de ta réactivité hier soir.",
        "Le devis est arrivé, merci de l'avoir relancé.",
    ],
)
def test_thanks_said_as_merci_de_is_no_task(body: str) -> None:
    assert found(body, "Info") == []


def test_merci_de_with_a_verb_is_still_a_task() -> None:
    body = "Bonjour Alex, merci de renvoyer le contrat signé avant vendredi."
    assert [due for _, due in found(body, "Contrat")] == ["2026-11-06"]


# --- a service's digest of others' posts ---------------------------------------------------------

CHAT = "Teamchat <notify@teamchat.example>"


@pytest.mark.parametrize(
    "body",
    [
        "Priya Shah: could someone restock the gauze in room 2?\nLeo Park: on it\n\n"
        "Open Teamchat | Notification settings",
        'Dan from Oak Street: "Please keep your dogs leashed in the park!"\n\n18 comments. '
        "See all posts near you.",
    ],
)
def test_a_digest_of_others_posts_is_no_task(body: str) -> None:
    assert found(body, "Digest", **{"from": CHAT}) == []


def test_a_persons_ask_to_change_notification_settings_is_still_a_task() -> None:
    body = "Hi Alex, could you turn off the pager alerts in your notification settings today?"
    assert len(found(body, "Pager")) == 1


@pytest.mark.parametrize(
    "body",
    [
        'Marta from Birch Lane: "Please stop parking across the dropped kerb!" 7 replies.',
        "Hugo wrote: “could everyone bring a chair to the street party?”",
        "Jonas schreibt: „Bitte die Hoftür immer abschließen.“",
    ],
)
def test_someone_elses_words_in_quotation_marks_are_no_task(body: str) -> None:
    assert found(body, "New posts") == []


def test_an_ask_that_only_quotes_a_word_is_still_a_task() -> None:
    body = 'Hi Alex, could you reply "approved" to the vendor by Friday?'
    assert [due for _, due in found(body, "Vendor")] == ["2026-11-06"]


# --- an auto-reply's subject said in two languages --------------------------------------------


@pytest.mark.parametrize(
    "subject", ["Abwesenheit / Out of office", "Congés | Automatic reply", "Ausente / Auto-reply"]
)
def test_an_auto_reply_subject_after_another_language_is_no_task(subject: str) -> None:
    body = "I am away until 9 November. Please send invoices to billing@harbourvets.example."
    assert found(body, subject) == []


def test_a_subject_that_only_mentions_being_out_of_office_is_read() -> None:
    body = "Hi Alex, could you approve my leave request by Thursday?"
    assert len(found(body, "Leave request / out of office next week")) == 1


# --- an institution's mail that greets no one is an announcement ----------------------------------


def test_an_institutions_plea_without_an_errand_is_no_task() -> None:
    school = "Maple Grove School <office@maplegrove.example>"
    body = "Picture day is next week. Please comb your child's hair."
    assert found(body, "Picture day", **{"from": school}) == []
    body = "Please return the picture order form by Friday."
    assert [due for _, due in found(body, "Picture day", **{"from": school})] == ["2026-11-06"]


def test_an_errand_word_used_as_a_noun_is_no_errand() -> None:
    """ "schedule" names the thing to look at here, not what to do."""
    body = "Hi all,\n\nPlease look over the new schedule posted in the break room."
    assert found(body, "Rota") == []
    body = "Hi all,\n\nPlease schedule your flu jab with the nurse."
    assert [t for t, _ in found(body, "Flu")] == ["Schedule flu jab with nurse"]


# --- a plea for how to be, in anyone's mail -------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        "The east car park shuts at 6 on Friday. Please plan accordingly.",
        "Crews are resurfacing Park Lane all week. Please drive slowly near the school.",
        "Mrs Okafor's cat was put to sleep today. Please keep her in your thoughts.",
        "Quick note: please keep the prep room sink clean, it was a mess on Monday.",
        "Bitte entschuldigen Sie die kurze Vorwarnung, der Aufzug ist morgen gesperrt.",
        "Votre réservation est confirmée. Merci de conserver ce courriel.",
        "Su pedido está en camino. Por favor, disculpe el retraso.",
    ],
)
def test_a_plea_for_how_to_be_is_no_task(body: str) -> None:
    assert found(body, "Note") == []


@pytest.mark.parametrize(
    ("body", "task"),
    [
        ("Hi Alex, please keep Friday the 13th free for the board dinner.", "Keep"),
        ("Hallo Alex, fahren Sie bitte den Transporter bis Freitag in die Werkstatt.", "Den"),
        ("Alex, please plan the Q1 rota and send it to me by Friday.", "Plan"),
    ],
)
def test_a_real_ask_with_the_same_verbs_is_still_a_task(body: str, task: str) -> None:
    titles = [t for t, _ in found(body, "Ask")]
    assert titles and titles[0].startswith(task)


@pytest.mark.parametrize("subject", ["[Harbour Vets] You have 4 new messages", "2 unread mentions"])
def test_a_chats_digest_by_its_subject_is_no_task(subject: str) -> None:
    body = "Nina Cole: could someone move the x-ray cassettes?\nBen Ash: sure"
    assert found(body, subject, **{"from": CHAT}) == []


def test_a_person_naming_new_messages_in_a_subject_is_read() -> None:
    body = "Hi Alex, could you answer the two new messages on the clinic line by noon today?"
    assert len(found(body, "Two new messages on the clinic line")) == 1


@pytest.mark.parametrize(
    "ask",
    [
        "Volunteers please wear your orange vests and check in at the staging table by 3:15.",
        "Drivers, please park behind the gym and check in with Dana by 7:30.",
        "Coaches should collect the bibs from the shed by Friday.",
    ],
)
def test_an_announcements_ask_spoken_to_some_of_its_readers_is_no_task(ask: str) -> None:
    """An announcement's sentence that opens by naming some of its readers (volunteers,
    drivers, coaches) asks them, not the reader who got it."""
    assert found(f"Parks team,\n\nWe have 22 volunteers for Saturday. {ask}\n\nKeisha") == []


def test_the_same_ask_without_the_group_or_to_the_reader_is_still_a_task() -> None:
    """Near misses: the same dated errand asked of everyone stays a task, and so does one
    said to the reader alone ("Hi Alex, volunteers please...")."""
    everyone = "Parks team,\n\nPlease check in at the staging table by 3:15.\n\nKeisha"
    assert [t for t, _ in found(everyone)] == ["Check in at staging table"]
    alone = "Hi Alex,\n\nVolunteers please check in at the staging table by 3:15.\n\nKeisha"
    assert [t for t, _ in found(alone)] == ["Check in at staging table"]
