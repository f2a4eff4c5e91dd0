"""A reply's draft as the bytes a drafts folder takes: pure, from the latest message of an owed
thread and the words of the reply.

To the latest message's sender alone (never a Cc, a Bcc or an address from the body), `Re:`
its subject, In-Reply-To its Message-ID and References the thread's ids, that message quoted
below the reply (cut past `MAX_QUOTED_CHARS`: a 5 MB mail is not copied whole into a draft),
plain text in UTF-8, and a Message-ID Dayflow made and saved before the draft was written.
Every header value has its CR, LF and other control characters replaced by spaces before it
is set: a subject or a name from mail can never start a header of its own.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from email.message import EmailMessage
from email.policy import SMTP
from email.utils import format_datetime, formataddr

from dayflow.clock import SystemClock
from dayflow.drafts.words import attribution, language_of
from dayflow.sources.identity import short_hash

MAX_QUOTED_CHARS = 20_000  # of the latest message's text, quoted below the reply
MAX_QUOTED_LINES = 400
MAX_HEADER_CHARS = 900  # a subject or a name, once cleaned
MAX_REFERENCES = 20  # ids in References: the thread's first, and the newest
_CONTROL = re.compile(r"[\x00-\x1f\x7f\u0085\u2028\u2029]+")
_REPLY = re.compile(r"^\s*re\s*:", re.IGNORECASE)


def clean_header(text: str) -> str:
    """A header value with no CR, LF or other control character (each run of them one
    space), trimmed, at most MAX_HEADER_CHARS characters."""
    return " ".join(_CONTROL.sub(" ", text).split())[:MAX_HEADER_CHARS]


def reply_subject(subject: str) -> str:
    """`Re: ` and the subject (once: `Re: Re:` is not made)."""
    subject = clean_header(subject)
    return subject if _REPLY.match(subject) else f"Re: {subject}".rstrip()


def new_message_id(run_id: str, thread_key: str, domain: str) -> str:
    """The Message-ID of run `run_id`'s draft for `thread_key`: the same for the same run and
    thread (a resume makes the same one), another for another run."""
    host = re.sub(r"[^A-Za-z0-9.-]", "", domain) or "dayflow.invalid"
    return f"<dayflow-draft.{short_hash(run_id + ' ' + thread_key)}@{host}>"


@dataclass(frozen=True)
class Reply:
    """What a draft is made of."""

    message_id: str  # the draft's own, <...>
    to_name: str
    to_address: str
    subject: str  # the latest message's, as it came
    in_reply_to: str | None  # the latest message's Message-ID, <...>
    references: tuple[str, ...]  # its References, <...> each
    body: str  # the reply's words
    quoted_from: str  # who wrote the latest message, for the attribution line
    quoted_at: dt.datetime
    quoted_text: str  # the latest message's text
    from_address: str | None = None  # the user's address it was sent to
    date: dt.datetime | None = None


def quote(text: str) -> str:
    """`text` as quoted lines (`> `), cut past MAX_QUOTED_CHARS or MAX_QUOTED_LINES with a
    line saying how much was left out."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    kept: list[str] = []
    size = 0
    for line in lines:
        if len(kept) >= MAX_QUOTED_LINES or size + len(line) > MAX_QUOTED_CHARS:
            break
        kept.append(line)
        size += len(line) + 1
    while kept and not kept[-1].strip():
        kept.pop()
    out = "\n".join(f"> {line}".rstrip() for line in kept)
    left = len(text) - size
    if len(kept) < len(lines) and left > 0:
        out += f"\n> [… {left:,} more characters of the message are not quoted]"
    return out


def compose(reply: Reply) -> bytes:
    """The draft as RFC 5322 bytes (CRLF line ends), plain text in UTF-8."""
    msg = EmailMessage(policy=SMTP)
    if reply.from_address:
        msg["From"] = clean_header(reply.from_address)
    msg["To"] = formataddr((clean_header(reply.to_name), clean_header(reply.to_address)), "utf-8")
    msg["Subject"] = reply_subject(reply.subject)
    msg["Date"] = format_datetime(reply.date or SystemClock().now())
    msg["Message-ID"] = clean_header(reply.message_id)
    if reply.in_reply_to:
        msg["In-Reply-To"] = clean_header(reply.in_reply_to)
        refs = [r for r in reply.references if r != reply.in_reply_to]
        if len(refs) >= MAX_REFERENCES:
            refs = refs[:1] + refs[-(MAX_REFERENCES - 2) :]
        msg["References"] = clean_header(" ".join([*refs, reply.in_reply_to]))
    msg["X-Dayflow"] = "draft (never sent by Dayflow)"
    who = clean_header(reply.quoted_from) or reply.to_address
    said = attribution(reply.quoted_at, who, language_of(reply.quoted_text))
    text = f"{reply.body.strip()}\n\n{said}\n{quote(reply.quoted_text)}\n"
    msg.set_content(text, charset="utf-8", cte="quoted-printable")
    return msg.as_bytes()
