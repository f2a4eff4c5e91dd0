"""What the user promised in their own sent mail (issue 35 part 3): "I'll send", "I will get
back to you by", "let me check and revert", in English, German, French and Spanish.

A promise is a sentence of the user's own words (quotes and signature left out) in a message
of the window's threads, or one of the promises a sentence joins ("..., and I'll check with
Marcus"), with whom (the message's first other recipient), what (its words as a to-do,
`followups.todo`), the due date (stated: a date the words name; implied: "today",
"tomorrow", "end of the week", "next week"; else none) and the sentence as its evidence. It is
kept when a later message from the user in that thread delivers (it carries a file, as its
MIME structure says: `ThreadMessage.carries_file`, which reads on past a local listing's
first 64 KB for these messages only; or its words do: "here is", "attached", "as
promised") or the other person says it is no longer needed.

A message of the user's that its listing cut short (`ThreadMessage.cut`: a snippet stops
before "... by Wednesday") is read whole through the caller's `read` (the source's
`MailSource.read`), the newest threads first and at most MAX_READS of them a window.

Pure over the threads (`followups.threads`), `read` and what `carries_file` reads: the same
mail gives the same list.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dayflow.dates import SENTENCE, find_deadline, named_date
from dayflow.followups.rules import own_words
from dayflow.followups.threads import Thread, ThreadMessage
from dayflow.followups.todo import imperative
from dayflow.sources.identity import short_hash
from dayflow.sources.me import Me

_NAMED_DAY = re.compile(r"\d{1,2}(?:st|nd|rd|th)\b|\d{1,2}/\d{1,2}", re.IGNORECASE)
PROMISE_PREFIX = "promise:"
MAX_PROMISES = 30
MAX_WHAT = 200
MAX_READS = 50  # the user's cut-short messages read whole, per window
# The whole text of a message whose listing cut it short, or None (gone, unreadable).
Reader = Callable[[ThreadMessage], str | None]

# What the user says they will do, as a class: a first person ("I'll", "I will", "I can", or
# none after a greeting: "Tom, will get you ...") and a verb of doing something for someone.
# Never a refusal or an absence ("I can't", "I won't", "I'll be out", "I'll have to cancel").
_VERBS_EN = (
    r"(?:send|get\s+back|get\s+(?:you|it\s+to|them\s+to|this\s+to|that\s+to)\b|check|share"
    r"|forward|follow\s+up|revert|prepare|look\s+into|circle\s+back|update|confirm|draft|write"
    r"|have(?!\s+to\b)|call|ring|review|finish|deliver|book|return|bring|give|drop\s+off"
    r"|pick\s+up|set\s+up|sort\s+out|put\s+together|pull\s+together|take\s+care|handle"
    r"|arrange|schedule|reach\s+out|email|e-mail|text|let\s+\w+\s+know|sign|submit|transfer"
    r"|walk\s+(?:\w+\s+){1,3}?through|pay|fix|print|order|post|upload|present|ping|talk\s+to"
    r"|speak\s+(?:to|with)|drop\s+by|come\s+by|swing\s+by|stop\s+by|pop\s+(?:by|in|over))\b"
)
# What "I'll <verb>" says when it is no doing: a state, a perception, a wish or a hedge ("I'll
# be out", "I'll see you there", "I'll need your signature", "I'll probably ..."), a refusal or
# a deferral ("I'll pass", "I'll leave it to you"); any other verb after "I'll" is a promise
# ("I'll grab the candy", "I'll cover MOD Saturday").
_NO_DOING = (
    r"(?:be|see|think|need|want|wish|hope|wait|miss|assume|guess|bet|admit|say|try|keep|stay"
    r"|leave|let(?!\s+\w+\s+know\b)|remember|know|feel|pass|defer|skip|sit|stick|owe|love|like"
    r"|have\s+to|only|rather|get\s+(?:back\s+)?(?:in|home|there)|go\s+(?:home|back|away))\b"
)
_HEDGE = r"(?:probably|likely|maybe|possibly|perhaps|hopefully|never|not|always)\b"
# "I'll gladly send", "we'll both be": an adverb before the verb
_ADVERB = (
    r"(?:also|just|then|first|both|all|now|gladly|happily|personally|quickly|definitely"
    r"|certainly|really|actually|immediately|right\s+away)"
)
_CUES_EN = (
    # "I'll", "I will", "I'm going to" and any verb of doing
    r"\bI(?:'ll|\s+will|\s+shall|'m\s+going\s+to|\s+am\s+going\s+to)"
    rf"(?!\s+(?:not|never)\b)\s+(?!{_HEDGE})(?:{_ADVERB}\s+)?+(?!{_NO_DOING})[a-z]+\b",
    # "I can" and a verb of the list; or no "I" after a greeting ("Tom, will get you ...")
    r"\bI(?:'ll|\s+will|\s+shall|'m\s+going\s+to|\s+am\s+going\s+to|\s+can)"
    rf"(?!\s+(?:not|never)\b)\s+(?:\w+\s+){{0,2}}?{_VERBS_EN}",
    # ... and its verb after what it goes through first: "Will go through the variance
    # tonight and send you my comments first thing tomorrow"
    rf"^(?:(?:[\w'.]+\s*){{1,3}}[,:-]\s*)?will\s+(?!you\b|u\b|it\b|that\b|this\b)"
    rf"(?:[^\s.!?]+\s+){{0,8}}?(?:and\s+)?{_VERBS_EN}",
    r"\blet\s+me\s+(?:check|look|find\s+out|confirm|get\s+back|revert)\b",
)
_CUES_OTHER = (
    # de ("ich schicke", and the verb second: "morgen schicke ich", its time kept)
    r"\bich\s+(?:werde|schicke|sende|melde\s+mich|kümmere\s+mich|prüfe|schaue|bringe|rufe"
    r"|gebe|bereite|kläre|erledige|liefere|übernehme|reiche)\b",
    r"(?:^|[,;]\s*)(?:\w+\s+){0,3}?(?:schicke|sende|bringe|rufe|melde|gebe|kümmere|kläre"
    r"|erledige)\s+ich\b",
    r"\bich\s+kann\s+(?:\w+\s+){0,4}?(?:mitbringen|schicken|senden|vorbeibringen|übernehmen)\b",
    # fr ("je vais" but not "je vais être absent")
    r"\bje\s+(?:vous\s+|te\s+|t'|l'|les\s+|lui\s+|leur\s+|m'en\s+|m')?(?:enverrai|envoie"
    r"|reviens|reviendrai|vérifie|regarde|confirme|vais(?!\s+être)|apporterai|apporte"
    r"|rappellerai|rappelle|appellerai|appelle|transmettrai|transmets|ferai|prépare|préparerai"
    r"|rendrai|occupe|charge)\b",
    r"\bje\s+(?:vous\s+|te\s+)?peux\s+(?:vous\s+|te\s+|l'|les\s+)?(?:envoyer|apporter"
    r"|transmettre|préparer)\b",
    # es
    r"\b(?:te|le|les|os|lo|la)\s+(?:enviaré|envío|mando|mandaré|confirmo|aviso|escribo|llamo"
    r"|llamaré|paso|pasaré|traigo|traeré|llevo|llevaré|devuelvo|devolveré|comento|comentaré"
    r"|digo|diré)\b",
    r"\b(?:voy\s+a|vamos\s+a)\s+(?:enviar|mandar|revisar|comprobar|preparar|llamar|llevar"
    r"|traer|devolver)\b",
    r"\b(?:lo\s+)?(?:reviso|compruebo)\s+y\s+te\b",
    r"\b(?:yo\s+)?me\s+(?:encargo|ocupo)\b",
    # the present with its time first: "Mañana hablo con Gwen", "el lunes llamo al banco"
    r"(?:^|[,;]\s*|\by\s+)(?:mañana|hoy|esta\s+(?:tarde|noche|semana)|(?:el\s+)?(?:lunes|martes"
    r"|miércoles|jueves|viernes|sábado))(?:\s+(?:mismo|temprano|por\s+la\s+(?:mañana|tarde)))?"
    r"(?:\s+(?:les|le|te|os|lo|la|los|las|se\s+lo|se\s+la))?"  # "El jueves les pago a todos"
    r"\s+(?!(?:tengo|estoy|puedo|quiero|necesito|salgo|vuelvo|trabajo|todo|como|pero|libro"
    r"|llego|sigo|próximo|mismo|no|lo)\b)[a-záéíóúñ]{2,}o\b",
    r"\bpuedo\s+(?:llevar|traer|enviar|mandar)\b",
)
_PROMISE = re.compile("|".join(f"(?:{c})" for c in (*_CUES_EN, *_CUES_OTHER)), re.IGNORECASE)
_PROMISE_EN = re.compile("|".join(f"(?:{c})" for c in _CUES_EN), re.IGNORECASE)
# A promise on a condition is none yet ("I'll let you know if anything changes", "je vous
# l'envoie si besoin"); "see if", "check whether" ask a question and keep the promise.
_CONDITION = re.compile(
    r"(?<!\bsee\s)(?<!\bcheck\s)(?<!\bask\s)(?<!\bout\s)(?<!\bconfirm\s)"
    r"\b(?:if|unless|in\s+case|wenn|falls|sofern|si|au\s+cas\s+où|en\s+caso\s+de)\b",
    re.IGNORECASE,
)
# A refusal in the three other languages ("ich werde morgen nicht da sein", "je ne vais pas",
# "no te lo envío"): English says it in its cue ("I can't", "I won't", "I will not").
_REFUSAL = re.compile(
    r"\b(?:nicht|nie|niemals|kein\w*)\b|\bne\s|\bn'|(?<![\w'])no\s+(?:te|le|lo|la|les|os|me"
    r"|puedo|podré|voy|vamos)\b",
    re.IGNORECASE,
)
# The greeting before a promise without "I" ("Tom, will get you ..."): not the promise.
_GREETING = re.compile(r"^(?:[\w'.]+\s*){1,3}[,:-]\s*(?=will\b)", re.IGNORECASE)
# Where the promise's words end and a remark begins ("tomorrow - the export is broken").
_CLAUSE_END = re.compile(r"\s+[-–—]+\s+|;\s*")
# Where a second promise begins in the same sentence: ", and I'll check with Marcus", "y te
# aviso", "und ich rufe": a joining word, then a promise's cue of its own.
_JOIN = re.compile(r",?\s+(?:and|und|et|y)\s+|,\s+", re.IGNORECASE)
MAX_PER_MESSAGE = 5
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


def promises(
    threads: tuple[Thread, ...] | list[Thread], me: Me, tz: dt.tzinfo, read: Reader | None = None
) -> list[Promise]:
    """The user's open promises in `threads`, the oldest first; a message of theirs that was
    listed cut short is read whole with `read` (when given, up to MAX_READS of them)."""
    return promises_and_kept(threads, me, tz, read)[0]


def promises_and_kept(
    threads: tuple[Thread, ...] | list[Thread], me: Me, tz: dt.tzinfo, read: Reader | None = None
) -> tuple[list[Promise], list[str]]:
    """The user's open promises in `threads` (as `promises`), and the keys of those kept (the
    newest first, at most MAX_PROMISES): `tasks add --from` files no task for one of them."""
    out: list[Promise] = []
    kept: list[Promise] = []
    reads = 0
    for thread in threads:
        ordered = list(reversed(thread.messages))  # oldest first
        for i, m in enumerate(ordered):
            if not m.from_me or not _others(m, me):
                continue  # another's, or a note to self
            text = m.text
            if m.cut and read is not None and reads < MAX_READS:
                reads += 1
                text = read(m) or text
            found = _promise(thread, m, text, me, tz)
            (kept if found and _kept(ordered[i + 1 :]) else out).extend(found)
    out.sort(key=lambda p: (p.at, p.message_id))  # stable: a message's in reading order
    kept.sort(key=lambda p: (p.at, p.key), reverse=True)
    return out[:MAX_PROMISES], [p.key for p in kept[:MAX_PROMISES]]


def _others(m: ThreadMessage, me: Me) -> list[tuple[str, str]]:
    return [a for a in (*m.to, *m.cc) if not me.matches(a[1])]


# A line that starts a list's item ("- ", "1. ", "(a) "): never the rest of the line before.
_ITEM = re.compile(r"^\s*(?:\d+[.)]|\(?[a-e1-9]\)|[-*•])\s")


def _unwrapped(text: str) -> str:
    """`text` with each paragraph's hard-wrapped lines joined (plain-text mail breaks a
    sentence at about 72 characters: "... the updated sell sheets\nfor the winter lineup by
    Thursday"), so that a sentence is read whole; a blank line or a list's item still breaks."""
    lines: list[str] = []
    for line in text.split("\n"):
        if lines and lines[-1].strip() and line.strip() and not _ITEM.match(line):
            lines[-1] = f"{lines[-1].rstrip()} {line.strip()}"
        else:
            lines.append(line)
    return "\n".join(lines)


def _promise(thread: Thread, m: ThreadMessage, text: str, me: Me, tz: dt.tzinfo) -> list[Promise]:
    """Each promise of the user's own words in `m`, in reading order: every sentence that
    makes one, and each promise of a sentence that joins two ("I'll send the invoice
    tomorrow, and I'll check with Marcus"), each with its own due date."""
    name, address = _others(m, me)[0]
    sent = m.received_at.astimezone(tz).date()
    out: list[Promise] = []
    for found in SENTENCE.finditer(_unwrapped(own_words(text))):
        sentence = " ".join(found.group(0).split())
        cue = _PROMISE.search(sentence)
        if cue is None or _CONDITION.search(sentence) or _asked(sentence, cue.start()):
            continue
        if _REFUSAL.search(sentence) and not _PROMISE_EN.fullmatch(cue.group(0)):
            continue
        words = _CLAUSE_END.split(sentence[cue.start() :], maxsplit=1)[0].rstrip(".!")
        if "?" in words:  # "I'll pick up Lily at 3 tomorrow, you do dinner?": not the question
            words = re.split(r",\s|;\s|\s[-–—]\s", words, maxsplit=1)[0]
        for n, clause in enumerate(_clauses(_GREETING.sub("", words.lstrip(",;: ")))):
            due, kind, phrase = _due(clause, sent)
            what = imperative(clause, phrase, name)[:MAX_WHAT]
            said = f"{m.key}\n{sentence}" + (f"\n{n}" if n else "")  # the first: its old key
            key = PROMISE_PREFIX + short_hash(said)
            out.append(
                Promise(key, thread.key, name, address, what, due, kind, sentence[:300], m.id,
                        m.received_at)
            )  # fmt: skip
    return out[:MAX_PER_MESSAGE]


def _asked(sentence: str, cue: int) -> bool:
    """Whether a sentence with a promise's cue is a question: but "I'll pick up Lily at 3
    tomorrow, you do dinner?" opens with the promise, and only its last clause asks."""
    if "?" not in sentence:
        return False
    head = re.split(r",\s|;\s|\s[-–—]\s", sentence[cue:], maxsplit=1)
    return cue > 0 or len(head) == 1 or "?" in head[0]


def _clauses(words: str) -> list[str]:
    """A promise's words cut where a second promise begins (`_JOIN` then a cue of its own)."""
    cuts = [
        (join.start(), join.end())
        for join in _JOIN.finditer(words)
        if _PROMISE.match(words, join.end()) and join.start() > 0
    ]
    pieces, start = [], 0
    for begin, end in cuts:
        pieces.append(words[start:begin])
        start = end
    pieces.append(words[start:])
    return [p.strip(" ,") for p in pieces if p.strip(" ,")]


def _due(what: str, sent: dt.date) -> tuple[str | None, str, str | None]:
    """The due date of a promise's words, read as every deadline is (`dates.find_deadline`, a
    bare weekday counted, as in "I'll send it Friday"), whether a date or weekday is named
    ("stated") or only a time ("implied": "tomorrow", "end of next week"), and the phrase it
    was read from. "Next week" alone is vague, so none (GUIDE.md)."""
    found = find_deadline(what, sent, lead_on=True)
    if found is None or found.due is None:
        return None, "none", None
    named = named_date(found.phrase, sent) is not None or _NAMED_DAY.search(found.phrase)
    return found.due.isoformat(), "stated" if named else "implied", found.phrase


def _kept(later: list[ThreadMessage]) -> bool:
    """Whether a later message delivers (the user's: a file attached, or words that say so)
    or calls it off (the other's)."""
    for m in later:
        if m.from_me and m.carries_file():  # past a listing's bytes: read only now
            return True
        words = own_words(m.text)
        if m.from_me and _DELIVERED.search(words):
            return True
        if not m.from_me and _NOT_NEEDED.search(words):
            return True
    return False
