"""Turning the bytes of one RFC 5322 message into what Dayflow shows, best-effort, never raising.

- Headers: RFC 2047 encoded words decoded; raw 8-bit headers read as UTF-8, else Windows-1252.
- Body: quoted-printable and base64 undone, the declared charset honoured (an unknown or lying
  charset falls back to UTF-8, then Windows-1252, never an exception); in multipart/alternative
  text/plain is preferred; HTML-only mail becomes readable text (`html_to_text`).
- Attachments: listed by name, type and decoded size; their content is never kept. Whether
  the message carries a file (`attached`, the envelope's `has_attachment`) is the stricter
  `envelope.delivers_file` over its parts: an image its HTML shows is not one.
- `received_at`: `Date:` when it parses and is sane (not before 1980, not more than two days
  ahead of the fallback), else the first `Received:` date, else the fallback the reader gives
  (IMAP's INTERNALDATE, a Maildir's delivery time, a file's mtime).
- `thread_id`: a short hash of the thread's root: the first id in References, else
  In-Reply-To, else the message's own Message-ID.
"""

from __future__ import annotations

import datetime as dt
import email
import email.policy
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from email.header import decode_header, make_header
from email.message import Message
from email.utils import getaddresses, parseaddr, parsedate_to_datetime
from html.parser import HTMLParser
from typing import Any

from dayflow.sources.envelope import Envelope, delivers_file, envelope_of
from dayflow.sources.identity import (
    legacy_stable_id,
    message_stable_id,
    normalise_message_id,
    short_hash,
)

SNIPPET_CHARS = 200
HEADER_CHARS = 300  # a subject or sender longer than this is cut (with "…")
_EARLIEST = dt.datetime(1980, 1, 1, tzinfo=dt.UTC)
_FUTURE_SLACK = dt.timedelta(days=2)
_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069\u200e\u200f]")
_SURROGATE = re.compile("[\udc80-\udcff]")  # an undecodable header byte, as compat32 keeps it
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")  # C0 controls but \t \n \r
# A terminal escape sequence, whole: CSI (`ESC [` or the 8-bit CSI, parameters, a final
# byte), OSC and the other string controls (to BEL or ST, at most 512 characters), two-byte
# escapes, and any other C1 control. Removing only
# the ESC (as `_CONTROL` does) would leave `[1m` in a subject, and from there in a task title.
_ESCAPE = re.compile(
    "(?:\x1b\\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?"
    "|\x1b[\\]PX^_][^\x07\x1b\x9c]{0,512}(?:\x07|\x1b\\\\|\x9c)?"
    "|\x1b[\x20-\x2f]*[\x30-\x7e]?"
    "|[\x80-\x9f]"
)
# What an escape leaves when its ESC was dropped on the way (by a mail client, a model): an SGR
# `[1m`, `[0;31m`, `[m` that no title means.
_C1 = re.compile("[\x80-\x9f]")
_SGR_REMNANT = re.compile(r"\[(?:\d{1,3}(?:;\d{1,3})*)?m(?!\w*\])")


@dataclass(frozen=True)
class Attachment:
    name: str
    type: str
    size: int  # decoded bytes

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "type": self.type, "size": self.size}


@dataclass(frozen=True)
class ParsedMail:
    """One message as Dayflow shows it."""

    stable_id: str  # see identity.message_stable_id
    message_id: str | None
    sender: str
    subject: str
    received_at: dt.datetime  # aware
    date_source: str  # "date" | "received" | "fallback": where received_at came from
    thread_id: str
    body: str
    attachments: tuple[Attachment, ...] = field(default=())
    html_only: bool = False
    defects: int = 0  # problems the parser found and worked around
    envelope: Envelope = field(default=Envelope())  # who it is between, what it answers
    # False when the bytes parsed stop inside the headers: the body was never reached, so
    # an empty body says nothing (a snippet of "" is not the whole text).
    body_read: bool = True
    legacy_id: str | None = None  # its stable id before the sender was part of it

    @property
    def snippet(self) -> str:
        return snippet(self.body)


MAX_HEADER_BYTES = 1024 * 1024  # how far a listing reads for the end of a message's headers
_HEADERS_END = re.compile(rb"\r?\n\r?\n")


def message_head(read: Callable[[int], bytes], cap: int) -> tuple[bytes, bool]:
    """The start of a message for its listing, `read(n)` giving its first n bytes: `cap` of
    them, or up to MAX_HEADER_BYTES more when its headers do not end within `cap` (a 64 KB
    `Received:` chain would hide its To:, its Message-ID and its body); with whether that is
    the whole message (`parse_message`'s `whole`)."""
    raw = read(cap)
    if len(raw) >= cap and not _HEADERS_END.search(raw):
        cap += MAX_HEADER_BYTES
        raw = read(cap)
    return raw, len(raw) < cap


def parse_message(raw: bytes, *, fallback_time: dt.datetime, whole: bool = True) -> ParsedMail:
    """Parse `raw` best-effort: a malformed message still yields a ParsedMail. `whole`: `raw`
    is all of the message; when it is not and stops inside the headers, `body_read` is False."""
    try:
        msg = email.message_from_bytes(raw, policy=email.policy.compat32)
    except Exception:  # pragma: no cover - compat32 parsing is total in practice
        msg = Message()
    message_id = normalise_message_id(header_text(msg, "Message-ID"))
    raw_date = header_text(msg, "Date")
    sender = _sender(msg, address_text)
    # The key keeps the reading of the From before encoded names were parsed whole (an
    # encoded "Müller, Jürgen" read as "Müller"): a key that changed would file a task again.
    keyed = _sender(msg, header_text)
    subject = clean_line(header_text(msg, "Subject"), HEADER_CHARS)
    received_at, date_source = _received_at(msg, raw_date, fallback_time)
    stable = message_stable_id(message_id, sender=keyed, date=raw_date, subject=subject)
    body_read = whole or _HEADERS_END.search(raw) is not None
    try:
        # Bytes that stop inside the headers have no body: the parser would take the cut
        # header line for one.
        body, attachments, html_only = _body(msg) if body_read else ("", [], False)
    except Exception:  # a part the library chokes on: keep what the headers gave
        body, attachments, html_only = "", [], False
    return ParsedMail(
        stable_id=stable,
        message_id=message_id,
        sender=sender or "(unknown sender)",
        subject=subject,
        received_at=received_at,
        date_source=date_source,
        thread_id=_thread_id(msg, message_id, stable),
        body=body,
        attachments=tuple(attachments),
        html_only=html_only,
        defects=len(getattr(msg, "defects", []) or []),
        envelope=replace(_envelope(msg), has_attachment=body_read and attached(msg)),
        body_read=body_read,
        legacy_id=legacy_stable_id(message_id, keyed),
    )


def _envelope(msg: Message) -> Envelope:
    try:
        return envelope_of(msg, _envelope_header)
    except Exception:  # a header the library chokes on: the message is still listed
        return Envelope()


MAX_PARTS = 1000  # `attached` looks at no more parts than this (a hostile nest of multiparts)


def attached(msg: Message) -> bool:
    """Whether the parsed message carries a file its sender attached (`delivers_file` on
    each part, the multiparts walked without recursion, a forwarded message not looked into:
    it is one file). Never raises: a part the library chokes on is not a file."""
    stack: list[tuple[Message, str]] = [(msg, "")]
    seen = 0
    while stack and seen < MAX_PARTS:
        part, parent = stack.pop()
        seen += 1
        ctype = _content_type(part)
        try:
            if ctype.startswith("multipart/"):
                children = part.get_payload()
                if isinstance(children, list):
                    stack += [(c, ctype) for c in reversed(children) if isinstance(c, Message)]
                continue
            disposition = (part.get_content_disposition() or "").lower()
        except Exception:
            continue
        named = _filename(part) is not None
        embedded = bool(header_text(part, "Content-ID"))
        if delivers_file(ctype, disposition, named=named, embedded=embedded, parent=parent):
            return True
    return False


def header_text(msg: Message, name: str) -> str:
    """A header's value as text: encoded words decoded, raw 8-bit bytes read as UTF-8 (else
    Windows-1252), folded lines joined. Empty when absent or unreadable."""
    try:
        # The raw stored value: compat32's get() wraps 8-bit text in a Header that renders
        # it as U+FFFD; the raw string keeps the bytes (as surrogates) for us to decode.
        value = next((v for k, v in msg.raw_items() if k.lower() == name.lower()), None)
    except Exception:
        return ""
    if value is None:
        return ""
    if not isinstance(value, str):
        value = str(value)
    value = _undo_surrogates(value)
    try:
        decoded = str(make_header(decode_header(value)))
    except Exception:  # a broken encoded word: keep the raw text
        decoded = value
    return " ".join(_undo_surrogates(decoded).split())


# Headers that hold addresses, whose encoded display names are decoded one by one.
_ADDRESS_HEADERS = frozenset({"from", "sender", "to", "cc", "reply-to"})
_SPECIALS = re.compile(r'[()<>\[\]:;@\\,."]')


def address_text(msg: Message, name: str) -> str:
    """An address header as text, each display name decoded on its own and quoted when it
    needs it: an encoded word may hold a comma (Outlook's `=?utf-8?q?M=C3=BCller=2C_J...?=`
    for "Müller, Jürgen"), which decoded first would split one address in two."""
    text = header_text(msg, name)
    try:
        value = next((v for k, v in msg.raw_items() if k.lower() == name.lower()), None)
    except Exception:
        return text
    if not isinstance(value, str) or "=?" not in value:
        return text
    try:
        pairs = getaddresses([" ".join(_undo_surrogates(value).split())])
    except Exception:
        return text
    parts = []
    for display, address in pairs:
        if not address:
            return text  # not a list of addresses: the plain reading
        try:
            display = str(make_header(decode_header(display))) if "=?" in display else display
        except Exception:  # a broken encoded word: its raw text
            pass
        display = " ".join(_undo_surrogates(display).split())
        if _SPECIALS.search(display):
            display = '"' + display.replace("\\", "\\\\").replace('"', '\\"') + '"'
        parts.append(f"{display} <{address}>" if display else address)
    return ", ".join(parts)


def _envelope_header(msg: Message, name: str) -> str:
    if name.lower() in _ADDRESS_HEADERS:  # a name's terminal escape out whole, as the From's
        return without_escapes(address_text(msg, name))
    return header_text(msg, name)


def without_escapes(text: str) -> str:
    """`text` without terminal escape sequences (whole) and C1 controls."""
    return _ESCAPE.sub("", text) if ("\x1b" in text or _C1.search(text)) else text


def title_text(text: str, *, one_line: bool = True) -> str:
    """A task's title (one line) or notes as the tools keep them: escape sequences and what
    is left of one whose ESC was dropped (`[1m`) out, control and bidi characters out."""
    text = _BIDI.sub("", _CONTROL.sub(" ", _SGR_REMNANT.sub("", without_escapes(text))))
    return " ".join(text.split()) if one_line else text.strip()


def clean_line(text: str, limit: int) -> str:
    """One line of text fit to show: escape sequences, control and bidi characters out, cut
    at `limit`."""
    text = _BIDI.sub("", _CONTROL.sub(" ", without_escapes(text)))
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def snippet(body: str) -> str:
    """The start of a body, whitespace collapsed, cut at a word near SNIPPET_CHARS."""
    text = clean_line(body, 10 * SNIPPET_CHARS)
    if len(text) <= SNIPPET_CHARS:
        return text
    return text[: SNIPPET_CHARS - 3].rsplit(" ", 1)[0] + "..."


def _undo_surrogates(text: str) -> str:
    # compat32 keeps undecodable header bytes as lone surrogates; turn them back into bytes
    # and read those as UTF-8, else Windows-1252 (what "8-bit headers" almost always are).
    if not _SURROGATE.search(text):
        return text
    data = text.encode("utf-8", "surrogateescape")
    return _decode(data, None)


def _decode(data: bytes, charset: str | None) -> str:
    for candidate in (charset, "utf-8", "windows-1252"):
        if not candidate:
            continue
        try:
            return data.decode(_charset_alias(candidate))
        except (LookupError, UnicodeDecodeError):
            continue
    return data.decode("latin-1")  # total: every byte is a character


def _charset_alias(charset: str) -> str:
    name = charset.strip().strip('"').lower()
    # Mail says iso-8859-1 and us-ascii when it means Windows-1252 more often than not.
    if name in ("iso-8859-1", "latin1", "latin-1", "us-ascii", "ascii", "iso8859-1"):
        return "windows-1252"
    if name in ("utf8", "unicode-1-1-utf-8"):
        return "utf-8"
    return name


def _sender(msg: Message, header: Callable[[Message, str], str]) -> str:
    raw = header(msg, "From") or header(msg, "Sender")
    if not raw:
        return ""
    try:
        pairs = getaddresses([raw])
        name, addr = pairs[0] if pairs else parseaddr(raw)
    except Exception:
        return clean_line(raw, HEADER_CHARS)
    if name and addr:
        return clean_line(f"{name} <{addr}>", HEADER_CHARS)
    return clean_line(addr or name or raw, HEADER_CHARS)


_YEAR = re.compile(r"\b\d{1,2}\s+[A-Za-z]{3,9}\s+(\d+)\b")


def parse_date(raw: str) -> dt.datetime | None:
    """A `Date:`-style value as an aware datetime, or None when it is garbage.

    The standard parser reads any year below 100 as 19xx or 20xx, which is right for the
    two-digit years of old mail (`04 Nov 26`) and wrong for `0000`, `026` or `7`: a year of
    one, three or four digits below 1000 is no date, never 2000-01-01."""
    if not raw:
        return None
    year = _YEAR.search(raw)
    if year is not None and len(year.group(1)) != 2 and int(year.group(1)) < 1000:
        return None
    try:
        value = parsedate_to_datetime(raw)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if value is None:
        return None
    if value.tzinfo is None:  # "-0000": the zone is unknown; UTC is the RFC's reading
        value = value.replace(tzinfo=dt.UTC)
    return value


def _received_at(msg: Message, raw_date: str, fallback: dt.datetime) -> tuple[dt.datetime, str]:
    latest_ok = fallback + _FUTURE_SLACK

    def sane(value: dt.datetime | None) -> bool:
        return value is not None and _EARLIEST <= value <= latest_ok

    value = parse_date(raw_date)
    if sane(value):
        assert value is not None
        return value, "date"
    try:
        received = msg.get_all("Received") or []
    except Exception:
        received = []
    for line in received:
        _, sep, when = str(line).rpartition(";")
        candidate = parse_date(" ".join(when.split())) if sep else None
        if sane(candidate):
            assert candidate is not None
            return candidate, "received"
    return fallback, "fallback"


def _thread_id(msg: Message, own: str | None, stable: str) -> str:
    refs = re.findall(r"<[^<>]+>", header_text(msg, "References"))
    root = normalise_message_id(refs[0]) if refs else None
    if root is None:
        root = normalise_message_id(header_text(msg, "In-Reply-To"))
    if root is None:
        root = own
    return short_hash("mid:" + root) if root else stable


# --- the body --------------------------------------------------------------------------------


def _body(msg: Message) -> tuple[str, list[Attachment], bool]:
    attachments: list[Attachment] = []
    plain: list[str] = []
    html: list[str] = []
    _walk(msg, plain, html, attachments)
    if plain:
        return "\n\n".join(plain).strip(), attachments, False
    if html:
        return "\n\n".join(html_to_text(h) for h in html).strip(), attachments, True
    return "", attachments, False


def _walk(part: Message, plain: list[str], html: list[str], attachments: list[Attachment]) -> None:
    ctype = _content_type(part)
    if _is_attachment(part):  # a forwarded message sent as an attachment stays one
        attachments.append(_attachment(part, ctype))
        return
    if part.is_multipart():
        children = part.get_payload()
        if not isinstance(children, list):
            return
        if ctype == "multipart/alternative":
            # One rendering of the same text: the plain one if there is one, else the HTML.
            best = _best_alternative(children)
            for child in children:
                if isinstance(child, Message) and (child is best or _is_attachment(child)):
                    _walk(child, plain, html, attachments)
            return
        for child in children:
            if isinstance(child, Message):
                _walk(child, plain, html, attachments)
        return
    if ctype == "text/plain":
        plain.append(_text(part))
    elif ctype == "text/html":
        html.append(_text(part))
    else:
        attachments.append(_attachment(part, ctype))


def _best_alternative(children: list[Any]) -> Message | None:
    parts = [c for c in children if isinstance(c, Message) and not _is_attachment(c)]
    for wanted in ("text/plain", "multipart/related", "multipart/mixed", "text/html"):
        for child in parts:
            if _content_type(child) == wanted:
                if wanted.startswith("multipart/") and not _has_type(child, "text/plain"):
                    continue
                return child
    return parts[-1] if parts else None


def _has_type(part: Message, ctype: str) -> bool:
    return any(_content_type(p) == ctype for p in part.walk())


def _content_type(part: Message) -> str:
    try:
        return part.get_content_type().lower()
    except Exception:
        return "application/octet-stream"


def _is_attachment(part: Message) -> bool:
    try:
        disposition = (part.get_content_disposition() or "").lower()
    except Exception:
        disposition = ""
    if disposition == "attachment":
        return True
    if part.is_multipart():
        return False
    return (
        disposition == "inline"
        and _filename(part) is not None
        and not _content_type(part).startswith("text/")
    )


def _filename(part: Message) -> str | None:
    try:
        name = part.get_filename()
    except Exception:
        name = None
    if not name:
        try:
            name = part.get_param("name")  # type: ignore[assignment]
        except Exception:
            name = None
        if isinstance(name, tuple):  # RFC 2231 (charset, language, value)
            name = email.utils.collapse_rfc2231_value(name)
    if not name:
        return None
    name = _undo_surrogates(str(name))
    try:
        name = str(make_header(decode_header(name)))
    except Exception:
        pass
    return clean_line(name, 200) or None


def _payload_bytes(part: Message) -> bytes:
    try:
        data = part.get_payload(decode=True)
    except Exception:
        data = None
    if isinstance(data, bytes):
        return data
    raw = part.get_payload()
    if isinstance(raw, str):
        return raw.encode("utf-8", "surrogateescape")
    if isinstance(raw, list):  # message/rfc822 and friends
        return b"".join(p.as_bytes() for p in raw if isinstance(p, Message))
    return b""


def _attachment(part: Message, ctype: str) -> Attachment:
    name = _filename(part)
    if name is None and ctype == "message/rfc822":
        inner = part.get_payload()
        if isinstance(inner, list) and inner and isinstance(inner[0], Message):
            name = (header_text(inner[0], "Subject") or "forwarded message") + ".eml"
    return Attachment(name or "(unnamed)", ctype, len(_payload_bytes(part)))


def _text(part: Message) -> str:
    data = _payload_bytes(part)
    try:
        charset = part.get_content_charset()
    except Exception:
        charset = None
    text = without_escapes(_decode(data, charset))
    return _CONTROL.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))


# --- HTML to text ------------------------------------------------------------------------------

_BLOCK = {
    "p", "div", "br", "tr", "table", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6",
    "blockquote", "pre", "hr", "section", "article", "header", "footer", "li", "dd", "dt",
}  # fmt: skip
_SKIP = {"script", "style", "head", "title", "noscript", "template", "svg"}


class _TextOfHtml(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.skipping = 0
        self.href: str | None = None
        self.link_text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIP:
            self.skipping += 1
        elif tag in _BLOCK:
            self.out.append("\n")
            if tag == "li":
                self.out.append("- ")
        elif tag == "a":
            self.href = dict(attrs).get("href")
            self.link_text = []
        elif tag in ("td", "th"):
            self.out.append(" ")
        elif tag == "img":
            alt = dict(attrs).get("alt")
            if alt:
                self.out.append(f"[{alt}]")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("br", "hr"):
            self.out.append("\n")
        elif tag == "img":
            self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP:
            self.skipping = max(0, self.skipping - 1)
        elif tag in _BLOCK:
            self.out.append("\n")
        elif tag == "a" and self.href is not None:
            text = "".join(self.link_text).strip()
            href = self.href
            self.href = None
            if href.startswith(("http://", "https://")) and href != text:
                self.out.append(f" ({href})")

    def handle_data(self, data: str) -> None:
        if self.skipping:
            return
        self.out.append(data)
        if self.href is not None:
            self.link_text.append(data)


def html_to_text(html: str) -> str:
    """Readable text from HTML: scripts and styles dropped, blocks on their own lines, list
    items as '- ', a link's address after its text."""
    parser = _TextOfHtml()
    try:
        parser.feed(html)
        parser.close()
    except Exception:  # html.parser is lenient; this is only a last resort
        return re.sub(r"<[^>]*>", " ", html)
    lines = (
        " ".join(line.replace("\xa0", " ").split()) for line in "".join(parser.out).split("\n")
    )
    return "\n".join(line for line in lines if line)
