"""The headers that say who a message is between and which thread it belongs to.

`parse_message` fills an `Envelope` for every message it reads, so every reader (Maildir, mbox,
.eml, IMAP, the JSON files) hands the followups the same facts: sender and recipients as
(name, address) with the address lower-cased, Message-ID / In-Reply-To / References
normalised, and whether the message came from a mailing list or a machine (`List-Id`,
`List-Unsubscribe`, `Precedence: bulk|list|junk`, a server's `X-Spam-Flag: YES`;
`Auto-Submitted` other than `no`, `noreply` and `mailer-daemon` senders, delivery reports,
out-of-office subjects), and whether it carries a file (`has_attachment`, from its MIME
structure: `mime.attached` for the bytes, IMAP's BODYSTRUCTURE, the JSON's `attachments`; one
rule for all of them, `delivers_file`). Best-effort, never raising: a header that cannot be
read is left empty.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from email.message import Message
from email.utils import getaddresses
from typing import Any

from dayflow.sources.identity import normalise_message_id, raw_message_id

MAX_REFERENCES = 100  # a References header is kept to its first id and the last 99
MAX_RECIPIENTS = 200  # To and Cc, each
_ID = re.compile(r"<[^<>\s]+>")
_MACHINE = re.compile(
    r"^(?:no[-_.]?reply|do[-_.]?not[-_.]?reply|mailer[-_.]?daemon|postmaster|bounces?)"
    r"(?:[-+_.].*)?@",
    re.IGNORECASE,
)
_AUTO_SUBJECT = re.compile(
    r"^\s*(?:out of (?:the )?office|automatic reply|auto(?:matic)?[- ]?(?:reply|response)|"
    r"autoreply|abwesenheit|abwesend|réponse automatique|undeliverable|undelivered mail|"
    r"delivery status notification|mail delivery (?:failed|failure|system)|"
    r"returned mail|ooo\b)",
    re.IGNORECASE,
)

Address = tuple[str, str]  # (display name, lower-cased address)


@dataclass(frozen=True)
class Envelope:
    """Who a message is from and to, what it answers, and whether a person wrote it."""

    sender: Address = ("", "")
    to: tuple[Address, ...] = ()
    cc: tuple[Address, ...] = ()
    message_id: str | None = None
    in_reply_to: str | None = None
    references: tuple[str, ...] = ()
    # The same ids as the header wrote them (`<Foo@Example.ORG>`, no CR/LF, see
    # `identity.raw_message_id`): what a draft answering it names, for a client that compares
    # ids case-sensitively. None (or ()) where the header's form is not a plain `<...>`.
    raw_message_id: str | None = None
    raw_references: tuple[str, ...] = ()
    listed: bool = False  # from a mailing list or bulk sender
    list_id: str = ""  # the List-Id's identifier (`news.example.org`), lower-cased; "" none
    # Sent in bulk or marked spam (`Precedence: bulk|junk`, a server's spam verdict): a
    # newsletter or junk, never a person's post to a group (`group_post`).
    junk: bool = False
    automated: bool = False  # an auto-reply, bounce, or noreply sender
    # What the receiving server's Authentication-Results say of the sender (`auth_verdict`):
    # "fail" (forged: the From address is not who sent it), "pass", or "" (none, or unclear).
    auth: str = ""
    # Whether a mail server handed it on (it has a `Received:` header): a copy the user's own
    # client filed (a Maildir or IMAP copy of a sent message) has none, mail from outside has.
    relayed: bool = False
    # Whether it carries a file the sender attached (`delivers_file`): what keeps a promise
    # to send one. From as much of the message as its listing read (a file whose part starts
    # past the listing's bytes is not seen there; IMAP's BODYSTRUCTURE sees the whole).
    has_attachment: bool = False

    @property
    def auth_failed(self) -> bool:
        return self.auth == FAIL

    @property
    def links(self) -> tuple[str, ...]:
        """The ids this message says it follows (References, then In-Reply-To)."""
        if self.in_reply_to and self.in_reply_to not in self.references:
            return (*self.references, self.in_reply_to)
        return self.references


def envelope_of(msg: Message, header: Any) -> Envelope:
    """The envelope of a parsed message; `header(msg, name)` reads one header as text."""
    sender = _addresses(header(msg, "From") or header(msg, "Sender"), 1)
    subject = header(msg, "Subject")
    auto = header(msg, "Auto-Submitted").strip().lower()
    precedence = header(msg, "Precedence").strip().lower()
    kind = header(msg, "Content-Type").lower()
    address = sender[0][1] if sender else ""
    automated = (
        (bool(auto) and auto != "no")
        or bool(_MACHINE.match(address))
        or "report-type=delivery-status" in kind.replace('"', "").replace(" ", "")
        or bool(header(msg, "X-Autoreply") or header(msg, "X-Autorespond"))
        or bool(_AUTO_SUBJECT.match(subject))
        or precedence == "auto_reply"
    )
    # The receiving server's spam verdict (SpamAssassin's X-Spam-Flag / X-Spam-Status) is
    # junk, as Precedence: junk is: bulk mail, never a task.
    spam = any(
        header(msg, name).strip().lower().startswith("yes")
        for name in ("X-Spam-Flag", "X-Spam-Status")
    )
    listed = (
        bool(header(msg, "List-Id") or header(msg, "List-Unsubscribe"))
        or precedence in ("bulk", "list", "junk")
        or spam
    )
    return Envelope(
        auth=auth_verdict(header(msg, "Authentication-Results")),
        relayed=bool(header(msg, "Received")),
        sender=sender[0] if sender else ("", ""),
        to=tuple(_addresses(header(msg, "To"), MAX_RECIPIENTS)),
        cc=tuple(_addresses(header(msg, "Cc"), MAX_RECIPIENTS)),
        message_id=normalise_message_id(header(msg, "Message-ID")),
        in_reply_to=_first_id(header(msg, "In-Reply-To")),
        references=_references(header(msg, "References")),
        raw_message_id=raw_message_id(header(msg, "Message-ID")),
        raw_references=_raw_references(header(msg, "References")),
        listed=listed,
        list_id=list_ident(header(msg, "List-Id")),
        automated=automated,
        junk=precedence in ("bulk", "junk") or spam,
    )


def envelope_from_json(message: dict[str, Any]) -> Envelope:
    """The envelope of a message in Dayflow's JSON shape: `from`, `to` and `cc` as address
    strings (or lists of them), `message_id`, `in_reply_to`, `references`, `list_id`,
    `auto_submitted`, `authentication_results` and `attachments` (a non-empty list: it carries
    a file) when the file gives them."""

    def joined(value: object) -> str:
        if isinstance(value, list):
            return ", ".join(str(v) for v in value)
        return str(value) if isinstance(value, str) else ""

    sender = _json_sender(joined(message.get("from")))
    refs = message.get("references")
    auto = str(message.get("auto_submitted") or "").lower()
    address = sender[0][1] if sender else ""
    return Envelope(
        auth=auth_verdict(joined(message.get("authentication_results"))),
        relayed=bool(message.get("received")),
        sender=sender[0] if sender else ("", ""),
        to=tuple(_addresses(joined(message.get("to")), MAX_RECIPIENTS)),
        cc=tuple(_addresses(joined(message.get("cc")), MAX_RECIPIENTS)),
        message_id=normalise_message_id(str(message.get("message_id") or "")),
        in_reply_to=_first_id(str(message.get("in_reply_to") or "")),
        references=_references(joined(refs) if isinstance(refs, list) else str(refs or "")),
        raw_message_id=raw_message_id(str(message.get("message_id") or "")),
        raw_references=_raw_references(joined(refs) if isinstance(refs, list) else str(refs or "")),
        listed=bool(message.get("list_id")),
        list_id=list_ident(str(message.get("list_id") or "")),
        has_attachment=isinstance(message.get("attachments"), list)
        and bool(message.get("attachments")),
        automated=(bool(auto) and auto != "no")
        or bool(_MACHINE.match(address))
        or bool(_AUTO_SUBJECT.match(str(message.get("subject") or ""))),
    )


def delivers_file(
    ctype: str, disposition: str, *, named: bool, embedded: bool, parent: str
) -> bool:
    """Whether one part of a message (not a multipart) is a file its sender attached: its
    MIME type, its Content-Disposition's type (lower-cased, "" none), whether it names a file
    (`filename` or `name`), whether it has a Content-ID, and the multipart it sits in ("" for
    a message of one part).

    - a forwarded message (message/rfc822, message/global) is one, but not a bounce's copy of
      what bounced (in multipart/report);
    - an image the HTML shows (a part with a Content-ID in multipart/related: a signature's
      logo, a pasted screenshot) is not, whatever its disposition says (Outlook and Gmail
      name it and call it inline, some mailers call it attachment);
    - else a part whose disposition is `attachment` is one, and so is a named part that is
      not text (Apple Mail sends a PDF as `inline; filename=deck.pdf`); the text of the
      message (text/plain, text/html, an invitation's text/calendar) unnamed is not."""
    if parent == "multipart/report":
        return False
    if ctype in ("message/rfc822", "message/global"):
        return True
    if embedded and parent == "multipart/related":
        return False
    if disposition == "attachment":
        return True
    return named and not ctype.startswith("text/")


# A discussion's subject: a reply or a forward, or a list's `[tag]` ("Re: [pg-users] ...").
_THREAD_SUBJECT = re.compile(
    r"^\s*(?:(?:re|aw|sv|fwd?|fw|wg|tr|rv)\s*:|(?:(?:re|aw|sv|fwd?|fw)\s*:\s*)*\[[^\]]{1,80}\])",
    re.IGNORECASE,
)


# A list's own or a sender's role address, not a person's: "news@", "alerts@", and the list's
# "-request" / "-owner" / "-bounces" addresses that send its digests and notices.
_ROLE = re.compile(
    r"^(?:news(?:letters?)?|info|alerts?|announce(?:ments?)?|digests?|notifications?|updates?"
    r"|events|marketing|hello|team|members|admin|lists?|community|promo(?:tions)?)$"
    r"|-(?:request|owner|bounces?|admin)$",
    re.IGNORECASE,
)
_DIGEST = re.compile(r"\bdigest\b", re.IGNORECASE)


def group_post(envelope: Envelope, subject: str) -> bool:
    """Whether a list's message is a person's post to a group address that its List-Id names
    (a pack's parents, a class's families: `pack112-parents@googlegroups.com` in To), which
    may ask each reader something (a form to return, money due), unlike the rest of list
    mail: a newsletter or junk (`junk`, automated), a role's or the list's own address
    (news@, alerts@, members-request@), a digest, the list's relay of a post (From is the
    list's address, or "Name via List"), or a discussion (a reply, a `[tag]` subject)."""
    if not envelope.list_id or envelope.automated or envelope.junk:
        return False
    local, dot, domain = envelope.list_id.partition(".")
    posted_to = f"{local}@{domain}" if dot and "." in domain else ""
    name, address = envelope.sender
    if not posted_to or address == posted_to or " via " in f" {name.lower()} ":
        return False
    if _ROLE.search(address.partition("@")[0]) or _THREAD_SUBJECT.match(subject):
        return False
    if _DIGEST.search(subject) or _DIGEST.search(name):
        return False
    return any(a == posted_to for _, a in (*envelope.to, *envelope.cc))


def list_ident(value: str) -> str:
    """A List-Id header's identifier (RFC 2919: `Name <id>`, or the id alone), lower-cased."""
    inner = (
        value[value.find("<") + 1 : value.rfind(">")] if "<" in value and ">" in value else value
    )
    return inner.strip().lower()[:200]


PASS, FAIL = "pass", "fail"
_AUTH_RESULT = re.compile(r"\b(spf|dkim|dmarc)\s*=\s*([a-z]+)", re.IGNORECASE)


def auth_verdict(results: str) -> str:
    """What an Authentication-Results header (RFC 8601; the first one, which the user's own
    receiving server adds on top) says of the sender: FAIL when DMARC fails, or, without a
    DMARC verdict, SPF or DKIM fails (or soft-fails) and neither passes; PASS when DMARC, or
    else DKIM or SPF, passes; "" when it says neither (none, neutral, absent)."""
    verdicts: dict[str, set[str]] = {}
    for method, result in _AUTH_RESULT.findall(results[:4096]):
        verdicts.setdefault(method.lower(), set()).add(result.lower())
    if "dmarc" in verdicts:
        dmarc = verdicts["dmarc"]
        return PASS if "pass" in dmarc else FAIL if "fail" in dmarc else ""
    checks = verdicts.get("spf", set()) | verdicts.get("dkim", set())
    if "pass" in checks:
        return PASS
    return FAIL if checks & {"fail", "softfail"} else ""


def base_address(address: str) -> str:
    """`Alex+News@Example.org` -> `alex@example.org`: lower-cased, a `+tag` dropped."""
    local, at, domain = address.strip().lower().rpartition("@")
    if not at:
        return address.strip().lower()
    return f"{local.split('+', 1)[0] or local}@{domain}"


def _json_sender(raw: str) -> list[Address]:
    """A JSON file's `from`: an Outlook export writes `Doe, Jane <jane@x>` unquoted, which
    getaddresses reads as two addresses (the name then "Jane"); read as the brief shows it."""
    from dayflow.senders import sender_parts

    name, address = sender_parts(raw)
    if "@" in address and not any(c.isspace() for c in address) and "," not in address:
        return [(name[:100], address.lower()[:254])]
    return _addresses(raw, 1)


def _addresses(raw: str, limit: int) -> list[Address]:
    if not raw:
        return []
    try:
        pairs = getaddresses([raw])
    except Exception:
        return []
    out: list[Address] = []
    for name, addr in pairs:
        addr = addr.strip().lower()
        if "@" in addr and not any(c.isspace() for c in addr):
            out.append((" ".join(name.split())[:100], addr[:254]))
            if len(out) >= limit:
                break
    return out


def _first_id(raw: str) -> str | None:
    found = _ID.findall(raw or "")
    return normalise_message_id(found[0] if found else raw)


def _raw_references(raw: str) -> tuple[str, ...]:
    """A References header's ids as written (`raw_message_id` each), capped as `_references`."""
    kept = [i for i in (raw_message_id(i) for i in _ID.findall(raw or "")) if i]
    if len(kept) > MAX_REFERENCES:
        kept = [kept[0], *kept[-(MAX_REFERENCES - 1) :]]
    return tuple(dict.fromkeys(kept))


def _references(raw: str) -> tuple[str, ...]:
    ids = [normalise_message_id(i) for i in _ID.findall(raw or "")]
    kept = [i for i in ids if i]
    if len(kept) > MAX_REFERENCES:
        kept = [kept[0], *kept[-(MAX_REFERENCES - 1) :]]
    return tuple(dict.fromkeys(kept))
