"""IMAP against a real server on 127.0.0.1 (pymap): read-only (flags checked at the server),
the page fetched and nothing more (commands counted at the server), TLS, failures as one line,
no secret anywhere, and a kill -9 right after an IMAP read with no second listing on resume."""

from __future__ import annotations

import contextlib
import datetime as dt
import imaplib
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dayflow.errors import SourceError
from dayflow.sources.config import SourceSpec
from dayflow.sources.imap import ImapSource
from dayflow.sources.inbox import Inbox
from tests.conftest import dayflow_process, every_view
from tests.imapserver import (
    PASSWORD,
    USER,
    ImapServer,
    Proxy,
    free_port,
    imap_server,
    imap_spec,
    make_cert,
    start_pymap,
    stop_server,
)
from tests.mailkit import message
from tests.test_mail_sources import env_for, read_inbox

pytestmark = pytest.mark.slow
READ_ONLY = {"CAPABILITY", "LOGIN", "EXAMINE", "UID SEARCH", "UID FETCH", "LOGOUT", "NOOP"}


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ImapServer]:
    with imap_server(tmp_path) as s:
        yield s


def spec(port: int, security: str = "plain", **extra: Any) -> SourceSpec:
    values: dict[str, Any] = {"password_env": "IMAP_PW", "timeout": 10.0, **extra}
    return imap_spec(port, security=security, **values)


ENV = {"IMAP_PW": PASSWORD}
NOW = time.time()


def load(server: ImapServer, count: int, *, seen: set[int] = frozenset()) -> None:  # type: ignore[assignment]
    for n in range(count):
        when = dt.datetime.fromtimestamp(NOW - (count - n) * 60, dt.UTC)
        server.append(message(n, when=when), seen=n in seen, when=when.timestamp())


def test_listing_is_newest_first_with_unread_from_flags_and_no_flag_ever_changes(
    server: ImapServer, request: pytest.FixtureRequest
) -> None:
    load(server, 5, seen={1, 3})
    before = server.flags()
    inbox = Inbox([ImapSource(spec(server.plain.port), env=ENV)])
    request.addfinalizer(inbox.close)
    listed = read_inbox(inbox)["messages"]
    assert [m["subject"] for m in listed] == [f"Message number {n}" for n in (4, 3, 2, 1, 0)]
    assert [m["unread"] for m in listed] == [True, False, True, False, True]
    assert all(m["id"].startswith("work:") and m["key"].startswith("mail:") for m in listed)
    for m in listed:
        from dayflow import tools as toolbox

        body = toolbox.read_message({"id": m["id"]}, env_for(inbox))["message"]["body"]
        assert "could you send me report" in body
    assert server.flags() == before  # nothing was marked \Seen, nothing changed
    verbs = {
        " ".join(c.split()[:2]) if c.startswith("UID") else c.split()[0]
        for c in server.plain.commands
    }
    assert verbs <= READ_ONLY, verbs
    assert all("BODY[" not in c for c in server.plain.lines("FETCH"))  # always BODY.PEEK


def test_several_folders_merge_newest_first_and_page_across_them(
    server: ImapServer, request: pytest.FixtureRequest
) -> None:
    """folders = ["INBOX", "Work"]: one listing of both by arrival, each message once across
    pages, read-only in both folders."""
    conn = server.direct()
    try:
        assert conn.create("Work")[0] == "OK"
        for n in range(6):
            when = NOW - (6 - n) * 60
            folder = "INBOX" if n % 2 == 0 else "Work"
            raw = message(n, when=dt.datetime.fromtimestamp(when, dt.UTC))
            stamp = imaplib.Time2Internaldate(when)
            assert conn.append(folder, None, stamp, raw)[0] == "OK"
    finally:
        conn.logout()
    inbox = Inbox([ImapSource(spec(server.plain.port, folders=["INBOX", "Work"]), env=ENV)])
    request.addfinalizer(inbox.close)
    first = read_inbox(inbox, limit=4)
    second = read_inbox(inbox, limit=4, cursor=first["next_cursor"])
    subjects = [m["subject"] for m in first["messages"] + second["messages"]]
    assert subjects == [f"Message number {n}" for n in (5, 4, 3, 2, 1, 0)]
    assert len({m["id"] for m in first["messages"] + second["messages"]}) == 6
    assert {c.split()[1].strip('"') for c in server.plain.commands if c.startswith("EXAMINE")} >= {
        "INBOX",
        "Work",
    }
    assert not [c for c in server.plain.commands if c.startswith("SELECT")]


def test_a_page_searches_on_the_server_and_fetches_the_page_only(
    server: ImapServer, request: pytest.FixtureRequest
) -> None:
    load(server, 120)
    inbox = Inbox([ImapSource(spec(server.plain.port), env=ENV)])
    request.addfinalizer(inbox.close)
    server.clear()
    first = read_inbox(inbox, limit=20)
    assert len(first["messages"]) == 20
    assert server.plain.count("SEARCH") == 1 and server.plain.count("FETCH") == 1
    [fetch] = server.plain.lines("FETCH")
    assert len(fetch.split()[2].split(",")) == 20  # the page's UIDs, not the mailbox
    second = read_inbox(inbox, limit=20, cursor=first["next_cursor"])
    assert server.plain.count("FETCH") == 2
    assert not {m["id"] for m in first["messages"]} & {m["id"] for m in second["messages"]}
    [_, search] = server.plain.lines("SEARCH")
    assert " UID 1:" in search  # the cursor is a UID bound the server applies
    since = dt.datetime.fromtimestamp(NOW - 30 * 60 - 1, dt.UTC).isoformat()
    windowed = read_inbox(inbox, limit=50, since=since)
    assert len(windowed["messages"]) == 30
    assert "SINCE" in server.plain.lines("SEARCH")[-1]


def test_implicit_tls_verifies_the_certificate(
    server: ImapServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    load(server, 2)
    untrusted = ImapSource(spec(server.implicit_tls.port, "tls"), env=ENV)
    with pytest.raises(SourceError, match="work: TLS with 127.0.0.1:.* failed"):
        untrusted.page(since=None, after=None, limit=5, unread_only=False)
    monkeypatch.setenv("SSL_CERT_FILE", str(server.cert))
    trusted = ImapSource(spec(server.implicit_tls.port, "tls"), env=ENV)
    assert len(trusted.page(since=None, after=None, limit=5, unread_only=False)) == 2
    trusted.close()
    assert server.implicit_tls.count("LOGIN") == 1


def test_starttls_is_never_skipped_when_the_server_does_not_offer_it(server: ImapServer) -> None:
    source = ImapSource(spec(server.plain.port, "starttls"), env=ENV)
    with pytest.raises(SourceError, match="does not offer STARTTLS; Dayflow will not log in"):
        source.status()
    assert server.plain.count("LOGIN") == 0


def test_starttls_upgrades_and_verifies_the_certificate_before_logging_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server that offers STARTTLS (pymap with a certificate): the upgrade happens, the
    certificate is verified (untrusted: refused, no LOGIN sent in clear), and mail is read."""
    cert, key = make_cert(tmp_path)
    port = free_port()
    proc = start_pymap(port, cert, key)
    recorder = Proxy(port).start()
    try:
        untrusted = ImapSource(spec(recorder.port, "starttls"), env=ENV)
        with pytest.raises(SourceError, match="work: "):
            untrusted.status()
        assert recorder.count("STARTTLS") == 1 and recorder.count("LOGIN") == 0
        monkeypatch.setenv("SSL_CERT_FILE", str(cert))
        trusted = ImapSource(spec(recorder.port, "starttls"), env=ENV)
        count, _ = trusted.status()
        assert count >= 0
        trusted.close()
        assert recorder.count("STARTTLS") == 2
        # After the upgrade the proxy sees only ciphertext: the password never crossed in clear.
        assert recorder.count("LOGIN") == 0
    finally:
        recorder.stop()
        stop_server(proc)


def test_each_failure_is_one_line_naming_the_source(server: ImapServer, tmp_path: Path) -> None:
    hang = Proxy(server.port, hang=True).start()
    closed = free_port()
    cases = {
        "wrong password": (
            spec(server.plain.port),
            {"IMAP_PW": "not-it"},
            "login as demouser failed",
        ),
        "refused": (spec(closed), ENV, f"cannot connect to 127.0.0.1:{closed}"),
        "timeout": (spec(hang.port, timeout=1.0), ENV, "within 1 s (timeout"),
        "no password": (spec(server.plain.port), {}, "IMAP_PW (password_env) is not set"),
        "bad command": (
            spec(server.plain.port, password_env=None, password_command="false"),
            ENV,
            "password_command exited with status 1",
        ),
    }
    for what, (s, env, expected) in cases.items():
        with pytest.raises(SourceError) as caught:
            ImapSource(s, env=env).status()
        line = str(caught.value)
        assert line.startswith("work: ") and expected in line and "\n" not in line, what
        assert "not-it" not in line and PASSWORD not in line
    hang.stop()


def _config(tmp_path: Path, port: int) -> Path:
    pw = tmp_path / "pw"
    pw.write_text(PASSWORD + "\n")
    cfg = tmp_path / "config.toml"
    cfg.write_text(
        '[[inbox]]\nname = "work"\nkind = "imap"\nhost = "127.0.0.1"\n'
        f'port = {port}\nuser = "{USER}"\nsecurity = "plain"\n'
        f'password_command = "cat {pw}"\ntimeout = 10\n'
    )
    return cfg


def test_no_secret_reaches_the_database_or_any_output(server: ImapServer, tmp_path: Path) -> None:
    load(server, 4)
    cfg = _config(tmp_path, server.plain.port)
    db = tmp_path / "d.db"
    outputs = [dayflow_process(db, cfg, "brief", "-v")]
    assert outputs[0].returncode == 0, outputs[0].stderr
    outputs += every_view(db, cfg)
    cfg_bad = tmp_path / "bad.toml"
    cfg_bad.write_text(cfg.read_text().replace(f"cat {tmp_path / 'pw'}", "false"))
    outputs.append(dayflow_process(tmp_path / "other.db", cfg_bad, "brief"))
    for out in outputs:
        assert PASSWORD not in out.stdout and PASSWORD not in out.stderr
    stored = b"".join(p.read_bytes() for p in tmp_path.glob("*.db*"))
    assert stored and PASSWORD.encode() not in stored
    assert any("work" in o.stdout for o in outputs)


def test_kill_right_after_the_imap_read_then_resume_lists_nothing_twice(
    server: ImapServer, tmp_path: Path
) -> None:
    load(server, 5)  # the offline model files at most 5 tasks per brief
    cfg = _config(tmp_path, server.plain.port)
    clean = dayflow_process(tmp_path / "clean.db", cfg, "brief")
    assert clean.returncode == 0, clean.stderr
    clean_tasks = json.loads(dayflow_process(tmp_path / "clean.db", cfg, "tasks", "--json").stdout)
    server.clear()
    db = tmp_path / "d.db"
    killed = dayflow_process(db, cfg, "brief", DAYFLOW_KILL_AT="after_tools:1")
    assert killed.returncode == -9
    # Step 1 read the server twice: read_inbox's page, and read_followups' window (one SEARCH
    # and one FETCH each; the account's sent folder was looked for with LIST, and is none).
    assert server.plain.count("SEARCH") == 2 and server.plain.count("FETCH") == 2
    assert server.plain.count("LIST") == 1
    server.clear()
    resumed = dayflow_process(db, cfg, "resume")
    assert resumed.returncode == 0, resumed.stderr
    assert server.plain.count("SEARCH") == 0 and server.plain.count("FETCH") == 0
    assert server.plain.count("LOGIN") == 0  # the saved read answered: no connection at all
    tasks = json.loads(dayflow_process(db, cfg, "tasks", "--json").stdout)
    keys = [t["idempotency_key"] for t in tasks]
    assert len(keys) == len(set(keys)) == len(clean_tasks) == 5
    assert sorted(keys) == sorted(t["idempotency_key"] for t in clean_tasks)


def test_an_inbox_until_is_searched_on_the_server_and_later_mail_left_out(
    server: ImapServer, request: pytest.FixtureRequest
) -> None:
    load(server, 12)  # one a minute, the newest a minute ago
    until = dt.datetime.fromtimestamp(NOW - 5 * 60 + 1, dt.UTC)
    inbox = Inbox([ImapSource(spec(server.plain.port), env=ENV)], until=until)
    request.addfinalizer(inbox.close)
    listed = read_inbox(inbox, limit=50)["messages"]
    assert [m["subject"] for m in listed] == [f"Message number {n}" for n in range(7, -1, -1)]
    assert "BEFORE" in server.plain.lines("SEARCH")[-1]


def _folders(server: ImapServer) -> set[str]:
    conn = server.direct()
    try:
        typ, data = conn.list()
        assert typ == "OK"
        lines = [line for line in data if isinstance(line, bytes)]
        return {line.decode().rsplit(" ", 1)[-1].strip('"') for line in lines if line}
    finally:
        conn.logout()


def test_a_folder_name_with_a_line_break_never_reaches_the_server(
    server: ImapServer, request: pytest.FixtureRequest
) -> None:
    """The case that deleted a folder: a CR LF in a folder name would end EXAMINE and start
    a DELETE. Refused before a byte of it is sent; the folder is still there."""
    conn = server.direct()
    try:
        assert conn.create("Work")[0] == "OK"
    finally:
        conn.logout()
    load(server, 2)
    for hostile in (
        "INBOX\r\nA1 DELETE Work\r\nA2 NOOP",
        "INBOX\nA1 DELETE Work",
        "INBOX\rA1 DELETE Work",
        "INBOX\x00A1 DELETE Work",
    ):
        source = ImapSource(spec(server.plain.port, folders=[hostile]), env=ENV)
        request.addfinalizer(source.close)
        with pytest.raises(SourceError, match="line break or NUL; not sent") as caught:
            source.page(since=None, after=None, limit=5, unread_only=False)
        assert "\n" not in str(caught.value)
    assert "Work" in _folders(server)
    assert not server.plain.count("DELETE") and not server.plain.count("EXAMINE")


def test_a_user_name_with_a_line_break_is_never_sent(server: ImapServer) -> None:
    source = ImapSource(
        SourceSpec(
            table="inbox",
            name="work",
            kind="imap",
            host="127.0.0.1",
            port=server.plain.port,
            user=f"{USER}\r\nA1 DELETE Work",
            password_env="IMAP_PW",
            security="plain",
        ),
        env=ENV,
    )
    with pytest.raises(SourceError, match="user holds a line break"):
        source.status()
    assert server.plain.count("LOGIN") == 0
    # A password from the environment is a value sent too (and is never shown).
    evil = {"IMAP_PW": f"{PASSWORD}\r\nA1 DELETE INBOX"}
    with pytest.raises(SourceError, match="password holds a line break") as caught:
        ImapSource(spec(server.plain.port), env=evil).status()
    assert PASSWORD not in str(caught.value)
    assert server.plain.count("LOGIN") == 0


def test_a_folder_with_a_non_ascii_name_is_read_in_modified_utf7(
    server: ImapServer, request: pytest.FixtureRequest
) -> None:
    """`folders = ["Entwürfe"]`, a German Gmail folder, was an internal error: it goes as
    `Entw&APw-rfe` (RFC 3501 5.1.3), and so do `&` and names in other scripts."""
    names = {"Entwürfe": "Entw&APw-rfe", "R&D": "R&-D", "日本語": "&ZeVnLIqe-"}
    conn = server.direct()
    try:
        for n, wire in enumerate(names.values()):
            assert conn.create(wire)[0] == "OK"
            stamp = imaplib.Time2Internaldate(NOW - 60 * (n + 1))
            raw = message(n, when=dt.datetime.fromtimestamp(NOW - 60 * (n + 1), dt.UTC))
            assert conn.append(wire, None, stamp, raw)[0] == "OK"
    finally:
        conn.logout()
    before = server.flags()
    source = ImapSource(spec(server.plain.port, folders=list(names)), env=ENV)
    request.addfinalizer(source.close)
    listed = source.page(since=None, after=None, limit=10, unread_only=False)
    assert sorted(i.subject for i in listed) == [f"Message number {n}" for n in range(3)]
    examined = {c.split(" ", 1)[1].strip('"') for c in server.plain.lines("EXAMINE")}
    assert examined == set(names.values())
    assert server.flags() == before


def test_a_password_that_is_not_ascii_logs_in(tmp_path: Path) -> None:
    """`PW='pässwörd'` was an internal error (imaplib encodes LOGIN in ASCII): it goes as
    AUTHENTICATE PLAIN in UTF-8, or as a LOGIN literal where PLAIN is not offered."""
    from dayflow.sources import imap_wire

    secret = "pässwörd"
    port = free_port()
    proc = start_pymap(port, password=secret)
    recorder = Proxy(port).start()
    try:
        source = ImapSource(spec(recorder.port), env={"IMAP_PW": secret})
        count, _ = source.status()
        source.close()
        assert count == 0
        assert recorder.count("AUTHENTICATE") == 1 and recorder.count("LOGIN") == 0
        conn = imaplib.IMAP4("127.0.0.1", port, timeout=10)
        conn.capabilities = tuple(c for c in conn.capabilities if c != "AUTH=PLAIN")
        imap_wire.login(conn, USER, secret)
        assert conn.state == "AUTH" and conn.select("INBOX", readonly=True)[0] == "OK"
        conn.logout()
        with pytest.raises(SourceError, match="login as demouser failed") as caught:
            ImapSource(spec(recorder.port), env={"IMAP_PW": "pässwort"}).status()
        assert "pässw" not in str(caught.value)
    finally:
        recorder.stop()
        stop_server(proc)


def test_the_timeout_is_a_deadline_for_the_whole_exchange_not_each_read(
    server: ImapServer,
) -> None:
    """A server that answers a FETCH one byte every 0.3 s never trips a 2 s per-read timeout;
    the deadline cuts the whole listing off, names itself, and the next call connects again."""
    load(server, 3)
    before = server.flags()
    slow = Proxy(server.port, trickle=0.3).start()
    try:
        source = ImapSource(spec(slow.port, timeout=2.0), env=ENV)
        started = time.monotonic()
        with pytest.raises(SourceError) as caught:
            source.page(since=None, after=None, limit=5, unread_only=False)
        assert time.monotonic() - started < 60  # generous: the old code ran for many minutes
        line = str(caught.value)
        assert line.startswith("work: ") and "within 2 s" in line and "deadline" in line
        assert source._session.client is None  # a connection cut off mid-answer is not reused
    finally:
        slow.stop()
    assert server.flags() == before


def test_a_greeting_trickled_a_byte_at_a_time_is_cut_off_at_the_deadline() -> None:
    import socket
    import threading

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    stop = threading.Event()

    def serve() -> None:
        with contextlib.suppress(OSError):
            client, _ = listener.accept()
            with client:
                for byte in b"* OK IMAP4rev1 a greeting that never quite ends" * 10:
                    if stop.wait(0.3):
                        return
                    client.sendall(bytes([byte]))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        source = ImapSource(spec(listener.getsockname()[1], timeout=1.5), env=ENV)
        with pytest.raises(SourceError, match=r"within 1\.5 s \(timeout, a deadline"):
            source.status()
    finally:
        stop.set()
        listener.close()
        thread.join(10)


def test_a_page_follows_uids_past_messages_whose_internaldate_is_outside_the_window(
    server: ImapServer, request: pytest.FixtureRequest
) -> None:
    """The two newest UIDs carry an INTERNALDATE of 20 hours ago (appended late, as a sync
    does): inside SEARCH SINCE's day, outside the window. A page of 2 was those two, filtered
    to none, and the folder was taken as walked to its end: the 4 messages in the window were
    never listed."""
    for n in range(4):
        when = dt.datetime.fromtimestamp(NOW - (10 - n) * 60, dt.UTC)
        server.append(message(n, when=when), when=when.timestamp())
    for n in (4, 5):
        old = dt.datetime.fromtimestamp(NOW - 20 * 3600, dt.UTC)
        server.append(message(n, when=old), when=old.timestamp())
    inbox = Inbox([ImapSource(spec(server.plain.port), env=ENV)])
    request.addfinalizer(inbox.close)
    since = dt.datetime.fromtimestamp(NOW - 3600, dt.UTC).isoformat()
    first = read_inbox(inbox, limit=2, since=since)
    second = read_inbox(inbox, limit=2, cursor=first["next_cursor"])
    got = [m["subject"] for m in first["messages"] + second["messages"]]
    assert got == [f"Message number {n}" for n in (3, 2, 1, 0)]


def test_a_servers_greeting_refusal_is_its_words_not_a_bytes_repr() -> None:
    """A server that greets with BYE was reported as "cannot connect to H:P (b'* BYE
    \\x1b[2Jgo away \\xff')": Python's repr of the bytes, escape and all, into the brief."""
    import socket
    import threading

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)

    def greet() -> None:
        conn, _ = listener.accept()
        conn.sendall(b"* BYE \x1b[2Jgo away \xff\r\n")
        conn.close()

    threading.Thread(target=greet, daemon=True).start()
    try:
        with pytest.raises(SourceError) as caught:
            ImapSource(spec(listener.getsockname()[1]), env=ENV).status()
    finally:
        listener.close()
    line = str(caught.value)
    assert "b'" not in line and "\\x" not in line and "\x1b" not in line, line
    assert "go away" in line
