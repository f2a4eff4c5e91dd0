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
    any_date,
    any_phrase,
    any_word,
    find_deadline,
)
from dayflow.providers.offline._titles import (
    PARTICIPLES,
    clean_subject,
    event,
    finish,
    gerund,
    strip_articles,
)

Piece = tuple[str, Deadline | None, bool]

_OBJECT_PROMISED = re.compile(
    r"\bthe\s+(?P<obj>[\w' -]{3,60}?)\s+you\s+"
    r"(?:said\s+you(?:'d|\s+would)\s+(?P<verb>\w+)(?:\s+over)?|promised)\b",
    re.IGNORECASE,
)
_NEED_FROM_YOU = re.compile(
    r"\b(?:i|we)\s+(?:really\s+|still\s+)?need\s+(?:a|an|the|your)\s+"
    r"(?P<obj>[\w$#+'/&,. -]{3,80}?)\s+from\s+you\b",
    re.IGNORECASE,
)
# "I need the notes from you by then": the deadline the sentence named before it.
_BY_THEN = re.compile(r"\b(?:by|before)\s+then\b", re.IGNORECASE)
# "need the revised budget by Thursday COB", "we need those numbers today", "a reminder that
# under the agreement we need the signed certificate no later than 10/31", "I have a
# placeholder for it, but I need your request by the 13th": the thing, sent.
_NEED_THING = re.compile(
    # what leads to "I need": "Quick one: I need", "To keep it in this cycle I need", ", so I
    # need", "Alex need the VIN ..." (a name, then the need), not a question's "do we need"
    r"^(?:(?:[^?]{0,100}?(?<!\bdo\s)(?<!\bdon't\s)(?<!\bif\s)(?<!\bwhether\s)(?<!\bwhat\s)"
    r"(?<!\band\s))?"  # ", and we need your card before the visit": context joined by "and"
    r"(?:i|we)(?:'ll|\s+will)?\s+"
    r"|(?!(?:they|you|he|she|it|who|people|everyone|everybody|someone|clients?|customers?)\s)"
    r"(?-i:[A-Z])[a-z]+\s+)?"
    r"(?:really\s+|still\s+|urgently\s+|also\s+)?need\s+(?P<obj>(?:the"
    r"|your|a|an|those|that|this|these)\s+[\w$#+'/. -]{2,60}?|it|them)"
    r"(?:,\s+(?:with|including|plus|and)\b[^,;.?!]{3,100},)?(?P<back>\s+back)?\s+"  # ", with X,"
    r"(?=(?:by|before|no\s+later\s+than|today|tonight|tomorrow|asap|eod|cob)\b)",
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
    ("uploaded", "sent", "signed", "countersigned", "submitted", "returned", "filled in",
     "filled out", "reviewed", "approved", "completed", "updated", "finished", "booked", "paid",
     "shared", "posted", "added", "done")
)  # fmt: skip
_NEED_DONE = re.compile(
    r"\b(?:(?:i|we)(?:'ll|\s+will)?\s+)?needs?\s+(?P<obj>(?:(?:the|your|a|an|those|these)\s+"
    rf"[\w$#+' -]{{2,60}}?|it|them))\s+(?P<verb>{_NEEDED_DONE})\b(?P<rest>[^.;!?]{{0,80}})",
    re.IGNORECASE,
)
# "The Q4 assessment of $285 is due by 11/15": a payment that falls due.
_DUE_PAYMENT = re.compile(
    r"^(?:the\s+|your\s+|this\s+|our\s+)?(?P<obj>(?:[\w$#'&/-]+\s+){0,4}?(?:assessment|invoice"
    r"|payment|fee|fees|dues|rent|balance|bill|premium|tuition|deposit|installment|instalment)"
    r"(?:\s+of\s+[$€£]?[\d,.]+)?)\s+(?:is|are)\s+(?:now\s+)?due\b",
    re.IGNORECASE,
)
# "I need you on the floor this afternoon to decide whether we dump or rework": being there is
# the way to the task, which is what follows "to".
_NEED_YOU_TO = re.compile(
    r"\b(?:i|we)\s+(?:really\s+|still\s+)?need\s+(?:you|u)\s+(?:on|in|at|here|there|down|over|up)"
    r"\b[^.,;!?]{0,50}?\s+to\s+(?P<verb>[a-z]+)\s+(?P<rest>[^.;!?]{3,120})",
    re.IGNORECASE,
)
# A need in German, Spanish or French: "außerdem brauchen wir bis zum 13.11. Ihre neue
# Lieferadresse", "necesitamos el certificado antes del 6 de noviembre", "j'ai besoin du
# devis avant vendredi"; the thing, to send. "Lo necesitamos antes del 6": the subject's.
_NEED_DE = re.compile(
    r"\b(?:(?:brauchen|benötigen|bräuchten|brauche|benötige|bräuchte)\s+(?:wir|ich)"
    r"|(?:wir|ich)\s+(?:brauchen|benötigen|bräuchten|brauche|benötige|bräuchte))\s+"
    r"(?:noch\s+|dringend\s+|unbedingt\s+)*(?P<pre>[^;!?]{0,40}?)\s*"
    r"(?P<obj>(?:ihre|ihren|ihr|deine|deinen|dein|eure|euren|euer)\s+[^\W\d][\w-]*"
    r"(?:\s+[^\W\d][\w-]*){0,3}?)(?=\s+(?:für|bis|zum|damit|spätestens|von|vor)\b|[.,;!?]|$)",
    re.IGNORECASE,
)
_NEED_ES = re.compile(
    # "(lo) necesito para el jueves", "RR. HH. necesita el formulario antes del viernes"; not
    # "el médico los necesita para el expediente" (a third's need of what was asked before)
    r"\b(?:(?P<it>(?:lo|la|los|las)\s+)?necesit(?:o|amos|aríamos|aría|amos\s+recibir)"
    r"|(?<!\blo\s)(?<!\bla\s)(?<!\blos\s)(?<!\blas\s)necesitan?)"
    r"(?!\s+que\b)\s*(?P<obj>(?:(?:el|la|los|las|su|sus|tu|tus)\s+[^.,;!?]{2,60}?)?)\s*"
    r"(?=(?:antes\s+del?|a\s+más\s+tardar|para\s+el|hoy|mañana|el\s+\d)\b)",
    re.IGNORECASE,
)
_NEED_FR = re.compile(
    r"\b(?:j'ai|j'aurais|on\s+a|nous\s+avons|nous\s+aurions)\s+besoin\s+"
    r"(?P<obj>(?:de\s+(?:la|l'|votre|ta|ton|tes|vos)|du|des|de\s+vos)\s*[^.,;!?]{2,60}?)\s+"
    r"(?=(?:avant|d'ici|pour\s+le|au\s+plus\s+tard|demain|aujourd'hui)\b)",
    re.IGNORECASE,
)
# "Still need your W-9 to process the payment", "I need your badge number": the reader's thing,
# to send (not help, patience or attention, which are no thing).
_NEED_YOURS = re.compile(
    r"^\W*(?:(?:i|we)(?:'ll|\s+will)?\s+)?(?:still\s+|really\s+)?need\s+your\s+"
    r"(?!(?:help|support|patience|understanding|attention|cooperation|advice|input|thoughts"
    r"|feedback|eyes|opinion|take|views|ok|okay|go-ahead|approval|sign-off|signoff|signature"
    r"|decision)\b)(?P<obj>[\w$#+'/.-]+(?:\s+[\w$#+'/.-]+){0,5}?)"
    r"(?=\s+(?:to|for|so|before|by|asap|today|tomorrow|when)\b|\s*[.,;!?]|$)",
    re.IGNORECASE,
)
# "I'm still waiting on the revised quote from you": what the sender waits for, to send.
_WAITING_ON = re.compile(
    r"\b(?:i'm|i\s+am|we're|we\s+are)\s+(?:still\s+)?waiting\s+(?:on|for)\s+"
    r"(?P<obj>(?:the|your|a|an)\s+[\w$#+'/. -]{2,60}?)\s+from\s+you\b",
    re.IGNORECASE,
)
# "Can we get the final headcount by Wednesday?": a thing asked for, to send.
_CAN_WE_GET = re.compile(
    r"^\W*(?:(?:hi|hey|so|also|and)\s*[,!]?\s+)?(?:can|could|may)\s+(?:we|i)\s+(?:get|have)\s+"
    r"(?P<obj>(?:the|your|a|an|those|these|that|this)\s+[^?.!]{2,60}?)"
    r"(?=\s+(?:by|before|today|tomorrow|asap|eod|this|from\s+you)\b|\s*\?)",
    re.IGNORECASE,
)
# "Gentle reminder: your timesheet is due Friday": a thing of the reader's to hand in, due.
_HANDED_IN = ("timesheet", "timesheets", "time sheet", "report", "expense report", "expenses",
              "form", "forms", "paperwork", "application", "assignment", "homework", "survey",
              "evaluation", "self-review", "review", "essay", "entry", "submission", "rsvp",
              "slides", "deck", "proposal", "abstract", "badge request")  # fmt: skip
_YOURS_DUE = re.compile(
    r"^\W*(?:(?:just\s+)?(?:a\s+)?(?:quick\s+|friendly\s+|gentle\s+)?reminder\s*[:,-]?\s*)?"
    rf"your\s+(?P<obj>(?:[\w'-]+\s+){{0,3}}?(?:{alternation(_HANDED_IN)}))\s+(?:is|are)\s+"
    r"(?:now\s+|still\s+)?due\b",
    re.IGNORECASE,
)
# "Any chance we could borrow your round bale spear?", "Could I borrow your ladder Saturday?"
_BORROW = re.compile(
    r"\b(?:(?:any\s+chance|is\s+there\s+any\s+way)\s+(?:we|i)\s+(?:could|can|might)"
    r"|(?:could|can|may|might)\s+(?:we|i))\s+borrow\s+(?:your|the)\s+(?P<obj>[^?.!,;]{2,50}?)"
    r"(?=\s+(?:for|on|this|next|tomorrow|today|over|until|till)\b|\s*[?.!,;]|$)",
    re.IGNORECASE,
)
# "I would appreciate a call back from you personally", "we'd appreciate a quick call": call them.
_CALL_WANTED = re.compile(
    r"\b(?:i|we)(?:'d|\s+would)\s+(?:really\s+|very\s+much\s+|greatly\s+)?appreciate\s+(?:a|an|your)"
    r"\s+(?:quick\s+|personal\s+|phone\s+)?(?:call(?:\s*back)?|callback|phone\s+call|ring)\b",
    re.IGNORECASE,
)
# "What GL code do you want the inspection on?", "Which venue would you prefer?": the reader's
# choice, to tell the sender.
_WHICH_DO_YOU = re.compile(
    r"^\W*(?:so\s+|and\s+|also\s+)?(?P<wh>what|which)\s+(?P<thing>[\w' -]{1,40}?)\s+(?:do|would)\s+"
    r"you\s+(?P<verb>want|prefer|like|suggest|recommend)\b(?P<rest>[^?]*)\?",
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
                "decision": "Decide on",
                "signature": "Sign", "ok": "Approve"}  # fmt: skip
_APPROVAL = re.compile(
    r"(?:\b(?:i|we)\s+(?:still\s+)?need|^\W*(?:still\s+)?need|\b(?:can|could|may)\s+(?:i|we)\s+"
    r"(?:get|have)|(?:i'd|i\s+would|we'd|we\s+would)"
    r"\s+(?:really\s+)?(?:like|love|appreciate|want))\s+your\s+"
    rf"(?:\w+\s+)?(?P<what>{alternation(_APPROVED_BY)})"
    r"(?:\s+(?:on|of|for)\s+(?P<obj>[\w' -]{3,60}?)|\s+to\s+(?P<doing>[a-z]+\s+[\w' -]{2,60}?))?"
    r"(?=\s+(?:by|before|so|to|until|this|today|tonight|tomorrow|asap|now)\b|\s*[.,;!?—–]|$)",
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
    rf"^(?P<what>{_LOOKS})(?:\s+on\s+(?P<obj>.+?))?(?=\s+(?:when|if|before|by|so|as)\b|[.,;!?]|$)",
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
    r"^(?:the\s+|this\s+|our\s+|your\s+)?(?P<obj>[\w#$'&/ -]{3,60}?)\s*(?:[—–-]\s*|,\s*)?"
    r"(?:still\s+|also\s+)?needs\s+"
    rf"your\s+(?P<what>{alternation(_APPROVED_BY)})\b(?:\s+on\s+(?P<on>[\w' -]{{3,60}}?)"
    r"(?=\s+(?:by|before|so|until|today|tomorrow)\b|[.,;!?]|$))?",
    re.IGNORECASE,
)
_MEET = re.compile(
    r"^(?:(?:hey|hi|hello|so|also|ok|okay)\s*[,!]?\s+)?"  # "Hey, does Thursday work...?"
    r"(?:(?:can|could|shall)\s+we\s+(?:do|meet|move|have|talk|grab|catch|find|set\s+up|schedule"
    r"|book|get(?=\s+(?:together|on\s+a\s+call|\d+\s+min|some\s+time|a\s+(?:call|slot|meeting)))"
    r"|hop|jump|sync|chat)|does\s+.{1,40}\s+work"
    # "Can you do lunch with me and Mark Thursday?": a meal or a drink to say yes to
    r"|(?:can|could|would)\s+you\s+(?:do|make|join\s+(?:me|us)\s+for)\s+(?:lunch|dinner"
    r"|breakfast|coffee|drinks|a\s+drink|a\s+beer)\b"
    r"|would\s+.{1,60}?\s+work\s+for\b|would\s+you\s+have\s+(?:\d+\s+minutes|time|a\s+moment)"
    r"|are\s+you\s+(?:free|around|available)|(?:are\s+)?you\s+(?:two\s+|both\s+|guys\s+|all\s+)?in\s*\?"
    r"|(?:bist\s+du|seid\s+ihr)\s+dabei\s*\?|(?:t'es|tu\s+es|vous\s+êtes)\s+partante?s?\s*\?"
    r"|¿?(?:te|os)\s+(?:apuntas|apuntáis|sumas|sumáis)\s*\?"
    # "do you have time" to meet, not "to look at the proposal" (a request with its verb)
    r"|do\s+you\s+have\s+(?:time|a\s+few\s+minutes)(?!\s+to\s+(?!meet|talk|chat|catch|connect|sync)\w)"
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
# "Would a tour on the 14th be possible?", "Wäre am 14. eine Führung möglich?", "Serait-il
# possible de passer jeudi ?", "¿Sería posible una visita?": a question the reader answers.
# (With "to" and a verb, "would it be possible to send...", it is a request cue.)
_POSSIBLE = re.compile(
    r"^(?:(?:hi|hello|hey|so|also|and)\s*[,!]?\s+)?(?:would|could|will|is)\s+"
    r"(?!it\s+be\s+possible\s+(?:for\s+(?:you|u)\s+)?to\b).{2,80}?\s+(?:be\s+)?possible\b[^?]*\?"
    r"|^(?:außerdem\s+|und\s+)?(?:wäre|waere|ist)\s+.{2,100}?\s+möglich\b[^?]*\?"
    r"|^(?:et\s+)?(?:serait-il|est-il|est-ce\s+qu'il\s+serait|ce\s+serait)\s+possible\b[^?]*\?"
    r"|^¿?\s*(?:y\s+)?(?:sería|seria|es)\s+posible\b[^?]*\?"
    # a choice to make: "Möchten Sie das Malz in Säcken oder im Big Bag?", "Do you want the
    # blue or the green one?", "Tu préfères mardi ou jeudi ?", "¿Prefieres el lunes o el martes?"
    r"|^(?:außerdem\s+|und\s+)?(?:möchten|wollen|hätten|möchtest|willst|hättest)\s+(?:sie|du|ihr)"
    r"\b[^?]*\s(?:oder|lieber)\s[^?]*\?"
    r"|^(?:so\s+|also\s+)?do\s+you\s+(?:want|prefer)\b[^?]*\sor\s[^?]*\?"
    r"|^(?:et\s+)?(?:est-ce\s+que\s+)?(?:tu\s+préfères|vous\s+préférez|préférez-vous|préfères-tu"
    r"|tu\s+veux|vous\s+voulez|voulez-vous|veux-tu)\b[^?]*\sou\s[^?]*\?"
    r"|^¿?\s*(?:y\s+)?(?:prefieres|prefiere|preferís|quieres|quiere|queréis)\b[^?]*\so\s[^?]*\?",
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
    call = _TALK.search(sentence)
    if call and _TODAY.search(sentence):  # "Können wir heute um 10 Uhr telefonieren?"
        today = find_deadline(_TODAY.search(sentence).group(0), received)  # type: ignore[union-attr]
        return [(_call_title(call, sentence, sender), today, False)]
    if call:  # another day: a meeting's time, to answer
        return [(f"Reply to {sender} about {clean_subject(subject)}", None, False)]
    meet = _MEET.search(sentence)
    if meet:
        title = f"Reply to {sender} about {clean_subject(subject)}"
        return [(title, find_deadline(sentence[meet.end() :], received, lead_only=True), False)]
    if _POSSIBLE.match(sentence):
        title = f"Reply to {sender} about {clean_subject(subject)}"
        return [(title, None, False)]
    if _CAN_MAKE_IT.search(sentence) or _ACCEPT.search(sentence):
        lead = find_deadline(sentence, received, lead_only=True)
        return [(f"RSVP to {event(subject)}", lead, False)]
    if _IT_PASSIVE.match(sentence) and clean_subject(subject) != "this":
        sentence = _IT_PASSIVE.sub(clean_subject(subject) + " ", sentence)
    return _needs(sentence, subject, sender, received) or _owed(sentence, sender, received)


# A proposal to talk on the phone, in four languages: "can we hop on a call", "können wir
# kurz telefonieren", "pouvons-nous nous appeler", "¿podemos hablar?".
_TALK = re.compile(
    r"^(?:(?:hey|hi|hello|so|also|ok|okay)\s*[,!]?\s+)?(?:"
    r"(?P<en>(?:can|could|shall)\s+we\s+(?:talk|chat|speak|(?:hop|jump|get)\s+on\s+a\s+(?:quick\s+)?"
    r"(?:call|phone\s+call)|do\s+a\s+(?:quick\s+)?call))"
    r"|(?P<de>(?:können|könnten)\s+wir\s+(?:[^\s?.!]+\s+){0,6}?(?:telefonieren|sprechen|reden))"
    r"|(?P<fr>(?:pouvons-nous|pourrions-nous|(?:est-ce\s+qu')?on\s+(?:peut|pourrait))\s+"
    r"(?:nous\s+|s')?(?:appeler|parler|téléphoner))"
    r"|(?P<es>¿?\s*(?:podemos|podríamos)\s+(?:hablar|llamarnos)))\b",
    re.IGNORECASE,
)
_TODAY = re.compile(r"\b(?:today|this\s+(?:morning|afternoon)|heute|aujourd'hui|hoy)\b", re.I)
_AT_TIME = re.compile(
    r"\b(?:at|um|à|a\s+las?)\s+\d{1,2}(?:[:.h]\d\d)?\s*(?:am|pm|uhr|h)?(?!\w)", re.IGNORECASE
)


def _call_title(call: re.Match[str], sentence: str, sender: str) -> str:
    """ "Call Stefan at 10 today", "Heute um 10 Uhr mit Stefan telefonieren", "Appeler
    Stefan aujourd'hui à 10h", "Llamar a Stefan hoy a las 10"."""
    at = _AT_TIME.search(sentence)
    time = f" {at.group(0).strip()}" if at else ""
    if call.group("de"):
        return f"Heute{time} mit {sender} telefonieren"
    if call.group("fr"):
        return f"Appeler {sender} aujourd'hui{time}"
    if call.group("es"):
        return f"Llamar a {sender} hoy{time}"
    return f"Call {sender}{time} today"


def _needs(
    sentence: str, subject: str, sender: str, received: dt.date | None
) -> list[Piece] | None:
    """What the sender needs from the reader: an approval, a thing, the reader's presence or
    eyes."""
    yours = _NEEDS_YOUR.search(sentence)
    if yours:
        verb = _APPROVED_BY[yours.group("what").lower()]
        thing = yours.group("on") or yours.group("obj")
        title = finish(f"{verb} {strip_articles(thing)}", sender)
        return [(title, find_deadline(sentence[yours.end() :], received), False)]
    approval = _APPROVAL.search(sentence)
    if approval:
        verb = _APPROVED_BY[approval.group("what").lower()]
        doing = approval.group("doing")
        if doing:  # "need your OK to walk 4 guests": approve walking them
            head, _, rest = doing.partition(" ")
            doing = f"{gerund(head)} {rest}"
        obj = doing or approval.group("obj") or clean_subject(subject)
        title = finish(f"{verb} {strip_articles(obj)}", sender)
        return [(title, find_deadline(sentence[approval.end() :], received), False)]
    done = _NEED_DONE.search(sentence)
    if done:
        verb = _PARTICIPLE[" ".join(done.group("verb").lower().split())]
        deadline = find_deadline(done.group("rest"), received)
        rest = done.group("rest")
        rest = rest.replace(deadline.phrase, " ") if deadline else rest
        obj = _named(done.group("obj"), subject)
        return [(finish(f"{verb} {obj} {_CUT_REST.split(rest)[0]}", sender), deadline, False)]
    need = _NEED_FROM_YOU.search(sentence) or _NEED_THING.search(sentence) or _need_within(sentence)
    if need:
        decide = _DECISION.match(need.group("obj"))
        obj = re.sub(r"\s+from\s+you$", "", _named(need.group("obj"), subject), flags=re.I)
        thing = f"Decide on {decide.group('on')}" if decide else f"Send {obj}"
        title = finish(thing if decide else f"{thing} to {sender}", sender)
        signed = re.match(r"^signed\s+(.+)$", obj, re.IGNORECASE)
        if signed and need.groupdict().get("back"):
            title = finish(f"Sign and return {signed.group(1)}", sender)  # "the signed X back"
        rest = sentence[need.end() :]
        deadline = find_deadline(rest, received)
        if deadline is None and _BY_THEN.match(rest.strip()):
            before = sentence[: need.start()]
            deadline = find_deadline(before, received) or any_date(before, received)
        return [(title, deadline, False)]
    yours = _NEED_YOURS.search(sentence) or _WAITING_ON.search(sentence)
    if yours:
        title = finish(f"Send {strip_articles(yours.group('obj'))} to {sender}", sender)
        return [(title, find_deadline(sentence[yours.end() :], received), False)]
    elsewhere = _foreign_need(sentence, subject, sender, received)
    if elsewhere:
        return elsewhere
    there = _NEED_YOU_TO.search(sentence)
    if there and there.group("verb").lower() not in {"be", "have", "get", "come"}:
        rest = _CUT_REST.split(there.group("rest"))[0]
        title = finish(f"{there.group('verb').capitalize()} {rest}", sender)
        return [(title, find_deadline(sentence, received), False)]
    present = _NEED_YOU_ON.search(sentence)
    if present:
        title = finish(f"Join {present.group('obj')}", sender)
        return [(title, find_deadline(sentence, received), False)]
    wish = _FEEDBACK.search(sentence)
    what = _FEEDBACK_WHAT.match(sentence[wish.end() :]) if wish else None
    if wish and what:
        kind = what.group("what").lower()
        obj = strip_articles(what.group("obj") or clean_subject(subject))  # "your take": on it
        title = f"Review {obj}" if kind in {"eyes", "review"} else f"Give {sender} {kind} on {obj}"
        return [(finish(title, sender), find_deadline(sentence, received, lead_only=True), False)]
    call = _CALL_WANTED.search(sentence)
    if call:
        return [(f"Call {sender} back", find_deadline(sentence[call.end() :], received), False)]
    which = _WHICH_DO_YOU.match(sentence)
    if which:
        rest = re.split(r"\s+[-–—]\s+|,", which.group("rest"))[0].strip()
        asked = (
            f"{which.group('wh').lower()} {which.group('thing')} you {which.group('verb')} {rest}"
        )
        return [(finish(f"Tell {sender} {asked}", sender), None, False)]
    borrow = _BORROW.search(sentence)
    if borrow:
        title = finish(f"Lend {sender} {borrow.group('obj')}", sender)
        return [(title, find_deadline(sentence[borrow.end() :], received), False)]
    got = _CAN_WE_GET.search(sentence)
    if got:
        title = finish(f"Send {strip_articles(got.group('obj'))} to {sender}", sender)
        return [(title, find_deadline(sentence[got.end() :], received), False)]
    due = _YOURS_DUE.search(sentence)
    deadline = find_deadline(sentence[due.end() :], received, lead_on=True) if due else None
    if due and deadline is not None:
        return [(finish(f"Submit {due.group('obj')}", sender), deadline, False)]
    return None


def _named(obj: str, subject: str) -> str:
    """A need's object: "it" or "them" is what the subject names."""
    if obj.lower() in {"it", "them"}:
        return clean_subject(subject)
    return strip_articles(obj)


def _foreign_need(
    sentence: str, subject: str, sender: str, received: dt.date | None
) -> list[Piece] | None:
    """A need in German, Spanish or French (`_NEED_DE`, `_NEED_ES`, `_NEED_FR`): the thing,
    to send, titled in the message's language, with the sentence's deadline."""
    german = _NEED_DE.search(sentence)
    if german:
        obj = re.sub(r"^\w+\s+", "", german.group("obj"))
        title = f"{obj[:1].upper()}{obj[1:]} an {sender} senden"
        return [(title, find_deadline(sentence, received), False)]
    spanish = _NEED_ES.search(sentence)
    if spanish and (spanish.group("obj").strip() or spanish.group("it")):
        obj = spanish.group("obj").strip() or clean_subject(subject)
        return [(f"Enviar {obj} a {sender}", find_deadline(sentence, received), False)]
    french = _NEED_FR.search(sentence)
    if french:
        obj = re.sub(r"^(?:de\s+|du\s+|des\s+)", "", french.group("obj"), flags=re.I)
        return [(f"Envoyer {obj.strip()} à {sender}", find_deadline(sentence, received), False)]
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
