"""How the offline model reads mail: plain heuristics over subjects, snippets and bodies.

Pure functions of one message dict, no I/O and no state, so the offline model stays a function of
its request. Three questions are answered here:

- `snippet_action`: does the snippet (as `read_inbox` returns it) already show a request?
- `triage`: is the snippet enough, or should the full message be opened with `read_message`?
  A snippet settles it when the sender is automated, it says FYI, it is the whole message (not
  cut short with "..."), or it shows a request *and* its deadline. Otherwise a cut-short message
  is opened when it is unread, when the snippet starts a request whose deadline is not in view,
  or when the subject has a cue (a reply, a question mark, "review", "reminder"...).
- `body_actions`: what does the full body ask? Only the sender's own words count: quoted
  replies ("> ..."), anything after "On ... wrote:" (or "Am ... schrieb", "Le ... a écrit"),
  forwarded or original messages, and the signature are ignored. The sentences are read by
  `_requests` (several requests a message, four languages, invitations, commitments, terse
  requests) and their deadlines by `_dates`.
- `triage_all` / `listed_actions`: the same for a listing's item, whose snippet is read as the
  body when it is the whole message.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from email.utils import parseaddr
from typing import Any

from dayflow.providers.offline._requests import requests_in

DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")  # fmt: skip
_MON = (
    r"jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?"
)
_DOW = r"mon|tue(?:s)?|wed(?:nes)?|thu(?:rs?)?|fri|sat(?:ur)?|sun"
_DEADLINE = re.compile(
    r"\b(?:by|before|due(?:\s+(?:on|by))?|no later than|until)\s+(?P<when>"
    r"(?:the\s+)?end\s+of\s+(?:the\s+)?(?:day|week)|eod|cob|eow|today|tonight|tomorrow"
    r"|\d{4}-\d{2}-\d{2}"
    rf"|(?:(?:next|this)\s+)?(?:{_DOW})(?:day)?\b\.?"  # a weekday, maybe with its date:
    rf"(?:,?\s+(?:(?:{_MON})\.?\s+\d{{1,2}}|\d{{1,2}}\s+(?:{_MON})))?"
    rf"|(?:{_MON})\.?\s+\d{{1,2}}\b|\d{{1,2}}\s+(?:{_MON})\b)",
    re.IGNORECASE,
)
# "Please sign the NDA today", "call the vendor tomorrow": a bare relative day, when no
# "by ..." / "due ..." phrase says more.
_BARE_DAY = re.compile(r"\b(?P<when>today|tonight|tomorrow)\b", re.IGNORECASE)


def _deadline(text: str) -> re.Match[str] | None:
    return _DEADLINE.search(text) or _BARE_DAY.search(text)


_REQUEST = re.compile(
    r"\b(?:(?:could|can|would|will)\s+you(?:\s+please)?|(?:i\s+|we\s+)?need\s+you\s+to|please)\s+",
    re.IGNORECASE,
)
# Only at the start of a sentence or after a colon: "Timesheets: submit yours by Friday" is a
# request, "the review is due Friday" is not.
_ACTION_VERB = re.compile(
    r"(?:^|[:.!?;]\s+|:)\s*(?P<verb>(?:sign|approve|confirm|rsvp|submit|return|complete|renew)\b)",
    re.IGNORECASE,
)
_NOT_A_REQUEST = re.compile(
    r"(?:find|see|note|allow|ignore|disregard|do not|don't|feel free|excuse|forgive|keep in mind"
    r"|be (?:aware|advised)|believe|imagine|let (?:me|us) know if you (?:have|need))\b",
    re.IGNORECASE,
)
_CLAUSE_END = re.compile(
    r"[?!;\n]|\.(?:\s|$)|,\s|\s(?:by|before|no later than|until|so|and (?:tell|let)|because|if)\s",
    re.IGNORECASE,
)
_FYI = re.compile(
    r"\bfyi\b|\bno action\b|nothing (?:is )?needed|nothing you need to do|for your information"
    r"|no (?:need to|reply needed)",
    re.IGNORECASE,
)
_AUTOMATED = {"noreply", "donotreply", "no", "newsletter", "newsletters", "digest", "notification",
              "notifications", "notify", "alert", "alerts", "mailer", "bounce", "bounces",
              "updates", "news", "marketing", "receipts", "billing", "calendar"}  # fmt: skip
_HALF_YEAR = dt.timedelta(days=183)
_GIVE = {"send", "forward", "share", "give", "email", "mail", "pass", "get"}
# Subject cues that a cut-short message from a person may want something.
_CUE = re.compile(
    r"\?|\b(?:re|fwd?|fw)\s*:|\b(?:question|request|help|review|input|feedback|follow[- ]?up"
    r"|reminder|action|urgent|asap|deadline|sign|approve|decision)\b",
    re.IGNORECASE,
)
_TRUNCATED = ("...", "…")
# Where the sender's own words end: a quoted reply's header, a forwarded or original message.
_QUOTE_HEAD = re.compile(
    r"^(?:on\b.{0,200}\bwrote:$|-{2,}\s*(?:original|forwarded) message\s*-{2,}|from:\s"
    r"|begin forwarded message:|_{8,}$|am\b.{0,120}\bschrieb.{0,80}:$|le\b.{0,120}\ba écrit\s*:$"
    r"|el\b.{0,120}\bescribió:$)",
    re.IGNORECASE,
)
MAX_PER_MESSAGE = 5
_URGENT = re.compile(
    r"\b(?:urgent\w*|asap|outage|is down|are down|failing|emergency|right away|immediately"
    r"|as soon as (?:possible|you're up)|dringend|urgente|urgence|panne)\b",
    re.IGNORECASE,
)
_INLINE_QUOTE = re.compile(
    r"\bOn\s[^.?!>]{0,160}\bwrote:|-{2,}\s*(?:original|forwarded) message|begin forwarded message:"
    r"|\s>\s|_{8,}|\bFrom:\s[^\n]{0,120}\b(?:Sent|Date):",
    re.IGNORECASE,
)
_INVITATION = re.compile(r"^\s*(?:invitation|einladung|invitación|you're invited)\s*:", re.I)
_GREETING = re.compile(
    r"^(?:(?i:hi|hello|hey|dear|morning|good morning|hallo|hej|liebe[rs]?|bonjour|salut|hola"
    r"|estimad[oa]|guten tag)\s+)?([A-Z][a-z]+)\s*[,!:]"
)
_REPLY_PREFIX = re.compile(r"^(?:(?:re|fwd?|fw|aw|sv)\s*:\s*)+", re.IGNORECASE)


@dataclass(frozen=True)
class Action:
    """A request found in a message: what to do, by when, and the phrase the date came from."""

    message: dict[str, Any]
    title: str
    due: dt.date | None
    deadline: str | None
    index: int = 0  # the message's first request is 0; its second 1, and so on

    @property
    def key(self) -> str:
        # read_inbox gives each message its task key; older results had none. A message's
        # second request gets its own key, so that it is a task of its own.
        key = self.message.get("key")
        base = key if isinstance(key, str) and key else f"email:{self.message.get('id')}"
        return base if self.index == 0 else f"{base}#{self.index + 1}"


def snippet_action(message: dict[str, Any]) -> Action | None:
    """The request a `read_inbox` item's snippet (or subject) shows, if any."""
    name, local = _sender(message)
    if _is_automated(local):
        return None
    subject, snippet = str(message.get("subject", "")), str(message.get("snippet", ""))
    if _FYI.search(subject) or _FYI.search(snippet):
        return None
    match = _deadline(snippet) or _deadline(subject)
    sender = _sender_name(name, local)
    for text in (snippet, subject):
        title = _request_in(text, sender, bool(match), f"Reply to {sender}: {subject}")
        if title:
            return _action(message, title, match)
    return None


def listed_actions(message: dict[str, Any], user: str | None = None) -> list[Action]:
    """The requests a `read_inbox` item shows: all of them when its snippet is the whole
    message (or it is an invitation), else the one its snippet starts, if any."""
    name, local = _sender(message)
    subject, snippet = str(message.get("subject", "")), str(message.get("snippet", ""))
    whole = not snippet.rstrip().endswith(_TRUNCATED)
    if _INVITATION.match(subject) or (whole and not _is_automated(local)):
        return body_actions({**message, "body": snippet}, user)
    action = snippet_action(message)
    return [action] if action else []


def triage(message: dict[str, Any]) -> tuple[Action | None, bool]:
    """(the request the snippet settles, or None; whether to open the full message)."""
    actions, wanted = triage_all(message)
    return (actions[0] if actions else None), wanted


def triage_all(message: dict[str, Any], user: str | None = None) -> tuple[list[Action], bool]:
    """(the requests the snippet settles; whether to open the full message). A snippet that
    is the whole message is read as the body; one cut short settles a request only when it
    shows the request and its deadline, and is opened when it may hold one."""
    action = snippet_action(message)
    name, local = _sender(message)
    subject, snippet = str(message.get("subject", "")), str(message.get("snippet", ""))
    whole = not snippet.rstrip().endswith(_TRUNCATED)
    if _INVITATION.match(subject) or (whole and not _is_automated(local)):
        return body_actions({**message, "body": snippet}, user), False
    if _is_automated(local) or _FYI.search(subject) or _FYI.search(snippet):
        return [], False
    if action and action.due:
        return [action], False
    hinted = bool(body_actions({**message, "body": snippet.rstrip(". …")}, user))
    wanted = (
        action is not None or hinted or message.get("unread") is True or bool(_CUE.search(subject))
    )
    return [], wanted


def is_urgent(message: dict[str, Any]) -> bool:
    """Whether a message says it is urgent: an outage, "urgent", "ASAP", "right away"."""
    text = f"{message.get('subject', '')} {message.get('snippet') or message.get('body') or ''}"
    return bool(_URGENT.search(text))


def reader_of(inbox: list[dict[str, Any]]) -> str | None:
    """The first name the inbox greets most ("Hi Alex," "Hallo Alex,"): whose inbox it is."""
    counts: dict[str, int] = {}
    for message in inbox:
        found = _GREETING.match(str(message.get("snippet", "")))
        if found:
            counts[found.group(1)] = counts.get(found.group(1), 0) + 1
    if not counts:
        return None
    name, n = max(sorted(counts.items()), key=lambda kv: kv[1])
    return name if n >= 2 else None


def body_actions(message: dict[str, Any], user: str | None = None) -> list[Action]:
    """Every request in a message's body (the sender's own words only), in order; `user` is
    the reader's first name, so that what the reader promised in their own mail counts."""
    name, local = _sender(message)
    subject = str(message.get("subject", ""))
    sender = _sender_name(name, local)
    from_user = bool(user) and (name.split() or [""])[0].lower() == str(user).lower()
    received = date_of(message.get("received_at"))
    found = requests_in(
        _own_words(message),
        subject,
        sender,
        received,
        from_user=from_user,
        automated=_is_automated(local),
    )
    return [
        Action(message, f.title, f.deadline.due if f.deadline else None,
               f.deadline.phrase if f.deadline else None, n)
        for n, f in enumerate(found[:MAX_PER_MESSAGE])
    ]  # fmt: skip


def body_action(message: dict[str, Any]) -> Action | None:
    """The first request in a `read_message` result's body (the sender's own words), if any."""
    actions = body_actions(message)
    return actions[0] if actions else None


def thread_key(subject: str) -> str:
    """The subject without reply/forward prefixes: how `read_inbox` items group into threads."""
    return " ".join(_REPLY_PREFIX.sub("", subject.strip()).lower().split())


def who(message: dict[str, Any]) -> str:
    """The sender's display name (or address) for the brief."""
    sender = str(message.get("from", ""))
    return parseaddr(sender)[0] or sender or "someone"


def date_of(iso: object) -> dt.date | None:
    """The date of an ISO-8601 timestamp or date, or None."""
    value = parse_time(iso)
    return value.date() if value else None


def parse_time(iso: object) -> dt.datetime | None:
    """An ISO-8601 timestamp as a datetime, or None."""
    try:
        return dt.datetime.fromisoformat(iso) if isinstance(iso, str) else None
    except ValueError:
        return None


def resolve(when: str, received: dt.date) -> dt.date | None:
    """The date a deadline phrase ("Friday", "next Tue", "Nov 7", "EOD") means, from `received`."""
    text = " ".join(when.lower().replace(".", " ").replace(",", " ").split())
    if text in {"today", "tonight", "eod", "cob", "end of day", "end of the day"}:
        return received
    if text == "tomorrow":
        return received + dt.timedelta(days=1)
    if text in {"eow", "end of week", "end of the week"}:
        return received + dt.timedelta(days=(4 - received.weekday()) % 7)
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        try:
            return dt.date.fromisoformat(text)
        except ValueError:
            return None
    month = re.search(rf"\b({_MON})\b", text)
    number = re.search(r"\b(\d{1,2})\b", text)
    if month and number:
        index = next(i for i, m in enumerate(MONTHS, 1) if m.lower().startswith(month.group(1)[:3]))
        # The next such date, give or take: "by Jan 3" sent on Dec 30 means next year's.
        year = received.year + (dt.date(received.year, index, 1) < received - _HALF_YEAR)
        try:
            return dt.date(year, index, int(number.group(1)))
        except ValueError:
            return None
    weekday = re.search(rf"\b({_DOW})", text)
    if weekday is None:
        return None
    target = next(i for i, d in enumerate(DAYS) if d.lower().startswith(weekday.group(1)[:3]))
    day = received + dt.timedelta(days=(target - received.weekday()) % 7)
    if text.startswith("next ") and day.isocalendar()[1] == received.isocalendar()[1]:
        day += dt.timedelta(days=7)
    return day


# --- helpers ------------------------------------------------------------------------------------


def _action(message: dict[str, Any], title: str, match: re.Match[str] | None) -> Action:
    received = date_of(message.get("received_at"))
    due = resolve(match.group("when"), received) if match and received else None
    return Action(message, title, due, match.group(0).rstrip(".") if match else None)


def _sender(message: dict[str, Any]) -> tuple[str, str]:
    name, address = parseaddr(str(message.get("from", "")))
    return name, address.split("@")[0].lower()


def _is_automated(local: str) -> bool:
    return local.replace("-", "").replace("_", "") in _AUTOMATED or bool(
        _AUTOMATED & set(re.split(r"[._+\-]", local))
    )


def _request_in(text: str, sender: str, has_deadline: bool, fallback: str) -> str | None:
    """The task title for the first request in `text`, or None."""
    for req in _REQUEST.finditer(text):
        rest = text[req.end() :]
        if not _NOT_A_REQUEST.match(rest):
            title = _title(_clause(rest), sender)
            if title:
                return title
    verb = _ACTION_VERB.search(text)
    if verb and has_deadline:
        return _title(_clause(text[verb.start("verb") :]), sender) or fallback
    return None


def _own_words(message: dict[str, Any]) -> str:
    lines = []
    for line in str(message.get("body") or message.get("snippet") or "").splitlines():
        stripped = line.strip()
        if _QUOTE_HEAD.match(stripped) or stripped in {"--", "-- "}:
            break
        if not stripped.startswith(">"):
            lines.append(line)
    text = "\n".join(lines)
    # A snippet has its lines run together: a quoted reply's header may sit mid-line there.
    inline = _INLINE_QUOTE.search(text)
    return text[: inline.start()] if inline else text


def _sender_name(display: str, local: str) -> str:
    words = display.split()
    if not words:
        return local.split(".")[0].capitalize() or "the sender"
    # A person goes by their first name; "Maple Grove Elementary" keeps its whole name.
    return words[0] if len(words) <= 2 else display


def _clause(text: str) -> str:
    end = _CLAUSE_END.search(text)
    return text[: end.start()] if end else text


def _title(clause: str, sender: str) -> str:
    words = clause.strip(" ,:-").split()
    while words and words[0].lower() in {"just", "also", "quickly", "kindly", "please"}:
        words.pop(0)
    if [w.lower() for w in words[:3]] == ["sign", "and", "return"]:
        words = ["return", "signed", *words[3:]]
    suffix = ""
    if len(words) > 1 and words[0].lower() in _GIVE and words[1].lower() in {"me", "us"}:
        del words[1]
        suffix = f" to {sender}"
    out: list[str] = []
    for word in words:
        low = word.lower()
        if low in {"the", "your", "our"}:  # a to-do list reads better without them
            continue
        out.append({"me": sender, "us": sender, "my": f"{sender}'s"}.get(low, word))
    if len(out) < 2 and not suffix:
        return ""
    title = " ".join(out) + suffix
    title = title[0].upper() + title[1:]
    return title if len(title) <= 80 else title[:77].rsplit(" ", 1)[0] + "..."
