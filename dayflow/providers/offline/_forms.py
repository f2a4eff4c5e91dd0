"""Sentences whose whole shape is the request, before any cue is looked for.

An invitation to meet ("can we find 30 minutes", "does Tuesday work", "are you free"), an
answer to an invitation ("let me know if you can make it"), a need ("I need your approval on
X", "need the budget by Thursday", "need you on the bridge"), a wish for the reader's eyes
("I'd love your feedback on X"), what the reader promised ("the deck you said you'd send"),
and what has to be done by a deadline ("the PO has to be approved by COB"). Pure functions of
one sentence, used by `_clauses`.
"""

from __future__ import annotations

import datetime as dt
import re

from dayflow.dates import (
    Deadline,
    alternation,
    any_phrase,
    any_word,
    find_deadline,
)
from dayflow.providers.offline._titles import (
    PARTICIPLES,
    clean_subject,
    event,
    finish,
    strip_articles,
)

Piece = tuple[str, Deadline | None, bool]

_OBJECT_PROMISED = re.compile(
    r"\bthe\s+(?P<obj>[\w' -]{3,60}?)\s+you\s+"
    r"(?:said\s+you(?:'d|\s+would)\s+(?P<verb>\w+)(?:\s+over)?|promised)\b",
    re.IGNORECASE,
)
_NEED_FROM_YOU = re.compile(
    r"\b(?:i|we)\s+need\s+(?:a|an|the|your)\s+(?P<obj>[\w' -]{3,60}?)\s+from\s+you\b",
    re.IGNORECASE,
)
# "need the revised budget by Thursday COB", "we need those numbers today", "a reminder that
# under the agreement we need the signed certificate no later than 10/31", "I have a
# placeholder for it, but I need your request by the 13th": the thing, sent.
_NEED_THING = re.compile(
    r"^(?:(?:[^?]{0,100}?(?:\bthat\b[^?]{0,60}?|,(?:\s+but)?)\s+)?"
    r"(?:i|we)(?:'ll|\s+will)?\s+)?"
    r"(?:really\s+|still\s+|urgently\s+)?need\s+(?P<obj>(?:the"
    r"|your|a|an|those|that|this|these)\s+[\w$#+'/. -]{2,60}?)\s+(?=(?:by|before|no\s+later\s+than"
    r"|today|tonight|tomorrow|asap|eod|cob)\b)",
    re.IGNORECASE,
)
# "We need the signed PW1 within 48 hours": the thing, sent in a number of hours or days (not
# an approval or a decision, which is given: "I need the manager's approval within 48 hours").
_NEED_WITHIN = re.compile(
    r"^(?:(?:i|we)(?:'ll|\s+will)?\s+)?(?:really\s+|still\s+|urgently\s+)?need\s+"
    r"(?!(?:the|your|a|an)\s+(?:[\w'-]+\s+){0,3}(?:approval|sign-off|decision|ok|go-ahead)\b)"
    r"(?P<obj>(?:the|your|those|these)\s+[\w$#+'/. -]{2,60}?)\s+(?=within\s+(?:the\s+next\s+)?"
    r"(?:\d+|two|three|four|five)\s+(?:hours|days)\b)",
    re.IGNORECASE,
)
# "a yes or no from you on the repair", "a decision on the vendor": a decision to make, not a
# thing to send.
_DECISION = re.compile(
    r"^(?:a|an|the|your)\s+(?:yes\s+or\s+no|yes/no|decision|go/no[- ]go|go-ahead|call)"
    r"(?:\s+from\s+you)?\s+(?:on|about)\s+(?:the\s+)?(?P<on>.+)$",
    re.IGNORECASE,
)
# A state a place is needed in, not a thing to send: "we need the room cleared", "the lot empty".
_STATE = re.compile(r"(?:\w+ed|empty|clear|ready|free|open|closed|quiet|done|vacant)$", re.I)
# "we'll need your final slides uploaded to the portal by Friday": the thing, and what to do.
_NEEDED_DONE = any_phrase(
    ("uploaded", "sent", "signed", "submitted", "returned", "filled in", "filled out", "reviewed",
     "approved", "completed", "updated", "finished", "booked", "paid", "shared", "posted", "added",
     "done")
)  # fmt: skip
_NEED_DONE = re.compile(
    r"\b(?:(?:i|we)(?:'ll|\s+will)?\s+)?need\s+(?P<obj>(?:the|your|a|an|those|these)\s+"
    rf"[\w$#+' -]{{2,60}}?)\s+(?P<verb>{_NEEDED_DONE})\b(?P<rest>[^.;!?]{{0,80}})",
    re.IGNORECASE,
)
# "The Q4 assessment of $285 is due by 11/15": a payment that falls due.
_DUE_PAYMENT = re.compile(
    r"^(?:the\s+|your\s+|this\s+|our\s+)?(?P<obj>(?:[\w$#'&/-]+\s+){0,4}?(?:assessment|invoice"
    r"|payment|fee|fees|dues|rent|balance|bill|premium|tuition|deposit|installment|instalment)"
    r"(?:\s+of\s+[$€£]?[\d,.]+)?)\s+(?:is|are)\s+(?:now\s+)?due\b",
    re.IGNORECASE,
)
_NEED_YOU_ON = re.compile(
    r"\b(?:i|we)?\s*need\s+you\s+(?:on|in|at)\s+(?P<obj>(?:the|a|this|our)\s+[\w' -]{2,40}?)"
    r"(?=\s+(?:now|asap|today|right\s+away|immediately)\b|[.,;!?]|$)",
    re.IGNORECASE,
)
# "I need your sign-off on X", "your operational sign-off this morning": what the sender
# needs, and the verb that gives it.
_APPROVED_BY = {"approval": "Approve", "sign-off": "Sign off on", "signoff": "Sign off on",
                "signature": "Sign", "ok": "Approve"}  # fmt: skip
_APPROVAL = re.compile(
    rf"\b(?:i|we)\s+need\s+your\s+(?:\w+\s+)?(?P<what>{alternation(_APPROVED_BY)})"
    r"(?:\s+(?:on|of|for)\s+(?P<obj>[\w' -]{3,60}?))?"
    r"(?=\s+(?:by|before|so|to|until|this|today|tonight|tomorrow|asap|now)\b|[.,;!?]|$)",
    re.IGNORECASE,
)
# "I'd love your feedback on the dashboard", "could I get your eyes on the plan?"
_FEEDBACK = re.compile(
    r"\b(?:i'd|i\s+would|we'd|we\s+would)\s+(?:love|like|appreciate|welcome)\s+your\s+"
    r"|\b(?:could|can|may)\s+i\s+(?:get|have|borrow)\s+your\s+"
    r"|\b(?:i|we)\s+(?:need|want)\s+your\s+",
    re.IGNORECASE,
)
_LOOKS = any_phrase(
    ("feedback", "thoughts", "input", "eyes", "review", "opinion", "comments", "take", "two cents",
     "views")
)  # fmt: skip
_FEEDBACK_WHAT = re.compile(
    rf"^(?P<what>{_LOOKS})\s+on\s+(?P<obj>.+?)(?=\s+(?:when|if|before|by|so|as)\b|[.,;!?]|$)",
    re.IGNORECASE,
)
# "the Kestrel PO has to be approved by COB": what must be done, by a deadline.
_DUE_DONE = any_word(
    "approved signed reviewed submitted paid returned completed renewed confirmed filed"
    " countersigned uploaded sent shared posted booked updated finished"
)
_PASSIVE = re.compile(
    r"^(?:the\s+|this\s+|our\s+|your\s+)?(?P<obj>[\w#$'&/ -]{3,60}?)\s+(?:has|have|needs?|must)"
    rf"\s+(?:to\s+)?be\s+(?P<verb>{_DUE_DONE})\b",
    re.IGNORECASE,
)
# "It needs to be signed and returned by 3 Nov": the pronoun is what the subject names.
_IT_PASSIVE = re.compile(
    r"^(?:it|this|this\s+one)\s+(?=(?:has|needs?|must)\s+(?:to\s+)?be\s+)", re.IGNORECASE
)
# "The order form needs your signature before 5pm": the thing, and the verb that gives it.
_NEEDS_YOUR = re.compile(
    r"^(?:the\s+|this\s+|our\s+|your\s+)?(?P<obj>[\w#$'&/ -]{3,60}?)\s+(?:still\s+)?needs\s+"
    rf"your\s+(?P<what>{alternation(_APPROVED_BY)})\b",
    re.IGNORECASE,
)
_MEET = re.compile(
    r"^(?:(?:hey|hi|hello|so|also|ok|okay)\s*[,!]?\s+)?"  # "Hey, does Thursday work...?"
    r"(?:(?:can|could|shall)\s+we\s+(?:do|meet|move|have|talk|grab|catch|find|set\s+up|schedule"
    r"|book|get|hop|jump|sync|chat)|does\s+.{1,40}\s+work"
    r"|would\s+.{1,60}?\s+work\s+for\b|would\s+you\s+have\s+(?:\d+\s+minutes|time|a\s+moment)"
    r"|are\s+you\s+(?:free|around|available)|are\s+you\s+(?:two\s+|both\s+|guys\s+)?in\s*\?"
    r"|(?:bist\s+du|seid\s+ihr)\s+dabei\s*\?|(?:t'es|tu\s+es|vous\s+êtes)\s+partante?s?\s*\?"
    r"|¿?(?:te|os)\s+(?:apuntas|apuntáis|sumas|sumáis)\s*\?|do\s+you\s+have\s+(?:time|a\s+few\s+minutes)"
    r"|passt\s+(?:dir|ihnen)|hast\s+du\s+.{1,30}\s+zeit|(?:hätten|haben)\s+sie\s+.{1,30}\s+zeit"
    r"|würde\s+(?:ihnen|dir)\s+.{1,60}?\s+passen|est-ce\s+que\s+.{1,40}\s+(?:te|vous)\s+(?:va|convient|conviendrait|irait)"
    r"|tu\s+es\s+dispo|(?:serais|es)-tu\s+dispo|(?:seriez|êtes)-vous\s+disponible"
    r"|¿?(?:te|le|os|les)\s+(?:viene|va|vendría|iría)\s+bien|¿?estar(?:ías|ía)\s+disponible"
    # A proposal's closing question: "Ça te va ?", "Does that work for you?", "¿Te parece?"
    r"|^(?:est-ce\s+que\s+)?ça\s+(?:te|vous)\s+(?:va|convient|dit)|^(?:does|would)\s+(?:that|this)"
    r"\s+work(?:\s+for\s+you)?\s*\?|^(?:that|this)\s+works?\s+for\s+you\s*\?"
    r"|^¿?\s*(?:te|le|les)\s+(?:parece|conviene)(?:\s+bien)?\s*\?|^passt\s+(?:dir|ihnen|euch)"
    r"\s+das\s*\?|^geht\s+das\s+(?:für\s+(?:dich|sie))?\s*\?)(?!\w)",
    re.IGNORECASE,
)
# "let me know by Wednesday if you three can make it", "please let us know if you can
# attend": an answer to an invitation.
_CAN_MAKE_IT = re.compile(
    r"\b(?:let\s+(?:me|us)\s+know|tell\s+(?:me|us)|confirm)\b.{0,40}?\b(?:if|whether)\s+(?:you|y'all|your)"
    r"(?:\s+\w+)?\s+(?:can|could|will)\s+(?:make\s+it|join\s+us|attend|be\s+there)\b",
    re.IGNORECASE,
)
# "Please accept or decline by Tuesday", "bitte sagen Sie bis Freitag zu oder ab": an RSVP.
_ACCEPT = re.compile(
    r"\baccept\s+(?:or|/)\s+decline\b|\bzu-?\s*(?:oder|/)\s*ab(?:sagen)?\b|\bzu-\s*oder\s+absagen"
    r"|\baccepter\s+ou\s+(?:refuser|décliner)|\bconfirme[rz]?\s+(?:ta|votre)\s+(?:présence|venue)"
    r"|\baceptar\s+o\s+rechazar|\bconfirm(?:ar|es|e)\s+(?:tu|su)\s+asistencia",
    re.IGNORECASE,
)
# "Every manager who approves timecards must complete the course by November 13", "each
# budget owner must submit ...", "chaque manager doit ...", "todos los jefes deben ...": an
# obligation on everyone in the reader's role, a task when it has a deadline.
_EVERY_MUST = re.compile(
    r"^(?:(?:hi|hello|hey|dear|to)\s+[^,.!?:]{1,40}[,!:]\s+)?"  # a snippet: "Hi all, Every"
    r"(?:every|each|all|chaque|tous\s+les|toutes\s+les|todos\s+los|todas\s+las|cada)\s+"
    r"(?P<who>[\w' -]{2,60}?)\s+(?:must|needs?\s+to|has\s+to|have\s+to|(?:is|are)\s+required\s+to"
    r"|doi(?:t|vent)|deben?|tienen?\s+que)\s+(?P<verb>[^\W\d_]{3,})\s+(?P<rest>.+)$",
    re.IGNORECASE,
)
_THEIR = re.compile(r"^(?:their|his\s+or\s+her|his|her|leur|leurs|su|sus)\s+", re.IGNORECASE)
# Where what follows a need's verb stops being part of the task.
_CUT_REST = re.compile(r",|\s(?:so|because|since|as|and|which|before|by)\b", re.IGNORECASE)
_PARTICIPLE = PARTICIPLES


def whole_forms(
    sentence: str, subject: str, sender: str, received: dt.date | None
) -> list[Piece] | None:
    """A sentence whose whole shape is the request, or None."""
    meet = _MEET.search(sentence)
    if meet:
        title = f"Reply to {sender} about {clean_subject(subject)}"
        return [(title, find_deadline(sentence[meet.end() :], received, lead_only=True), False)]
    if _CAN_MAKE_IT.search(sentence) or _ACCEPT.search(sentence):
        lead = find_deadline(sentence, received, lead_only=True)
        return [(f"RSVP to {event(subject)}", lead, False)]
    if _IT_PASSIVE.match(sentence) and clean_subject(subject) != "this":
        sentence = _IT_PASSIVE.sub(clean_subject(subject) + " ", sentence)
    return _needs(sentence, subject, sender, received) or _owed(sentence, sender, received)


def _needs(
    sentence: str, subject: str, sender: str, received: dt.date | None
) -> list[Piece] | None:
    """What the sender needs from the reader: an approval, a thing, the reader's presence or
    eyes."""
    yours = _NEEDS_YOUR.search(sentence)
    if yours:
        verb = _APPROVED_BY[yours.group("what").lower()]
        title = finish(f"{verb} {strip_articles(yours.group('obj'))}", sender)
        return [(title, find_deadline(sentence[yours.end() :], received), False)]
    approval = _APPROVAL.search(sentence)
    if approval:
        verb = _APPROVED_BY[approval.group("what").lower()]
        obj = approval.group("obj") or clean_subject(subject)
        title = finish(f"{verb} {strip_articles(obj)}", sender)
        return [(title, find_deadline(sentence[approval.end() :], received), False)]
    done = _NEED_DONE.search(sentence)
    if done:
        verb = _PARTICIPLE[" ".join(done.group("verb").lower().split())]
        deadline = find_deadline(done.group("rest"), received)
        rest = done.group("rest")
        rest = rest.replace(deadline.phrase, " ") if deadline else rest
        obj = strip_articles(done.group("obj"))
        return [(finish(f"{verb} {obj} {_CUT_REST.split(rest)[0]}", sender), deadline, False)]
    need = _NEED_FROM_YOU.search(sentence) or _NEED_THING.search(sentence) or _need_within(sentence)
    if need:
        decide = _DECISION.match(need.group("obj"))
        thing = f"Decide on {decide.group('on')}" if decide else f"Send {need.group('obj')}"
        title = finish(thing if decide else f"{thing} to {sender}", sender)
        return [(title, find_deadline(sentence[need.end() :], received), False)]
    present = _NEED_YOU_ON.search(sentence)
    if present:
        title = finish(f"Join {present.group('obj')}", sender)
        return [(title, find_deadline(sentence, received), False)]
    wish = _FEEDBACK.search(sentence)
    what = _FEEDBACK_WHAT.match(sentence[wish.end() :]) if wish else None
    if wish and what:
        kind, obj = what.group("what").lower(), strip_articles(what.group("obj"))
        title = f"Review {obj}" if kind in {"eyes", "review"} else f"Give {sender} {kind} on {obj}"
        return [(finish(title, sender), find_deadline(sentence, received, lead_only=True), False)]
    return None


def _need_within(sentence: str) -> re.Match[str] | None:
    """ "We need the signed PW1 within 48 hours": the thing needed, not a state needed."""
    need = _NEED_WITHIN.search(sentence)
    return None if need is None or _STATE.search(need.group("obj")) else need


def _owed(sentence: str, sender: str, received: dt.date | None) -> list[Piece] | None:
    """What the reader promised ("the deck you said you'd send") or what has to be done by a
    deadline ("the PO has to be approved by COB")."""
    promised = _OBJECT_PROMISED.search(sentence)
    if promised:
        verb = (promised.group("verb") or "send").capitalize()
        title = finish(f"{verb} {strip_articles(promised.group('obj'))} to {sender}", sender)
        return [(title, find_deadline(sentence[promised.end() :], received, lead_on=True), False)]
    payment = _DUE_PAYMENT.search(sentence)
    deadline = find_deadline(sentence[payment.end() :], received, lead_on=True) if payment else None
    if payment and deadline is not None:
        return [(finish(f"Pay {payment.group('obj')}", sender), deadline, False)]
    every = _EVERY_MUST.match(sentence)
    deadline = find_deadline(every.group("rest"), received) if every else None
    if every and deadline is not None and every.group("verb").lower() not in {"be", "not"}:
        rest = every.group("rest")
        obj = rest[: rest.find(deadline.phrase)] if deadline.phrase in rest else rest
        obj = _THEIR.sub("", obj.strip(" ,.;"))
        title = finish(f"{every.group('verb').capitalize()} {strip_articles(obj)}", sender)
        return [(title, deadline, False)]
    passive = _PASSIVE.search(sentence)
    deadline = find_deadline(sentence[passive.end() :], received) if passive else None
    if passive and deadline is not None:
        verb = _PARTICIPLE.get(passive.group("verb").lower(), "Do")
        return [(finish(f"{verb} {passive.group('obj')}", sender), deadline, False)]
    return None
