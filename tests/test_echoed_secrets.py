"""Issue 32.5: a server that echoes the credential in its refusal (IMAP `NO ...token...`, SMTP
535, HTTP's reason and `WWW-Authenticate`) got it stored. Whatever a server says is shown
through `secrets.server_words`, which hides the password or token Dayflow holds (as itself and
in the base64 a SASL exchange sends). Each server here is a loopback one that echoes."""

from __future__ import annotations

import base64
import datetime as dt
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from dayflow.errors import SourceError
from dayflow.sources.config import SourceSpec
from dayflow.sources.factory import SourceContext, open_calendar
from dayflow.sources.imap import ImapSource
from dayflow.sources.secrets import hide, server_words
from tests.httpkit import Loopback
from tests.imapserver import imap_spec

TOKEN = "ya29.Echo-Me-Token-9f8e7d6c5b4a"
PASSWORD = "s3cret-Passw0rd-echoed"


def test_a_secret_is_hidden_as_itself_and_inside_any_base64_of_it() -> None:
    for prefix in (b"", b"u", b"us", b"user=alex\x01auth=Bearer ", b"\0alex\0"):
        blob = base64.b64encode(prefix + TOKEN.encode() + b"\x01\x01").decode()
        shown = hide(f"NO bad response {blob}", [TOKEN])
        assert TOKEN not in shown and blob not in shown and "…" in shown
        # What is left of the base64 decodes to at most a few bytes of the token's ends.
        left = shown.removeprefix("NO bad response ").split("…")
        assert len(left) == 2 and len(left[1]) <= 8
    assert server_words("a\x1b[31m\r\nb  c", ["zzz"]) == "a b c"  # the escape whole


# --- IMAP ---------------------------------------------------------------------------------


class EchoImap:
    """A one-connection-at-a-time IMAP server that refuses AUTHENTICATE and EXAMINE quoting
    what it was sent, as a careless server's error does."""

    def __init__(self, *, hang_on_auth: bool = False) -> None:
        self.hang_on_auth = hang_on_auth  # take the token, never answer
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        caps = "IMAP4rev1 AUTH=XOAUTH2 AUTH=PLAIN SASL-IR"
        out = conn.makefile("rwb")
        out.write(f"* OK [CAPABILITY {caps}] echo ready\r\n".encode())
        out.flush()
        for raw in out:
            line = raw.decode().rstrip("\r\n")
            tag, _, rest = line.partition(" ")
            verb = rest.split(" ", 1)[0].upper()
            if verb == "CAPABILITY":
                reply = f"* CAPABILITY {caps}\r\n{tag} OK done\r\n"
            elif verb == "AUTHENTICATE" and self.hang_on_auth:
                continue
            elif verb == "AUTHENTICATE":
                blob = rest.split()[-1]
                said = base64.b64decode(blob).decode("utf-8", "replace").replace("\x01", " ")
                reply = f"{tag} NO [AUTHENTICATIONFAILED] {blob} is bad: {said}\r\n"
            elif verb == "LOGIN":
                reply = f"{tag} OK [CAPABILITY {caps}] logged in as {rest}\r\n"
            elif verb == "EXAMINE":
                reply = f"{tag} NO no such folder for the login {PASSWORD} ({rest})\r\n"
            elif verb == "LOGOUT":
                out.write(f"* BYE\r\n{tag} OK bye\r\n".encode())
                out.flush()
                break
            else:
                reply = f"{tag} BAD {rest}\r\n"
            out.write(reply.encode())
            out.flush()
        out.close()
        conn.close()

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def echo_imap() -> Iterator[EchoImap]:
    server = EchoImap()
    try:
        yield server
    finally:
        server.close()


def test_an_imap_refusal_that_quotes_the_token_is_shown_without_it(echo_imap: EchoImap) -> None:
    spec = imap_spec(echo_imap.port, auth="xoauth2", token_env="TOK", security="plain", timeout=5.0)
    with pytest.raises(SourceError) as caught:
        ImapSource(spec, env={"TOK": TOKEN}).status()
    line = str(caught.value)
    assert "refused the xoauth2 token" in line and "…" in line, line
    assert TOKEN not in line and "Echo-Me" not in line
    payload = base64.b64encode(f"user=demouser\x01auth=Bearer {TOKEN}\x01\x01".encode())
    assert payload.decode() not in line


def test_an_imap_error_after_login_that_quotes_the_password_is_shown_without_it(
    echo_imap: EchoImap,
) -> None:
    spec = imap_spec(echo_imap.port, password_env="PW", security="plain", timeout=5.0)
    source = ImapSource(spec, env={"PW": PASSWORD})
    with pytest.raises(SourceError) as caught:
        source.status()
    source.close()
    line = str(caught.value)
    assert "EXAMINE" in line and "no such folder for the login …" in line, line
    assert PASSWORD not in line


# --- SMTP ---------------------------------------------------------------------------------


def test_an_smtp_535_that_quotes_the_password_or_token_is_shown_without_it(
    tmp_path: Path,
) -> None:
    from aiosmtpd.controller import Controller
    from aiosmtpd.smtp import AuthResult

    from dayflow.delivery.settings import DeliveryFailed, SmtpConfig
    from dayflow.delivery.smtp import send_mail
    from dayflow.sources.oauth import Credential
    from tests.test_delivery import free_port

    class Echo:
        async def auth_PLAIN(self, server: Any, args: list[str]) -> Any:  # noqa: N802
            said = base64.b64decode(args[1]).decode().replace("\0", " ")
            return AuthResult(success=False, handled=False, message=f"535 5.7.8 bad: {said}")

        async def auth_XOAUTH2(self, server: Any, args: list[str]) -> Any:  # noqa: N802
            said = base64.b64decode(args[1]).decode().replace("\x01", " ")
            return AuthResult(
                success=False, handled=False, message=f"535 5.7.8 {args[1]} refused: {said}"
            )

    port = free_port()
    controller = Controller(
        Echo(),
        hostname="127.0.0.1",
        port=port,
        auth_require_tls=False,
        auth_exclude_mechanism=["LOGIN"],
    )
    controller.start()
    try:
        cfg = SmtpConfig("127.0.0.1", port, "plain", "demouser", "d@x.org", ("a@x.org",))
        with pytest.raises(DeliveryFailed) as caught:
            send_mail(cfg, PASSWORD, b"Subject: x\r\n\r\nbody\r\n", lambda: None)
        line = str(caught.value)
        assert "refused the user name or password" in line and "…" in line, line
        assert PASSWORD not in line
        oauth = SmtpConfig(
            "127.0.0.1", port, "plain", "demouser", "d@x.org", ("a@x.org",), auth="xoauth2"
        )
        credential = Credential("smtp", "xoauth2", env_name="TOK", env={"TOK": TOKEN})
        with pytest.raises(DeliveryFailed) as caught:
            send_mail(
                oauth, None, b"Subject: x\r\n\r\nbody\r\n", lambda: None, credential=credential
            )
        line = str(caught.value)
        assert "refused the xoauth2 token" in line and "…" in line, line
        assert TOKEN not in line and "Echo-Me" not in line
    finally:
        controller.stop()


# --- HTTP ---------------------------------------------------------------------------------


def test_an_http_401_that_quotes_the_token_is_shown_without_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            given = str(self.headers.get("Authorization"))
            self.send_response(401, f"Unauthorized {given}")
            self.send_header(
                "WWW-Authenticate",
                f'Bearer error="invalid_token", error_description="{given} expired"',
            )
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    with Loopback(Handler) as http:
        spec = SourceSpec(
            table="calendar",
            name="feed",
            kind="ics",
            url=http.base_url + "/private.ics",
            auth="bearer",
            token_env="TOK",
            timeout=5.0,
            security="plain",
        )
        ctx = SourceContext(dt.date(2026, 11, 2), ZoneInfo("UTC"), {"TOK": TOKEN})
        with pytest.raises(SourceError) as caught:
            open_calendar(spec, ctx).events(first=dt.date(2026, 11, 2), last=dt.date(2026, 11, 3))
    line = str(caught.value)
    assert "refused the bearer token" in line and "HTTP 401 Unauthorized Bearer …" in line, line
    assert "error_description=Bearer … expired" in line
    assert TOKEN not in line


def test_a_servers_or_programs_words_keep_no_remnant_of_a_terminal_escape() -> None:
    """A token program's coloured stderr ("\\x1b[31m...") was shown as "[31mred ]0;title err":
    the ESC became a space and the rest of the sequence stayed."""
    from dayflow.sources.secrets import server_words, stderr_line

    said = "\x1b[31mred\x1b[0m \x1b]0;title\x07err \x9b2Jdone"
    assert server_words(said) == "red err done"
    assert stderr_line(f"{said}\nsecond\n".encode()) == "red err done"


def test_a_short_password_is_hidden_inside_its_own_base64_too() -> None:
    """AUTH LOGIN sends the password base64-encoded on its own; an SMTP server echoed it in
    its 535 and a five-character password was shown as 'QWIzeDk=' (base64 of 'Ab3x9'): the
    base64 forms were made only for secrets of six bytes or more."""
    for secret in ("Ab3x9", "pw", "1234"):
        alone = base64.b64encode(secret.encode()).decode()
        shown = hide(f"535 5.7.8 auth failed for dQ== {alone} ({alone.rstrip('=')})", [secret])
        assert alone not in shown and alone.rstrip("=") not in shown, shown
        assert "dQ==" in shown  # the user name's base64 is not the secret
