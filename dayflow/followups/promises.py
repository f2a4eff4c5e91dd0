"""What the user promised in their own sent mail (issue 35 part 3): "I'll send", "I will get
back to you by", "let me check and revert", in English, German, French and Spanish.

A promise is a sentence of the user's own words (quotes and signature left out) in a message
of the window's threads, with whom (the message's first other recipient), what (the sentence
from its promise on), the due date (stated: a date the sentence names; implied: "today",
"tomorrow", "end of the week", "next week"; else none) and the sentence as its evidence. It is
kept when a later message from the user in that thread delivers (it carries a file, as its
MIME structure says: `Envelope.has_attachment`; or its words do: "here is", "attached", "as
promised") or the other person says it is no longer needed.

Pure over the threads (`followups.threads`): the same mail gives the same list.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Any

from dayflow.dates import SENTENCE, named_date
from dayflow.followups.rules import own_words
from dayflow.followups.threads import Thread, ThreadMessage
from dayflow.sources.identity import short_hash
from dayflow.sources.me import Me

PROMISE_PREFIX = "promise:"
MAX_PROMISES = 30
MAX_WHAT = 200

_CUES = (
    # en
    r"\bI(?:'ll|\s+will|\s+shall|'m\s+going\s+to|\s+am\s+going\s+to)\s+(?:\w+\s+){0,2}?"
    r"(?:send|get\s+back|check|share|forward|follow\s+up|revert|prepare|look\s+into|circle"
    r"\s+back|update|confirm|draft|write|have|call|review|finish|deliver|book)\b",
    r"\blet\s+me\s+(?:check|look|find\s+out|confirm|get\s+back|revert)\b",
    # de
    r"\bich\s+(?:werde|schicke|sende|melde\s+mich|kümmere\s+mich|prüfe|schaue)\b",
    # fr
    r"\bje\s+(?:vous\s+|te\s+|t'|l'|les\s+)?(?:enverrai|envoie|reviens|reviendrai|vérifie"
    r"|regarde|confirme|vais)\b",
    # es
    r"\b(?:te|le|les|os)\s+(?:enviaré|envío|mando|mandaré|confirmo|aviso|escribo)\b",
    r"\b(?:voy\s+a|vamos\s+a)\s+(?:enviar|mandar|revisar|comprobar|preparar)\b",
    r"\b(?:lo\s+)?(?:reviso|compruebo)\s+y\s+te\b",
)
_PROMISE = re.compile("|".join(f"(?:{c})" for c in _CUES), re.IGNORECASE)
_DELIVERED = re.compile(
    r"\b(?:here\s+is|here's|here\s+are|attached|attaching|please\s+find|as\s+promised|enclosed"
    r"|anbei|im\s+anhang|hier\s+ist|wie\s+versprochen|ci-joint|voici|comme\s+promis"
    r"|adjunto|aquí\s+tienes|aquí\s+está|como\s+prometí)\b",
    re.IGNORECASE,
)
_NOT_NEEDED = re.compile(
    r"\b(?:no\s+longer\s+need(?:ed)?|not\s+needed\s+any\s*more|never\s*mind|no\s+need"
    r"|don't\s+need\s+it|nicht\s+mehr\s+nötig|brauche\s+ich\s+nicht\s+mehr|plus\s+besoin"
    r"|pas\s+la\s+peine|ya\s+no\s+hace\s+falta|ya\s+no\s+lo\s+necesito)\b",
    re.IGNORECASE,
)

_NEXT_WEEK = r"\b(?:next\s+week|nächste\s+woche|semaine\s+prochaine|próxima\s+semana)\b"
_IMPLIED = (
    (re.compile(r"\b(?:today|end\s+of\s+(?:the\s+)?day|eod|heute|aujourd'hui|hoy)\b", re.I), 0),
    (re.compile(r"\b(?:tomorrow|morgen|demain|mañana)\b", re.I), 1),
    (re.compile(_NEXT_WEEK, re.I), 7),
)


def date_in(sentence: str, sent: dt.date) -> dt.date | None:
    """The date a sentence names, read from the day it was written, in any of the four
    languages (`dayflow.dates.named_date`: an ISO date, "25 November", "20. November", "le 25
    novembre", "25 de noviembre", a weekday as the next one)."""
    return named_date(sentence, sent)


@dataclass(frozen=True)
class Promise:
    """One of the user's commitments, open: its key (promise:<hash>), thread, whom to, what,
    due date and its kind, the sentence, and the message it is in."""

    key: str
    thread: str
    name: str
    address: str
    what: str
    due: str | None
    due_kind: str  # stated | implied | none
    evidence: str
    message_id: str
    at: dt.datetime

    def to_json(self, tz: dt.tzinfo) -> dict[str, Any]:
        return {
            "key": self.key,
            "thread": self.thread,
            "with": {"name": self.name, "address": self.address},
            "what": self.what,
            "due": self.due,
            "due_kind": self.due_kind,
            "evidence": self.evidence,
            "id": self.message_id,
            "at": self.at.astimezone(tz).isoformat(),
        }


def promises(threads: tuple[Thread, ...] | list[Thread], me: Me, tz: dt.tzinfo) -> list[Promise]:
    """The user's open promises in `threads`, the oldest first."""
    out: list[Promise] = []
    for thread in threads:
        ordered = list(reversed(thread.messages))  # oldest first
        for i, m in enumerate(ordered):
            if not m.from_me:
                continue
            found = _promise(thread, m, me, tz)
            if found is not None and not _kept(ordered[i + 1 :]):
                out.append(found)
    out.sort(key=lambda p: (p.at, p.key))
    return out[:MAX_PROMISES]


def _promise(thread: Thread, m: ThreadMessage, me: Me, tz: dt.tzinfo) -> Promise | None:
    others = [a for a in (*m.to, *m.cc) if not me.matches(a[1])]
    if not others:
        return None  # a note to self
    for found in SENTENCE.finditer(own_words(m.text)):
        sentence = " ".join(found.group(0).split())
        cue = _PROMISE.search(sentence)
        if cue is None or "?" in sentence:
            continue
        sent = m.received_at.astimezone(tz).date()
        due, kind = _due(sentence, sent)
        name, address = others[0]
        what = sentence[cue.start() :].rstrip(".!")[:MAX_WHAT]
        key = PROMISE_PREFIX + short_hash(f"{m.key}\n{sentence}")
        return Promise(
            key, thread.key, name, address, what, due, kind, sentence[:300], m.id, m.received_at
        )
    return None


def _due(sentence: str, sent: dt.date) -> tuple[str | None, str]:
    day = date_in(sentence, sent)
    if day is not None:
        return day.isoformat(), "stated"
    for pattern, days in _IMPLIED:
        if pattern.search(sentence):
            return (sent + dt.timedelta(days=days)).isoformat(), "implied"
    return None, "none"


def _kept(later: list[ThreadMessage]) -> bool:
    """Whether a later message delivers (the user's: a file attached, or words that say so)
    or calls it off (the other's)."""
    for m in later:
        if m.from_me and m.has_attachment:
            return True
        words = own_words(m.text)
        if m.from_me and _DELIVERED.search(words):
            return True
        if not m.from_me and _NOT_NEEDED.search(words):
            return True
    return False
