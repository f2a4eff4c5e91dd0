"""A realistic week (tests/week/): Alex's home Maildir with INBOX and Sent, the work account's
INBOX and Sent (work/, for an IMAP server), and the work calendar (ICS) whose attendees wrote
some of that mail. `build` lays out the home half under a directory and writes the config;
`snapshot` is what read-only must leave unchanged.

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

from tests.mailkit import deliver

WEEK = Path(__file__).parent / "week"
DAY = "2026-11-18"
TZ = "Europe/Berlin"


def when(raw: bytes) -> dt.datetime:
    """A message's Date."""
    return email.utils.parsedate_to_datetime(email.message_from_bytes(raw)["Date"])


def _mails(folder: Path) -> list[bytes]:
    return [p.read_bytes() for p in sorted(folder.glob("*.eml"))]


def build(root: Path) -> Path:
    """The week's home Maildir (INBOX and Sent) under `root` and its config file (with the
    calendar); the config file's path."""
    for folder in ("INBOX", "Sent"):
        for raw in _mails(WEEK / "home" / folder):
            deliver(root / "Mail" / folder, raw, when(raw))
    config = root / "config.toml"
    config.write_text(
        'me = ["alex@example.org", "a.doe@work.example"]\n\n'
        f'[[inbox]]\nname = "home"\nkind = "maildir"\npath = "{root / "Mail" / "INBOX"}"\n'
        f'sent = "{root / "Mail" / "Sent"}"\n\n'
        f'[[calendar]]\nname = "work"\nkind = "ics"\npath = "{WEEK / "calendar.ics"}"\n'
    )
    return config


def snapshot(root: Path) -> dict[str, str]:
    """Every mailbox file's name and bytes, and the calendar's bytes."""
    paths = [*sorted((root / "Mail").rglob("*")), WEEK / "calendar.ics"]
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in paths if p.is_file()}
