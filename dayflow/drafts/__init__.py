"""Replies the user owes, drafted in their drafts folder: never sent, one per thread, exactly
once, and only where an [[inbox]] entry says `drafts = ...` (issue 36).

`compose` makes a draft's bytes (to the sender alone, `Re:`, In-Reply-To and References, the
last message quoted, plain UTF-8); `ledger` writes it exactly once through the saved marks
around the one write (`Drafter`); `words` holds the offline template, the language of a mail
and the user's voice read from their sent mail. The folders themselves are
`dayflow.sources.drafts` (Maildir) and `dayflow.sources.imap_drafts` (APPEND).
"""

from __future__ import annotations

from dayflow.drafts.compose import (
    MAX_QUOTED_CHARS,
    Reply,
    clean_header,
    compose,
    new_message_id,
    reply_subject,
)
from dayflow.drafts.ledger import (
    EFFECT_NAME,
    KEY_PREFIX,
    PENDING,
    Drafter,
    EffectLog,
    Refused,
    describe,
)
from dayflow.drafts.words import ANSWER, Voice, first_name, language_of, template, voice_of

__all__ = [
    "ANSWER",
    "EFFECT_NAME",
    "KEY_PREFIX",
    "MAX_QUOTED_CHARS",
    "PENDING",
    "Drafter",
    "EffectLog",
    "Refused",
    "Reply",
    "Voice",
    "clean_header",
    "compose",
    "describe",
    "first_name",
    "language_of",
    "new_message_id",
    "reply_subject",
    "template",
    "voice_of",
]
