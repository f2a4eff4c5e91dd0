"""The sent folder of an IMAP account against a real server (pymap on 127.0.0.1): found by its
`\\Sent` flag (RFC 6154, added to LIST by the test's proxy: pymap has none), else by name, else
named in one line; read only with EXAMINE and BODY.PEEK, no flag changed in any folder."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dayflow.followups import Feed
from dayflow.sources.imap import ImapSource
from dayflow.sources.imap_sent import ImapSentSource, _parse
from dayflow.sources.me import parse_me
from tests.harness import invoke
from tests.imapserver import ImapServer, imap_server
from tests.mailkit import thread_mail
from tests.test_imap import ENV, READ_ONLY, spec
from tests.test_sent_mail import ALEX, BOB, model

pytestmark = pytest.mark.slow
DAY = dt.date(2026, 11, 18)
ME = parse_me(["alex@example.org"])


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ImapServer]:
    with imap_server(tmp_path) as s:
        yield s


@pytest.fixture
def feeds() -> Iterator[list[Feed]]:
    """The feeds a test makes, their connections closed after it."""
    made: list[Feed] = []
    yield made
    for feed in made:
        for source in feed.inbox:
            source.close()
        feed.close()


def at(day: int, hour: int = 10) -> dt.datetime:
    return dt.datetime(2026, 11, day, hour, 0, tzinfo=dt.UTC)


def _mail(server: ImapServer, sent_folder: str, *, decoy: bool = True) -> None:
    """Bob asks on Friday; the reply is in `sent_folder`; a decoy `Sent` holds an old note."""
    ask = thread_mail("bob1@x", subject="Budget", when=at(13))
    server.append(ask, seen=True, when=at(13).timestamp())
    reply = thread_mail("alex1@y", sender=ALEX, to=BOB, subject="Re: Budget", body="Attached.",
                        when=at(16), reply_to="bob1@x")  # fmt: skip
    server.append(reply, seen=True, when=at(16).timestamp(), folder=sent_folder)
    if decoy:
        note = thread_mail("old@y", sender=ALEX, to=BOB, subject="Lunch?", when=at(2))
        server.append(note, seen=True, when=at(2).timestamp(), folder="Sent")


def _feed(server: ImapServer, feeds: list[Feed], **extra: Any) -> Feed:
    account = spec(server.plain.port, **extra)
    inbox = ImapSource(account, env=ENV)
    sent = ImapSentSource(account, inbox, env=ENV)  # on the inbox's connection, as a brief reads
    feeds.append(Feed([inbox], [sent], me=ME, brief_date=DAY, tz=dt.UTC))
    return feeds[-1]


def _verbs(server: ImapServer) -> set[str]:
    return {
        " ".join(c.split()[:2]) if c.startswith("UID") else c.split()[0]
        for c in server.plain.commands
    }


def test_the_folder_flagged_sent_is_read_and_nothing_changes(
    server: ImapServer, feeds: list[Feed]
) -> None:
    _mail(server, "Outbox")
    server.plain.special_use = {"Outbox": "\\Sent"}
    before = {f: server.flags(f) for f in ("INBOX", "Outbox", "Sent")}
    view = _feed(server, feeds)()
    assert view.owed == () and view.failures == ()  # the reply in Outbox settles it
    assert view.threads[0].sources == ("work", "work/sent")
    assert {f: server.flags(f) for f in before} == before
    assert _verbs(server) <= READ_ONLY | {"LIST"}, _verbs(server)
    assert all("BODY[" not in c for c in server.plain.lines("FETCH"))  # always BODY.PEEK
    examined = {c.split(" ", 1)[1].strip('"') for c in server.plain.lines("EXAMINE")}
    assert examined == {"INBOX", "Outbox"}  # never the decoy


def test_without_a_flag_the_usual_name_is_used(server: ImapServer, feeds: list[Feed]) -> None:
    _mail(server, "Sent Items", decoy=False)  # `Sent` comes first when there is one
    view = _feed(server, feeds)()
    assert view.owed == () and view.failures == ()


def test_a_named_sent_folder_wins_over_the_flag(server: ImapServer, feeds: list[Feed]) -> None:
    _mail(server, "Archive")
    server.plain.special_use = {"Sent": "\\Sent"}
    view = _feed(server, feeds, sent="Archive")()
    assert view.owed == ()
    assert not server.plain.lines("LIST")  # the name was given: nothing looked up


def test_no_sent_folder_is_named_in_one_line_and_the_inbox_still_counts(
    server: ImapServer, tmp_path: Path, feeds: list[Feed]
) -> None:
    server.append(thread_mail("bob1@x", subject="Budget", when=at(13)), when=at(13).timestamp())
    view = _feed(server, feeds)()
    assert [i.counterpart_address for i in view.owed] == ["bob@example.com"]
    ((name, why),) = view.failures
    assert name == "work/sent" and "no sent folder found" in why
    assert 'set sent = "<folder>" in [[inbox]] work' in why
    env = _config(tmp_path, server.plain.port)
    check = invoke(tmp_path / "d.db", model, "sources", "check", "--json", env=env)
    assert check.code == 0, check.out  # none was asked for: a warning (issue 31.5)
    rows = {r["name"]: r for r in json.loads(check.out)["sources"]}
    assert rows["work"]["ok"] and rows["work"]["messages"] == 1
    assert rows["work/sent"]["ok"] and "no sent folder found" in rows["work/sent"]["warning"]
    text = invoke(tmp_path / "d.db", model, "sources", "check", env=env)
    assert text.code == 0
    [line] = [x for x in text.out.splitlines() if x.startswith("work/sent")]
    assert "warning: work/sent: no sent folder found" in line and "sent = false" in line


def test_sent_false_reads_no_sent_folder_and_a_named_missing_one_fails_the_check(
    server: ImapServer, tmp_path: Path
) -> None:
    server.append(thread_mail("bob1@x", subject="Budget", when=at(13)), when=at(13).timestamp())
    env = _config(tmp_path, server.plain.port, "sent = false\n")
    listed = invoke(tmp_path / "d.db", model, "sources", "--json", env=env)
    assert json.loads(listed.out)["sources"][0]["sent"] is False
    check = invoke(tmp_path / "d.db", model, "sources", "check", "--json", env=env)
    assert check.code == 0, check.out
    assert [r["name"] for r in json.loads(check.out)["sources"]] == ["work"]
    assert not server.plain.lines("LIST")  # not even looked for
    brief = invoke(tmp_path / "d.db", model, "brief", "--json", env=env)
    assert brief.code == 0, brief.err
    assert not server.plain.lines("LIST")
    env = _config(tmp_path, server.plain.port, 'sent = "Nope"\n')
    check = invoke(tmp_path / "d.db", model, "sources", "check", "--json", env=env)
    assert check.code == 4  # a folder the config names must be there
    rows = {r["name"]: r for r in json.loads(check.out)["sources"]}
    assert not rows["work/sent"]["ok"] and "Nope" in rows["work/sent"]["error"]
    env = _config(tmp_path, server.plain.port, "sent = true\n")
    bad = invoke(tmp_path / "d.db", model, "sources", "check", env=env)
    assert bad.code == 4 and "'sent' must be a folder name or path, or false for none" in bad.err


def _config(tmp_path: Path, port: int, extra: str = "") -> dict[str, str]:
    path = tmp_path / "config.toml"
    path.write_text(
        f'me = ["alex@example.org"]\n[[inbox]]\nname = "work"\nkind = "imap"\n'
        f'host = "127.0.0.1"\nport = {port}\nsecurity = "plain"\n'
        'user = "demouser"\npassword_env = "IMAP_PW"\n' + extra
    )
    return {"DAYFLOW_CONFIG": str(path), **ENV}


def _examined(server: ImapServer) -> list[str]:
    return [c.split(" ", 1)[1].strip('"') for c in server.plain.lines("EXAMINE")]


def test_the_inbox_and_its_sent_folder_share_one_login_and_keep_their_folders(
    server: ImapServer, feeds: list[Feed]
) -> None:
    """The sent folder is read over the inbox's connection, and an INBOX read after it
    examines INBOX again: the same UID (1 in both folders) is INBOX's message, not the
    reply in Sent Items."""
    _mail(server, "Sent Items", decoy=False)
    before = {f: server.flags(f) for f in ("INBOX", "Sent Items")}
    feed = _feed(server, feeds)
    (inbox,), (sent,) = feed.inbox, feed.sent
    view = feed()  # INBOX, then Sent Items
    assert view.owed == () and view.failures == ()
    assert view.threads[0].sources == ("work", "work/sent")
    assert _examined(server)[-1] == "Sent Items"
    listed = inbox.page(since=None, after=None, limit=10, unread_only=False)
    assert [m.subject for m in listed] == ["Budget"]
    assert _examined(server)[-1] == "INBOX"
    (reply,) = sent.page(since=None, after=None, limit=10, unread_only=False)
    assert reply.subject == "Re: Budget"
    uid = json.loads(listed[0].position)["INBOX"]
    assert json.loads(reply.position) == {"Sent Items": uid}  # one UID, two messages
    read = inbox.read(listed[0].stable_id)  # Sent Items was examined last
    assert read is not None and read.subject == "Budget"
    assert _examined(server) == ["INBOX", "Sent Items", "INBOX", "Sent Items", "INBOX"]
    assert server.plain.count("LOGIN") == 1 and server.plain.count("AUTHENTICATE") == 0
    assert _verbs(server) <= READ_ONLY | {"LIST"}, _verbs(server)
    assert all("BODY[" not in c for c in server.plain.lines("FETCH"))
    assert {f: server.flags(f) for f in before} == before


def test_a_sent_folder_that_is_not_there_leaves_the_inbox_readable(
    server: ImapServer, feeds: list[Feed]
) -> None:
    """A refused EXAMINE closes the folder open before it: the inbox's next read examines
    INBOX again on the shared connection instead of searching no folder."""
    _mail(server, "Sent Items", decoy=False)
    feed = _feed(server, feeds, sent="Nope")
    view = feed()
    ((name, why),) = view.failures
    assert name == "work/sent" and "EXAMINE Nope failed" in why
    assert [i.counterpart_address for i in view.owed] == ["bob@example.com"]
    listed = feed.inbox[0].page(since=None, after=None, limit=10, unread_only=False)
    assert [m.subject for m in listed] == ["Budget"]
    assert _examined(server) == ["INBOX", "Nope", "INBOX"]
    assert server.plain.count("LOGIN") == 1


def test_a_brief_logs_in_once_for_the_inbox_and_its_sent_folder(
    server: ImapServer, tmp_path: Path
) -> None:
    _mail(server, "Sent Items", decoy=False)
    before = {f: server.flags(f) for f in ("INBOX", "Sent Items")}
    env = _config(tmp_path, server.plain.port)
    args = ("brief", "--date", DAY.isoformat(), "--since", "2026-11-09")
    got = invoke(tmp_path / "d.db", model, *args, env=env, clock="2026-11-18T07:30:00+00:00")
    assert got.code == 0, got.err
    # Bob's question is answered by the reply in Sent Items: both folders were read.
    assert "## You owe replies\n- Nobody is waiting on a reply from you.\n" in got.out
    assert "Sent Items" in _examined(server) and "INBOX" in _examined(server)
    assert server.plain.count("LOGIN") == 1 and server.plain.count("AUTHENTICATE") == 0
    assert server.plain.count("LOGOUT") == 1
    assert _verbs(server) <= READ_ONLY | {"LIST"}, _verbs(server)
    assert {f: server.flags(f) for f in before} == before


def test_list_answers_are_parsed_quoted_literal_and_in_modified_utf7() -> None:
    assert _parse(b'(\\HasNoChildren \\Sent) "/" "Sent Items"') == (
        b"\\HasNoChildren \\Sent",
        "/",
        "Sent Items",
    )
    assert _parse(b'(\\HasNoChildren) "." INBOX.Sent') == (b"\\HasNoChildren", ".", "INBOX.Sent")
    assert _parse((b'(\\Sent) "/" {9}', b"Gesendet!")) == (b"\\Sent", "/", "Gesendet!")
    assert _parse(b'() "/" "Entw&APw-rfe"') == (b"", "/", "Entwürfe")
    assert _parse(b'(\\Noselect) NIL ""') == (b"\\Noselect", "", "")
    assert _parse(b"garbage") is None and _parse(None) is None
