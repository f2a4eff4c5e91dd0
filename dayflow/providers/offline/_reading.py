"""How the offline model reads mail: plain heuristics over subjects, snippets and bodies.

Pure functions of one message dict, no I/O and no state, so the offline model stays a function of
its request. Three questions are answered here:

- `snippet_action`: does the snippet (as `read_inbox` returns it) already show a request?
- `triage`: is the snippet enough, or should the full message be opened with `read_message`?
  A snippet settles it when the sender is automated, it says FYI, it is the whole message (not
  cut short with "..."), or it shows a request *and* its deadline. Otherwise a cut-short message
  is opened when it is unread, when the snippet starts a request whose deadline is not in view,
  or when the subject has a cue (a reply, a question mark, "review", "reminder"...).
- `body_action`: does the full body ask something? Only the sender's own words count: quoted
  replies ("> ..."), anything after "On ... wrote:", forwarded or original messages, and the
  signature are ignored. The deadline is looked for in the request's paragraph, then the next.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from email.utils import parseaddr
from typing import Any

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
    r"^(?:on\b.{0,200}\bwrote:$|-{2,}\s*(?:original|forwarded) message\s*-{2,}|from:\s)",
    re.IGNORECASE,
)
_REPLY_PREFIX = re.compile(r"^(?:(?:re|fwd?|fw|aw|sv)\s*:\s*)+", re.IGNORECASE)


@dataclass(frozen=True)
class Action:
    """A request found in a message: what to do, by when, and the phrase the date came from."""

    message: dict[str, Any]
    title: str
    due: dt.date | None
    deadline: str | None

    @property
    def key(self) -> str:
        # read_inbox gives each message its task key; older results had none.
        key = self.message.get("key")
        return key if isinstance(key, str) and key else f"email:{self.message.get('id')}"


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


def triage(message: dict[str, Any]) -> tuple[Action | None, bool]:
    """(the request the snippet settles, or None; whether to open the full message)."""
    action = snippet_action(message)
    name, local = _sender(message)
    subject, snippet = str(message.get("subject", "")), str(message.get("snippet", ""))
    if _is_automated(local) or _FYI.search(subject) or _FYI.search(snippet):
        return None, False
    if not snippet.rstrip().endswith(_TRUNCATED) or (action and action.due):
        return action, False
    wanted = action is not None or message.get("unread") is True or bool(_CUE.search(subject))
    return None, wanted


def body_action(message: dict[str, Any]) -> Action | None:
    """The request in a `read_message` result's body (the sender's own words only), if any."""
    name, local = _sender(message)
    subject = str(message.get("subject", ""))
    if _is_automated(local) or _FYI.search(subject):
        return None
    sender = _sender_name(name, local)
    paragraphs = [" ".join(p.split()) for p in re.split(r"\n\s*\n", _own_words(message))]
    paragraphs = [p for p in paragraphs if p]
    for n, paragraph in enumerate(paragraphs):
        match = _deadline(paragraph)
        if match is None and n + 1 < len(paragraphs):
            match = _deadline(paragraphs[n + 1])
        title = _request_in(paragraph, sender, bool(match), f"Reply to {sender}: {subject}")
        if title:
            return _action(message, title, match)
    match = _deadline(subject)
    title = _request_in(subject, sender, bool(match), f"Reply to {sender}: {subject}")
    return _action(message, title, match) if title else None


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
    return "\n".join(lines)


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
