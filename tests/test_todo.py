"""A promise's words as a to-do a person would write (`dayflow.followups.todo`)."""

from __future__ import annotations

import pytest

from dayflow.followups.todo import imperative


@pytest.mark.parametrize(
    ("words", "deadline", "todo"),
    [
        # the first person, "you" after send, the date, an aside and a "once ..." clause go
        ("I'll send you the seasonal staffing summary (headcount, hours and the minimum wage "
         "impact) by Wednesday, once Marcus signs", "by Wednesday",
         "Send seasonal staffing summary"),
        ("I'll send over the revised banquet invoice tomorrow", "tomorrow",
         "Send revised banquet invoice"),
        ("I'll send you the revised roadmap by Thursday, with the Atlas dates moved",
         "by Thursday", "Send revised roadmap"),
        ("I'll write the tap list descriptions tonight after the party wraps", "tonight",
         "Write tap list descriptions"),
        ("I'll send the notes so we can close this", None, "Send notes"),
        # a delivery said another way is a sending
        ("I'll have the bed turnaround analysis to you tomorrow", "tomorrow",
         "Send bed turnaround analysis"),
        ("will get you the revised capex numbers tomorrow morning", "tomorrow morning",
         "Send revised capex numbers"),
        ("I'll get you the staffing matrix first thing tomorrow", "tomorrow",
         "Send staffing matrix"),
        ("I'll write up a reference and get it to you by end of next week",
         "by end of next week", "Send a reference"),
        ("I'll draft the tap list descriptions and send them to you", None,
         "Send tap list descriptions"),
        # another "you" is the person's first name
        ("Let me check with Renée and get back to you on the bonus pool by Tuesday",
         "by Tuesday", "Check with Renée and get back to Priya on bonus pool"),
        ("I'll walk you through your budget", None, "Walk Priya through Priya's budget"),
        # a vague time is no due date, so it stays
        ("I'll share the notes next week", None, "Share notes next week"),
        # the other languages: the first person and the date go, the infinitive comes
        ("Ich schicke Ihnen den Bericht morgen", "morgen", "Den Bericht schicken"),
        ("Ich bringe am Samstag den Kuchen mit", "am Samstag", "Den Kuchen mitbringen"),
        ("Je vous enverrai le rapport demain", "demain", "Envoyer le rapport"),
        ("Je vais t'envoyer le devis demain", "demain", "Envoyer le devis"),
        ("Te envío el informe mañana", "mañana", "Enviar el informe"),
        ("Mañana hablo con Gwen sobre el bono", "Mañana", "Hablar con Gwen sobre el bono"),
        ("Puedo traer las sillas el sábado", "el sábado", "Traer las sillas"),
    ],
)  # fmt: skip
def test_a_promise_is_an_imperative(words: str, deadline: str | None, todo: str) -> None:
    assert imperative(words, deadline, "Priya Natarajan") == todo


def test_words_with_nothing_left_after_the_cuts_are_kept() -> None:
    assert imperative("I'll", None, "Priya") == "I'll"
