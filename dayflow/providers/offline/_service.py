"""A service's own mail and what its pleas are (issue 34): an order ready for pickup or a
booking confirmed tells the reader what to have with them when they turn up ("please bring
your order number and photo ID", "veuillez présenter une pièce d'identité à l'arrivée"), and
a shop's mail calls to buy ("Book your slot now"). Neither is a to-do. A real errand in the
same notice ("please complete the intake form by Friday") stays a task, and so does a person's
"please bring your ID to HR by Thursday". Nothing here knows any message; the rules are about
how such mail is written.
"""

from __future__ import annotations

import re

from dayflow.providers.offline._clauses import Found
from dayflow.providers.offline._lexicon import SERVICE_NOTICES, TURNING_UP, cues

# A notice that an order, a booking or an appointment is confirmed or ready, in its subject
# or text: "Your order W4827 is ready for pickup", "Votre réservation est confirmée".
_NOTICE = re.compile(rf"\b{cues(SERVICE_NOTICES)}", re.IGNORECASE)
# What to have with one on arrival ("photo ID", "your booking reference"), or the arrival
# itself ("at check-in", "à l'arrivée", "bei der Abholung").
_TURNING_UP = re.compile(rf"\b{cues(TURNING_UP)}", re.IGNORECASE)
# A shop's call to act at once, as a sentence of its own: "Book your slot now", "Grab yours
# now", "Reserve your seat now before they go" (a person asks: "please book the slot now").
_CALL_TO_BUY = re.compile(
    r"^\W*(?:book|reserve|grab|get|order|secure|claim|shop|buy|try|start|join|download|renew"
    r"|upgrade|subscribe|save|pick)\s+(?:your|yours|one)\b[^.!?;,]{0,40}?\bnow\b"
    # "... before they go" ends the call ("before they go up more" is a person's reason)
    r"|\b(?:before\s+(?:they|it)(?:'re|'s|\s+are|\s+is)?\s+(?:go|gone|sell\s+out|sold\s+out"
    r"|run\s+out)(?=\s*(?:[.!]|$))|while\s+(?:they|stocks?|supplies)\s+last|solange\s+der\s+vorrat\s+reicht"
    r"|jusqu'à\s+épuisement\s+des\s+stocks|hasta\s+agotar\s+(?:existencias|stock))\b",
    re.IGNORECASE,
)


def for_the_visit(found: list[Found], text: str, subject: str) -> list[Found]:
    """`found` without a service's instructions for turning up (in a notice that an order or
    a booking is ready or confirmed, with no date of their own) and without a shop's calls to
    buy (with no day but "now" either)."""
    notice = bool(_NOTICE.search(subject) or _NOTICE.search(text))
    return [
        f
        for f in found
        # a call to buy has no day but its "now"; "renew your badge now, it expires tomorrow"
        if (_dated(f) or not _CALL_TO_BUY.search(f.sentence))
        # a thing to have on arrival; one to hand in by a date is an errand ("... by Friday")
        and not (notice and f.deadline is None and _for_arrival(f, found))
    ]


def _for_arrival(task: Found, found: list[Found]) -> bool:
    """Whether a task is what to have or do on turning up: its own words say so ("Bring photo
    ID"), or its sentence does and asks nothing else ("Please show this email at check-in");
    an errand beside it in the sentence stays ("... bring your ID and sign the asset form")."""
    if _TURNING_UP.search(task.title):
        return True
    alone = sum(f.sentence == task.sentence for f in found) == 1
    return alone and bool(_TURNING_UP.search(task.sentence))


def _dated(task: Found) -> bool:
    """Whether a task has a day of its own beside a call's "now" ("it expires tomorrow")."""
    return task.deadline is not None and task.deadline.phrase.strip().lower() != "now"
