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
  requests) and their deadlines by `dayflow.dates`.
- `triage_all` / `listed_actions`: the same for a listing's item, whose snippet is read as the
  body when it is the whole message.
"""

from __future__ import annotations

import datetime as dt
import html
import re
from dataclasses import dataclass
from typing import Any

from dayflow.dates import alternation, any_word
from dayflow.followups.rules import after_opening_quote, opens_invitation, without_join_blocks
from dayflow.providers.offline._broadcast import is_office
from dayflow.providers.offline._clauses import has_cue
from dayflow.providers.offline._requests import relayed_invitation, requests_in, says_fyi
from dayflow.providers.offline._scam import looks_like_scam
from dayflow.senders import sender_name, sender_parts
from dayflow.sources.injected import addresses_assistant, without_injected

DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")  # fmt: skip
_AUTOMATED = {"noreply", "donotreply", "no", "newsletter", "newsletters", "digest", "notification",
              "notifications", "notify", "alert", "alerts", "mailer", "bounce", "bounces",
              "updates", "news", "marketing", "receipts", "billing", "calendar", "hello", "info",
              "team", "orders", "order", "shop", "store", "accounts", "account", "members",
              "membership", "events", "tracking", "shipping", "postmaster", "daemon", "jira",
              "github", "gitlab", "confluence", "slack", "guest", "survey", "surveys", "promo",
              "promotions", "offers", "deals", "bot", "statements", "invoices", "payments",
              "rewards", "loyalty", "security", "verify", "verification",
              # the same offices in the other three languages
              "pedidos", "pedido", "tienda", "envios", "facturas", "commandes", "commande",
              "boutique", "factures", "bestellung", "bestellungen", "versand", "rechnung",
              "rechnungen"}  # fmt: skip
# What an automated message's subject says (a bounce, an auto-reply, a digest).
_AUTO_SUBJECT = re.compile(
    r"^\s*(?:undeliverable|undelivered|delivery status notification|mail delivery (?:failed|failure"
    r"|system)|returned mail|automatic reply|auto(?:matic)?[- ]?(?:reply|response)|out of (?:the )?"
    r"office|abwesenheit|réponse automatique|respuesta automática|\[(?:jira|github|confluence)\])"
    # a chat's digest: "[Clinic] You have 6 new messages", "3 unread notifications"
    r"|^(?:\[[^\]]{1,40}\]\s*)?(?:you\s+have\s+)?\d+\s+(?:new|unread)\s+(?:messages?"
    r"|notifications?|mentions?|replies)\b"
    # the same said second, after the subject in another language: "Absence / Out of office"
    r"|^[^/|]{1,40}[/|]\s*(?:out\s+of\s+(?:the\s+)?office|automatic\s+reply|auto-?reply"
    r"|abwesenheit\w*|réponse\s+automatique|respuesta\s+automática|fuera\s+de\s+la\s+oficina)\s*$",
    re.IGNORECASE,
)
# An auto-reply that says so on its first line, under a person's subject ("Re: ..."): "Auto-Reply:
# Out of Office", "Automatic reply", "Abwesenheitsnotiz". A line of its own or a label, so that
# "Out of office next week, so please ..." is still a person's sentence.
_AUTO_BODY = re.compile(
    r"^\s*(?:auto(?:matic)?[- ]?(?:reply|response)|out\s+of\s+(?:the\s+)?office|abwesenheits\w*"
    r"|réponse\s+automatique|respuesta\s+automática)\s*(?::|\n|$)",
    re.IGNORECASE,
)
# Subject cues that a cut-short message from a person may want something.
_TRUNCATED = ("...", "…")
_RSVP_SHOWN = re.compile(r"\b(?:rsvp|reply|respond|let\s+(?:me|us)\s+know)\b", re.IGNORECASE)
# A snippet without the listing's word on it is whole only when it is shorter than sources'
# cuts and ends a sentence (closing quotes and brackets allowed).
_WHOLE_CHARS = 100
_ENDS_SENTENCE = re.compile(r"[.?!][\"'»”’)\]]{0,3}$")
# Where the sender's own words end: a quoted reply's header, a forwarded or original message,
# in the four languages and in the two common clients' forms.
_QUOTE_HEAD = re.compile(
    r"^(?:on\b.{0,200}\bwrote:$|-{2,}\s*(?:original|forwarded) message\s*-{2,}"
    r"|(?:from|von|de)\s?:\s|begin forwarded message:|_{8,}$|am\b.{0,120}\bschrieb.{0,80}:$"
    r"|le\b.{0,120}\ba écrit\s*:$"
    r"|el\b.{0,120}\bescribió:$|-{2,}\s*(?:ursprüngliche|weitergeleitete) nachricht"
    r"|-{2,}\s*message (?:d'origine|transféré)|-{2,}\s*mensaje (?:original|reenviado))",
    re.IGNORECASE,
)
# A legal footer or disclaimer: it and what follows are boilerplate, never a request.
_DISCLAIMER = re.compile(
    r"(?:^|(?<=[\s.]))(?:confidential(?:ity)?\s+notice|disclaimer\s*:|legal\s+notice"
    r"|this\s+(?:e-?mail|message|communication)(?:\s+and\s+any\s+(?:attachments?|files))?"
    r"\s+(?:is|are|may|contains?|might)\b[^.]{0,80}\b(?:confidential|privileged)"
    r"|if\s+you\s+(?:are\s+not\s+the\s+intended|have\s+received\s+this\b[^.]{0,40}in\s+error)"
    r"|diese\s+(?:e-?mail|nachricht)\s+(?:kann|enthält|ist)\b[^.]{0,80}\bvertraulich"
    r"|ce\s+(?:message|courriel)\s+(?:est|peut)\b[^.]{0,80}\bconfidentiel"
    r"|este\s+(?:correo|mensaje)\s+(?:es|puede|contiene)\b[^.]{0,80}\bconfidencial)",
    re.IGNORECASE,
)
MAX_PER_MESSAGE = 5
_URGENT = re.compile(
    r"\b(?:urgent\w*|asap|outage|is down|are down|failing|emergency|right away|immediately"
    r"|as soon as (?:possible|you're up)|dringend|urgente|urgence|panne)\b",
    re.IGNORECASE,
)
_NOW = re.compile(r"^(?:right\s+)?now$", re.IGNORECASE)
# A menu path ("Finance > Ops > Oct", "(Settings > Billing)"): no quoted reply's mark.
_CRUMBS = re.compile(
    r"\((?:[^()>\n]{1,30}\s>\s)+[^()>\n]{1,30}\)"
    r"|\b\w[\w&'-]*(?:\s\w[\w&'-]*){0,2}(?:\s>\s\w[\w&'-]*(?:\s\w[\w&'-]*){0,2}){2,}"
)
_INLINE_QUOTE = re.compile(
    r"\bOn\s[^.?!>]{0,160}\bwrote:|-{2,}\s*(?:original|forwarded) message|begin forwarded message:"
    r"|\s>\s|_{8,}|\b(?:From|Von|De)\s?:\s[^\n]{0,120}\b(?:Sent|Date|Gesendet|Datum|Envoyé|Enviado):"
    r"|\bAm\s[^.?!>]{0,120}\bschrieb\b|\bLe\s[^?!>]{0,120}\ba écrit\s?:"
    r"|\bEl\s[^?!>]{0,120}\bescribió:",
    re.IGNORECASE,
)
_INVITATIONS = ("invitation", "einladung", "invitación", "you're invited")
_INVITATION = re.compile(rf"^\s*(?:{alternation(_INVITATIONS)})\s*:", re.I)
# A meeting system's invitation, from its no-reply address: "X is inviting you to a scheduled
# Zoom meeting", "You are invited to the kickoff meeting", "Invitation: Q4 review".
_INVITES_YOU = re.compile(
    r"\b(?:is\s+inviting\s+you\s+to|has\s+invited\s+you\s+to|you(?:'re|\s+are)\s+invited\s+to)\b"
    rf"|^\s*(?:{alternation(_INVITATIONS)})\s*:",
    re.IGNORECASE,
)
_GREETINGS = alternation(
    ("hi", "hello", "hey", "dear", "morning", "good morning", "hallo", "hej", "liebe", "lieber",
     "liebes", "bonjour", "salut", "hola", "estimado", "estimada", "guten tag")
)  # fmt: skip
_GREETING = re.compile(rf"^(?:(?i:{_GREETINGS})\s+)?([A-Z][a-z]+)\s*[,!:]")
# A line that only names an attachment ("Attachment: x.docx", "budget.pdf"), and an attached
# file's name in brackets anywhere ("[scan.pdf]", "<deck.pptx>"), checked by `_FILE`.
_ATTACHMENT = re.compile(
    r"^(?:(?:attachments?|anhang|pièce jointe|adjunto)\s*:\s*\S.{0,200}|[\w.-]{1,120})$",
    re.IGNORECASE,
)
_BRACKETED = re.compile(r"[\[<][^\[\]<>\n]{1,120}[\]>]")
_FILE = re.compile(
    r".*\.(?:pdf|docx?|xlsx?|pptx?|csv|png|jpe?g|gif|zip|txt|key|numbers|pages)\s*$", re.I
)
# A phone's sign-off: the sender's words end there ("Sent from my iPhone").
_PHONES = ("sent from my", "von meinem", "envoyé de mon", "enviado desde mi")
_SENT_FROM = re.compile(rf"(?:^|(?<=\s))(?:{alternation(_PHONES)})\s", re.IGNORECASE)
# A snippet that announces several things: "three things:", "1) ... 2)", "two asks".
_COUNTS = any_word("two three four five couple few several zwei drei deux trois dos tres")
_ASKS = any_word(
    "things items asks requests questions favors favours sachen dinge bitten fragen choses"
    " points cosas puntos preguntas"
)
# A snippet runs a message's lines together, so a list shows as inline items: "1.", "(a)",
# or two bullets, the first at the start or after a heading's colon ("Handoff: - can you
# order ... - need you to ..."): each item may be an ask of its own, dated in its own line.
_SEVERAL = re.compile(
    rf"\b{_COUNTS}(?:\s+of)?\s+(?:\w+\s+)?{_ASKS}\b|(?:^|\s)\(?(?:1|a)[.)]\s"
    r"|(?:^|:)\s*[-•*]\s+\S.*?\s[-•*]\s+\S",
    re.IGNORECASE,
)
# A subject naming two things ("thurs + water heater"), and words that add an ask ("also",
# "one more thing", "P.S.", "außerdem", "aussi", "también").
_JOINED = re.compile(r"\w\s*[+&]\s*\w")
_ADDS = re.compile(
    r"(?:^|[\s.?!,;-])(?:also|plus|oh\s+and|one\s+more(?:\s+thing)?|another\s+thing"
    r"|p\.\s?s\.?|ps:|außerdem|ausserdem|aussi|également|también|además)(?![\w])",
    re.IGNORECASE,
)
_REPLY_PREFIX = re.compile(r"^(?:(?:re|fwd?|fw|aw|sv)\s*:\s*)+", re.IGNORECASE)
_BLOCK_TAG = re.compile(r"<\s*/?\s*(?:p|div|br|tr|table|ul|ol|h\d)\b[^>]*>", re.IGNORECASE)


@dataclass(frozen=True)
class Action:
    """A request found in a message: what to do, by when, and the phrase the date came from."""

    message: dict[str, Any]
    title: str
    due: dt.date | None
    deadline: str | None
    index: int = 0  # the message's first request is 0; its second 1, and so on
    evidence: str = ""  # the sender's sentence the request was found in
    rule: str = ""  # the name of the rule that found it

    @property
    def key(self) -> str:
        # read_inbox gives each message its task key; older results had none. A message's
        # second request gets its own key, so that it is a task of its own.
        key = self.message.get("key")
        base = key if isinstance(key, str) and key else f"email:{self.message.get('id')}"
        return base if self.index == 0 else f"{base}#{self.index + 1}"


def snippet_action(message: dict[str, Any], user: str | None = None) -> Action | None:
    """The first request a `read_inbox` item's snippet (or subject) shows, if any."""
    actions = _cut_short_actions(message, user)
    return actions[0] if actions else None


def listed_actions(message: dict[str, Any], user: str | None = None) -> list[Action]:
    """The requests a `read_inbox` item shows: all of them when its snippet is the whole
    message (or it is an invitation), else the one its snippet starts, if any."""
    if _whole(message):
        return body_actions({**message, "body": snippet_of(message)}, user)
    action = snippet_action(message, user)
    return [action] if action else []


def triage(message: dict[str, Any]) -> tuple[Action | None, bool]:
    """(the request the snippet settles, or None; whether to open the full message)."""
    actions, wanted = triage_all(message)
    return (actions[0] if actions else None), wanted


def triage_all(message: dict[str, Any], user: str | None = None) -> tuple[list[Action], bool]:
    """(the requests the snippet settles; whether to open the full message). A snippet that
    is the whole message is read as the body; one cut short settles a request only when it
    shows the request and its deadline, and is opened when it may hold one."""
    if _whole(message):
        return body_actions({**message, "body": snippet_of(message)}, user), False
    name, local = _sender(message)
    subject, snippet = str(message.get("subject", "")), snippet_of(message)
    if message.get("to_assistant") is True or addresses_assistant(f"{subject}\n{snippet}"):
        # Text written to an assistant, not the reader (a prompt injection): what the
        # snippet asks outside it may still count, but nothing it says opens the message.
        return body_actions({**message, "body": without_injected(snippet)}, user), False
    automated = (
        _is_automated(local, subject)
        and not _relayed(name, f"{subject} {snippet}")
        and not system_invitation(message)
    )
    if (
        automated
        or _AUTO_BODY.match(snippet)
        or says_fyi(subject)
        or says_fyi(snippet, warning=False)
    ):
        return [], False
    if looks_like_scam(subject, snippet, str(message.get("from", ""))):
        return [], False  # a prize notice's "click here to claim" is no one's task
    found = _cut_short_actions(message, user)
    if (
        found
        and found[0].due
        and message.get("copied") is not True  # only copied: the rest may say whose ask it is
        and not _SEVERAL.search(snippet)
        and not _ask_runs_off(snippet)
        and not _more_to_come(subject, snippet)
    ):
        return found[:1], False
    # A person's message the snippet does not settle is opened, read or not: its ask often
    # comes after what the snippet shows ("Hi all, the framer can do it for $450 ... Can you
    # send me your share by Nov 4?"), and a message read last week may still want something.
    return [], True


def system_invitation(message: dict[str, Any]) -> bool:
    """Whether a listed message is a meeting system's invitation (not list mail): what it asks
    is read though its sender is a no-reply address, which marks it bulk."""
    text = f"{message.get('subject', '')}\n{snippet_of(message)}"
    return not message.get("list_id") and bool(_INVITES_YOU.search(text))


def is_urgent(message: dict[str, Any]) -> bool:
    """Whether a message says it is urgent: an outage, "urgent", "ASAP", "right away"."""
    text = f"{message.get('subject', '')} {snippet_of(message) or message.get('body') or ''}"
    return bool(_URGENT.search(text))


def urgent_action(action: Action) -> bool:
    """Whether a request is to be done first: its message says it is urgent, or its own
    deadline does ("bring it to IT right away", "on the bridge now", "ASAP"), which the
    listing's snippet may have cut off."""
    phrase = action.deadline or ""
    return is_urgent(action.message) or bool(_URGENT.search(phrase) or _NOW.search(phrase))


def reader_of(inbox: list[dict[str, Any]]) -> str | None:
    """The first name the inbox greets most ("Hi Alex," "Hallo Alex,"): whose inbox it is."""
    counts: dict[str, int] = {}
    for message in inbox:
        found = _GREETING.match(snippet_of(message))
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
    first = _last_first(name) or (name.split() or [""])[0]
    from_user = bool(user) and first.lower() == str(user).lower()
    received = date_of(message.get("received_at"))
    automated = _is_automated(local, subject) or bool(_AUTO_BODY.match(_own_words(message)))
    if automated and _relayed(name, f"{subject} {message.get('body') or ''}"):
        relayed = relayed_invitation(_own_words(message), subject, received)
        return [Action(message, f.title, f.deadline.due if f.deadline else None,
                       f.deadline.phrase if f.deadline else None, 0, f.sentence, f.rule)
                for f in relayed]  # fmt: skip
    if looks_like_scam(subject, str(message.get("body") or ""), str(message.get("from", ""))):
        return []  # spam or a scam: what it urges is no task
    found = requests_in(
        _own_words(message),
        subject,
        sender,
        received,
        from_user=from_user,
        automated=automated,
        reader=user,
        copied_to=_copied_to(message),
        office=is_office(name),
        to_group=message.get("to_group") is True,
    )
    return [
        Action(message, f.title, f.deadline.due if f.deadline else None,
               f.deadline.phrase if f.deadline else None, n, f.sentence, f.rule)
        for n, f in enumerate(found[:MAX_PER_MESSAGE])
    ]  # fmt: skip


def _copied_to(message: dict[str, Any]) -> tuple[str, ...] | None:
    """Whom a message is to when the listing says the reader is only copied (`copied`)."""
    if message.get("copied") is not True:
        return None
    to = message.get("to")
    return tuple(str(n) for n in to if isinstance(n, str)) if isinstance(to, list) else ()


def body_action(message: dict[str, Any]) -> Action | None:
    """The first request in a `read_message` result's body (the sender's own words), if any."""
    actions = body_actions(message)
    return actions[0] if actions else None


def thread_key(subject: str) -> str:
    """The subject without reply/forward prefixes: how `read_inbox` items group into threads."""
    return " ".join(_REPLY_PREFIX.sub("", subject.strip()).lower().split())


def who(message: dict[str, Any]) -> str:
    """The sender's display name for the brief (`dayflow.senders`)."""
    return sender_name(str(message.get("from", "")))


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


# --- helpers ------------------------------------------------------------------------------------


def snippet_of(message: dict[str, Any]) -> str:
    """A listing item's snippet as text: HTML entities decoded (Gmail's API sends `&#39;`)."""
    snippet = str(message.get("snippet", ""))
    return html.unescape(snippet) if "&" in snippet else snippet


def snippet_whole(message: dict[str, Any]) -> bool:
    """Whether a listing item's snippet is all of its text. The listing says so when it knows
    (`snippet_is_whole`); else only a short snippet that ends a sentence is taken for whole:
    sources cut snippets with no mark (Gmail's ~200 characters, Outlook's 255, an IMAP
    preview's bytes), so anything else may be cut and is worth opening."""
    flag = message.get("snippet_is_whole")
    if isinstance(flag, bool):
        return flag
    snippet = snippet_of(message).rstrip()
    cut = snippet.endswith(_TRUNCATED) or len(snippet) >= _WHOLE_CHARS
    return not cut and bool(_ENDS_SENTENCE.search(snippet))


def _whole(message: dict[str, Any]) -> bool:
    """Whether the snippet is all there is to read: the whole text, from a person (or an
    invitation, whose subject says what it is)."""
    _, local = _sender(message)
    if _INVITATION.match(str(message.get("subject", ""))):
        # an invitation cut before its RSVP is opened, a person's or an office's ("events@",
        # an Evite): the reply-by date follows what the snippet shows
        return snippet_whole(message) or bool(_RSVP_SHOWN.search(snippet_of(message)))
    return snippet_whole(message) and not _is_automated(local)


def _more_to_come(subject: str, snippet: str) -> bool:
    """Whether a cut snippet says another ask may follow what it shows: a subject that joins
    two things ("thurs + water heater", "badge & parking"), or words after the first
    sentence that add one ("... I have the late shift. also pl", "One more thing:")."""
    rest = re.split(r"(?<=[.?!])\s+", snippet.strip(), maxsplit=1)[1:]
    return bool(_JOINED.search(subject) or (rest and _ADDS.search(rest[0])))


def _ask_runs_off(snippet: str) -> bool:
    """Whether a cut snippet stops inside the sentence that asks ("could you give the
    release a final read to"): its deadline may be in what was cut."""
    text = snippet.rstrip()
    for tail in _TRUNCATED:
        text = text.removesuffix(tail).rstrip()
    if _ENDS_SENTENCE.search(text):
        return False
    return has_cue(re.split(r"[.?!]\s+", text)[-1])


def _cut_short_actions(message: dict[str, Any], user: str | None) -> list[Action]:
    """The requests a cut-short snippet shows, read as a body without its ellipsis."""
    snippet = snippet_of(message).rstrip()
    for tail in _TRUNCATED:
        snippet = snippet.removesuffix(tail)
    return body_actions({**message, "body": snippet}, user)


def _sender(message: dict[str, Any]) -> tuple[str, str]:
    name, address = sender_parts(str(message.get("from", "")))
    return name, address.split("@")[0].lower()


def _relayed(name: str, text: str) -> bool:
    """Whether a service relays a person's invitation ("Tessa Morgan via Paperless Post")."""
    return " via " in f" {name} " and bool(re.search(r"\binvit", text, re.IGNORECASE))


def _is_automated(local: str, subject: str = "") -> bool:
    return (
        local.replace("-", "").replace("_", "") in _AUTOMATED
        or bool(_AUTOMATED & set(re.split(r"[._+\-]", local)))
        or bool(_AUTO_SUBJECT.match(subject))
    )


def plain_text(text: str) -> str:
    """An HTML remnant as text: block tags as line breaks, list items as "- " lines, other
    tags out, entities decoded; text without tags is returned as it is."""
    if not re.search(r"<\s*/?\s*[a-zA-Z][^>]*>", text):
        return text
    text = re.sub(r"<\s*li\b[^>]*>", "\n- ", text, flags=re.IGNORECASE)
    text = _BLOCK_TAG.sub("\n", text)
    text = re.sub(r"<[^>]*>", "", text)
    return html.unescape(text)


def _own_words(message: dict[str, Any]) -> str:
    """The sender's own words: no quoted lines, nothing after a quoted reply's header, a
    forwarded message, the signature or a legal footer."""
    lines = []
    # What it says to an assistant is no one's request (cut before tags are read as HTML).
    raw = plain_text(without_injected(str(message.get("body") or message.get("snippet") or "")))
    rows = without_join_blocks(raw.splitlines())
    for n, line in enumerate(rows):
        stripped = line.strip()
        # "On Tue, 27 Oct 2026 at 10:00, Dana Whitfield" / "<dana@...> wrote:" over two lines
        joined = f"{stripped} {rows[n + 1].strip()}" if n + 1 < len(rows) else stripped
        if opens_invitation(rows, n):
            continue  # an Outlook invitation's When/Where over a rule: the message follows
        if _QUOTE_HEAD.match(stripped) or stripped in {"--", "-- "}:
            break
        if stripped.lower().startswith("on ") and _QUOTE_HEAD.match(joined):
            break
        if _ATTACHMENT.match(stripped) and (":" in stripped or _FILE.match(stripped)):
            continue
        if not stripped.startswith(">") or len(rows) == 1:  # a snippet is one line
            lines.append(line)
    text = "\n".join(lines)
    text = _BRACKETED.sub(lambda m: " " if _FILE.match(m.group(0)[1:-1]) else m.group(0), text)
    phone = _SENT_FROM.search(text)
    text = text[: phone.start()] if phone else text
    # A snippet has its lines run together: quoted sentences may open it ("> Can you...?
    # Nevermind...") and a quoted reply's header may sit mid-line.
    text = after_opening_quote(text)
    inline = _INLINE_QUOTE.search(_CRUMBS.sub(lambda m: m.group(0).replace(">", "›"), text))
    text = text[: inline.start()] if inline else text
    footer = _DISCLAIMER.search(text)
    return text[: footer.start()] if footer else text


# Words after a comma that are not a first name: "Lin, RN", "Smith, Jr.", "Acme, Inc."
_NOT_GIVEN = frozenset(
    "jr jr. sr sr. ii iii iv esq esq. inc inc. llc ltd ltd. gmbh ag co co. corp corp. plc".split()
)
_PARTICLES = frozenset("van von der den de la le du da di del della dos ten ter".split())


def _last_first(display: str) -> str | None:
    """The first name of a "Last, First" display name, Outlook's way ("Doe, Jane" is Jane,
    "van der Berg, Anna M." is Anna); None for any other name ("Amy Lin, RN", "Acme, Inc.")."""
    last, comma, given = display.partition(",")
    if not comma or "," in given:
        return None
    before, after = last.split(), given.split()
    if not before or not 1 <= len(after) <= 2:
        return None
    if not before[-1].istitle() or any(w.lower() not in _PARTICLES for w in before[:-1]):
        return None
    word = after[0]
    if not word.istitle() or len(word) < 2 or word.lower() in _NOT_GIVEN or "@" in word:
        return None
    return word


def _sender_name(display: str, local: str) -> str:
    given = _last_first(display)
    if given:
        return given  # "Doe, Jane" goes by Jane
    words = display.split()
    while len(words) > 1 and words[0].lower().rstrip(".") in {"dr", "prof", "mr", "mrs", "ms"}:
        words = words[1:]  # "Dr. Ulrike Brandt" goes by Ulrike
    if not words:
        return local.split(".")[0].capitalize() or "the sender"
    # A person goes by their first name; "Maple Grove Elementary" keeps its whole name.
    return words[0].rstrip(",") if len(words) <= 2 else " ".join(words)
