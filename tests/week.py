"""A realistic week (tests/week/): Alex's home Maildir with INBOX and Sent, the work account's
INBOX and Sent (work/, for an IMAP server), and the work calendar (ICS) whose attendees wrote
some of that mail. `build` lays it out (the work account on the test IMAP server, its sent
folder flagged `\\Sent`) and writes the config; `snapshot` is what read-only must leave as is.

The story, for Wednesday 18 November 2026 in Europe/Berlin (me = alex@example.org and
a.doe@work.example):
- Sam (partner) asked on Friday for edits to the one-pager, to a.doe: owed. Alex had sent him the
  contract draft the day before. Sam organizes the 10:00 Partnership review.
- Dana asked on Monday to approve her expenses; Alex answered from work Sent: neither list.
  Dana organizes the standup and has a 1:1 with Alex.
- Alex asked Priya on Monday for venue options; only her out-of-office answered: waited on
  (two working days). Priya is at the standup and the design review.
- Ben asked Dana, with Alex and Priya in Cc, to add agenda items: not owed (Cc only).
- Marco asked on Tuesday evening about dinner, to the home address: owed. Lunch with Marco.
- Alex asked Lee for photos (home Sent) and Lee answered: neither list.
- Alex's own question to Jordan sits in the home INBOX (mail from me found in an inbox is sent
  mail): waited on, six working days.
- A list mail, a shop newsletter, a help-desk noreply and a note to self ask things: none count.
- The calendar: a travel clash (Partner office at 11:00, then Room 2 at 11:00), a 15-minute hop
  (the standup in Room 2, then the Partner office), an overlap (design review and dentist);
  a cancelled, a declined and a free event that clash with nothing; a Zoom call right after
  the dentist (a link is not a place).
"""

from __future__ import annotations

import datetime as dt
import email
import email.utils
import hashlib
from pathlib import Path

from tests.imapserver import PASSWORD, USER, ImapServer
from tests.mailkit import deliver

WEEK = Path(__file__).parent / "week"
DAY = "2026-11-18"
TZ = "Europe/Berlin"
SENT_FOLDER = "Gesendete Objekte"  # not a name the fallback knows: found by its \\Sent flag


def when(raw: bytes) -> dt.datetime:
    """A message's Date."""
    return email.utils.parsedate_to_datetime(email.message_from_bytes(raw)["Date"])


def _mails(folder: Path) -> list[bytes]:
    return [p.read_bytes() for p in sorted(folder.glob("*.eml"))]


def build(root: Path, imap: ImapServer | None = None) -> Path:
    """The week's home Maildir (INBOX and Sent) under `root`, the work account on `imap` (None:
    the home half only) and the config file (with the calendar); the config file's path."""
    for folder in ("INBOX", "Sent"):
        for raw in _mails(WEEK / "home" / folder):
            deliver(root / "Mail" / folder, raw, when(raw))
    text = (
        'me = ["alex@example.org", "a.doe@work.example"]\n\n'
        f'[[inbox]]\nname = "home"\nkind = "maildir"\npath = "{root / "Mail" / "INBOX"}"\n'
        f'sent = "{root / "Mail" / "Sent"}"\n\n'
        f'[[calendar]]\nname = "office"\nkind = "ics"\npath = "{WEEK / "calendar.ics"}"\n'
    )
    if imap is not None:
        text += _work(root, imap)
    config = root / "config.toml"
    config.write_text(text)
    return config


def _work(root: Path, imap: ImapServer) -> str:
    """The work mail on the server, its sent folder flagged \\Sent; its [[inbox]] entry."""
    imap.plain.special_use[SENT_FOLDER] = "\\Sent"
    for raw in _mails(WEEK / "work" / "INBOX"):
        imap.append(raw, seen=False, when=when(raw).timestamp())
    for raw in _mails(WEEK / "work" / "Sent"):
        imap.append(raw, seen=True, when=when(raw).timestamp(), folder=SENT_FOLDER)
    password = root / "imap-password"
    password.write_text(PASSWORD + "\n")
    return (
        f'\n[[inbox]]\nname = "work"\nkind = "imap"\nhost = "127.0.0.1"\n'
        f'port = {imap.plain.port}\nuser = "{USER}"\nsecurity = "plain"\n'
        f'password_command = "cat {password}"\ntimeout = 10\n'
    )


def snapshot(root: Path, imap: ImapServer | None = None) -> dict[str, object]:
    """Every mailbox file's name and bytes, the calendar's bytes, and the server's flags in
    both of its folders."""
    paths = [*sorted((root / "Mail").rglob("*")), WEEK / "calendar.ics"]
    files = {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in paths if p.is_file()}
    if imap is None:
        return {"files": files}
    return {"files": files, "inbox": imap.flags(), "sent": _sent_flags(imap)}


def _sent_flags(imap: ImapServer) -> list[object]:
    conn = imap.direct()
    try:
        conn.select(f'"{SENT_FOLDER}"', readonly=True)
        _, data = conn.uid("FETCH", "1:*", "(UID FLAGS)")
        return list(data)
    finally:
        conn.logout()
