"""An announcement to everyone ("Hi all,", "Team,", "Hallo zusammen,") and what its asks are
(issue 34): a house rule ("please use the side door") or a way to behave ("please be
considerate and take your containers home") is for everyone who reads it, not a to-do of the
reader's. A thing to do asked of everyone ("please submit your timesheets by Friday") stays
a task. Nothing here knows any message; the rules are about how announcements are written.
"""

from __future__ import annotations

import re

from dayflow.providers.offline._clauses import Found
from dayflow.providers.offline._lexicon import (
    BROADCAST_CONDUCT,
    CONDUCT,
    FORBIDDING,
    ROLE_SENDERS,
    STANDING,
    cues,
)
from dayflow.providers.offline._sentences import Sentence, spoken_to, spoken_to_group

# A house rule, by its task's title ("Use side door on Elm St", "Park on Mill Street").
_HOUSE_RULE = re.compile(rf"^{cues(BROADCAST_CONDUCT)}", re.IGNORECASE)
# A plea that opens on a way to behave: what comes after it in the same sentence is how to
# behave too ("please be considerate and take your lunch boxes home", "bitte seid leise und
# schließt die Tür").
_PLEA = r"(?:please|pls|kindly|bitte|merci\s+(?:de|d')|por\s+favor)"
_BEHAVING = re.compile(rf"\b{_PLEA}\s*,?\s*{cues(CONDUCT)}", re.IGNORECASE)
# A standing instruction, by its title: "Wear vest any time you cross yard" holds every day.
_STANDING = re.compile(rf"\b{cues(STANDING)}\b", re.IGNORECASE)
# A sentence that opens on what not to do: "Please don't reply-all -- use #ops instead".
_FORBIDS = re.compile(rf"^\W*(?:{_PLEA}\s*,?\s*)?{cues(FORBIDDING)}", re.IGNORECASE)


# An office's name as a sender: "Facilities Services", "IT Help Desk".
_ROLE = re.compile(rf"\b{cues(ROLE_SENDERS)}\b", re.IGNORECASE)


def is_office(display: str) -> bool:
    """Whether a sender's display name is an office's, not a person's ("Facilities Services",
    "Kessler Kundendienst", "Service client")."""
    return bool(_ROLE.search(display))


def for_everyone(found: list[Found], said: list[Sentence], *, office: bool = False) -> list[Found]:
    """`found` without the house rules, standing instructions and ways to behave of an
    announcement: a message (`said`, its sentences) that opens by greeting a group, or one
    from an office (`office`, "Facilities Services") that greets no one by name; any other
    message's `found` as it is."""
    from_office = office and not (said and spoken_to(said[0].text)[0])
    if not spoken_to_group(said) and not from_office:
        return found
    return [f for f in found if not _for_everyone(f)]


def _for_everyone(found: Found) -> bool:
    """Whether an ask of an announcement is for everyone who reads it: a house rule, a
    standing instruction, a way to behave, or the sentence forbids first and says what to
    do instead."""
    return bool(
        _HOUSE_RULE.match(found.title)
        or _STANDING.search(found.title)
        or _BEHAVING.search(found.sentence)
        or _FORBIDS.match(found.sentence)
    )
