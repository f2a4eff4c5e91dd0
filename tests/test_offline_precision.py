"""The offline model's precision (issue 34), each concept on mail written for the test: a
way to behave is no task, news to keep to oneself is no task, an announcement's house rules
are no one's to-do, the sender's own promise is the sender's, and a request to someone else
is theirs; each beside the near miss that must stay a task."""

from __future__ import annotations

import pytest

from dayflow.providers.offline._reading import body_actions
from tests.offline_mail import found, mail

# --- a way to behave is no task ------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        "Please be careful with the ladders in the stairwell, the painters are in.",
        "Please be mindful of noise on the third floor this week.",
        "Please bear with us while the new badge readers are installed.",
        "Please remember that the office closes at noon on Friday.",
        "Bitte seid vorsichtig auf der Treppe, sie ist frisch gewischt.",
        "Merci de faire attention aux câbles dans le couloir.",
        "Por favor, tengan cuidado con el suelo mojado de la entrada.",
    ],
)
def test_a_way_to_behave_is_no_task(body: str) -> None:
    assert found(body, "This week") == []


@pytest.mark.parametrize(
    "body",
    [
        "The portal is slow this week. Please be understanding if tickets take longer.",
        "Die Hotline ist am Freitag geschlossen. Bitte haben Sie Verständnis dafür.",
        "Le chantier dure deux semaines. Merci de faire preuve de patience.",
        "La obra termina el viernes. Por favor, tengan comprensión con los ruidos.",
    ],
)
def test_a_plea_for_patience_or_understanding_is_no_task(body: str) -> None:
    assert found(body, "Notice") == []


def test_a_way_to_behave_beside_a_real_ask_keeps_the_ask() -> None:
    body = "Please be careful with the prototype and return the spare battery to the lab by Friday."
    assert found(body, "Lab loan") == [("Return spare battery to lab", "2026-11-06")]


# --- news to keep to oneself is no task ----------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        "The reorg is announced on Thursday. Please keep this confidential until then.",
        "Lena is leaving in January. Please keep this between us for now.",
        "We got the grant! Please don't share it with the team yet.",
        "Die Zahlen sind noch nicht offiziell. Bitte behandle das vertraulich.",
        "Le rachat est signé. Merci de garder cela pour toi jusqu'à lundi.",
        "La fusión sigue en secreto. Por favor, mantenlo en reserva hasta el anuncio.",
    ],
)
def test_a_confidentiality_request_is_no_task(body: str) -> None:
    assert found(body, "News") == []


@pytest.mark.parametrize(
    "body",
    [
        "The pricing for Vega is final. Please keep the new rate card and the discounts private.",
        "We are close with Orbis. Please treat the draft term sheet as strictly confidential.",
        "Der Umzug steht fest. Bitte behandeln Sie das neue Datum noch vertraulich.",
        "Die Gehaltsbänder sind neu. Bitte die Zahlen bis Montag vertraulich behandeln.",
        "Merci de garder les chiffres du trimestre confidentiels, ils sortent jeudi.",
        "Por favor, mantengan las cifras del piloto en secreto hasta el lunes.",
    ],
)
def test_a_confidentiality_request_about_a_named_thing_is_no_task(body: str) -> None:
    """What to keep quiet may be any noun phrase, not only "this" or "it"."""
    assert found(body, "News") == []


def test_keeping_a_thing_that_is_not_a_secret_is_still_a_task() -> None:
    body = "Please keep the signed lease and the keys for the new tenant until Friday."
    [(title, due)] = found(body, "Lease")
    assert title.lower().startswith("keep signed lease") and due == "2026-11-06"


def test_a_confidentiality_request_does_not_hide_the_ask_after_it() -> None:
    body = "Please keep this confidential. Could you draft the announcement by Thursday?"
    assert found(body, "News") == [("Draft announcement", "2026-11-05")]


# --- an announcement's house rules are no one's to-do -------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        "Hi all,\n\nThe lifts are serviced on Tuesday. Please use the stairs on the east side.",
        "Hello everyone, please avoid the lobby between 9 and 11 tomorrow, it is being filmed.",
        "Team,\n\nThe garage is closed all week. Please park on Mill Street instead.",
    ],
)
def test_a_house_rule_in_an_announcement_to_everyone_is_no_task(body: str) -> None:
    assert found(body, "Building notice") == []


@pytest.mark.parametrize(
    "body",
    [
        "Hello 4C parents,\n\nThe gym is being painted. Please use the side gate at pickup.",
        "All Harbor Road tenants and guests,\n\nPlease park in the rear lot until Friday.",
        "PMs,\n\nThe wiki moves on Monday. Please use the new space for specs from then on.",
        "To all volunteers,\n\nPlease wear your badge any time you are on the floor.",
        "Liebe Nachbarinnen und Nachbarn,\n\nbitte nutzt ab Montag den Hintereingang.",
        "Chers parents,\n\nmerci d'utiliser l'entrée de la rue Haute pendant les travaux.",
        "Estimados vecinos:\n\npor favor, usen la escalera B mientras dure la obra.",
    ],
)
def test_a_house_rule_to_a_group_named_by_its_people_is_no_task(body: str) -> None:
    """A greeting line that names a group by who its people are ("Hello 4C parents,", "PMs,")
    opens an announcement as "Hi all," does."""
    assert found(body, "Notice") == []


@pytest.mark.parametrize(
    ("body", "task"),
    [
        ("Hello 4C parents,\n\nPlease return the signed trip form by Friday.",
         ("Return signed trip form", "2026-11-06")),
        ("PMs,\n\nPlease send me your Q1 roadmap by Thursday.",
         ("Send Q1 roadmap to Ilse", "2026-11-05")),
    ],
)  # fmt: skip
def test_a_thing_to_do_asked_of_a_group_named_by_its_people_is_still_a_task(
    body: str, task: tuple[str, str]
) -> None:
    assert found(body, "Ask") == [task]


def test_a_greeting_to_one_person_whose_name_ends_in_s_is_no_group() -> None:
    body = "Hi Charles,\n\nPlease use the new template for the Q4 report by Friday."
    [action] = body_actions(mail(body, "Template"), "Charles")
    assert action.due is not None and action.due.isoformat() == "2026-11-06"


@pytest.mark.parametrize(
    "body",
    [
        "Hi all,\n\nPlease wipe down the espresso machine every time you use it.",
        "Team,\n\nPlease send your stand-up notes to the channel every morning.",
        "Hi all,\n\nPlease don't book room 4 for interviews -- use room 2 instead, and please "
        "leave room 4 for the auditors.",
        "Hallo zusammen,\n\nbitte nicht im Hof parken, sondern auf dem Parkplatz hinten.",
    ],
)
def test_a_standing_instruction_or_a_ban_in_an_announcement_is_no_task(body: str) -> None:
    assert found(body, "Office") == []


OFFICE = "Building Services <buildings@kestrel.example>"


@pytest.mark.parametrize(
    "body",
    [
        "The east stairwell is closed on Thursday. Please use the west stairs and allow a few "
        "extra minutes.",
        "Die Tiefgarage wird gereinigt. Bitte parkt am Mittwoch auf dem Besucherparkplatz.",
    ],
)
def test_a_house_rule_from_an_office_that_greets_no_one_is_no_task(body: str) -> None:
    """Mail from an office ("Building Services") that greets no one by name is an
    announcement, as one that opens "Hi all," is."""
    assert found(body, "Notice", **{"from": OFFICE}) == []


def test_an_offices_thing_to_do_and_its_mail_to_the_reader_by_name_stay_tasks() -> None:
    body = "Please return your old parking permit to reception by Friday."
    assert found(body, "Permits", **{"from": OFFICE}) == [
        ("Return old parking permit to reception", "2026-11-06")
    ]
    body = "Hi Alex,\n\nPlease use the loading dock entrance for your delivery by Friday."
    assert [due for _, due in found(body, "Delivery", **{"from": OFFICE})] == ["2026-11-06"]


@pytest.mark.parametrize(
    ("body", "task"),
    [
        ("Please don't forget to renew the van's insurance by Thursday.",
         ("Renew van's insurance", "2026-11-05")),
        ("Hi all,\n\nPlease don't forget to submit your expense reports by Friday.",
         ("Submit expense reports", "2026-11-06")),
        ("Don't forget to book the dentist tomorrow.", ("Book dentist", "2026-11-03")),
    ],
)  # fmt: skip
def test_dont_forget_to_is_a_reminder_that_still_asks(body: str, task: tuple[str, str]) -> None:
    """A reminder said as a negation is no ban: the verb after "don't forget to" is the ask."""
    assert found(body, "Reminder") == [task]


def test_dont_forget_to_without_a_thing_to_do_is_no_task() -> None:
    assert found("Don't forget to relax a little this weekend!", "Weekend") == []


def test_a_ban_in_an_announcement_leaves_the_asks_of_the_next_sentence() -> None:
    body = (
        "Hi all,\n\nPlease don't park in bay 3 this week. Please send me your plate numbers "
        "by Friday."
    )
    assert found(body, "Parking") == [("Send plate numbers to Ilse", "2026-11-06")]


def test_an_announcement_that_asks_everyone_for_a_thing_is_still_a_task() -> None:
    """A group greeting does not make every ask a house rule: "submit" is a thing to do."""
    body = "Hi all,\n\nPlease submit your timesheets by Friday."
    assert found(body, "Timesheets") == [("Submit timesheets", "2026-11-06")]


@pytest.mark.parametrize(
    "body",
    [
        "Please join me in congratulating Priya on her promotion to head of design.",
        "Please help me give Tomasz a warm welcome when he starts in support on Monday.",
        "Please welcome our two summer interns, Ana and Felix, to the data team.",
        "Do say hello to Ruth if you pass the front desk, it is her first week.",
        "Heißt bitte unsere neue Kollegin Jana herzlich willkommen!",
        "Merci de souhaiter la bienvenue à Léa, notre nouvelle comptable.",
        "Por favor, den la bienvenida a Tomás, que se incorpora hoy a ventas.",
    ],
)
def test_a_courtesy_asked_of_everyone_is_no_task(body: str) -> None:
    assert found(body, "New faces") == []


@pytest.mark.parametrize(
    "body",
    [
        "Please remember to badge out every time you leave the lab after hours.",
        "Please make sure to wipe the whiteboard each time you finish in the meeting room.",
        "Please always cc the account owner on customer escalations.",
    ],
)
def test_a_habit_is_no_task(body: str) -> None:
    assert found(body, "Lab etiquette") == []


def test_an_ask_to_remember_a_thing_once_is_still_a_task() -> None:
    body = "Please remember to return the spare keys to the office manager by Friday."
    [(title, due)] = found(body, "Keys")
    assert "return spare keys to office manager" in title.lower() and due == "2026-11-06"


@pytest.mark.parametrize(
    "body",
    [
        "Hi all - please be tidy and put the projector remote back in its drawer after use.",
        "Team,\n\nPlease be patient and wait for the badge reader to turn green before pushing.",
    ],
)
def test_a_way_to_behave_in_an_announcement_covers_the_rest_of_its_sentence(body: str) -> None:
    """To everyone, "please be considerate and do X" is still how to behave; said to the
    reader alone, the "and do X" is a task (`test_a_way_to_behave_beside_a_real_ask...`)."""
    assert found(body, "Office") == []


def test_a_house_rule_said_to_the_reader_alone_is_left_to_the_other_rules() -> None:
    body = "Alex, please use the new template for the Q4 report by Friday."
    assert found(body, "Template")[0][1] == "2026-11-06"


# --- news to pass on, and an advert's call, are no task -----------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        "From Monday, expense claims go through Ramp. Please cascade this to your managers.",
        "The on-call rota moves to weekly shifts. Please align your team on the new schedule.",
        "The office closes at 3 on Friday for the party. Please let your team know.",
        "Our autumn range is in. Kindly visit us at the Elm Street store or online.",
        "The conference proceedings are out. For more information, please visit our website.",
        "Pour plus d'informations, merci de consulter notre site.",
    ],
)
def test_news_to_pass_on_or_an_adverts_call_is_no_task(body: str) -> None:
    assert found(body, "Update") == []


def test_thanks_to_pass_on_to_ones_people_is_no_task() -> None:
    body = "The migration went out without a hitch. Please thank your support folks for it."
    assert found(body, "Migration") == []


def test_a_welcome_visit_in_an_announcement_is_no_task() -> None:
    body = "Team,\n\nOmar joins finance today. Please drop by the third floor and say hi!"
    assert found(body, "Welcome Omar") == []


def test_an_ask_beside_news_to_pass_on_stays_a_task() -> None:
    body = (
        "Please let your team know about the freeze, and could you send me the headcount by Friday?"
    )
    assert found(body, "Freeze") == [("Send headcount to Ilse", "2026-11-06")]


# --- the sender's own promise is the sender's ----------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        "Thanks for spotting it. I'll send you the corrected invoice by Wednesday.",
        "I will forward you the signed copy once legal is done.",
        "We'll get back to you with a quote early next week.",
        "I'm going to write up the notes tonight and share them with you tomorrow.",
        "Ich schicke dir die korrigierte Fassung morgen.",
        "Je t'envoie le devis corrigé demain.",
        "Te mando la factura corregida mañana.",
    ],
)
def test_the_senders_own_promise_is_no_task_of_the_reader(body: str) -> None:
    assert found(body, "Re: invoice") == []


def test_a_promise_then_an_ask_keeps_the_ask() -> None:
    body = "I'll send you the numbers tonight. Could you check the chart titles before Friday?"
    assert found(body, "Re: deck") == [("Check chart titles", "2026-11-06")]


# --- several asks in one message: each a task, in reading order, each with its own date --------


def test_several_asks_are_several_tasks_keyed_in_reading_order() -> None:
    body = (
        "Could you book the train for the offsite? Also please send Hana the visa letter. "
        "And can you remind Omar about the deposit?"
    )
    actions = body_actions(mail(body, "Offsite"), "Alex")
    assert [a.title for a in actions] == [
        "Book train for offsite",
        "Send Hana visa letter",
        "Remind Omar about deposit",
    ]
    assert [a.key for a in actions] == ["mail:v1", "mail:v1#2", "mail:v1#3"]


def test_an_asks_deadline_stays_its_own_when_another_ask_shares_the_sentence() -> None:
    body = "Two things: please renew the domain by Thursday, and could you add Noor to billing?"
    assert found(body, "Admin") == [("Renew domain", "2026-11-05"), ("Add Noor to billing", None)]


def test_a_deadline_closing_one_verb_leaves_the_verbs_after_the_comma() -> None:
    body = "Please sign the NDA by Friday, review the SOW and forward the redlines to legal."
    assert [t for t, _ in found(body, "Acme")] == [
        "Sign NDA",
        "Review SOW",
        "Forward redlines to legal",
    ]
    # a comma before a clause that is no ask still ends it
    assert found("Please renew the seats by Friday, the invoice lapses Monday.", "Seats") == [
        ("Renew seats", "2026-11-06")
    ]


def test_a_later_verbs_it_names_the_thing_the_verb_before_it_named() -> None:
    body = "Can you update the pricing sheet and send it to finance by Wednesday?"
    assert [t for t, _ in found(body, "Q4")] == [
        "Update pricing sheet",
        "Send pricing sheet to finance",
    ]


def test_a_title_does_not_end_on_a_dangling_word() -> None:
    assert found("Please keep adding your notes to the board until then.", "Retro") == [
        ("Keep adding notes to board", None)
    ]


# --- a request to someone else, the reader only copied ------------------------------------------


@pytest.mark.parametrize("reader", ["Alex", None])
def test_a_copied_readers_task_is_only_the_ask_that_names_them(reader: str | None) -> None:
    """The listing says `copied` (the reader only in Cc) and whom the message is `to`; an ask
    spoken to a recipient, or to no one, is theirs; one that names the reader is the reader's
    (whether or not the model has learnt the reader's name from the inbox)."""
    to = {"copied": True, "to": ["Dana Ross", "Lee Park"]}

    def asks(body: str) -> list[str]:
        return [a.title for a in body_actions(mail(body, "Q4", **to), reader)]

    assert asks("Dana, could you send Lee the invoice by Monday?") == []
    assert asks("Hi Dana,\n\nCan you book the hotel and confirm the headcount?") == []
    assert asks("Can you please review the copy before Friday? Alex is copied.") == []
    assert asks("Dana is on the numbers. Alex, could you check the churn model?") == [
        "Check churn model"
    ]
    # a group greeting speaks to everyone it went to, the copied reader too
    assert asks("Hi all,\n\nCan you add your items to the review agenda?") == [
        "Add items to review agenda"
    ]
    # the same message to the reader (no `copied`) is the reader's
    assert [a.title for a in body_actions(mail("Can you please review the copy?", "Q4"), reader)]


# --- mail to a group address: only the reader's own asks ----------------------------------------

GROUP = {"to_group": True, "to": ["crew@harbourworks.example"]}


@pytest.mark.parametrize(
    "body",
    [
        "Swim practice is at 6 on Thursday. Please bring a towel and your goggles.",
        "The canteen is being painted this week. Please take lunch in the break tent.",
        "Night shift -- please switch off the compressor when you leave and please stack the "
        "pallets by the wall.",
        "Payday moves to the 12th because of the holiday. Please log your hours as normal.",
        "Bitte räumt den Kühlschrank bis Freitagabend leer.",
    ],
)
def test_a_plea_or_a_routine_in_mail_to_a_group_address_is_no_task(body: str) -> None:
    """Mail the reader got through a group address (`to_group`) asks everyone on it: a way to
    behave, a routine ("log your hours as normal") or a chore with no errand in it is no
    one's to-do, with no greeting to say so; sent to the reader, each is a task."""
    assert found(body, "Yard notice", **GROUP) == []
    assert found(body, "Yard notice") != []


def test_the_same_plea_to_the_reader_by_address_is_still_a_task() -> None:
    """What `to_group` changes: the same words sent to the reader's own address ask them."""
    body = "Please bring your own gloves by Thursday."
    assert found(body, "Yard") == [("Bring own gloves", "2026-11-05")]
    assert found(body, "Yard", **GROUP) == []


@pytest.mark.parametrize(
    ("body", "task"),
    [
        # an errand with a stated deadline
        ("Dear families,\n\nPlease return the signed photo order form by Wednesday, "
         "November 4.", ("Return signed photo order form", "2026-11-04")),
        # an obligation on each of them
        ("Every supervisor must complete the forklift refresher in the portal by November 13.",
         ("Complete forklift refresher in portal", "2026-11-13")),
        # a form, no date
        ("Please fill out the attached medical form for the nurse.",
         ("Fill out attached medical form for nurse", None)),
        # a question that wants one of them to take it on
        ("Can someone update the rota on the noticeboard? I'm off sick.",
         ("Update rota on noticeboard", None)),
        # an ask spoken to the reader by name
        ("The dinghy goes in the water at 7.\n\nAlex -- you're on keys this week. Please "
         "lock the boathouse after the last sail.", ("Lock boathouse after last sail", None)),
    ],
)  # fmt: skip
def test_the_readers_own_asks_in_mail_to_a_group_address_stay_tasks(
    body: str, task: tuple[str, str | None]
) -> None:
    assert found(body, "Crew", **GROUP) == [task]


def test_mail_to_a_group_address_that_greets_the_reader_by_name_is_theirs() -> None:
    """A Bcc or an alias that reached the reader alone: "Hi Alex," makes it personal mail."""
    body = "Hi Alex,\n\nPlease bring your own gloves by Thursday."
    assert found(body, "Yard", **GROUP) == [("Bring own gloves", "2026-11-05")]


def test_an_announcements_ask_spoken_to_the_reader_by_name_is_theirs() -> None:
    """A greeting to a group makes a chore everyone's, not the one said to the reader by name."""
    body = (
        "Hi crew,\n\nThe dinghy goes in the water at 7.\n\nAlex -- you're on keys this week. "
        "Please lock the boathouse after the last sail."
    )
    assert found(body, "Crew") == [("Lock boathouse after last sail", None)]
    assert found(body.replace("Alex --", "Sam --"), "Crew") == []


def test_a_denied_obligation_in_mail_to_a_group_address_is_no_task() -> None:
    body = "No booking required -- please bring a friend to the open evening."
    assert found(body, "Open evening", **GROUP) == []


# --- a title is the imperative a person would write ---------------------------------------------


@pytest.mark.parametrize(
    ("body", "title"),
    [
        # "¿me puedes / podrías ...?" is a cue before its verb, not "¿me mandas?" (a verb)
        ("¿Me puedes mandar el acta de la reunión?", "Mandar acta de reunión a Ilse"),
        ("Hola, ¿me podrías dar acceso al tablero?", "Dar acceso al tablero a Ilse"),
        ("¿Me mandas el acta de la reunión?", "Mandar acta de reunión a Ilse"),
        # "Please can you ...?": the question is the ask, its verb the title's
        ("Please can you send the signed lease?", "Send signed lease"),
    ],
)
def test_a_title_starts_with_the_asks_own_verb(body: str, title: str) -> None:
    assert [t for t, _ in found(body, "Hola")] == [title]


def test_a_title_starts_at_the_verb_and_a_fragment_without_one_is_no_task() -> None:
    """ "Can someone with admin access restart it?" is "Restart <the subject's thing>", not
    "With admin access restart it"; "no nuts" after "Packed lunch, please" asks no action."""
    body = "The build server is stuck. Can someone with admin access restart it tonight?"
    assert found(body, "Build server") == [("Restart Build server", "2026-11-02")]
    body = "Please bring the signed form by Friday. Packed lunch, please - no nuts."
    assert found(body, "Trip") == [("Bring signed form", "2026-11-06")]


@pytest.mark.parametrize(
    "body",
    [
        "Hallo zusammen,\n\nder Aufzug wird gewartet. Bitte benutzt die Treppe im Ostflügel.",
        "Bonjour à tous,\n\nle parking est fermé. Merci d'utiliser le parking de la gare.",
        "Hola a todos:\n\nel ascensor está en obras. Por favor, usen la escalera del fondo.",
    ],
)
def test_a_house_rule_to_everyone_is_no_task_in_german_french_and_spanish(body: str) -> None:
    assert found(body, "Gebäude / Bâtiment / Edificio") == []


def test_a_statement_among_the_asks_is_no_task() -> None:
    assert found("row 14 is yours, fill in the costs by EOW pls", "budget sheet") == [
        ("Fill in costs", "2026-11-06")
    ]


# --- a shop's, a survey's and a carrier's mail; "no action" said in full -------------------------


@pytest.mark.parametrize(
    ("body", "subject"),
    [
        ("Your basket is waiting.\n\nYou left 2 items in your cart. Complete your order today "
         "and save 10%.", "Still deciding?"),
        ("Thanks for staying at the Harbor Inn.\n\nPlease take our short guest survey, it "
         "takes two minutes.", "How was your stay?"),
        ("Please take a moment to tell us about your visit to the Elm Street branch.",
         "Your visit"),
        ("Votre colis est en route.\n\nVous pouvez suivre votre colis dans votre espace client. "
         "Merci de ne pas répondre à ce message.", "Expédition"),
        ("Ihre Bestellung ist unterwegs. Sie können Ihre Sendung verfolgen unter Konto.",
         "Versand"),
    ],
)  # fmt: skip
def test_a_shops_survey_or_carriers_call_is_no_task(body: str, subject: str) -> None:
    assert found(body, subject) == []


def test_a_survey_a_colleague_asks_for_by_a_date_is_left_to_the_other_rules() -> None:
    """Only a service's call to "take our survey" is boilerplate, not an ask about one."""
    body = "Could you send me your comments on the survey results by Thursday?"
    assert found(body, "Survey") == [("Send comments on survey results to Ilse", "2026-11-05")]


@pytest.mark.parametrize(
    "body",
    [
        "Vous trouverez le compte rendu en pièce jointe. Aucune action n'est demandée de votre "
        "part ; veuillez trouver ci-joint les annexes.",
        "Anbei das Protokoll. Es ist keine Aktion erforderlich, bitte legen Sie es nur ab.",
        "Te adjunto el informe. No hace falta que hagas nada, por favor guárdalo.",
    ],
)
def test_no_action_said_in_full_settles_the_message(body: str) -> None:
    assert found(body, "Report") == []


def test_a_list_of_tips_is_no_task() -> None:
    body = (
        "Your bill is up 12% this month. A few tips to save:\n"
        "- Lower the heating at night.\n- Run the dishwasher full."
    )
    assert found(body, "Your usage") == []


# --- a notice to bear in mind, and how to use what is sent, are no task -------------------------


@pytest.mark.parametrize(
    "body",
    [
        "Please take note that the office closes at noon on Friday.",
        "Our warehouse moves on the 1st. Please take this into account for January orders.",
        "Photos attached for the announcement. Please credit the photographer (Maren Ott).",
        "anbei die Pressefotos. Das Copyright liegt bei Maren Ott, bitte den Fotonachweis angeben.",
        "Veuillez noter que nos bureaux seront fermés du 24 décembre au 4 janvier.",
        "Merci de tenir compte de ces dates pour vos commandes des fêtes.",
        "Les rogamos que tengan en cuenta este cambio al hacer sus pedidos de enero.",
        "Estimados clientes: tomen nota de que el almacén cierra el 24.",
        "Pub date moved to April 14. I'll update the form on my end, nothing you need to change.",
    ],
)
def test_a_notice_to_bear_in_mind_is_no_task(body: str) -> None:
    assert found(body, "Notice") == []


def test_a_notice_beside_a_real_ask_keeps_the_ask() -> None:
    body = (
        "Veuillez noter que l'entrepôt ferme le 24 décembre. "
        "Merci de m'envoyer le bon de commande signé avant vendredi."
    )
    assert [t for t, _ in found(body, "Commande")] == ["Envoyer bon de commande signé à Ilse"]


def test_the_noun_bitte_is_no_request_cue_and_the_ask_after_it_is_one() -> None:
    body = (
        "danke für die Bestätigung.\n\nEine Bitte noch: Könnten Sie mir bis Freitag die "
        "Hotelreservierung in Stowe schicken?"
    )
    assert [t for t, _ in found(body, "Termin")] == ["Hotelreservierung in Stowe an Ilse schicken"]


@pytest.mark.parametrize(
    "body",
    [
        "Se ha actualizado la solicitud #4471. Puedes consultar la solicitud en el portal de "
        "soporte. Este mensaje se ha generado automáticamente; por favor, no respondas.",
        "Votre demande a été traitée. Vous pouvez consulter votre demande en ligne.",
        "Je voulais que tu l'apprennes de moi. Merci de garder ça entre nous pour l'instant.",
        "Perforce will be down Saturday night. Please submit or shelve your work before you "
        "leave on Friday.",
        "Tenemos 14 en trámite, pero su coordinadora mencionó que podrían ser 16.",
    ],
)
def test_a_notice_a_permission_and_a_secret_in_three_languages_are_no_task(body: str) -> None:
    assert found(body, "Notice") == []


def test_a_reader_copied_for_visibility_is_asked_nothing() -> None:
    body = (
        "Team,\n\nFrom today please log every certification finding under the CERT- project "
        "in Jira. Lucía, the same applies to your testers.\n\nAlex cc'd for visibility.\n\nLuis"
    )
    assert found(body, "CERT- project") == []
    asked = "Team,\n\nFrom today please log every finding under the CERT- project.\n\nLuis"
    assert found(asked, "CERT- project") != []


@pytest.mark.parametrize(
    "body",
    [
        "Giving you this early so you can prepare, but please hold it until 7 p.m. Thursday "
        "the 5th when the Select Board votes.",
        "ganz im Vertrauen, bitte noch nicht veröffentlichen: der Bürgermeister tritt nicht an.",
        "Merci de ne pas le publier avant lundi : le maire se retire.",
        "Por favor, no lo publiques todavía: el alcalde no se presenta.",
    ],
)
def test_an_embargo_is_no_task(body: str) -> None:
    assert found(body, "Embargo") == []


def test_keeping_news_between_us_is_no_task() -> None:
    body = "Alex, keeping this between us for now please. A place in Charlotte offered me a job."
    assert found(body, "between us") == []


def test_a_wish_is_no_task_but_a_great_to_still_asks() -> None:
    assert found("The weather looks great and it'd be nice to get out of the city.") == []
    assert found("It would be great to get your notes by Friday.", "Notes") != []


def test_a_plea_to_those_who_want_it_in_an_announcement_is_no_task() -> None:
    body = (
        "Hi team,\n\nOpen enrollment runs November 2 through November 20.\n\nIf you want to "
        "change your plan, please log in and make your elections before the 20th. If you're "
        "happy with your current plan, no action needed.\n\nHannah"
    )
    assert found(body, "Open enrollment") == []
    assert found("Alex, Marcus,\n\nSam has given notice. Please keep it to yourselves until "
                 "Wednesday.\n\nGrace", "Confidential") == []  # fmt: skip
