"""An announcement to everyone ("Hi all,", "Team,", "Hallo zusammen,") and what its asks are
(issue 34): a house rule ("please use the side door") or a way to behave ("please be
considerate and take your containers home") is for everyone who reads it, not a to-do of the
reader's. A thing to do asked of everyone ("please submit your timesheets by Friday") stays
a task. Nothing here knows any message; the rules are about how announcements are written.
"""

from __future__ import annotations

import re

from dayflow.providers.offline._clauses import Found
from dayflow.providers.offline._lexicon import BROADCAST_CONDUCT, CONDUCT, cues
from dayflow.providers.offline._sentences import Sentence, spoken_to_group

# A house rule, by its task's title ("Use side door on Elm St", "Park on Mill Street").
_HOUSE_RULE = re.compile(rf"^{cues(BROADCAST_CONDUCT)}", re.IGNORECASE)
# A plea that opens on a way to behave: what comes after it in the same sentence is how to
# behave too ("please be considerate and take your lunch boxes home", "bitte seid leise und
# schließt die Tür").
_PLEA = r"(?:please|pls|kindly|bitte|merci\s+(?:de|d')|por\s+favor)"
_BEHAVING = re.compile(rf"\b{_PLEA}\s*,?\s*{cues(CONDUCT)}", re.IGNORECASE)


def for_everyone(found: list[Found], said: list[Sentence]) -> list[Found]:
    """`found` without the house rules and ways to behave of a message that opens by greeting
    a group (`said`, its sentences); any other message's `found` as it is."""
    if not spoken_to_group(said):
        return found
    return [f for f in found if not _HOUSE_RULE.match(f.title) and not _BEHAVING.search(f.sentence)]
