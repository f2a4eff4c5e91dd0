"""Mail that uses a request's words but asks the reader to do nothing (issue 34, the classes of
quiet10's false alarms), each on sentences written for the test beside the near miss that must
stay a task: a negated ask or a release ("no need to reply", "bitte keine Rückmeldung nötig"),
greetings to pass on ("grüß Sam von mir"), the reader's yes already given ("so glad you can
come!"), a service's instructions for when the reader turns up ("please bring your order
number and photo ID"), and a shop's call to buy ("Book your slot now")."""

from __future__ import annotations

import pytest

from tests.offline_mail import found

# --- a negated ask, or a release, asks nothing --------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        "Thanks for confirming the address. No need to reply.",
        "Please don't feel you need to reply, I just wanted you to know.",
        "Die Ware geht heute raus. Bitte keine Rückmeldung nötig.",
        "Die Ware geht heute raus. Bitte nicht antworten, ich melde mich.",
        "Le colis part aujourd'hui. Merci de ne pas répondre à ce message.",
        "El paquete sale hoy. Por favor, no respondas a este correo.",
        "El paquete sale hoy. No hace falta que contestes.",
        "Le colis part aujourd'hui. Pas besoin de répondre.",
    ],
)
def test_a_negated_ask_or_a_release_is_no_task(body: str) -> None:
    assert found(body, "Versand") == []


@pytest.mark.parametrize(
    "body",
    [
        "Das Paket ist unterwegs, bitte erst zu Weihnachten öffnen.",
        "Das Paket ist unterwegs, bitte nicht vor Weihnachten öffnen.",
        "The parcel is on its way. Please don't open it until Christmas.",
    ],
)
def test_an_ask_to_wait_until_a_day_is_no_task(body: str) -> None:
    assert found(body, "Grüße") == []


def test_a_release_that_goes_on_to_ask_keeps_the_ask() -> None:
    body = "No need to reply, but please send the invoice by Friday."
    assert found(body, "Invoice") == [("Send invoice", "2026-11-06")]


def test_a_prohibition_then_an_ask_keeps_the_ask() -> None:
    body = "Please don't reply to this, but could you sign the form by Friday?"
    assert found(body, "Form") == [("Sign form", "2026-11-06")]


@pytest.mark.parametrize(
    ("body", "task"),
    [
        ("Please don't forget to call the plumber by Friday.", ("Call plumber", "2026-11-06")),
        ("Bitte erst die Rechnung prüfen und dann zahlen.",
         ("Erst Rechnung prüfen und dann zahlen", None)),
    ],
)  # fmt: skip
def test_a_reminder_or_first_do_this_is_still_a_task(body: str, task: tuple[str, str]) -> None:
    """ "Don't forget to" still asks; German "erst" before a thing to do is "first"."""
    assert found(body, "Haus") == [task]


# --- greetings to pass on ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        "Wir denken an euch! Grüß Sam ganz lieb.",
        "Bitte grüß Sam von mir.",
        "Please give Sam my best.",
        "Give my love to Sam and the kids!",
        "Say hi to Sam for me.",
        "Tell Sam we miss him!",
        "Please tell Grandma I love her.",
        "Embrasse Sam pour moi.",
        "Transmets mes amitiés à Sam.",
        "Saluda a Sam de mi parte.",
        "Dale un beso a Sam de mi parte.",
    ],
)
def test_greetings_to_pass_on_are_no_task(body: str) -> None:
    assert found(body, "Grüße") == []


def test_greetings_beside_a_real_ask_keep_the_ask() -> None:
    body = "Please say hi to Sam and ask him to send me the photos by Friday."
    assert found(body, "Photos") == [("Ask him to send Ilse photos", "2026-11-06")]


def test_telling_someone_what_we_think_of_a_thing_is_still_a_task() -> None:
    """Feedback to relay is work: "we love" a proposal is not "we love you"."""
    body = "Please tell the client we love the proposal."
    assert found(body, "Proposal") == [("Tell client we love proposal", None)]


def test_giving_a_person_a_thing_is_still_a_task() -> None:
    assert found("Please give Sam the keys by Friday.", "Keys") == [("Give Sam keys", "2026-11-06")]


# --- the reader's yes, already given -----------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    ["Yay, so glad you can come! Parking is on Elm.", "Great that you can make it on Saturday."],
)
def test_being_glad_the_reader_can_come_is_no_task(body: str) -> None:
    assert found(body, "Re: Party") == []


def test_being_glad_the_reader_will_send_a_thing_is_still_their_promise() -> None:
    assert found("Glad you can send the deck by Friday.", "Deck") == [("Send deck", "2026-11-06")]


# --- a service's instructions for turning up ---------------------------------------------------

# senders whose addresses do not say they are automated ("orders@", "reservations@" would)
_SHOP = "The Hardware Store <store1207@hardware.example>"
_HOTEL = "Casa Lumen <casa@lumen-stay.example>"


@pytest.mark.parametrize(
    ("subject", "body", "sender"),
    [
        ("Your order is ready for pickup", "Your order W1 is ready for pickup at store #12. "
         "Please bring your order number and photo ID. Pickup within 7 days.", _SHOP),
        ("Booking confirmation", "Thank you! Your booking is confirmed. Please present your "
         "passport at check-in.", _HOTEL),
        ("Ihre Reservierung", "Ihre Buchung ist bestätigt. Bitte bringen Sie Ihren "
         "Personalausweis zur Anreise mit.", _HOTEL),
        ("Confirmation de réservation / Booking confirmation", "Votre réservation n° 88 est "
         "confirmée. Veuillez présenter une pièce d'identité à l'arrivée.", _HOTEL),
        ("Reserva", "Su reserva está confirmada. Por favor, presente su DNI a la llegada.", _HOTEL),
    ],
)  # fmt: skip
def test_what_to_have_on_arrival_in_a_services_notice_is_no_task(
    subject: str, body: str, sender: str
) -> None:
    assert found(body, subject, **{"from": sender}) == []


def test_a_persons_ask_to_bring_an_id_by_a_day_is_still_a_task() -> None:
    body = "Welcome aboard! Please bring your photo ID to HR by Thursday."
    sender = "Dana Lee <dana.lee@lumen.example>"
    assert found(body, "Onboarding", **{"from": sender}) == [("Bring photo ID to HR", "2026-11-05")]


def test_a_services_notice_with_an_errand_keeps_the_errand() -> None:
    body = "Your appointment on Nov 10 is confirmed. Please complete the intake form by Friday."
    subject, sender = "Appointment confirmed", "Clinic <appts@clinic.example>"
    assert found(body, subject, **{"from": sender}) == [("Complete intake form", "2026-11-06")]


def test_an_errand_beside_what_to_bring_in_one_sentence_stays_a_task() -> None:
    """What to have on arrival goes; the errand the same sentence asks does not go with it."""
    body = "Your laptop is ready for pickup. Please bring your ID and sign the asset form."
    assert found(body, "Laptop ready") == [("Sign asset form", None)]


# --- a shop's call to buy ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        "Good news! Thursday slots are open in your area. Book your slot now",
        "Only a few left. Grab yours now!",
        "Only a few seats left. Please reserve yours while stocks last.",
    ],
)
def test_a_shops_call_to_buy_is_no_task(body: str) -> None:
    assert found(body, "Your slots", **{"from": "Grocer <slots@grocer.example>"}) == []


def test_a_dated_ask_to_do_a_thing_now_is_still_a_task() -> None:
    """A call to buy has no day but its "now"; an ask with one of its own is an errand."""
    body = "Renew your badge now at the front desk, it expires tomorrow."
    assert found(body, "Hello") == [("Renew badge at front desk, it expires", "2026-11-03")]


def test_a_persons_reason_to_book_now_is_still_a_task() -> None:
    body = "Prices went up again. Please book the flights by Friday, before they go up more."
    assert found(body, "Lisbon") == [("Book flights", "2026-11-06")]


@pytest.mark.parametrize(
    "body",
    [
        "Bitte erst am Montag den Vertrag unterschreiben.",
        "Bitte erst nach der Sitzung die Unterlagen an Frau Weber schicken.",
    ],
)
def test_german_erst_before_a_day_and_a_thing_to_do_is_a_timed_ask(body: str) -> None:
    """ "erst am Montag ... unterschreiben" says when to do it, not to wait: only opening or
    looking is waited for ("bitte erst zu Weihnachten öffnen")."""
    assert found(body, "Vertrag") != []
