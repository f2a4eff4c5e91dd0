"""The token itself (issue 20): what a token program may print, the SASL responses sent, and
hostile servers (a refusal that would steer a terminal, a server that challenges for ever)."""

from __future__ import annotations

import base64
import contextlib
import os
import socket
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from dayflow.errors import SourceError
from dayflow.sources.imap import ImapSource
from dayflow.sources.oauth import (
    AuthRefused,
    TokenUnavailable,
    fetch_token,
    oauthbearer,
    refusal,
    sasl_payload,
    xoauth2,
)
from tests.imapserver import imap_spec


def token(value: str) -> str:
    return fetch_token("work", command=None, env_name="T", timeout=5, env={"T": value})


def test_the_token_is_the_first_line_with_trailing_whitespace_removed(tmp_path: Path) -> None:
    script = tmp_path / "p.py"
    script.write_text("print('ya29.a0AfB_byC  \\t')\nprint('second line')\n")
    got = fetch_token(
        "work", command=f"{sys.executable} {script}", env_name=None, timeout=10, env=os.environ
    )
    assert got == "ya29.a0AfB_byC"
    assert token("eyJ0eXAi.eyJhdWQi.sig\n") == "eyJ0eXAi.eyJhdWQi.sig"


@pytest.mark.parametrize(
    "value",
    ["two words", "tab\there", "nul\x00x", "ctrl\x01a", "caf\u00e9", "x" * 20000],
)
def test_what_is_not_a_token_is_never_sent_nor_echoed(value: str) -> None:
    with pytest.raises(TokenUnavailable) as caught:
        token(value)
    line = str(caught.value)
    assert line.startswith("work: what token_env gave is not an OAuth access token")
    assert value[:6] not in line and "\n" not in line


@pytest.mark.parametrize(
    ("printed", "said"),
    [
        ('{\n  "accessToken": "eyJ0eXAi.x.y",\n  "expiresOn": "2026-12-02"\n}\n', "is JSON"),
        ('{"accessToken": "eyJ0eXAi.x.y", "tokenType": "Bearer"}\n', "is JSON"),
        ('"eyJ0eXAi.x.y"\n', "is a quoted string"),
        ("Bearer eyJ0eXAi.x.y\n", "starts with 'Bearer'"),
        ("access_token=abc;expires=3600\n", "is not an OAuth access token"),
    ],
)
def test_what_a_token_command_prints_that_cannot_be_a_token_is_refused_with_a_hint(
    tmp_path: Path, printed: str, said: str
) -> None:
    """Issue 32.27: `az account get-access-token` prints JSON; its first line, `{`, was sent
    as the token. What cannot be an RFC 6750 token is refused before any server is
    contacted, saying what it is (and, for JSON, how to print the token alone)."""
    script = tmp_path / "az.py"
    script.write_text(f"import sys\nsys.stdout.write({printed!r})\n")
    spec = imap_spec(1, auth="xoauth2", token_command=f"{sys.executable} {script}", timeout=5.0)
    with pytest.raises(TokenUnavailable) as caught:  # port 1: any connection would fail
        ImapSource(spec).status()
    line = str(caught.value)
    assert line.startswith(f"work: what token_command gave {said}") and "not sent" in line
    assert "eyJ0eXAi" not in line and "abc" not in line
    if said == "is JSON":
        assert "--query accessToken -o tsv" in line and "jq -r .accessToken" in line


def test_the_sasl_responses_are_the_documented_bytes() -> None:
    assert xoauth2("a@b.c", "T0K") == b"user=a@b.c\x01auth=Bearer T0K\x01\x01"
    assert (
        oauthbearer("a,b=c@d", "imap.gmail.com", 993, "T0K")
        == b"n,a=a=2Cb=3Dc@d,\x01host=imap.gmail.com\x01port=993\x01auth=Bearer T0K\x01\x01"
    )
    with pytest.raises(SourceError, match="control character; the token is not sent"):
        sasl_payload("xoauth2", "a@b.c\x01auth=Bearer evil", "h", 1, "T0K")


def test_a_refusal_is_one_printable_line() -> None:
    line = str(refusal("work", "xoauth2", "NO \x1b[31mred\x1b[0m\r\nA2 DELETE x\x07"))
    assert "\x1b" not in line and "\x07" not in line and "\n" not in line and "\r" not in line
    assert line.startswith("work: the server refused the xoauth2 token (and again")
    assert isinstance(refusal("w", "xoauth2", ""), AuthRefused)


@contextlib.contextmanager
def endless_challenger() -> Iterator[tuple[int, list[bytes]]]:
    """An IMAP server offering XOAUTH2 that answers every line after AUTHENTICATE with another
    continuation, until the client aborts with `*`."""
    lines: list[bytes] = []
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)

    def serve() -> None:
        with contextlib.suppress(OSError):
            conn, _ = listener.accept()
            with conn, conn.makefile("rwb") as f:
                f.write(b"* OK [CAPABILITY IMAP4rev1 AUTH=XOAUTH2] ready\r\n")
                f.flush()
                tag = b""
                while line := f.readline():
                    lines.append(line)
                    if b" AUTHENTICATE " in line:
                        tag = line.split()[0]
                    elif line.strip() == b"*":
                        f.write(tag + b" BAD aborted\r\n")
                        f.flush()
                        continue
                    elif b" CAPABILITY" in line:
                        reply = b"* CAPABILITY IMAP4rev1 AUTH=XOAUTH2\r\n"
                        f.write(reply + line.split()[0] + b" OK done\r\n")
                        f.flush()
                        continue
                    elif b" LOGOUT" in line:
                        f.write(b"* BYE\r\n" + line.split()[0] + b" OK done\r\n")
                        f.flush()
                        return
                    if tag:
                        f.write(b"+ " + base64.b64encode(b'{"status":"401"}') + b"\r\n")
                        f.flush()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield int(listener.getsockname()[1]), lines
    finally:
        listener.close()
        thread.join(5)


def test_a_server_that_challenges_for_ever_gets_an_abort_not_a_loop() -> None:
    with endless_challenger() as (port, lines):
        spec = imap_spec(
            port, "a@b.c", security="plain", auth="xoauth2", token_env="T", timeout=5.0
        )
        with pytest.raises(SourceError) as caught:
            ImapSource(spec, env={"T": "T0K"}).status()
    line = str(caught.value)
    assert line.startswith("work: AUTHENTICATE XOAUTH2 failed") and "\n" not in line
    assert lines[-1].strip() == b"*"  # the client gave up after answering the error once
    assert len(lines) == 5  # CAPABILITY, AUTHENTICATE, the payload, the answer, the abort


def test_an_accounts_token_is_fetched_once_and_a_stale_refusal_costs_no_retry(
    tmp_path: Path,
) -> None:
    """Issue 31.4: one Credential per account (`Accounts`): the token is fetched once for
    every folder; the sent folder's refusal of a token the inbox already replaced is no
    second refusal; a second real one is remembered, and no folder runs the command again."""
    from dayflow.sources.oauth import Accounts, Credential, token_credential
    from tests.oauthservers import runs, token_script

    command, count = token_script(tmp_path)
    accounts = Accounts()

    def credential(host: str = "imap.example.org", user: str = "alex") -> Credential:
        found = token_credential(
            "work", "xoauth2", command=command, env_name=None, timeout=10, env=None,
            accounts=accounts, host=host, user=user,
        )  # fmt: skip
        assert found is not None
        return found

    inbox, sent = credential(), credential("IMAP.example.org")
    assert inbox is sent and credential(user="bob") is not inbox
    assert inbox.take() == sent.take() == "token-1" and runs(count) == 1
    inbox.refused("NO expired", "token-1")
    assert inbox.take() == "token-2" and runs(count) == 2
    sent.refused("NO expired", "token-1")  # stale: the inbox replaced it already
    assert sent.take() == "token-2" and runs(count) == 2
    with pytest.raises(AuthRefused, match=r"and again with a fresh token\): NO … is bad$"):
        sent.refused("NO token-2 is bad", "token-2")
    with pytest.raises(AuthRefused):
        inbox.take()
    assert runs(count) == 2
