"""Mailing the brief with an OAuth token (issue 20): aiosmtpd on 127.0.0.1 with an
`auth_XOAUTH2` handler taking one token (tests/oauthservers.py). Delivery with a token, the one
retry on 535, a second 535 failing the delivery resumably, the exactly-once guarantee under
real kills unchanged, and the token nowhere in the database or any output."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import is_pg
from tests.imapserver import USER
from tests.oauthservers import OAuthSmtpHandler, runs, token_script
from tests.test_delivery import (
    SMTP_KILLS,
    free_port,
    kill_then_resume,
    run,
    shown,
)
from tests.test_delivery import runs as listed_runs


class OAuthSmtp:
    def __init__(self, tmp: Path) -> None:
        from aiosmtpd.controller import Controller

        self.token_file = tmp / "smtp-accepted-token"
        self.accept("token-1")
        self.handler = OAuthSmtpHandler(self.token_file)
        self.port = free_port()
        self.controller = Controller(
            self.handler, hostname="127.0.0.1", port=self.port, auth_require_tls=False
        )

    def accept(self, *tokens: str) -> None:
        self.token_file.write_text("".join(t + "\n" for t in tokens))


@pytest.fixture
def smtp(tmp_path: Path) -> Iterator[OAuthSmtp]:
    server = OAuthSmtp(tmp_path)
    server.controller.start()
    try:
        yield server
    finally:
        server.controller.stop()


def config(tmp_path: Path, smtp: OAuthSmtp, command: str, auth: str = "xoauth2") -> Path:
    path = tmp_path / "config.toml"
    path.write_text(
        f'[smtp]\nhost = "127.0.0.1"\nport = {smtp.port}\nsecurity = "plain"\n'
        f'user = "{USER}"\nto = "alex@example.org"\nfrom = "dayflow@example.org"\n'
        f'auth = "{auth}"\ntoken_command = {json.dumps(command)}\n'
    )
    return path


def secrets_nowhere(db: Path, count: Path, *texts: str) -> None:
    tokens = [f"token-{n}" for n in range(1, runs(count) + 1)]
    assert tokens
    for text in texts:
        assert not any(t in text for t in tokens), text
    if not is_pg(db):
        stored = b"".join(p.read_bytes() for p in db.parent.glob(db.name + "*"))
        assert not any(t.encode() in stored for t in tokens)


@pytest.mark.parametrize("auth", ["xoauth2", "oauthbearer"])
def test_the_brief_is_mailed_with_a_token(
    db_path: Path, tmp_path: Path, smtp: OAuthSmtp, auth: str
) -> None:
    command, count = token_script(tmp_path)
    env = {"DAYFLOW_CONFIG": str(config(tmp_path, smtp, command, auth))}
    result = run(db_path, "brief", "--deliver", "smtp", env=env)
    assert result.code == 0, result.err
    assert len(smtp.handler.messages) == 1 and runs(count) == 1
    assert smtp.handler.attempts == [(auth.upper(), True)]
    (done,) = listed_runs(db_path)
    secrets_nowhere(db_path, count, result.out, result.err, json.dumps(shown(db_path, done["id"])))


def test_a_535_fetches_the_token_again_and_the_retry_sends_once(
    db_path: Path, tmp_path: Path, smtp: OAuthSmtp
) -> None:
    smtp.accept("token-2")  # the first token the command prints has expired
    command, count = token_script(tmp_path)
    env = {"DAYFLOW_CONFIG": str(config(tmp_path, smtp, command))}
    result = run(db_path, "brief", "--deliver", "smtp", env=env)
    assert result.code == 0, result.err
    assert smtp.handler.attempts == [("XOAUTH2", False), ("XOAUTH2", True)]
    assert len(smtp.handler.messages) == 1 and runs(count) == 2
    secrets_nowhere(db_path, count, result.out, result.err)


def test_a_token_refused_twice_fails_the_delivery_in_one_line_and_resume_sends_it(
    db_path: Path, tmp_path: Path, smtp: OAuthSmtp
) -> None:
    smtp.accept("token-never")
    command, count = token_script(tmp_path)
    env = {"DAYFLOW_CONFIG": str(config(tmp_path, smtp, command))}
    failed = run(db_path, "brief", "--deliver", "smtp", env=env)
    assert failed.code == 6
    [line] = [x for x in failed.err.splitlines() if "refused the xoauth2 token" in x]
    assert f"smtp to 127.0.0.1:{smtp.port}: the server refused the xoauth2 token" in line
    assert "535 5.7.8 Username and Password not accepted" in line
    assert smtp.handler.messages == [] and runs(count) == 2
    smtp.accept("token-3")
    (failed_run,) = listed_runs(db_path)
    resumed = run(db_path, "resume", failed_run["id"], env=env)
    assert resumed.code == 0, resumed.err
    assert len(smtp.handler.messages) == 1 and runs(count) == 3
    secrets_nowhere(db_path, count, failed.out, failed.err, resumed.out, resumed.err)


def test_a_token_command_that_fails_is_a_failed_delivery_naming_its_status(
    db_path: Path, tmp_path: Path, smtp: OAuthSmtp
) -> None:
    leak = tmp_path / "leak.py"
    leak.write_text("import sys\nprint('SECRET-OUTPUT')\nsys.exit(2)\n")
    import sys

    env = {"DAYFLOW_CONFIG": str(config(tmp_path, smtp, f"{sys.executable} {leak}"))}
    failed = run(db_path, "brief", "--deliver", "smtp", env=env)
    assert failed.code == 6
    assert f"smtp to 127.0.0.1:{smtp.port}: token_command exited with status 2" in failed.err
    assert "SECRET-OUTPUT" not in failed.err + failed.out
    assert smtp.handler.attempts == []  # never connected: the token comes first


@pytest.mark.slow
@SMTP_KILLS
def test_sigkill_during_delivery_with_a_token_never_sends_twice(
    tmp_path: Path, smtp: OAuthSmtp, point: str, after_kill: int, after_resume: int, ok: bool
) -> None:
    smtp.accept(*(f"token-{n}" for n in range(1, 20)))
    command, count = token_script(tmp_path)
    cfg = config(tmp_path, smtp, command)
    db = tmp_path / "dayflow.db"
    killed, resumed = kill_then_resume(
        tmp_path, cfg, point, lambda: len(smtp.handler.messages), (after_kill, after_resume)
    )
    (done,) = listed_runs(db)
    (d,) = shown(db, done["id"])["deliveries"]
    assert d["ok"] is ok
    # One token, fetched for the one connection made: by the killed process when it got to
    # connect (while_sending, after_send), else by the resume that sent the mail.
    assert runs(count) == 1
    secrets_nowhere(db, count, killed.stdout, killed.stderr, resumed.stdout, resumed.stderr)
