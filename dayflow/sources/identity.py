"""One id per real thing: the item ids the model sees and the task keys derived from them.

An item's id is `<source name>:<stable id>`, so two sources can never shadow each other:

- mail: a short hash of the normalised Message-ID and the sender's address
  (`message_stable_id`); a message without one hashes its From, Date and Subject instead;
- events: a short hash of UID plus RECURRENCE-ID (`item_id(source, f"{uid}\n{recurrence}")`),
  so each moved or recurring occurrence is its own item;
- the bundled sample keeps its readable ids (`sample:m12`).

A task's idempotency key comes from the stable id *without* the source name (`mail:<hash>`),
so the same message read over IMAP today and from a Maildir tomorrow is still
one task. A message's key before its sender was part of it (the Message-ID alone) is its
`legacy_stable_id`: a task filed under it before the change is found again, not filed twice
(`mail.with_legacy_keys`). The sample's keys live in their own namespace (`sample:m12`), so a
user's real message `m12` can never collide with what the quick start filed.
"""

from __future__ import annotations

import hashlib
import re

SAMPLE_SOURCE = "sample"  # the bundled inbox and calendar; its keys start with "sample:"
HASH_CHARS = 12
_ANGLE = re.compile(r"<([^<>]*)>")


def short_hash(text: str) -> str:
    """A stable 12-hex-digit digest of `text`."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:HASH_CHARS]


def normalise_message_id(raw: str | None) -> str | None:
    """`<Foo@Example.ORG>` -> `Foo@example.org` (whitespace and angle brackets dropped, the
    domain lower-cased); None when there is no usable id."""
    if not raw:
        return None
    found = _ANGLE.search(raw)
    value = (found.group(1) if found else raw).strip()
    value = "".join(value.split())
    if not value:
        return None
    local, at, domain = value.rpartition("@")
    return f"{local}@{domain.lower()}" if at and local else value


# `<left@right>` in printable ASCII, no space, no angle bracket inside: the form a raw id
# must have to be written back into a header as it came (never a CR or LF).
_RAW_ID = re.compile(r"<[!-;=?-~]{1,250}@[!-;=?-~]{1,250}>")


def raw_message_id(raw: str | None) -> str | None:
    """`raw`'s Message-ID as it was written, angle brackets and case kept (`<Foo@Example.ORG>`),
    when the header holds one `<left@right>` of printable ASCII (surrounding folding
    whitespace aside); else None, and the normalised id is what is used."""
    value = (raw or "").strip()
    return value if _RAW_ID.fullmatch(value) else None


def message_stable_id(
    message_id: str | None, *, sender: str = "", date: str = "", subject: str = ""
) -> str:
    """The stable part of a message's item id and key: its Message-ID with its sender's
    address (anyone can send a Message-ID they have seen: the same id from another sender is
    another message, never merged into the known one, issue 32.23; the same message in INBOX
    and in Sent, or in two copies of a mailbox, has one sender and stays one). A message
    without a Message-ID is its From, Date and Subject."""
    normal = normalise_message_id(message_id)
    if normal is not None:
        address = sender_address(sender)
        return short_hash("mid:" + normal + (f"\nfrom:{address}" if address else ""))
    basis = "\n".join(" ".join(part.split()) for part in (sender, date, subject))
    return short_hash("hdr:" + basis)


def legacy_stable_id(message_id: str | None, sender: str = "") -> str | None:
    """The stable id the message had before it carried its sender (the Message-ID alone), when
    that is not its stable id now: the key a task filed before then is under
    (`mail.with_legacy_keys` files the message under it again); None without a Message-ID
    or a sender's address."""
    normal = normalise_message_id(message_id)
    if normal is None or not sender_address(sender):
        return None
    return short_hash("mid:" + normal)


def sender_address(sender: str) -> str:
    """The address of a From value ("Ann <Ann@X.org>" -> "ann@x.org"), lower-cased: the same
    sender whatever display name a copy carries. It stays parseaddr's reading (an unquoted
    `Doe, Jane <j@x>` gives "doe", where `senders.sender_address` gives j@x): a stable id made
    of it is a task's key, and a key that changed would file that task a second time."""
    from email.utils import parseaddr

    address = parseaddr(sender)[1] if sender else ""
    return "".join(address.split()).lower()


def json_message_stable_id(message: dict[str, object]) -> str:
    """The stable id of a message from a JSON file: its `message_id` when it has one, else its
    sender, time, subject and the file's own id (unique in the file), so two messages with the
    same headers in one file stay two, and a file reusing another's ids shares no key."""
    mid = message.get("message_id")
    if isinstance(mid, str) and normalise_message_id(mid):
        return message_stable_id(mid, sender=str(message.get("from", "")))
    parts = [str(message.get(k, "")) for k in ("from", "received_at", "subject", "id")]
    return short_hash("json:" + "\n".join(parts))


def item_id(source: str, stable: str) -> str:
    """The id of an item of `source` whose identity is `stable` (12 hex digits of SHA-256)."""
    return f"{source}:{hashlib.sha256(stable.encode('utf-8')).hexdigest()[:12]}"


def prefixed(source: str, stable_id: str) -> str:
    """`<source>:<stable id>` for an id that is already stable and short (a message's hash, a
    JSON file's own id)."""
    return f"{source}:{stable_id}"


def mail_key(stable: str, *, sample: bool = False) -> str:
    """The task idempotency key of a message (the sample's in its own namespace)."""
    return f"{SAMPLE_SOURCE}:{stable}" if sample else f"mail:{stable}"
