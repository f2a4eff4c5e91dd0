"""Spam and scams by their signs, so that a prize notice's "click here to claim" or a
phisher's "verify your account" is no task (issue 34).

A scam dangles something (`_lexicon.SCAM_BAIT`: money to claim, a prize, a deal, a fee that
releases funds, an account to "verify", banking details) and pushes (`SCAM_PRESSURE`: act fast,
expires in 48 hours, click here). One sign alone is ordinary mail (a colleague asks for bank
details for a refund; a vendor's deal expires Friday), so a message is a scam only with bait
and at least one more sign:

- pressure, in the subject or the text;
- a spammer's style: a subject shouting with "!!" or opening with the reader's name in lower
  case and a dash ("sofia m. - ..."), "ur" for "your", a link spaced out against filters
  ("http : / / www"), an opt-out line ("to be removed, reply ...");
- a sender whose domain names itself a promotion (`win-promo.biz`, `pharmadeals`, a `.biz`).

No message or sender is known here: every rule is about how such mail is written.
"""

from __future__ import annotations

import re

from dayflow.providers.offline._lexicon import SCAM_BAIT, SCAM_PRESSURE, cues

_BAIT = re.compile(rf"\b{cues(SCAM_BAIT)}", re.IGNORECASE)
_PRESSURE = re.compile(rf"\b{cues(SCAM_PRESSURE)}", re.IGNORECASE)
_SHOUTING = re.compile(r"!{2,}|\?!|!1")
# "sofia m. - ur prize...", "sofia - ...": a first name, maybe an initial (not "stream down - ")
_NAMED_OPENING = re.compile(r"^[a-z]+(?:\s+[a-z]\.)?\s+-\s")
_TEXTSPEAK = re.compile(r"\bur\b|\bu\s+(?:have|are|won)\b", re.IGNORECASE)
# Spam's tricks against filters and the law: a link spaced out ("http : / / www . x . com"), an
# opt-out line ("to be removed, reply with no thanks in the subject").
_SPACED_LINK = re.compile(r"\bhttps?\s+:\s*/\s*/|\bwww\s+\.\s+\w", re.IGNORECASE)
_OPT_OUT = re.compile(
    r"\bto\s+be\s+removed\b|\bremove\s+me\b|\bno\s+thanks\s+in\s+(?:the\s+)?subject\b"
    r"|\bremoval\s+instructions\b",
    re.IGNORECASE,
)
_PROMO_DOMAIN = re.compile(
    r"@(?:[\w-]+\.)*(?:[\w-]*(?:promo|prize|deals?|win|lotto|lottery|casino|bonus|cheap|pharma"
    r"|offers?|rewards?)[\w-]*\.[a-z.]+|[\w.-]+\.(?:biz|top|xyz|click|loan|win|bid))\s*>?\s*$",
    re.IGNORECASE,
)


def looks_like_scam(subject: str, text: str, sender: str) -> bool:
    """Whether a message reads as spam or a scam: bait beside a second sign. `sender` is the
    From header as the listing gives it."""
    whole = f"{subject}\n{text}"
    if not _BAIT.search(whole):
        return False
    signs = (
        bool(_PRESSURE.search(whole)),
        bool(_SHOUTING.search(subject) or _NAMED_OPENING.match(subject)),
        bool(_TEXTSPEAK.search(whole) or _SPACED_LINK.search(whole) or _OPT_OUT.search(whole)),
        bool(_PROMO_DOMAIN.search(sender.strip())),
    )
    return any(signs)
