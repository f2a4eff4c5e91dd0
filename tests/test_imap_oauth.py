"""IMAP with an OAuth token (issue 20) against pymap on 127.0.0.1 taking SASL XOAUTH2 and
OAUTHBEARER (tests/oauthservers.py): listing and reading, the one retry with a fresh token, a
token refused twice, a token_command that fails, hangs or prints nothing, TLS, and the token
nowhere in the database or any output, a resume included."""

from __future__ import annotations

import datetime as dt
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dayflow.errors import SourceError
from dayflow.sources.config import SourceSpec
from dayflow.sources.factory import SourceContext, check_source
from dayflow.sources.imap import ImapSource
from dayflow.sources.inbox import Inbox
from dayflow.sources.oauth import AuthRefused, TokenUnavailable
from tests.conftest import dayflow_process, every_view
from tests.imapserver import USER, imap_server, imap_spec
from tests.mailkit import message
from tests.oauthservers import OAuthImap, oauth_imap, runs, token_script
from tests.test_imap import NOW, READ_ONLY
from tests.test_mail_sources import env_for, read_inbox

pytestmark = pytest.mark.slow


@pytest.fixture(params=[True, False], ids=["sasl-ir", "continuation"])
def server(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[OAuthImap]:
    with oauth_imap(tmp_path, token="token-1", sasl_ir=request.param) as s:
        yield s


def spec(port: int, command: str, **extra: Any) -> SourceSpec:
    values: dict[str, Any] = {
        "auth": "xoauth2",
        "timeout": 10.0,
        "token_command": command or None,
        "security": "plain",
        **extra,
    }
    return imap_spec(port, **values)


def load(server: OAuthImap, count: int, *, seen: set[int] = frozenset()) -> None:  # type: ignore[assignment]
    import imaplib

    from tests.imapserver import PASSWORD

    conn = imaplib.IMAP4("127.0.0.1", server.port, timeout=10)
    conn.login(USER, PASSWORD)
    try:
        for n in range(count):
            when = dt.datetime.fromtimestamp(NOW - (count - n) * 60, dt.UTC)
            flags = "(\\Seen)" if n in seen else None
            stamp = imaplib.Time2Internaldate(when.timestamp())
            assert conn.append("INBOX", flags, stamp, message(n, when=when))[0] == "OK"
    finally:
        conn.logout()


def _sent_folder(server: OAuthImap) -> None:
    """A `Sent` folder with one message in it."""
    import imaplib

    from tests.imapserver import PASSWORD

    conn = imaplib.IMAP4("127.0.0.1", server.port, timeout=10)
    conn.login(USER, PASSWORD)
    try:
        conn.create("Sent")
        when = dt.datetime.fromtimestamp(NOW - 3600, dt.UTC)
        stamp = imaplib.Time2Internaldate(when.timestamp())
        assert conn.append("Sent", "(\\Seen)", stamp, message(9, when=when))[0] == "OK"
    finally:
        conn.logout()


def flags(server: OAuthImap) -> list[bytes]:
    import imaplib

    from tests.imapserver import PASSWORD

    conn = imaplib.IMAP4("127.0.0.1", server.port, timeout=10)
    conn.login(USER, PASSWORD)
    try:
        conn.select("INBOX", readonly=True)
        return list(conn.uid("FETCH", "1:*", "(UID FLAGS)")[1])
    finally:
        conn.logout()


def test_listing_and_reading_work_with_a_token_and_no_flag_changes(
    server: OAuthImap, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    load(server, 4, seen={1})
    before = flags(server)
    command, count = token_script(tmp_path)
    inbox = Inbox([ImapSource(spec(server.proxy.port, command))])
    request.addfinalizer(inbox.close)
    listed = read_inbox(inbox)["messages"]
    assert [m["subject"] for m in listed] == [f"Message number {n}" for n in (3, 2, 1, 0)]
    assert [m["unread"] for m in listed] == [True, True, False, True]
    from dayflow import tools as toolbox

    body = toolbox.read_message({"id": listed[0]["id"]}, env_for(inbox))["message"]["body"]
    assert "could you send me report" in body
    assert runs(count) == 1  # fetched once, when the source was opened
    assert flags(server) == before
    verbs = {" ".join(c.split()[: 2 if c.startswith("UID") else 1]) for c in server.proxy.commands}
    assert verbs <= READ_ONLY | {"AUTHENTICATE"}, verbs
    [auth] = server.proxy.lines("AUTHENTICATE")
    assert auth.startswith("AUTHENTICATE XOAUTH2") and server.proxy.count("LOGIN") == 0
    assert server.sasl_ir == (len(auth.split()) == 3)  # the initial response on the line, or not


def test_an_expired_token_is_fetched_again_once_and_the_fresh_one_works(
    server: OAuthImap, tmp_path: Path
) -> None:
    load(server, 2)
    server.accept("token-2")  # the command's first answer, token-1, has expired
    command, count = token_script(tmp_path)
    source = ImapSource(spec(server.proxy.port, command))
    total, newest = source.status()
    source.close()
    assert total == 2 and newest is not None
    assert runs(count) == 2 and server.proxy.count("AUTHENTICATE") == 2


def test_a_token_refused_twice_is_one_line_with_the_mechanism_and_the_servers_words(
    server: OAuthImap, tmp_path: Path
) -> None:
    server.accept("token-99")
    command, count = token_script(tmp_path)
    with pytest.raises(AuthRefused) as caught:
        ImapSource(spec(server.proxy.port, command)).status()
    line = str(caught.value)
    assert line.startswith("work: the server refused the xoauth2 token (and again with a fresh")
    assert "[AUTHENTICATIONFAILED] Invalid credentials (Failure)" in line
    assert "token-1" not in line and "token-2" not in line and "\n" not in line
    assert runs(count) == 2 and server.proxy.count("AUTHENTICATE") == 2
    assert server.proxy.count("EXAMINE") == 0


def test_oauthbearer_sends_the_rfc_7628_response(server: OAuthImap, tmp_path: Path) -> None:
    load(server, 1)
    command, _ = token_script(tmp_path)
    source = ImapSource(spec(server.proxy.port, command, auth="oauthbearer"))
    assert source.status()[0] == 1
    source.close()
    assert server.proxy.lines("AUTHENTICATE")[0].startswith("AUTHENTICATE OAUTHBEARER")


def test_token_env_gives_the_token(server: OAuthImap) -> None:
    load(server, 1)
    s = spec(server.proxy.port, "", token_env="WORK_TOKEN")
    source = ImapSource(s, env={"WORK_TOKEN": "token-1\n"})
    assert source.status()[0] == 1
    source.close()
    with pytest.raises(TokenUnavailable, match=r"^work: the environment variable WORK_TOKEN"):
        ImapSource(s, env={}).status()


def test_a_failing_hanging_or_silent_token_command_is_one_line_with_its_status(
    tmp_path: Path,
) -> None:
    """No server is contacted: the token comes first. The output is never echoed."""
    leak = tmp_path / "leak.py"
    leak.write_text("import sys\nprint('SECRET-OUTPUT')\nsys.exit(3)\n")
    silent, _ = token_script(tmp_path, silent=True)
    cases = {
        f"{sys.executable} {leak}": "token_command exited with status 3",
        silent: "token_command printed no token (exit status 0)",
        "sleep 30": "token_command did not finish in 1 s",
        "no-such-program-x": "token_command 'no-such-program-x' was not found",
    }
    for command, expected in cases.items():
        with pytest.raises(TokenUnavailable) as caught:
            ImapSource(spec(1, command, timeout=1.0)).status()
        line = str(caught.value)
        assert line.startswith("work: ") and expected in line and "\n" not in line, line
        assert "SECRET-OUTPUT" not in line
        assert "without a shell" not in line  # none of them reads as written for a shell


def test_a_token_is_not_sent_where_the_server_does_not_offer_the_mechanism_or_tls(
    tmp_path: Path,
) -> None:
    command, count = token_script(tmp_path)
    with imap_server(tmp_path) as plain:  # pymap's defaults: AUTH=PLAIN LOGIN only
        with pytest.raises(SourceError) as caught:
            ImapSource(spec(plain.plain.port, command)).status()
        assert "does not offer AUTH=XOAUTH2 (it offers: PLAIN LOGIN); the token is not sent" in (
            str(caught.value)
        )
        with pytest.raises(SourceError, match="does not offer STARTTLS"):
            ImapSource(spec(plain.plain.port, command, security="starttls")).status()
        assert plain.plain.count("AUTHENTICATE") == 0


def test_sources_check_names_the_mechanism_and_whether_it_was_accepted(
    server: OAuthImap, tmp_path: Path
) -> None:
    command, _ = token_script(tmp_path)
    ctx = SourceContext(dt.datetime.now(dt.UTC).date(), dt.UTC, {})
    ok = check_source(spec(server.proxy.port, command), ctx)
    assert (ok["ok"], ok["auth"], ok["accepted"]) == (True, "xoauth2", True)
    server.accept("token-never")
    refused = check_source(spec(server.proxy.port, command), ctx)
    assert (refused["ok"], refused["auth"], refused["accepted"]) == (False, "xoauth2", False)
    failing = check_source(spec(server.proxy.port, "false"), ctx)
    assert (failing["auth"], failing["accepted"]) == ("xoauth2", None)


# --- through the CLI, in child processes --------------------------------------------------


def _config(tmp_path: Path, port: int, command: str) -> Path:
    cfg = tmp_path / "config.toml"
    cfg.write_text(
        '[[inbox]]\nname = "work"\nkind = "imap"\nhost = "127.0.0.1"\n'
        f'port = {port}\nuser = "{USER}"\nsecurity = "plain"\nauth = "xoauth2"\n'
        f"token_command = {json.dumps(command)}\ntimeout = 10\n"
    )
    return cfg


@pytest.mark.parametrize("sasl_ir", [True])
def test_no_token_reaches_the_database_or_any_output(tmp_path: Path, sasl_ir: bool) -> None:
    with oauth_imap(tmp_path, token="token-2", sasl_ir=sasl_ir) as server:
        load(server, 4)
        command, count = token_script(tmp_path)
        cfg = _config(tmp_path, server.proxy.port, command)
        db = tmp_path / "d.db"
        # token-1 refused, token-2 taken: the inbox and its sent folder share the connection.
        outputs = [dayflow_process(db, cfg, "brief", "-v")]
        assert outputs[0].returncode == 0, outputs[0].stderr
        assert runs(count) == 2
        server.accept(*(f"token-{n}" for n in range(3, 40)))
        schedule = ["schedule", "install", "--at", "07:30", "--dry-run", "--backend", "cron"]
        outputs += every_view(db, cfg, schedule, DAYFLOW_DEBUG="1")
        server.accept("token-never")
        outputs.append(dayflow_process(tmp_path / "other.db", cfg, "brief", "-v"))  # refused twice
        assert "work: the server refused the xoauth2 token" in outputs[-1].stdout
        assert outputs[-1].returncode == 0  # the brief is written without that source
    tokens = [f"token-{n}" for n in range(1, runs(count) + 1)]
    for out in outputs:
        for token in tokens:
            assert token not in out.stdout and token not in out.stderr, (out.args, token)
    stored = b"".join(p.read_bytes() for p in tmp_path.glob("*.db*"))
    assert stored and not any(t.encode() in stored for t in tokens)
    check = next(o for o in outputs if o.args[-1] == "check" and "--json" not in o.args)
    assert "xoauth2 accepted" in check.stdout


def test_a_resume_fetches_a_fresh_token_and_a_saved_read_is_never_read_again(
    tmp_path: Path,
) -> None:
    with oauth_imap(tmp_path, token="token-1") as server:
        load(server, 3)
        command, count = token_script(tmp_path)
        cfg = _config(tmp_path, server.proxy.port, command)
        early = tmp_path / "early.db"
        killed = dayflow_process(early, cfg, "brief", DAYFLOW_KILL_AT="after_pending:1")
        assert killed.returncode == -9 and runs(count) == 0  # killed before the read
        # One token and one login for the inbox and its sent folder: they share a connection.
        server.accept("token-1")
        resumed = dayflow_process(early, cfg, "resume")
        assert resumed.returncode == 0, resumed.stderr
        assert runs(count) == 1 and server.proxy.count("AUTHENTICATE") == 1
        late = tmp_path / "late.db"
        server.accept("token-2")
        killed = dayflow_process(late, cfg, "brief", DAYFLOW_KILL_AT="after_tools:1")
        assert killed.returncode == -9 and runs(count) == 2
        server.proxy.commands.clear()
        resumed = dayflow_process(late, cfg, "resume")
        assert resumed.returncode == 0, resumed.stderr
        assert runs(count) == 2  # the saved reads answered: no token, no connection
        assert server.proxy.commands == []


def test_one_token_run_per_account_whatever_its_folders_and_one_line_when_refused(
    tmp_path: Path,
) -> None:
    """Issue 31.4: the inbox and its sent folder are one account. A token_command may open a
    browser: it runs once per process (plus once after a refusal), in `sources check` and in
    `brief` alike, and a refused account is one failure line, not one per folder."""
    with oauth_imap(tmp_path, token="token-1") as server:
        load(server, 2)
        _sent_folder(server)
        command, count = token_script(tmp_path)
        cfg = _config(tmp_path, server.proxy.port, command)
        check = dayflow_process(tmp_path / "d.db", cfg, "sources", "check")
        assert check.returncode == 0, check.stdout + check.stderr
        [sent] = [line for line in check.stdout.splitlines() if line.startswith("work/sent")]
        assert "1 message(s)" in sent  # the sent folder was read, on the same token
        assert runs(count) == 1
        server.accept("token-2")
        brief = dayflow_process(tmp_path / "d.db", cfg, "brief")
        assert brief.returncode == 0, brief.stderr
        assert runs(count) == 2  # one run per process: token-2 for the inbox and the sent folder
        server.accept("token-never")
        refused = dayflow_process(tmp_path / "d.db", cfg, "sources", "check")
        assert refused.returncode == 4
        assert runs(count) == 4  # token-3 refused, token-4 refused; the sent folder ran none
        failing = [line for line in refused.stdout.splitlines() if "error:" in line]
        assert len(failing) == 1 and failing[0].startswith("work "), refused.stdout
        assert "xoauth2 refused" in failing[0]
        assert "work/sent" not in refused.stdout
        other = tmp_path / "other.db"
        again = dayflow_process(other, cfg, "brief")
        assert again.returncode == 0, again.stderr
        assert runs(count) == 6  # 2, where the inbox and the sent folder each ran it twice
        assert "Could not read work/sent" not in again.stdout  # the account's one failure
        assert "Could not read work: the server refused the xoauth2 token" in again.stdout


def test_sources_check_says_a_token_was_sent_and_not_answered_not_that_it_was_not_tried(
    tmp_path: Path,
) -> None:
    """Issue 32.26: a server that took the token and hung read as "not tried"."""
    from dayflow.cli_sources import _check_line
    from tests.test_echoed_secrets import EchoImap

    server = EchoImap(hang_on_auth=True)
    try:
        ctx = SourceContext(dt.datetime.now(dt.UTC).date(), dt.UTC, {"TOK": "tok-1"})
        hung = check_source(spec(server.port, "", token_env="TOK", timeout=1.5), ctx)
    finally:
        server.close()
    assert (hung["ok"], hung["accepted"], hung.get("token_sent")) == (False, None, True), hung
    assert "work             imap     xoauth2 sent, no answer in 1.5 s; error:" in _check_line(hung)
    never = check_source(spec(1, "", token_env="NONE"), ctx)  # no token: nothing went
    assert "xoauth2 not tried; error:" in _check_line(never) and "token_sent" not in never
