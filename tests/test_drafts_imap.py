"""Drafts in an IMAP drafts folder against pymap on 127.0.0.1 (issue 36): the folder the server
flags \\Drafts, one APPEND with the \\Draft flag and nothing else written (every command
recorded at the proxy), one draft across two briefs, none where the user began one, a SIGKILL
at every write point of the draft (after the APPEND and before its commit included) leaving
exactly one, `sources check` naming the folder, and the OAuth account of issue 20 on both
store engines."""

from __future__ import annotations

import email
import imaplib
import json
import signal
from collections.abc import Iterator
from email.message import EmailMessage
from email.policy import default
from pathlib import Path
from typing import Any

import pytest

from dayflow.providers.offline import OfflineModel
from tests.conftest import dayflow_process
from tests.harness import invoke
from tests.imapserver import PASSWORD, USER, ImapServer, Proxy, imap_server
from tests.mailkit import thread_mail
from tests.oauthservers import OAuthImap, oauth_imap, token_script
from tests.test_imap import READ_ONLY
from tests.test_sent_mail import ALEX, CAROL, at

pytestmark = pytest.mark.slow

DAY = "2026-11-18"
CLOCK = "2026-11-18T07:30:00+00:00"
SINCE = ("--since", "2026-11-11")
FOLDER = "Brouillons"  # flagged \Drafts by the proxy; a folder named Drafts is there too
WRITES = {"APPEND", "STORE", "UID STORE", "COPY", "UID COPY", "MOVE", "UID MOVE", "EXPUNGE",
          "DELETE", "CREATE", "RENAME", "SELECT", "UID EXPUNGE"}  # fmt: skip


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ImapServer]:
    with imap_server(tmp_path) as s:
        s.plain.special_use = {FOLDER: "\\Drafts"}
        yield s


@pytest.fixture
def conn(server: ImapServer) -> Iterator[imaplib.IMAP4]:
    """A connection the proxy does not see, to the server loaded with `_load`."""
    direct = server.direct()
    _load(direct)
    try:
        yield direct
    finally:
        direct.logout()


def _load(conn: imaplib.IMAP4) -> None:
    """Bob's question in INBOX (owed), Alex's own mail in Sent, two empty drafts folders."""
    for folder in ("Sent", "Drafts", FOLDER):
        conn.create(folder)
    ask = thread_mail("bob1@x", subject="Budget", when=at(13))
    words = "Hi Carol,\nthe room is booked.\nCheers,\nAlex"
    mine = thread_mail("alex1@y", sender=ALEX, to=CAROL, subject="Venue", body=words, when=at(16))
    for folder, raw, when in (("INBOX", ask, at(13)), ("Sent", mine, at(16))):
        flags = "(\\Seen)" if folder == "Sent" else None
        assert (
            conn.append(folder, flags, imaplib.Time2Internaldate(when.timestamp()), raw)[0] == "OK"
        )


def _config(root: Path, port: int, *, auth: str = "", drafts: str = "drafts = true") -> Path:
    path = root / "config.toml"
    how = auth or 'password_env = "IMAP_PW"'
    path.write_text(
        f'me = ["alex@example.org"]\n[[inbox]]\nname = "work"\nkind = "imap"\n'
        f'host = "127.0.0.1"\nport = {port}\nuser = "{USER}"\n{how}\nsecurity = "plain"\n'
        f'sent = "Sent"\ntimeout = 10\n{drafts}\n'
    )
    return path


ENV = {"IMAP_PW": PASSWORD}


def _folder(conn: imaplib.IMAP4, folder: str = FOLDER) -> list[tuple[str, EmailMessage]]:
    """(flags, message) of every message in `folder`, over a connection no proxy records."""
    conn.select(f'"{folder}"', readonly=True)
    typ, data = conn.uid("FETCH", "1:*", "(FLAGS BODY.PEEK[])")
    out = []
    for piece in data:
        if isinstance(piece, tuple):
            parsed = email.message_from_bytes(piece[1], policy=default)
            assert isinstance(parsed, EmailMessage)
            out.append((piece[0].decode(), parsed))
    return out


def _brief(root: Path, config: Path, *args: str) -> Any:
    got = invoke(root / "d.db", lambda *_: OfflineModel(), "brief", "--date", DAY, *SINCE,
                 *args, env={"DAYFLOW_CONFIG": str(config), **ENV}, clock=CLOCK)  # fmt: skip
    assert got.code == 0, got.err
    return got


def _verbs(proxy: Proxy) -> list[str]:
    with proxy.lock:
        commands = list(proxy.commands)
    return [" ".join(c.split()[:2]) if c.startswith("UID") else c.split()[0] for c in commands]


def test_one_append_into_the_folder_flagged_drafts_and_nothing_else_written(
    server: ImapServer, conn: imaplib.IMAP4, tmp_path: Path
) -> None:
    config = _config(tmp_path, server.plain.port)
    got = _brief(tmp_path, config)
    assert "— draft in Drafts" in got.out
    [(flags, draft)] = _folder(conn)
    assert "\\Draft" in flags and "\\Seen" not in flags
    assert draft["To"] == "Bob Stone <bob@example.com>" and draft["Cc"] is None
    assert draft["Subject"] == "Re: Budget" and draft["In-Reply-To"] == "<bob1@x>"
    assert "> Could you send the figures?" in draft.get_content()
    assert _folder(conn, "Drafts") == []  # the flag wins over the name
    verbs = _verbs(server.plain)
    assert set(verbs) <= READ_ONLY | {"LIST", "APPEND"}, verbs
    assert verbs.count("APPEND") == 1 and not set(verbs) & (WRITES - {"APPEND"})
    [append] = server.plain.lines("APPEND")
    assert append.startswith(f'APPEND "{FOLDER}" (\\Draft)')
    assert server.plain.lines("UID SEARCH HEADER In-Reply-To")  # the user's own draft looked for
    assert all("BODY[" not in c for c in server.plain.lines("FETCH"))


def test_two_briefs_one_draft_and_a_users_own_draft_means_none(
    server: ImapServer, conn: imaplib.IMAP4, tmp_path: Path
) -> None:
    config = _config(tmp_path, server.plain.port)
    _brief(tmp_path, config)
    server.clear()
    second = _brief(tmp_path, config, "--new")
    assert len(_folder(conn)) == 1 and "APPEND" not in _verbs(server.plain)
    assert "— draft in Drafts" in second.out  # still there: found by its Message-ID
    assert server.plain.lines("UID SEARCH HEADER Message-ID")
    # Another database (another user of the same account, or a fresh install): the folder
    # holds a draft answering Bob's message, so none is made.
    server.clear()
    (tmp_path / "other").mkdir()
    _brief(tmp_path / "other", config)
    assert len(_folder(conn)) == 1 and "APPEND" not in _verbs(server.plain)


def test_with_drafts_off_not_one_write_command(
    server: ImapServer, conn: imaplib.IMAP4, tmp_path: Path
) -> None:
    _brief(tmp_path, _config(tmp_path, server.plain.port, drafts=""))
    (tmp_path / "on").mkdir()
    _brief(tmp_path / "on", _config(tmp_path / "on", server.plain.port), "--no-drafts")
    assert set(_verbs(server.plain)) <= READ_ONLY, _verbs(server.plain)
    assert _folder(conn) == []


def test_sources_check_names_the_drafts_folder_and_whether_append_is_allowed(
    server: ImapServer, conn: imaplib.IMAP4, tmp_path: Path
) -> None:
    config = _config(tmp_path, server.plain.port)
    got = invoke(tmp_path / "d.db", lambda *_: OfflineModel(), "sources", "check", "--json",
                 env={"DAYFLOW_CONFIG": str(config), **ENV}, clock=CLOCK)  # fmt: skip
    assert got.code == 0, got.err
    [drafts] = [s for s in json.loads(got.out)["sources"] if s["table"] == "drafts"]
    assert drafts["folder"] == FOLDER and drafts["append"] is True and drafts["ok"] is True
    text = invoke(tmp_path / "d.db", lambda *_: OfflineModel(), "sources", "check",
                  env={"DAYFLOW_CONFIG": str(config), **ENV}, clock=CLOCK)  # fmt: skip
    assert f"work/drafts      imap     {FOLDER}: APPEND allowed" in text.out
    assert "APPEND" not in _verbs(server.plain)


# ------------------------------------------------------------------ SIGKILL at each write


def _draft_step(db: Path | str, config: Path) -> int:
    shown = dayflow_process(db, config, "runs", "--json")
    run_id = json.loads(shown.stdout)[0]["id"]
    doc = json.loads(dayflow_process(db, config, "show", run_id, "--json").stdout)
    return next(
        s["n"]
        for s in doc["steps"]
        if any(b.get("name") == "draft_reply" for b in s["assistant"] if isinstance(b, dict))
    )


@pytest.fixture(scope="module")
def draft_step(tmp_path_factory: pytest.TempPathFactory) -> int:
    root = tmp_path_factory.mktemp("draft-step")
    with imap_server(root) as server:
        server.plain.special_use = {FOLDER: "\\Drafts"}
        conn = server.direct()
        _load(conn)
        conn.logout()
        config = _config(root, server.plain.port)
        made = dayflow_process(
            root / "d.db", config, "brief", "--date", DAY, *SINCE, IMAP_PW=PASSWORD
        )
        assert made.returncode == 0, made.stderr
        return _draft_step(root / "d.db", config)


POINTS = ["after_pending", "draft_before_append", "draft_after_append", "after_tools",
          "after_complete"]  # fmt: skip


@pytest.mark.parametrize("point", POINTS)
def test_a_kill_at_each_write_point_leaves_exactly_one_draft(
    server: ImapServer, conn: imaplib.IMAP4, tmp_path: Path, draft_step: int, point: str
) -> None:
    config = _config(tmp_path, server.plain.port)
    db = tmp_path / "d.db"
    kill = f"{point}:{draft_step}"
    killed = dayflow_process(db, config, "brief", "--date", DAY, *SINCE, IMAP_PW=PASSWORD,
                             DAYFLOW_KILL_AT=kill)  # fmt: skip
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    written = len(_folder(conn))
    assert written == (1 if point in ("draft_after_append", "after_tools", "after_complete") else 0)
    server.clear()
    resumed = dayflow_process(db, config, "resume", IMAP_PW=PASSWORD)
    assert resumed.returncode == 0, resumed.stderr
    [(_, draft)] = _folder(conn)
    assert draft["To"] == "Bob Stone <bob@example.com>"
    appends = _verbs(server.plain).count("APPEND")
    assert appends == (1 - written)
    if point == "draft_after_append":  # pending: the folder is asked before writing again
        [search] = server.plain.lines("UID SEARCH HEADER Message-ID")
        assert draft["Message-ID"] in search
    assert "— draft in Drafts" in resumed.stdout


# --------------------------------------------------------------- the OAuth account (issue 20)


@pytest.fixture
def oauth(tmp_path: Path) -> Iterator[OAuthImap]:
    with oauth_imap(tmp_path, token="token-1") as s:
        s.proxy.special_use = {FOLDER: "\\Drafts"}
        yield s


def test_the_oauth_account_drafts_once_on_both_engines_through_a_kill(
    oauth: OAuthImap, tmp_path: Path, store_target: Path | str, draft_step: int
) -> None:
    conn = imaplib.IMAP4("127.0.0.1", oauth.port, timeout=10)
    conn.login(USER, PASSWORD)
    try:
        _oauth_drafts(oauth, conn, tmp_path, store_target, draft_step)
    finally:
        conn.logout()


def _oauth_drafts(
    oauth: OAuthImap, conn: imaplib.IMAP4, tmp_path: Path, store_target: Path | str, step: int
) -> None:
    _load(conn)
    command, _ = token_script(tmp_path)
    oauth.accept(*(f"token-{n}" for n in range(1, 10)))
    auth = f'auth = "xoauth2"\ntoken_command = "{command}"'
    config = _config(tmp_path, oauth.proxy.port, auth=auth)
    kill = f"draft_after_append:{step}"
    killed = dayflow_process(store_target, config, "brief", "--date", DAY, *SINCE,
                             DAYFLOW_KILL_AT=kill)  # fmt: skip
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    resumed = dayflow_process(store_target, config, "resume")
    assert resumed.returncode == 0, resumed.stderr
    [(flags, draft)] = _folder(conn)
    assert "\\Draft" in flags and draft["Subject"] == "Re: Budget"
    assert _verbs(oauth.proxy).count("APPEND") == 1
    again = dayflow_process(store_target, config, "brief", "--date", DAY, *SINCE, "--new")
    assert again.returncode == 0, again.stderr
    assert len(_folder(conn)) == 1 and _verbs(oauth.proxy).count("APPEND") == 1


def _brief_any(root: Path, config: Path, *args: str) -> Any:
    return invoke(root / "d.db", lambda *_: OfflineModel(), "brief", "--date", DAY, *SINCE,
                  *args, env={"DAYFLOW_CONFIG": str(config), **ENV}, clock=CLOCK)  # fmt: skip


def test_a_missing_imap_drafts_folder_is_said_on_stderr(
    server: ImapServer, conn: imaplib.IMAP4, tmp_path: Path
) -> None:
    """`drafts = "Nope"`, a folder the server does not have: the brief says so on stderr in
    one line naming it (it was silent: exit 0, only the model saw the error), writes nothing."""
    config = _config(tmp_path, server.plain.port, drafts='drafts = "Nope"')
    got = _brief_any(tmp_path, config)
    assert got.code == 0, got.err
    said = [line for line in got.err.splitlines() if line.startswith("warning:")]
    assert len(said) == 1 and "Nope" in said[0] and "sources check" in said[0], got.err
    assert "draft in Drafts" not in got.out and "APPEND" not in _verbs(server.plain)


@pytest.mark.parametrize("answer", ["NO", "BAD"])
def test_a_refused_append_is_said_and_never_tried_twice_in_the_run(
    server: ImapServer, conn: imaplib.IMAP4, tmp_path: Path, answer: str
) -> None:
    """The server answers APPEND NO (or BAD): the brief is still made (exit 0), says on stderr
    that the folder refused the draft, and its line has no "draft in Drafts". The pending mark
    stays, with the outcome `refused`: the run never writes it again (a resume reuses the
    call's result); the next brief, nothing having been written, drafts afresh, once."""
    server.plain.refuse = {"APPEND": answer}
    config = _config(tmp_path, server.plain.port)
    got = _brief_any(tmp_path, config)
    assert got.code == 0, got.err
    said = [line for line in got.err.splitlines() if line.startswith("warning:")]
    assert len(said) == 1 and f"refused APPEND to {FOLDER}" in said[0], got.err
    assert "draft in Drafts" not in got.out and _folder(conn) == []
    assert _verbs(server.plain).count("APPEND") == 1
    run_id = got.err.split("[run ", 1)[1].split()[0]
    shown = invoke(tmp_path / "d.db", lambda *_: OfflineModel(), "show", run_id, "--json",
                   env={"DAYFLOW_CONFIG": str(config), **ENV})  # fmt: skip
    [draft] = json.loads(shown.out)["drafts"]
    assert draft["state"] == "refused" and draft["message_id"].startswith("<dayflow-draft.")
    text = invoke(tmp_path / "d.db", lambda *_: OfflineModel(), "show", run_id,
                  env={"DAYFLOW_CONFIG": str(config), **ENV}).out  # fmt: skip
    assert "(refused by the folder, not written)" in text
    # The server takes drafts again: the next brief writes one, and only one.
    server.plain.refuse = {}
    server.clear()
    again = _brief_any(tmp_path, config, "--new")
    assert again.code == 0 and "— draft in Drafts" in again.out, again.err
    assert len(_folder(conn)) == 1 and _verbs(server.plain).count("APPEND") == 1
    server.clear()
    third = _brief_any(tmp_path, config, "--new")
    assert len(_folder(conn)) == 1 and "APPEND" not in _verbs(server.plain)
    assert "— draft in Drafts" in third.out


def test_a_mixed_case_message_id_is_answered_as_it_was_written(
    server: ImapServer, tmp_path: Path
) -> None:
    """Over IMAP too: the draft's In-Reply-To is Bob's Message-ID with its case kept."""
    mixed = "Bob1.Q@Mail.Example.COM"
    direct = server.direct()
    try:
        for folder in ("Sent", FOLDER):
            direct.create(folder)
        ask = thread_mail(mixed, subject="Budget", when=at(13))
        assert direct.append("INBOX", None, imaplib.Time2Internaldate(at(13).timestamp()),
                             ask)[0] == "OK"  # fmt: skip
        got = _brief(tmp_path, _config(tmp_path, server.plain.port))
        assert "— draft in Drafts" in got.out
        [(_, draft)] = _folder(direct)
        assert draft["In-Reply-To"] == f"<{mixed}>" and draft["References"] == f"<{mixed}>"
    finally:
        direct.logout()
