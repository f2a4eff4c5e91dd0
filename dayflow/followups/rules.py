"""Who owes whom a reply: the two lists, from the threads of the window.

A thread's latest message written by a person decides (automatic replies, out-of-office notes
and bounces are not answers, so they are passed over):

- **You owe**: it is from someone else (not a mailing list, not an automated sender), has one
  of the user's addresses in To (Cc or Bcc alone is not asking you), and asks something (a
  question or a request in its own words, quoted text left out).
- **Waiting on**: it is from the user, to someone else, asks something, and no answer came for
  `waiting_after_days` working days (Monday to Friday; a weekend does not count).

An item's age is the working days from the day of that message to today, in the user's zone.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from dayflow.followups.threads import Thread, ThreadMessage
from dayflow.sources.me import Me

_QUOTE_START = re.compile(
    r"^(?:On .{0,200}wrote:|Am .{0,200}schrieb .{0,100}:|Le .{0,200}a écrit ?:|"
    r"El .{0,200}escribió ?:|"
    r"-{2,}\s*Original Message\s*-{2,}|-{2,}\s*Ursprüngliche Nachricht\s*-{2,}|"
    r"From: .+|Von: .+|_{10,})\s*$",
    re.IGNORECASE,
)
_REQUEST = re.compile(
    r"\b(?:please|pls|could you|can you|would you|will you|could we|can we|let me know|"
    r"send me|get back to me|need you to|your thoughts|thoughts\?|any update|kindly|"
    r"bitte|könntest du|können sie|pourriez-vous|merci de)\b",
    re.IGNORECASE,
)
_SIGNATURE = re.compile(r"^-- ?$")
# The header lines of a calendar invitation's body (Outlook's "When:" / "Where:" over a rule).
_INVITE_HEAD = re.compile(
    r"^\s*(?:when|where|wann|wo|ort|quand|où|lieu|cuándo|cuando|dónde|donde|dauer|organizer"
    r"|organizador|organisateur)\s?:\s",
    re.IGNORECASE,
)
RULE = re.compile(r"^_{8,}$")
# A calendar tool's join block (Teams, Zoom, Meet, Webex), often between two rules: how to join,
# not quoted history, and it asks nothing.
_JOIN_BLOCK = re.compile(
    r"^\s*(?:microsoft\s+teams\s+meeting|join\s+(?:zoom\s+meeting|with\s+google\s+meet"
    r"|on\s+your\s+computer|the\s+meeting)|click\s+here\s+to\s+join|meeting\s+id\s*:"
    r"|passcode\s*:|webex\s+meeting|google\s+meet\s+joining)",
    re.IGNORECASE,
)
_JOIN_LINES = 8  # how far from a rule a join block's lines may be
# A sentence's end not followed by another quoted line.
_OPENING_QUOTE_END = re.compile(r"[.?!](?:\s+|$)(?!\s*>)")


@dataclass(frozen=True)
class FollowupItem:
    """One entry of You owe or Waiting on."""

    thread: str  # thread:<hash>
    counterpart_name: str
    counterpart_address: str
    subject: str
    latest_at: dt.datetime
    age_days: int  # working days since the latest message
    sources: tuple[str, ...]
    message_id: str  # the latest message's item id
    keys: tuple[str, ...] = ()  # an owed reply's: the mail keys of the messages it answers
    asked: str = ""  # its evidence: the sentence of the latest message that asks (own words)

    def to_json(self, tz: dt.tzinfo) -> dict[str, Any]:
        out = {
            "key": self.thread,
            "with": {"name": self.counterpart_name, "address": self.counterpart_address},
            "subject": self.subject,
            "latest_at": self.latest_at.astimezone(tz).isoformat(),
            "age_days": self.age_days,
            "sources": list(self.sources),
            "id": self.message_id,
        }
        out |= {"asked": self.asked} if self.asked else {}
        return out | {"keys": list(self.keys)} if self.keys else out


def without_join_blocks(rows: list[str]) -> list[str]:
    """The lines without a calendar tool's join block: a rule whose next or previous few lines
    say how to join (and those lines) is the invitation's furniture, not a quoted reply."""
    joins = [n for n, row in enumerate(rows) if _JOIN_BLOCK.match(row)]
    if not joins:
        return rows
    near = {j + d for j in joins for d in range(-_JOIN_LINES, _JOIN_LINES + 1)}
    drop = set(joins) | {n for n in near if 0 <= n < len(rows) and RULE.match(rows[n].strip())}
    return [row for n, row in enumerate(rows) if n not in drop]


def opens_invitation(rows: list[str], n: int) -> bool:
    """Whether line `n` is the rule under an Outlook invitation's When/Where lines: the
    message follows it, not quoted history."""
    return bool(RULE.match(rows[n].strip())) and all(
        _INVITE_HEAD.match(r) or not r.strip() for r in rows[:n]
    )


def own_words(text: str) -> str:
    """A message's text without what it quotes (`>` lines, and everything from an
    "On ... wrote:" or "-----Original Message-----" line on) or its signature; the rule
    under an invitation's When/Where lines is no quote (`opens_invitation`)."""
    kept = []
    rows = without_join_blocks(text.splitlines())
    for n, line in enumerate(rows):
        stripped = line.strip()
        if opens_invitation(rows, n):
            continue
        if _QUOTE_START.match(stripped) or _SIGNATURE.match(line):
            break
        if not stripped.startswith(">"):
            kept.append(stripped)
    return "\n".join(kept)


def after_opening_quote(text: str) -> str:
    """A snippet (its lines run together) without the quoted sentences that open it ("> Can
    you ...? Nevermind, ..."): where a quoted line ended is not shown, so each runs to the end
    of its sentence. The offline model's reading and the evidence check both cut here."""
    while text.lstrip().startswith(">"):
        rest = _OPENING_QUOTE_END.search(text)
        text = text[rest.end() :] if rest else ""
    return text


def asks(message: ThreadMessage) -> bool:
    """Whether the message asks something: a question mark or a request in its own words
    (its subject counts when its text says nothing)."""
    words = own_words(message.text)
    if "?" in words or _REQUEST.search(words):
        return True
    return not words.strip() and "?" in message.subject


ASKED_CHARS = 300
_SENTENCE = re.compile(r"[^.?!\x00]*(?:[.?!]+|\x00|$)")


def asked_in(message: ThreadMessage) -> str:
    """The sentence a message asks in (its own words: the first with a question mark or a
    request), at most ASKED_CHARS; its subject when its text says nothing."""
    words = own_words(message.text)
    # Lines wrapped inside a sentence are one sentence; a blank line ends one.
    for found in _SENTENCE.finditer(re.sub(r"\n\s*\n", "\x00", words)):
        sentence = " ".join(found.group(0).replace("\x00", " ").split())
        if sentence and ("?" in sentence or _REQUEST.search(sentence)):
            return sentence[:ASKED_CHARS]
    return message.subject[:ASKED_CHARS] if not words.strip() else ""


def working_days(since: dt.date, today: dt.date) -> int:
    """Monday-to-Friday days after `since` up to and including `today` (0 when not later)."""
    if today <= since:
        return 0
    days = (today - since).days
    weeks, rest = divmod(days, 7)
    count = weeks * 5
    start = since.weekday()
    count += sum(1 for k in range(1, rest + 1) if (start + k) % 7 < 5)
    return count


def decide(
    thread: Thread, me: Me, today: dt.date, tz: dt.tzinfo, waiting_after_days: int
) -> tuple[str, FollowupItem] | None:
    """("owed" | "waiting", the item) for a thread that is on one of the lists, else None."""
    # A message from outside that says it is the user's says nothing of the thread's state.
    latest = next((m for m in thread.messages if not m.automated and not m.outside), None)
    if latest is None or not asks(latest):
        return None
    age = working_days(latest.received_at.astimezone(tz).date(), today)
    if latest.from_me:
        others = [a for a in (*latest.to, *latest.cc) if not me.matches(a[1])]
        if not others or age < waiting_after_days:
            return None
        name, address = others[0]
        return "waiting", _item(thread, latest, name, address, age)
    if bulk(latest) or me.matches(latest.sender_address):
        return None
    if not any(me.matches(a) for _, a in latest.to):
        return None
    item = _item(thread, latest, latest.sender_name, latest.sender_address, age)
    return "owed", replace(item, keys=tuple(unanswered(thread)))


def unanswered(thread: Thread) -> list[str]:
    """The mail keys of the messages a person other than the user wrote after the user's
    latest message in the thread (all of them if the user never wrote), newest first."""
    out = []
    for message in thread.messages:
        if message.from_me:
            break
        if not bulk(message) and not message.outside:
            out.append(message.key)
    return out


def answered(
    thread: Thread,
    me: Me | None = None,
    read: Callable[[ThreadMessage], str | None] | None = None,
    reads: list[int] | None = None,
) -> list[str]:
    """The mail keys of the messages others wrote that a later message of the user's follows
    (in the window, or quoted by a later message: `quotes_my_reply`): what they asked is not
    a new request (newest first). A later message listed cut short is read whole with `read`
    to see what it quotes, only where that can settle an older one, while `reads` (a one-item
    counter shared over the window) stays under MAX_QUOTE_READS."""
    return [key for key, _ in answered_with(thread, me, read, reads)]


REPLY_CHARS = 300  # of the user's reply words kept beside an answered message's key


def answered_with(
    thread: Thread,
    me: Me | None = None,
    read: Callable[[ThreadMessage], str | None] | None = None,
    reads: list[int] | None = None,
) -> list[tuple[str, str]]:
    """`answered`, each key with the own words of the user's replies after it (the nearest
    first, at most REPLY_CHARS): what a reader can check an ask against, to tell one the
    reply left open ("Chart paper ordered and Maria's OT is fine" says nothing of the
    third ask)."""
    out: list[tuple[str, str]] = []
    later_mine, said = False, ""
    messages = thread.messages
    for n, message in enumerate(messages):
        if message.from_me and not asks_back_only(message.text):
            later_mine, said = True, _joined(_reply_words(message.text), said)
        if later_mine and not message.from_me and not bulk(message):
            out.append((message.key, said))
        if me is None or message.from_me:
            continue
        if not any(not m.from_me and not bulk(m) for m in messages[n + 1 :]):
            continue  # nothing older of others' for a quoted reply to settle
        text = message.text
        # read whole only where that can settle an older message: after a reply of the user's
        # is known, the listing's text is all that is read
        if message.cut and not later_mine and read and reads and reads[0] < MAX_QUOTE_READS:
            reads[0] += 1
            text = read(message) or text
        quoted = quoted_reply(text, me)
        if quoted is not None:  # what came before the reply it quotes was answered
            later_mine, said = True, _joined(quoted, said)
    return out


def _reply_words(text: str) -> str:
    """A reply's own words, also where a listing ran its lines and its quote together."""
    return _OWN_END.split(own_words(text), maxsplit=1)[0]


def _joined(nearer: str, later: str) -> str:
    return " ".join(f"{nearer} {later}".split())[:REPLY_CHARS]


_SENTENCES = re.compile(r"[^.?!]+[.?!]*")
_GREETING_OR_NAME = re.compile(r"^\s*(?:[\w'.-]+\s*){0,3},\s*$|^\s*[-–—]?\s*(?:[\w'.-]+\s*){1,3}$")
# Where a reply's own words end in a listing that runs its lines together.
_OWN_END = re.compile(r"\s>\s|\bOn\s[^\n]{0,120}?wrote:|\bsent from my\b", re.IGNORECASE)


def asks_back_only(text: str) -> bool:
    """Whether the user's message only asks a question back ("Which two - Devin and Marisol,
    or Pete too?"): every sentence of its own words a question. It answers nothing, so what
    it replies to is still asked."""
    words = _OWN_END.split(own_words(text), maxsplit=1)[0]
    # its greeting ("Hi Becca,") and its signature ("Alex", "- A") say nothing
    rows = [r for r in words.splitlines() if r.strip() and not _GREETING_OR_NAME.match(r)]
    words = " ".join(rows)
    sentences = [m.group(0).strip() for m in _SENTENCES.finditer(words) if m.group(0).strip()]
    return bool(sentences) and all(s.endswith("?") for s in sentences)


MAX_QUOTE_READS = 50  # others' cut-short replies read whole, per window, for what they quote
_ADDRESS_IN = re.compile(r"[\w.+'-]+@[\w-]+(?:\.[\w-]+)+")
_HEADER_ROWS = 5  # an Outlook block's From/Sent/To lines under its "Original Message" rule


def quoted_reply(text: str, me: Me) -> str | None:
    """The words of the user's reply that a message's `text` quotes, if it answers one of the
    user's (else None): the first quoted message under its own words is introduced by one of
    the user's addresses ("Am 27.10. schrieb Alex Morgan <alex@...>:", "-----Original
    Message----- / From: Alex <alex@...>"), so the user replied
    to the thread before it, though that reply is not in the window (sent from a phone, or no
    sent folder read). Only the first quote counts: an older message of the user's deeper in
    the chain says nothing of what came after it, and a reply that only asks a question back
    (`asks_back_only`) answers nothing."""
    rows = without_join_blocks(text.splitlines())
    for n, line in enumerate(rows):
        if opens_invitation(rows, n) or not _QUOTE_START.match(line.strip()):
            continue
        head: list[str] = []
        for row in rows[n : n + _HEADER_ROWS + 1]:
            if head and (not row.strip() or row.lstrip().startswith(">")):
                break
            head.append(row)
        if not any(me.matches(a) for a in _ADDRESS_IN.findall(" ".join(head))):
            return None
        said = []  # the quoted reply's own words: up to the next quote it holds
        for row in rows[n + len(head) :]:
            plain = row.lstrip("> ").strip()
            if _QUOTE_START.match(plain):
                break
            said.append(plain)
        reply = "\n".join(said)
        return None if asks_back_only(reply) else own_words(reply)
    return None


def quotes_my_reply(text: str, me: Me) -> bool:
    """Whether a message's `text` answers one of the user's (`quoted_reply`)."""
    return quoted_reply(text, me) is not None


def bulk(message: ThreadMessage) -> bool:
    """Mailing-list or bulk mail, or an automated sender's (the envelope's one predicate for
    both: List-Id, List-Unsubscribe, Precedence, Auto-Submitted, noreply, bounces)."""
    return message.listed or message.automated


def _item(thread: Thread, latest: ThreadMessage, name: str, address: str, age: int) -> FollowupItem:
    return FollowupItem(
        thread.key, name, address, latest.subject, latest.received_at, age, thread.sources,
        latest.id, asked=asked_in(latest),
    )  # fmt: skip
