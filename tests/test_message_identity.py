"""The same Message-ID from another sender is another message (issue 32.23): ids were the
Message-ID alone, so anyone who had seen one (a list archive, a forwarded header) could send a
message the inbox merged into the known one and never listed. The same message in INBOX and
Sent, or in two copies of a mailbox, has one sender and is still one."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from dayflow.sources.identity import message_stable_id
from dayflow.sources.inbox import Inbox
from dayflow.sources.maildir import MaildirSource
from dayflow.sources.mbox import MboxSource
from tests.mailkit import thread_mail, write_maildir, write_mbox
from tests.test_mail_sources import read_inbox

WHEN = dt.datetime(2026, 11, 4, 9, 0, tzinfo=dt.UTC)


def test_a_known_message_id_from_another_sender_is_listed_as_its_own_message(
    tmp_path: Path,
) -> None:
    real = thread_mail(
        "q3@work.example",
        sender="Dana <dana@work.example>",
        subject="Q3 report",
        body="Could you send the Q3 report?",
        when=WHEN,
    )
    forged = thread_mail("q3@work.example", sender="Mallory <m@evil.example>",
                         subject="Invoice", body="Please pay the attached invoice today.",
                         when=WHEN + dt.timedelta(hours=1))  # fmt: skip
    md = write_maildir(tmp_path / "md", 0)
    (md / "new" / "1762246800.M1P1Q1.host").write_bytes(real)
    (md / "new" / "1762250400.M2P1Q1.host").write_bytes(forged)
    inbox = Inbox([MaildirSource("home", md)])
    listed = read_inbox(inbox)["messages"]
    assert sorted(m["subject"] for m in listed) == ["Invoice", "Q3 report"]
    assert len({m["key"] for m in listed}) == 2 and len({m["id"] for m in listed}) == 2
    for message in listed:
        assert inbox.read(message["id"]).subject == message["subject"]


def test_one_message_in_two_copies_is_still_one(tmp_path: Path) -> None:
    """A display name may differ between copies; the address is what makes the sender."""
    raw = thread_mail("lease@x", sender="Rosa Lind <Rosa@Homes.example>", subject="Lease",
                      body="Please sign the lease.", when=WHEN)  # fmt: skip
    renamed = raw.replace(b"From: Rosa Lind <Rosa@Homes.example>", b"From: rosa@homes.example")
    md = write_maildir(tmp_path / "md", 0)
    (md / "new" / "1762246800.M1P1Q1.host").write_bytes(raw)
    box = write_mbox(tmp_path / "box.mbox", [renamed])
    listed = read_inbox(Inbox([MaildirSource("imap", md), MboxSource("export", box)]))
    assert [m["subject"] for m in listed["messages"]] == ["Lease"]
    assert message_stable_id("<lease@x>", sender="Rosa <ROSA@homes.example>") == (
        message_stable_id("<lease@x>", sender="rosa@homes.example")
    )
