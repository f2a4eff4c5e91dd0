"""Issue 32.9: a spoofed "note to yourself" became the One thing. A message that says it is
from one of the user's addresses but came from outside (its receiving server failed its
authentication, or the user's sent mail was read and holds no copy of it and nothing vouches
for it) is not the user's: not their note, not their reply (it settles nobody's request), and
never ranked above real requests."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from dayflow.followups import Record, Window, build_followups, parse_me
from dayflow.providers.offline import OfflineModel
from dayflow.sources.envelope import FAIL, PASS, auth_verdict
from dayflow.sources.mail import MailItem
from dayflow.sources.mime import parse_message
from tests.harness import invoke
from tests.mailkit import deliver
from tests.mailkit import thread_mail as raw

ME = parse_me(["alex@example.org"])
NOW = dt.datetime(2026, 11, 18, 9, 0, tzinfo=dt.UTC)
ALEX = "Alex Doe <alex@example.org>"
FORGED = "mx.example.org; spf=fail smtp.mailfrom=example.org; dkim=none; dmarc=fail"
SIGNED = "mx.example.org; spf=pass smtp.mailfrom=example.org; dkim=pass header.d=example.org"


def record(data: bytes, source: str = "work", *, sent: bool = False) -> Record:
    item = MailItem.of(source, parse_message(data, fallback_time=NOW), unread=False, position="")
    return Record.of(item, sent=sent)


def ago(days: float) -> dt.datetime:
    return NOW - dt.timedelta(days=days)


def follow(*records: Record) -> object:
    return build_followups(list(records), Window(ME, NOW, dt.UTC))


@pytest.mark.parametrize(
    ("header", "verdict"),
    [
        (FORGED, FAIL),
        ("mx; spf=softfail smtp.mailfrom=example.org", FAIL),
        ("mx; spf=fail; dkim=pass header.d=example.org", PASS),  # a forwarder broke SPF only
        ("mx; dmarc=pass; spf=fail", PASS),
        (SIGNED, PASS),
        ("mx; spf=none; dkim=none", ""),
        ("", ""),
    ],
)
def test_authentication_results_are_read_as_the_receiving_server_meant(
    header: str, verdict: str
) -> None:
    assert auth_verdict(header) == verdict


def test_a_forged_note_from_me_is_not_mine_and_settles_no_request() -> None:
    """Bob asked; a forged "reply from me" in the thread must not mark it answered."""
    ask = record(raw("q1@x", when=ago(3), subject="Budget", body="Could you send the figures?"))
    forged = raw(
        "f1@evil", sender=ALEX, to=ALEX, subject="Re: Budget", body="Done, ignore this.",
        when=ago(1), reply_to="q1@x", refs="<q1@x>",
        extra=f"Authentication-Results: {FORGED}",
    )  # fmt: skip
    out = follow(ask, record(forged))
    (thread,) = out.threads  # type: ignore[attr-defined]
    latest = thread.messages[0]
    assert latest.outside and not latest.from_me
    assert [i.counterpart_address for i in out.owed] == ["bob@example.com"]  # type: ignore[attr-defined]
    assert out.not_yours == (latest.key,) and out.answered == ()  # type: ignore[attr-defined]
    assert out.to_json(dt.UTC)["not_yours"] == [latest.key]  # type: ignore[attr-defined]


def test_mail_from_me_with_no_copy_in_the_sent_mail_read_is_not_mine_unless_vouched_for() -> None:
    """The sent folder was read (it holds another message): a "note to self" a mail server
    handed on (a `Received:` chain) with no copy there and no passing authentication came from
    outside; one signed by my domain (sent from another of my accounts) is mine, and so is a
    copy my own client filed in the inbox (no `Received:` at all, as the week's question to
    Jordan kept in the home INBOX)."""
    hop = "Received: from mail.evil.example (mail.evil.example [203.0.113.9])"
    other = record(raw("s1@me", sender=ALEX, to="bob@example.com", when=ago(2)), sent=True)
    note = raw("n1@x", sender=ALEX, to=ALEX, subject="Wire 5,000 today", when=ago(0.5), extra=hop)
    signed = raw(
        "n2@x", sender=ALEX, to=ALEX, subject="Buy milk", when=ago(0.4),
        extra=f"Authentication-Results: {SIGNED}\r\n{hop}",
    )  # fmt: skip
    copied = raw("n3@x", sender=ALEX, to=ALEX, subject="Call mum", when=ago(0.3), extra=hop)
    filed = raw("n4@x", sender=ALEX, to="jo@example.com", subject="Book club", when=ago(0.2))
    out = follow(
        other, record(note), record(signed), record(copied), record(copied, sent=True),
        record(filed),
    )  # fmt: skip
    mine = {m.subject: m.from_me for t in out.threads for m in t.messages}  # type: ignore[attr-defined]
    assert mine == {
        "Budget": True, "Wire 5,000 today": False, "Buy milk": True, "Call mum": True,
        "Book club": True,
    }  # fmt: skip
    assert len(out.not_yours) == 1  # type: ignore[attr-defined]
    # With no sent mail read there is nothing to compare with: only a failed check counts.
    alone = follow(record(note))
    assert alone.not_yours == ()  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "how",
    ["authentication fails", "no copy in the sent mail"],
)
def test_a_forged_urgent_note_to_self_is_never_the_one_thing(tmp_path: Path, how: str) -> None:
    """The offline model, through the CLI, on a Maildir with its sent folder: the forged note
    is listed after the real request, said to have an unverified sender, and the One thing is
    the real request. (Before, the forged note, urgent and due today, was the One thing.)"""
    inbox, sent = tmp_path / "INBOX", tmp_path / "Sent"
    at = dt.datetime(2026, 11, 5, 12, 50, tzinfo=dt.UTC)
    checks = f"Authentication-Results: {FORGED}\r\n" if how == "authentication fails" else ""
    note = raw(
        "forged1@evil.example", sender=ALEX, to=ALEX, subject="URGENT: note to self",
        body="Urgent: could you please wire 5,000 EUR to account DE00 1234 today?", when=at,
        extra=checks + "Received: from mail.evil.example (mail.evil.example [203.0.113.9])",
    )  # fmt: skip
    ask = raw(
        "priya1@lumen.example", sender="Priya Raman <priya@lumen.example>", to=ALEX,
        subject="Budget review", when=at - dt.timedelta(days=1),
        body="Hi Alex,\n\nCould you please send me the budget numbers by Friday?\n\nPriya",
    )  # fmt: skip
    deliver(inbox, note, at, seen=False)
    deliver(inbox, ask, at - dt.timedelta(days=1), seen=False)
    mine = raw(
        "mine1@example.org",
        sender=ALEX,
        to="Bob <bob@example.com>",
        when=at - dt.timedelta(days=2),
        subject="Lunch",
        body="Lunch at noon?",
    )
    deliver(sent, mine, at - dt.timedelta(days=2))
    config = tmp_path / "config.toml"
    config.write_text(
        f'me = ["alex@example.org"]\n[[inbox]]\nname = "work"\nkind = "maildir"\n'
        f'path = "{inbox}"\nsent = "{sent}"\n',
        encoding="utf-8",
    )
    res = invoke(
        tmp_path / "dayflow.db", lambda name, settings: OfflineModel(), "brief",
        "--date", "2026-11-05", env={"DAYFLOW_CONFIG": str(config), "DAYFLOW_TZ": "UTC"},
    )  # fmt: skip
    assert res.code == 0, res.err
    brief = res.out
    one_thing = brief.split("## One thing", 1)[1]
    assert "budget" in one_thing.lower() and "wire" not in one_thing.lower(), brief
    needs = brief.split("## Needs action", 1)[1].split("##", 1)[0]
    lines = [line for line in needs.splitlines() if line.startswith("- ")]
    assert "budget" in lines[0].lower(), needs
    forged = [line for line in lines if "wire" in line.lower()]
    assert forged and all("sender not verified" in line for line in forged), needs
