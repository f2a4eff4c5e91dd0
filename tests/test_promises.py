"""The user's promises in their sent mail (`dayflow.followups.promises`) and a moved deadline's
date (`dayflow.tools.since.moved_to`): pure over threads and text."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import time
from pathlib import Path

import pytest

from dayflow.followups import Window, read_followups
from dayflow.followups.promises import MAX_READS, date_in, promises
from dayflow.followups.threads import Thread, ThreadMessage
from dayflow.providers.offline._promises import due_promise, promise_lines
from dayflow.sources import JsonInbox
from dayflow.sources.mail import DictMail
from dayflow.sources.me import parse_me
from dayflow.tools.since import moved_to

ME = parse_me(["alex@example.org"])
UTC = dt.UTC
WED = dt.datetime(2026, 11, 18, 9, 0, tzinfo=UTC)


def _msg(text: str, *, mine: bool = True, at: dt.datetime = WED, n: int = 1) -> ThreadMessage:
    me, them = ("Alex", "alex@example.org"), ("Hana Sato", "hana@example.net")
    sender, to = (me, them) if mine else (them, me)
    return ThreadMessage(
        f"k{n}", f"m{n}", "Report", at, sender[0], sender[1], (to,), (), mine, False, False,
        text, ("work",),
    )  # fmt: skip


def _open(*messages: ThreadMessage) -> list[tuple[str, str | None, str]]:
    """(what, due, due_kind) of each open promise of one thread (`messages` oldest first)."""
    newest = tuple(reversed(messages))
    thread = Thread("thread:t", "Report", newest[0].received_at, newest, frozenset(), ("work",))
    return [(p.what, p.due, p.due_kind) for p in promises([thread], ME, UTC)]


@pytest.mark.parametrize(
    ("text", "what", "due", "kind"),
    [
        ("I'll send you the report by Friday.", "Send report",
         "2026-11-20", "stated"),
        ("I will get back to you by 25 November.", "Get back to Hana",
         "2026-11-25", "stated"),
        ("Let me check and revert tomorrow.", "Check and revert",
         "2026-11-19", "implied"),
        ("Ich schicke Ihnen den Bericht morgen.", "Den Bericht schicken",
         "2026-11-19", "implied"),
        ("Je vous enverrai le rapport demain.", "Envoyer le rapport",
         "2026-11-19", "implied"),
        ("Te envío el informe mañana.", "Enviar el informe", "2026-11-19", "implied"),
        ("I'll share the deck soon.", "Share deck soon", None, "none"),
        # A date named, in each language (read by `dayflow.dates`, as the offline model does)
        ("Ich schicke Ihnen den Bericht bis Freitag, 27. November.",
         "Den Bericht schicken", "2026-11-27", "stated"),
        ("Ich melde mich bis Montag.", "Melden", "2026-11-23", "stated"),
        ("Je vous enverrai le rapport le 26 novembre.",
         "Envoyer le rapport", "2026-11-26", "stated"),
        ("Je reviens vers vous vendredi.", "Revenir vers vous", "2026-11-20",
         "stated"),
        ("Te envío el informe el 30 de noviembre.", "Enviar el informe",
         "2026-11-30", "stated"),
        ("Te confirmo el jueves.", "Confirmar", "2026-11-19", "stated"),
        ("I'll send it by 2026-12-04.", "Send it", "2026-12-04", "stated"),
    ],
)  # fmt: skip
def test_a_promise_in_each_language_with_its_due_date(
    text: str, what: str, due: str | None, kind: str
) -> None:
    assert _open(_msg(f"Thanks. {text}")) == [(what, due, kind)]


def test_a_question_a_request_and_others_words_are_no_promise() -> None:
    assert _open(_msg("Shall I send you the report?")) == []
    assert _open(_msg("Could you send me the report?")) == []
    assert _open(_msg("I'll send you the report by Friday.", mine=False)) == []
    # What the user quotes is not what they say now.
    assert _open(_msg("Sure.\n> I'll send you the report by Friday.")) == []


@pytest.mark.parametrize(
    ("text", "what", "due", "kind"),
    [
        # "I'll get you", "I will return", "I can bring", and no "I" after a greeting
        ("Hana, will get you the signed copy tomorrow.", "Send signed copy",
         "2026-11-19", "implied"),
        ("I will return the keys on Friday.", "Return keys", "2026-11-20",
         "stated"),
        ("I can bring the cake for Saturday's party.", "Bring cake for party",
         "2026-11-21", "stated"),
        # the shared date reading: "end of next week" is the following week's Friday (GUIDE.md),
        # "first thing tomorrow" is tomorrow, "next week" alone is vague
        ("I'll get you the figures by end of next week.",
         "Send figures", "2026-11-27", "implied"),
        ("I'll send the draft first thing tomorrow - the printer is down tonight.",
         "Send draft", "2026-11-19", "implied"),
        ("I'll share the notes next week.", "Share notes next week", None, "none"),
        ("I'll check if Dana is free and get back to you tomorrow.",
         "Check if Dana is free and get back to Hana", "2026-11-19", "implied"),
        ("Morgen schicke ich dir die Zahlen.", "Die Zahlen schicken", "2026-11-19",
         "implied"),
        ("Ich bringe am Samstag den Kuchen mit.", "Den Kuchen mitbringen",
         "2026-11-21", "stated"),
        ("Je vous apporterai les clés vendredi.", "Apporter les clés",
         "2026-11-20", "stated"),
        ("Le llamaré el lunes.", "Llamar", "2026-11-23", "stated"),
        ("Me encargo de las sillas mañana.", "Encargarme de las sillas", "2026-11-19",
         "implied"),
        ("Puedo traer las sillas el sábado.", "Traer las sillas", "2026-11-21",
         "stated"),
    ],
)  # fmt: skip
def test_promises_of_each_form_with_the_shared_date_reading(
    text: str, what: str, due: str | None, kind: str
) -> None:
    assert _open(_msg(f"Hi Hana. {text}")) == [(what, due, kind)]


@pytest.mark.parametrize(
    "text",
    [
        "I can't send it before Monday.",
        "I will not send the deck.",
        "I'll be out of the office until Monday.",
        "I'll have to cancel our call tomorrow.",
        "I'll let you know if anything changes.",
        "If you need it, I'll send the file tonight.",
        "Can I bring a friend?",
        "I'll send it tomorrow?",
        "Should I send it, or will you?",
        "Will you send the deck tomorrow?",
        "The vendor, who is late, will send the quote Friday.",
        "Ich werde morgen nicht im Büro sein.",
        "Wenn du willst, schicke ich dir das.",
        "Je ne vais pas pouvoir venir.",
        "Je vais être absent demain.",
        "Je vous l'envoie si besoin.",
        "No te envío nada hasta el lunes.",
        "Te llamo si hay novedades.",
    ],
)
def test_a_refusal_an_absence_a_condition_or_a_question_is_no_promise(text: str) -> None:
    assert _open(_msg(f"Hi Hana. {text}")) == []


def test_a_promise_then_a_question_and_one_without_i_are_promises() -> None:
    """ "I'll pick up Lily at 3 tomorrow, you do dinner?": the promise opens it, only its
    last clause asks; "Will go through X tonight and send you my comments": no "I", the verb
    of doing after what is gone through first."""
    assert _open(_msg("I'll pick up Lily at 3 tomorrow, you do dinner?")) == [
        ("Pick up Lily at 3", "2026-11-19", "implied")
    ]
    ((what, due, _),) = _open(
        _msg("Hana,\n\nWill go through the price list variance tonight and send you my notes.")
    )
    assert what.startswith("Go through price list variance") and due == "2026-11-18"


def test_a_promise_hard_wrapped_over_two_lines_is_read_whole_with_its_date() -> None:
    """Plain-text mail breaks a sentence at about 72 characters: the promise runs on past the
    break ("... the updated price list\nfor the spring range by Friday"), to its date."""
    text = (
        "Hana,\n\nGood to hear. While I have you: I'll send you the updated price list\n"
        "for the spring range by Friday, with the new rates.\n- the old list is withdrawn\n"
    )
    assert _open(_msg(text)) == [
        ("Send updated price list for spring range", "2026-11-20", "stated"),
    ]  # fmt: skip


@pytest.mark.parametrize("visit", ["swing by", "stop by", "pop in at"])
def test_a_promise_to_call_by_and_do_something_there_is_a_promise(visit: str) -> None:
    """ "I'll swing by the lab this afternoon and sign the log": a visit and what is done."""
    text = f"Hana, I'll {visit} the lab this afternoon and sign the calibration log. Sorry."
    assert _open(_msg(text)) == [
        (f"{visit.capitalize()} lab and sign calibration log", "2026-11-18", "implied"),
    ]  # fmt: skip


def test_a_message_listed_cut_short_is_read_whole_for_its_promise() -> None:
    """A snippet that stops before "by Thursday" (or before the promise) is read whole."""
    cut = dataclasses.replace(_msg("Hi Hana. I'll send you the signed lease "), cut=True)
    thread = Thread("thread:t", "Report", WED, (cut,), frozenset(), ("work",))
    whole = {"m1": "Hi Hana. I'll send you the signed lease by Thursday.\n\nAlex"}
    asked: list[str] = []

    def read(m: ThreadMessage) -> str | None:
        asked.append(m.id)
        return whole.get(m.id)

    (found,) = promises([thread], ME, UTC, read)
    assert (found.what, found.due) == ("Send signed lease", "2026-11-19")
    assert asked == ["m1"]
    # Gone or unreadable: the snippet is what there is. Listed whole: never read again.
    (found,) = promises([thread], ME, UTC, lambda m: None)
    assert (found.what, found.due) == ("Send signed lease", None)
    listed_whole = Thread("thread:t", "Report", WED, (_msg("I'll call you."),), frozenset(), ())
    assert len(promises([listed_whole], ME, UTC, read)) == 1 and asked == ["m1"]


def test_at_most_max_reads_messages_are_read_whole_a_window() -> None:
    threads = [
        Thread(f"thread:{n}", "R", WED, (dataclasses.replace(_msg("Hi", n=n), cut=True),),
               frozenset(), ("work",))
        for n in range(MAX_READS + 20)
    ]  # fmt: skip
    asked: list[str] = []

    def read(m: ThreadMessage) -> str | None:
        asked.append(m.id)
        return None

    promises(threads, ME, UTC, read)
    assert len(asked) == MAX_READS


def test_read_followups_reads_the_sources_whole_text_of_a_cut_snippet(tmp_path: Path) -> None:
    """Through the real JSON source: its listing gives the snippet, `read` the body."""
    body = "Hi Hana,\n\nThe vendor is late again. I will return the signed form by Friday.\n\nAlex"
    message = {
        "id": "m1", "from": "Alex <alex@example.org>", "to": "Hana Sato <hana@example.net>",
        "subject": "Form", "received_at": "2026-11-18T09:00:00+00:00",
        "snippet": "Hi Hana, The vendor is late again. I...", "body": body,
    }  # fmt: skip
    path = tmp_path / "inbox.json"
    path.write_text(json.dumps({"messages": [message]}))
    source = DictMail("work", JsonInbox(path, dt.date(2026, 11, 18)))
    window = Window(ME, WED + dt.timedelta(hours=1), UTC)
    (found,) = read_followups([(source, True)], window).promised
    assert (found.what, found.due, found.name) == (
        "Return signed form", "2026-11-20", "Hana Sato",
    )  # fmt: skip


def test_a_delivery_or_a_no_longer_needed_keeps_it() -> None:
    promise = _msg("I'll send you the report by Friday.")
    later = WED + dt.timedelta(hours=5)
    assert _open(promise, _msg("Here is the report, as promised.", at=later, n=2)) == []
    assert _open(promise, _msg("Anbei der Bericht.", at=later, n=2)) == []
    assert _open(promise, _msg("Never mind, no longer needed.", mine=False, at=later, n=2)) == []
    # The other's thanks or a note of the user's that delivers nothing keeps it open.
    assert len(_open(promise, _msg("Thanks!", mine=False, at=later, n=2))) == 1
    assert len(_open(promise, _msg("Still working on it.", at=later, n=2))) == 1


def test_a_note_to_self_is_no_promise() -> None:
    note = ThreadMessage(
        "k1", "m1", "Note", WED, "Alex", "alex@example.org", (("Alex", "alex@example.org"),), (),
        True, False, False, "I'll send the report by Friday.", ("work",),
    )  # fmt: skip
    thread = Thread("thread:t", "Note", WED, (note,), frozenset(), ("work",))
    assert promises([thread], ME, UTC) == []


def test_a_huge_sent_message_is_read_in_linear_time() -> None:
    text = ("I will " * 20_000) + "x" + ("word " * 100_000)
    start = time.perf_counter()
    _open(_msg(text))
    assert time.perf_counter() - start < 5


def test_a_moved_deadline_and_its_date() -> None:
    sent = dt.date(2026, 11, 19)
    said = "Good news: the deadline moved to Wednesday 25 November."
    assert moved_to(f"Hi.\n{said}\nBest", sent) == (dt.date(2026, 11, 25), said)
    assert moved_to("The due date is now 2026-12-01.", sent) == (
        dt.date(2026, 12, 1),
        "The due date is now 2026-12-01.",
    )
    assert moved_to("We postponed the deadline to Friday.", sent) == (
        dt.date(2026, 11, 20),
        "We postponed the deadline to Friday.",
    )
    assert moved_to("The meeting moved to Friday.", sent) is None  # no deadline named
    assert moved_to("The deadline is Friday.", sent) is None  # nothing moved
    for said, day in (
        ("Die Abgabefrist wurde auf Freitag, 27. November verschoben.", dt.date(2026, 11, 27)),
        ("Die Frist ist jetzt der 30.11.", dt.date(2026, 11, 30)),
        ("La date limite est reportée au lundi 30 novembre.", dt.date(2026, 11, 30)),
        ("L'échéance a été décalée à vendredi.", dt.date(2026, 11, 20)),
        ("El plazo se ha pospuesto al 2 de diciembre.", dt.date(2026, 12, 2)),
        ("La fecha de entrega ahora es el viernes.", dt.date(2026, 11, 20)),
    ):
        assert moved_to(f"Hallo.\n{said}\nGruß", sent) == (day, said), said
    assert moved_to("Die Besprechung wurde auf Freitag verschoben.", sent) is None  # no deadline
    assert moved_to("La date limite est vendredi.", sent) is None  # nothing moved
    assert date_in("by 3 January", sent) == dt.date(2027, 1, 3)  # past this year: next year
    assert date_in("by 31 February", sent) is None


def test_a_promise_past_its_day_is_overdue_in_its_line_and_in_one_thing() -> None:
    """On Friday a promise due Thursday reads "overdue since Thursday 3 December", as a task
    past its day does, in the section and in One thing; on Thursday it is "due today"."""
    result = {
        "you_promised": [
            {
                "key": "promise:abc",
                "with": "Carl Ode <carl@x.example>",
                "what": "I'll send you the signed contract by Thursday",
                "due": "2026-12-03",
                "due_kind": "stated",
            }
        ]
    }
    friday, thursday = dt.date(2026, 12, 4), dt.date(2026, 12, 3)
    assert promise_lines(result, friday)[-1] == (
        "- To Carl Ode: I'll send you the signed contract by Thursday, overdue since Thursday "
        "3 December (`promise:abc`)"
    )
    assert due_promise(result, friday) == (
        "**Keep your promise to Carl Ode: I'll send you the signed contract by Thursday, "
        "overdue since Thursday 3 December.**"
    )
    assert promise_lines(result, thursday)[-1].endswith(", due Thursday 3 December (`promise:abc`)")
    assert due_promise(result, thursday) is not None
    assert "due today" in str(due_promise(result, thursday))


@pytest.mark.parametrize(
    ("text", "what", "due"),
    [
        ("I'll grab the candy on the way home tonight — full-size bars this year.",
         "Grab candy on way home", "2026-11-18"),
        ("I'll cover MOD Saturday night.", "Cover MOD", "2026-11-21"),
        ("I'll handle the seating chart.", "Handle seating chart", None),
        ("I'll gladly take care of the invoices tomorrow.", "Take care of invoices",
         "2026-11-19"),
    ],
)  # fmt: skip
def test_any_verb_of_doing_after_ill_is_a_promise(text: str, what: str, due: str | None) -> None:
    """Not a list of verbs: "I'll grab", "I'll cover" promise as "I'll send" does."""
    assert [(w, d) for w, d, _ in _open(_msg(f"Hi Hana. {text}"))] == [(what, due)]


@pytest.mark.parametrize(
    "text",
    [
        "I'll see you there.",
        "I'll be out on Friday.",
        "We'll both be there on the 12th.",
        "I'll need your signature by Friday.",
        "I'll think about it.",
        "I'll pass on this one.",
        "I'll leave it to you.",
        "I'll miss the meeting tomorrow.",
        "I'll wait for your reply.",
        "I'll keep you posted.",
        "I'll try to get it done.",
    ],
)
def test_a_state_a_perception_a_wish_or_a_deferral_after_ill_is_no_promise(text: str) -> None:
    assert _open(_msg(f"Hi Hana. {text}")) == []


def test_two_promises_in_one_sentence_are_two_each_with_its_due_date() -> None:
    """ "..., and I'll check with Marcus", "y te aviso": a second promise of its own; the
    first keeps the key a message's single promise had."""
    text = (
        "As promised, I'll send over the revised banquet invoice tomorrow, and I'll check with "
        "Marcus about a second projector for the ballroom."
    )
    assert _open(_msg(f"Hi Hana. {text}")) == [
        ("Send revised banquet invoice", "2026-11-19", "implied"),
        ("Check with Marcus about a second projector for ballroom", None, "none"),
    ]
    spanish = "Mañana hablo con Gwen sobre el bono y te aviso antes del viernes."
    assert _open(_msg(f"Rosa, tienes razón. {spanish}")) == [
        ("Hablar con Gwen sobre el bono", "2026-11-19", "implied"),
        ("Avisar", "2026-11-20", "stated"),
    ]
    thread = Thread("thread:t", "Report", WED, (_msg(text),), frozenset(), ("work",))
    first, second = promises([thread], ME, UTC)
    assert first.key != second.key and first.evidence == second.evidence == text


def test_each_promising_sentence_of_a_message_is_a_promise() -> None:
    text = "I'll send the deck Friday. I will also call Priya on Monday."
    assert _open(_msg(f"Hi Hana. {text}")) == [
        ("Send deck", "2026-11-20", "stated"),
        ("Call Priya", "2026-11-23", "stated"),
    ]


@pytest.mark.parametrize(
    ("text", "what"),
    [
        ("Ich melde mich morgen.", "Melden"),
        ("Je t'envoie le devis demain.", "Envoyer le devis"),
        ("Mañana reviso el contrato.", "Revisar el contrato"),
        ("El lunes llamo al banco.", "Llamar al banco"),
    ],
)
def test_the_first_person_present_with_its_time_is_a_promise(text: str, what: str) -> None:
    [(found, due, _)] = _open(_msg(f"Hi Hana. {text}"))
    assert found == what and due is not None


@pytest.mark.parametrize(
    "text", ["Mañana tengo una reunión con Gwen.", "Mañana salgo de viaje.", "El lunes no puedo."]
)
def test_the_spanish_present_of_a_state_or_an_absence_is_no_promise(text: str) -> None:
    assert _open(_msg(f"Hola Rosa. {text}")) == []


def test_a_spanish_promise_with_its_day_first_and_a_pronoun() -> None:
    assert _open(_msg("Sí, Hana, no hay problema. El jueves les pago a todos.")) == [
        ("Les pago a todos", "2026-11-19", "stated")
    ]
