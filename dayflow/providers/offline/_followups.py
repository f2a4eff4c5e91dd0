"""The offline model's `## You owe replies` and `## Waiting on others`, from `read_followups`.

Both sections are written whenever the run read its followups, each saying in one line when
it has nothing (or why it cannot say); a run that never offered the tool has neither. The
longest-owed reply is also a candidate for `## One thing`: it wins over requests that are not
due yet once it has waited `OWED_WEIGHS_DAYS` working days (a reply owed for days is the
thing people forget), never over one due today, overdue or urgent.

`NoTasks` is what the same read says is no task: a request whose only action is to answer
(reply, respond, RSVP) in a thread of `you_owe` is that owed reply, shown under `## You owe
replies` and not filed, unless it is an invitation waiting for its answer (`awaits_answer`: a
calendar system's, one asking for an RSVP or whether the reader can attend, one proposing a
meeting's day and time, or one with a reply-by date), which is a task too; a casual "are you
free for dinner on Saturday?" stays an owed reply; a message the user has written after
(`answered`), mailing-list, bulk or automated mail (`bulk`, or marked so on the message
itself by read_inbox) and the user's own mail to others found in an inbox (`yours`) ask
nothing new. Real work asked in an
owed thread (send the report, sign the form) is still a task, under its message's key.

The user's rules (dayflow.rules) reach it as the reads mark them: a message marked `no_task`
(muted, rejected, snoozed) is never filed nor opened, a thread read_followups lists under
`left_out` is in neither section and its mail is no task, and an item marked `important`
comes first in its section and is the One thing's first choice.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from typing import Any

from dayflow.dates import WEEKDAY, alternation
from dayflow.followups.rules import own_words
from dayflow.models import Section
from dayflow.providers.offline._clauses import has_cue
from dayflow.providers.offline._conversation import Call, named
from dayflow.providers.offline._promises import promise_lines
from dayflow.providers.offline._reading import (
    DAYS,
    MONTHS,
    Action,
    parse_time,
    system_invitation,
)
from dayflow.providers.offline._sentences import sentences
from dayflow.senders import with_address

FOLLOWUPS = "read_followups"
OWED_WEIGHS_DAYS = 3
NO_ADDRESS = (
    "Your own address is not known (`me` in the config file), so owed replies cannot be told."
)
EMPTY_WAITING = "- You are not waiting on anyone."
SHOWN = 10  # items per section; the rest counted
_ANSWER_ONLY = re.compile(r"(?:reply|respond|answer|rsvp)\b", re.IGNORECASE)
# An invitation's asking for its answer: "RSVP", "please confirm whether you can attend",
# "let us know if you can make it", "bitte um Zusage", "merci de confirmer votre présence".
_RSVP = re.compile(
    r"\b(?:rsvp|r\.s\.v\.p|u\.\s?a\.\s?w\.\s?g|accept\s+or\s+decline|headcount|attendance"
    r"|(?:can|could|will)\s+(?:make\s+it|attend|join\s+us|be\s+there)|confirm\w*\b.{0,40}\battend"
    r"|are\s+you\s+(?:two\s+|both\s+|guys\s+)?in(?=\s*\?)|(?:bist\s+du|seid\s+ihr)\s+dabei"
    r"|partante?s?(?=\s*\?)|te\s+apuntas|os\s+apuntáis"  # "Are you in?": an invitation's answer
    r"|zusage|zusagen|absagen|teilnahme|teilnehmen|dabei\s+sein"
    r"|(?:ta|votre)\s+(?:présence|venue|participation)|pourr\w+\s+venir|participer"
    r"|(?:tu|su)\s+asistencia|asistir|pued\w+\s+venir)\b",
    re.IGNORECASE,
)
# A meeting's day and time proposed for the reader's answer: "does Thursday at 2 work for
# you?", "passt dir Dienstag um 10?", "jeudi à 14h te convient ?", "¿te viene bien el martes?".
_PROPOSES = re.compile(
    r"\b(?:does|would|will|passt|convient|te\s+va|vous\s+va|viene\s+bien|parece\s+bien"
    r"|(?:can|could|shall)\s+we\s+meet|(?:can|could)\s+you\s+(?:do|make)"
    r"|seriez-vous|serais-tu|hätten\s+sie|hättest\s+du|geht\s+das|estarías|estaría)\b",
    re.IGNORECASE,
)
_WHEN = re.compile(
    rf"\b(?:{alternation(WEEKDAY)})\b|\b\d{{1,2}}(?::\d\d)?\s*(?:am|pm|h|uhr)\b"
    r"|\b(?:at|um|à|a\s+las)\s+\d|\bthe\s+\d{1,2}(?:st|nd|rd|th)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class NoTasks:
    """What the run's read_followups says is no task (empty when it was never read)."""

    owed: frozenset[str] = field(default_factory=frozenset)  # owed messages' keys and ids
    settled: frozenset[str] = field(default_factory=frozenset)  # answered, yours: keys
    bulk: frozenset[str] = field(default_factory=frozenset)  # list, bulk, automated: keys
    # an answered message's key -> the words of the user's replies after it (`answered_replies`)
    replies: dict[str, str] = field(default_factory=dict)

    def files(self, action: Action) -> bool:
        """Whether `action` is a task: not bulk or answered mail, not an owed reply. A meeting
        system's invitation is a task though its no-reply sender marks it bulk."""
        key = action.key.split("#", 1)[0]
        if key in self.settled or ruled_out(action.message):
            return False
        bulk = key in self.bulk or listed_bulk(action.message)
        if bulk and not (_invitation(action) and not action.message.get("list_id")):
            return False
        owed = key in self.owed or str(action.message.get("id")) in self.owed
        return not (owed and _ANSWER_ONLY.match(action.title)) or awaits_answer(action)

    def opens(self, message: dict[str, Any]) -> bool:
        """Whether a listed message may ask anything new (bulk or answered mail does not, but
        an answered one whose reply says something may still hold an ask it left open)."""
        key = str(message.get("key"))
        bulk = key in self.bulk or listed_bulk(message)
        return (
            (key not in self.settled or key in self.replies)
            and not (bulk and not system_invitation(message))
            and not ruled_out(message)
        )

    def keep(self, actions: list[Action]) -> list[Action]:
        """The actions that are tasks (`files`), and of a message the user has answered, the
        asks the reply left open (`left_open`)."""
        out = []
        for action in actions:
            key = action.key.split("#", 1)[0]
            if key in self.settled and key in self.replies and not ruled_out(action.message):
                siblings = [a for a in actions if a.key.split("#", 1)[0] == key]
                if left_open(action, siblings, self.replies[key]):
                    out.append(action)
            elif self.files(action):
                out.append(action)
        return out


def awaits_answer(action: Action) -> bool:
    """Whether a request to answer is an invitation waiting for its answer, and so a task even
    in a thread the user owes a reply in: a calendar system's (its subject or answer buttons),
    one with a reply-by date, one asking for an RSVP or attendance, or one proposing a
    meeting's day or time ("does Thursday at 2 work for you?")."""
    if _invitation(action) or action.due is not None:
        return True
    said = action.evidence
    return bool(_RSVP.search(said)) or (
        said.rstrip().endswith("?") and bool(_PROPOSES.search(said) and _WHEN.search(said))
    )


def _invitation(action: Action) -> bool:
    """Whether a rule for invitations found `action` (its subject, body, buttons, a relay)."""
    return action.rule.startswith("an invitation")


def listed_bulk(message: dict[str, Any]) -> bool:
    """Whether read_inbox (or read_message) marks the message as list, bulk or automated mail:
    read_followups' `bulk` list holds only the newest keys, the mark is on every message."""
    return message.get("bulk") is True


def ruled_out(message: dict[str, Any]) -> bool:
    """Whether a read marks the message as no task by one of the user's rules."""
    return isinstance(message.get("no_task"), str)


# Words of an ask that say nothing of its thing: its verb, its courtesy, a date's words.
_PLAIN = frozenset(
    "send call sign confirm check review please thanks could would will need your with from that "
    "this have about them they there when what which also just before after today tomorrow "
    "week monday tuesday wednesday thursday friday saturday sunday reply back give make take "
    "tell know "
    "schicken senden bitte danke könnten können envoyer merci pourriez avant enviar favor "
    "podrías antes gracias "
    "the and for you but not are can was has had get got all any our out one two see now yes its "
    "his her who how why way day let put use new too did off per via mon tue wed thu fri sat sun "
    "oct nov dec und der die das den dem ich sie wir mit von für les des une est pas par que qui "
    "con por las los una del sus muy hey".split()
)


def _things(text: str) -> set[str]:
    return {w[:5] for w in re.findall(r"[^\W\d_]{3,}", text.lower()) if w not in _PLAIN}


def left_open(action: Action, siblings: list[Action], reply: str) -> bool:
    """Whether the user's reply left this ask of an answered message open: the reply speaks
    of another ask of the message (a word of its thing: "Chart paper ordered and Maria's OT
    is fine"; "Take the car" to "Can I take the car? Could you sign my mileage sheet?") and
    not of this one. Asks of one sentence ("call them and get our account unfrozen") stand
    or fall together; the sender's name is no thing spoken of; a reply that speaks of none
    of the message's asks answered it as a whole."""
    # the sender's and the reader's names are no thing spoken of ("Hi Stefan,", "- Alex")
    people = " ".join(str(action.message.get(f) or "") for f in ("from", "to", "cc"))
    names = _things(people.replace("@", " ").replace(".", " "))
    said = _things(reply) - names
    mine_words = (
        _things(f"{action.title} {action.evidence}")
        | {w for a in siblings if a.evidence == action.evidence for w in _things(a.title)}
    ) - names
    if not mine_words or mine_words & said:
        return False  # "Let me know!" names no thing of its own: it goes with the question
    others = [f"{a.title} {a.evidence}" for a in siblings if a.evidence != action.evidence]
    body = str(action.message.get("body") or "")
    others += [  # its other questions, asks and list items, tasks or not ("Can I take ...?")
        x.text for x in sentences(own_words(body))
        if action.evidence not in x.text and x.text not in action.evidence
        and (x.listed or x.text.rstrip().endswith("?") or has_cue(x.text))
    ]  # fmt: skip
    return bool((_things(" ".join(others)) - mine_words) & said)


def no_tasks(calls: list[Call]) -> NoTasks:
    """What the latest read_followups result says is no task."""
    found = named(calls, FOLLOWUPS)
    result = found[-1].result if found and isinstance(found[-1].result, dict) else {}
    owed: set[str] = set()
    for item in _items(result, "you_owe"):
        owed.update(_strings(item.get("keys")) + _strings([item.get("id")]))
    settled = {k for name in ("answered", "yours") for k in _strings(result.get(name))}
    for item in _items(result, "left_out"):  # muted or snoozed by the user's rules
        settled.update(_strings(item.get("keys")) + _strings([item.get("key")]))
    bulk = frozenset(_strings(result.get("bulk")))
    raw = result.get("answered_replies")
    replies = (
        {str(k): str(v) for k, v in raw.items() if isinstance(v, str)}
        if isinstance(raw, dict)
        else {}
    )
    return NoTasks(frozenset(owed), frozenset(settled), bulk, replies)


def not_theirs(calls: list[Call]) -> frozenset[str]:
    """The mail keys of messages whose sender is not who it says: read_followups' `not_yours`
    (they say they are the user's but came from outside), and every message read_inbox or
    read_message marks `sender_unverified` (its receiving server found the sender forged)."""
    keys: set[str] = set()
    for call in named(calls, FOLLOWUPS):
        if isinstance(call.result, dict):
            keys.update(_strings(call.result.get("not_yours")))
    for name in ("read_inbox", "read_message"):
        for call in named(calls, name):
            result = call.result if isinstance(call.result, dict) else {}
            listed = result.get("messages") if name == "read_inbox" else [result]
            for message in listed if isinstance(listed, list) else []:
                if isinstance(message, dict) and message.get("sender_unverified") is True:
                    keys.update(_strings([message.get("key")]))
    return frozenset(keys)


@dataclass(frozen=True)
class Owed:
    """The reply owed longest: who, about what, and for how many working days."""

    who: str
    subject: str
    age_days: int
    important: bool = False  # from a sender the user marked important (dayflow important)

    def one_thing(self) -> str:
        days = "working day" if self.age_days == 1 else "working days"
        waited = f": they have waited {self.age_days} {days}" if self.age_days else ""
        return f'**Reply to {self.who} about "{self.subject}"{waited}.**'


def followup_sections(
    calls: list[Call], today: dt.date | None = None
) -> tuple[list[str], Owed | None]:
    """The sections' lines (none when followups were never read) and the oldest owed; `today`
    dates the promises (one past its day is overdue)."""
    found = named(calls, FOLLOWUPS)
    if not found:
        return [], None
    call = found[-1]
    result = call.result if isinstance(call.result, dict) else {}
    owed, waiting = _items(result, "you_owe"), _items(result, "waiting_on")
    lines = ["", Section.heading(Section.YOU_OWE)]
    if call.error:
        lines.append(f"- _Could not read who is waiting on you: {call.error}_")
    for gone in _items(result, "unavailable"):
        lines.append(f"- _Could not read {gone.get('source')}: {gone.get('reason')}_")
    unknown = isinstance(result.get("note"), str)  # no address of the user's is known
    if unknown:
        lines.append(f"- _{NO_ADDRESS}_")
    blocked = bool(call.error) or unknown
    lines += _lines(owed, result.get("you_owe_more"), "Reply to ", "waiting", drafted(calls))
    lines += [] if owed or blocked else ["- Nobody is waiting on a reply from you."]
    lines += _left_out(result, "you_owe")
    lines += ["", Section.heading(Section.WAITING_ON)]
    lines += _lines(waiting, result.get("waiting_on_more"), "", "no answer for")
    if not waiting:
        lines.append("- _Not known either (see above)._" if blocked else EMPTY_WAITING)
    lines += _left_out(result, "waiting_on")
    lines += promise_lines(result, today)
    oldest = None
    if owed:
        age = owed[0].get("age_days")
        subject = str(owed[0].get("subject", ""))
        oldest = Owed(
            with_address(owed[0].get("with")),
            subject,
            age if isinstance(age, int) else 0,
            owed[0].get("important") is True,
        )
    return lines, oldest


def drafted(calls: list[Call]) -> set[str]:
    """The thread keys draft_reply wrote (or found written) a draft for (issue 36)."""
    return {str(c.input.get("thread_key")) for c in named(calls, "draft_reply") if c.error is None}


def _left_out(result: dict[str, Any], which: str) -> list[str]:
    """The line saying how many of a list the user's rules left out (muted or snoozed), so
    an empty section is never mistaken for nothing at all."""
    count = sum(1 for item in _items(result, "left_out") if item.get("list") == which)
    if not count:
        return []
    return [f"- _{count} left out by your rules (`dayflow rules` lists them)._"]


def weighs_more(owed: Owed | None, need_pressing: bool) -> bool:
    """Whether the owed reply is the One thing, over the most pressing request (if any)."""
    if owed is None:
        return False
    return not need_pressing and owed.age_days >= OWED_WEIGHS_DAYS


def _items(result: dict[str, Any], key: str) -> list[dict[str, Any]]:
    value = result.get(key)
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _strings(value: object) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _lines(
    items: list[dict[str, Any]],
    more: object,
    lead: str,
    waited: str,
    drafts: set[str] | frozenset[str] = frozenset(),
) -> list[str]:
    out = []
    for item in items[:SHOWN]:
        age = item.get("age_days")
        days = f"{age} working day{'' if age == 1 else 's'}" if isinstance(age, int) else "?"
        since = _short(item.get("latest_at"))
        subject = item.get("subject", "")
        draft = " — draft in Drafts" if str(item.get("key")) in drafts else ""
        who = with_address(item.get("with"))
        out.append(f'- {lead}{who}: "{subject}", {waited} {days} (since {since}){draft}')
        out += _asked_line(item)
    extra = (len(items) - SHOWN if len(items) > SHOWN else 0) + (
        more if isinstance(more, int) else 0
    )
    if extra:
        out.append(f"- and {extra} more")
    return out


ASKED_SHOWN = 90  # the question's characters on a brief's line


def _asked_line(item: dict[str, Any]) -> list[str]:
    """The line under an owed or awaited reply: the question its latest message asked."""
    asked = " ".join(str(item.get("asked") or "").split())
    if not asked:
        return []
    if len(asked) > ASKED_SHOWN:
        asked = asked[: ASKED_SHOWN - 1].rsplit(" ", 1)[0] + "…"
    return [f'  - asked: "{asked}"']


def _short(iso: object) -> str:
    when = parse_time(iso)
    if when is None:
        return "?"
    day = when.date()
    return f"{DAYS[day.weekday()][:3]} {day.day} {MONTHS[day.month - 1][:3]}"
