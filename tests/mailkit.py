"""Building real mailboxes for tests and benchmarks: Maildir, mbox and .eml folders, and JSON
inbox files."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from email.utils import format_datetime
from pathlib import Path
from typing import Any

BASE = dt.datetime(2026, 11, 4, 8, 0, tzinfo=dt.UTC)


def message(
    n: int,
    *,
    subject: str | None = None,
    sender: str | None = None,
    body: str | None = None,
    when: dt.datetime | None = None,
    message_id: str | None = "auto",
    extra: str = "",
) -> bytes:
    """A plain RFC 5322 message, number `n` (its Message-ID and times derive from n)."""
    when = when or BASE + dt.timedelta(minutes=n)
    mid = f"<msg{n}@example.org>" if message_id == "auto" else message_id
    lines = [
        f"From: {sender or f'Sender {n} <s{n}@example.org>'}",
        "To: me@example.org",
        f"Subject: {subject or f'Message number {n}'}",
        f"Date: {format_datetime(when)}",
    ]
    if mid:
        lines.append(f"Message-ID: {mid}")
    if extra:
        lines.append(extra.rstrip("\n"))
    lines += ["MIME-Version: 1.0", "Content-Type: text/plain; charset=utf-8", ""]
    lines.append(body or f"Hi, could you send me report {n} by Friday?")
    return ("\r\n".join(lines) + "\r\n").encode()


def write_maildir(
    root: Path,
    count: int,
    *,
    seen: set[int] | None = None,
    start: dt.datetime = BASE,
    body_bytes: int = 0,
) -> Path:
    """A Maildir of `count` messages delivered one minute apart (0 oldest); those in `seen` sit
    in cur/ with the S flag, the rest in new/."""
    for sub in ("cur", "new", "tmp"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    seen = seen or set()
    for n in range(count):
        when = start + dt.timedelta(minutes=n)
        filler = ("lorem ipsum dolor sit amet " * (body_bytes // 27 + 1))[:body_bytes]
        raw = message(n, when=when, body=f"Message {n}. {filler}" if body_bytes else None)
        base = f"{int(when.timestamp())}.M{n:06d}P1Q{n}.host"
        if n in seen:
            (root / "cur" / f"{base}:2,S").write_bytes(raw)
        else:
            (root / "new" / base).write_bytes(raw)
    return root


def write_mbox(path: Path, messages: list[bytes], *, read: set[int] | None = None) -> Path:
    """An mbox file; messages whose index is in `read` carry `Status: RO`. Each separator line
    carries the message's Date: (as a delivery agent writes the arrival time)."""
    read = read or set()
    out = []
    for i, raw in enumerate(messages):
        text = raw.replace(b"\r\n", b"\n")
        head, _, body = text.partition(b"\n\n")
        if i in read:
            head += b"\nStatus: RO"
        body = b"\n".join(b">" + ln if ln.startswith(b"From ") else ln for ln in body.split(b"\n"))
        out.append(b"From sender@example.org " + _asctime(head) + b"\n" + head + b"\n\n" + body)
    path.write_bytes(b"\n".join(out) + b"\n")
    return path


def _asctime(head: bytes) -> bytes:
    """The Date: of a message's header block in a separator line's form (asctime, UTC)."""
    from email.utils import parsedate_to_datetime

    for line in head.split(b"\n"):
        if line.lower().startswith(b"date:"):
            when = parsedate_to_datetime(line[5:].strip().decode()).astimezone(dt.UTC)
            return f"{when:%a %b} {when.day:2d} {when:%H:%M:%S %Y}".encode()
    return b"Wed Nov  4 08:00:00 2026"


def thread_mail(
    mid: str,
    *,
    sender: str = "Bob Stone <bob@example.com>",
    to: str = "Alex Doe <alex@example.org>",
    cc: str = "",
    subject: str = "Budget",
    body: str = "Could you send the figures?",
    when: dt.datetime,
    reply_to: str = "",
    refs: str = "",
    extra: str = "",
) -> bytes:
    """A message of a conversation: its own Message-ID (none when `mid` is empty), To, Cc,
    and what it answers (In-Reply-To `reply_to`, References `refs`)."""
    lines = [
        f"From: {sender}",
        f"To: {to}",
        f"Subject: {subject}",
        f"Date: {format_datetime(when)}",
    ]
    lines += [f"Message-ID: <{mid}>"] if mid else []
    lines += [f"Cc: {cc}"] if cc else []
    lines += [f"In-Reply-To: <{reply_to}>"] if reply_to else []
    lines += [f"References: {refs}"] if refs else []
    lines += [extra] if extra else []
    lines += ["Content-Type: text/plain; charset=utf-8", "", body]
    return ("\r\n".join(lines) + "\r\n").encode()


def deliver(root: Path, raw: bytes, when: dt.datetime, *, seen: bool = True) -> Path:
    """`raw` delivered into the Maildir at `root` (made if need be) at `when`: in cur/ with
    the S flag when `seen`, else in new/."""
    for sub in ("cur", "new", "tmp"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    stamp = int(when.timestamp())
    unique = hashlib.sha256(raw).hexdigest()[:10]  # a message's own: names never collide
    base = f"{stamp}.M{when.microsecond:06d}P1Q{unique}.host"
    path = root / "cur" / f"{base}:2,S" if seen else root / "new" / base
    path.write_bytes(raw)
    return path


def json_message(
    mid: str, sender: str, subject: str, received_at: str, **fields: Any
) -> dict[str, Any]:
    """One message of a JSON inbox file (`DAYFLOW_INBOX`), its other fields as given."""
    return {"id": mid, "from": sender, "subject": subject, "received_at": received_at, **fields}


def write_json_inbox(path: Path, *messages: dict[str, Any]) -> Path:
    """A JSON inbox file at `path` holding `messages`, in that order."""
    path.write_text(json.dumps({"messages": list(messages)}))
    return path
