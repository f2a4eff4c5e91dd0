"""Servers that take OAuth 2 access tokens, for the tests of issue 20, all on 127.0.0.1.

- IMAP: pymap (the tests' usual server) with SASL `XOAUTH2` and `OAUTHBEARER` mechanisms that
  accept one token: the current content of a file, so a test "expires" a token by writing the
  next one. A refusal is what Gmail does: a continuation carrying a JSON status, then, after the
  client's empty (XOAUTH2) or ^A (OAUTHBEARER) answer, `NO [AUTHENTICATIONFAILED]`. With
  `sasl_ir` the server offers `SASL-IR` and takes the initial response on the AUTHENTICATE line;
  without it, only after an empty continuation. Run as a script (`python oauthservers.py imap
  PORT TOKEN_FILE [sasl-ir]`) it serves; `oauth_imap` starts it behind the recording proxy of
  `tests.imapserver`.
- SMTP: an aiosmtpd handler whose `auth_XOAUTH2` / `auth_OAUTHBEARER` accept the token in the
  same kind of file, 535 otherwise, counting every AUTH it sees.
- A token program: `token_script` writes a command that appends a line to a count file each
  time it runs and prints `token-N` for its N-th run, so a test knows how often Dayflow ran it
  and which token each run gave.

The bearer-checking wrapper around Radicale is `tests.davserver.DavServer(root, bearer=...)`.
"""

from __future__ import annotations

import base64
import contextlib
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.imapserver import USER, Proxy, _wait_for, free_port, stop_server

ERROR_JSON = b'{"status":"401","schemes":"bearer","scope":"https://mail.google.com/"}'


def parse_sasl(mechanism: str, blob: bytes) -> tuple[str, str] | None:
    """(user, token) from an XOAUTH2 or OAUTHBEARER initial response, None when malformed."""
    if mechanism.upper() == "XOAUTH2":
        found = re.fullmatch(rb"user=([^\x01]*)\x01auth=Bearer ([^\x01]*)\x01\x01", blob)
        if found is None:
            return None
        return found.group(1).decode(), found.group(2).decode()
    found = re.fullmatch(rb"n,a=([^,]*),\x01((?:[a-z]+=[^\x01]*\x01)*)\x01", blob)
    if found is None:
        return None
    user = found.group(1).decode().replace("=2C", ",").replace("=3D", "=")
    pairs = dict(p.split(b"=", 1) for p in found.group(2).split(b"\x01") if p)
    auth = pairs.get(b"auth", b"")
    if not auth.startswith(b"Bearer ") or b"host" not in pairs or b"port" not in pairs:
        return None
    return user, auth[len(b"Bearer ") :].decode()


def accepted(token_file: Path) -> set[str]:
    """The tokens a server takes now: the lines of its file."""
    return set(token_file.read_text().split())


# ------------------------------------------------------------------------------- IMAP


def _serve_imap(port: str, token_file: str, sasl_ir: bool) -> None:
    from base64 import b64decode, b64encode

    import pymap.config
    from pymap.context import current_command
    from pymap.exceptions import InvalidAuth
    from pymap.imap import IMAPConnection
    from pymap.main import main
    from pymap.parsing.command.nonauth import AuthenticateCommand
    from pymap.parsing.response import ResponseContinuation
    from pysasl import SASLAuth
    from pysasl.creds.plain import PlainCredentials
    from pysasl.exception import AuthenticationError
    from pysasl.mechanism import ChallengeResponse, ServerChallenge, ServerMechanism

    from tests.imapserver import PASSWORD

    class Bearer(ServerMechanism):
        def server_attempt(self, responses: Any) -> Any:
            if not responses:
                raise ServerChallenge(b"")
            got = parse_sasl(self.name.decode(), responses[0].response)
            if got is not None and got[1] in accepted(Path(token_file)):
                return PlainCredentials(got[0], PASSWORD), None
            if len(responses) == 1:
                raise ServerChallenge(ERROR_JSON)
            raise InvalidAuth("Invalid credentials (Failure)")

    mechanisms = [Bearer(b"XOAUTH2"), Bearer(b"OAUTHBEARER")]
    pymap.config.IMAPConfig.tls_auth = property(  # type: ignore[method-assign,assignment]
        lambda self: SASLAuth([*SASLAuth.defaults().server_mechanisms, *mechanisms])
    )
    if sasl_ir:
        base_caps = pymap.config.IMAPConfig.initial_capability.fget  # type: ignore[attr-defined]
        pymap.config.IMAPConfig.initial_capability = property(  # type: ignore[method-assign,assignment]
            lambda self: [*base_caps(self), b"SASL-IR"]
        )
    original = AuthenticateCommand.parse.__func__  # type: ignore[attr-defined]

    def parse(cls: Any, buf: memoryview, params: Any) -> Any:
        raw = bytes(buf)
        found = re.match(rb"^ ([A-Za-z0-9_-]+) ([A-Za-z0-9+/=]+)\r?\n", raw)
        if found is None or not sasl_ir:
            return original(cls, buf, params)
        cmd = cls(params.tag, found.group(1).upper())
        cmd.initial = b64decode(found.group(2))
        return cmd, buf[found.end() :]

    AuthenticateCommand.parse = classmethod(parse)  # type: ignore[method-assign,assignment]

    async def authenticate(self: Any, state: Any, mech_name: bytes) -> Any:
        mech = state.auth.get_server(mech_name)
        if not mech:
            return None
        responses: list[Any] = []
        initial = getattr(current_command.get(None), "initial", None)
        if initial is not None:
            responses.append(ChallengeResponse(b"", initial))
        while True:
            try:
                creds, _ = mech.server_attempt(responses)
            except ServerChallenge as chal:
                await self.write_response(ResponseContinuation(b64encode(chal.data)))
                answer = bytes(await self.read_continuation(0)).rstrip(b"\r\n")
                if answer == b"*":
                    raise AuthenticationError("Authentication canceled.") from None
                responses.append(ChallengeResponse(chal.data, b64decode(answer)))
            else:
                return creds

    IMAPConnection.authenticate = authenticate  # type: ignore[method-assign]
    sys.argv = ["pymap", "--host", "127.0.0.1", "--port", port, "--no-tls", "dict"]
    main()


@dataclass
class OAuthImap:
    port: int  # pymap itself
    proxy: Proxy  # a recording plain proxy in front of it
    token_file: Path
    sasl_ir: bool

    def accept(self, *tokens: str) -> None:
        """Take these tokens from now on (and no other)."""
        self.token_file.write_text("".join(t + "\n" for t in tokens))


@contextlib.contextmanager
def oauth_imap(tmp: Path, *, token: str = "token-1", sasl_ir: bool = True) -> Iterator[OAuthImap]:
    """pymap accepting the token `token` (others with `accept`), with demouser's INBOX, and
    a recording plain proxy in front."""
    token_file = tmp / "imap-accepted-token"
    token_file.write_text(token + "\n")
    port = free_port()
    args = [sys.executable, "-m", "tests.oauthservers", "imap", str(port), str(token_file)]
    proc = subprocess.Popen(
        [*args, *(["sasl-ir"] if sasl_ir else [])],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        cwd=Path(__file__).resolve().parent.parent,
    )
    try:
        _wait_for(port, proc)
        proxy = Proxy(port).start()
        try:
            yield OAuthImap(port, proxy, token_file, sasl_ir)
        finally:
            proxy.stop()
    finally:
        stop_server(proc)


# ------------------------------------------------------------------------------- SMTP


@dataclass
class OAuthSmtpHandler:
    """An aiosmtpd handler that takes mail only after a token it accepts (the content of
    `token_file`), keeping every message and every AUTH attempt (mechanism, accepted)."""

    token_file: Path
    messages: list[bytes] = field(default_factory=list)
    attempts: list[tuple[str, bool]] = field(default_factory=list)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802
        if not session.authenticated:
            return "530 5.7.0 Authentication required"
        self.messages.append(envelope.original_content or envelope.content)
        return "250 Message accepted for delivery"

    async def auth_XOAUTH2(self, server: Any, args: list[str]) -> Any:  # noqa: N802
        return await self._bearer(server, args, "XOAUTH2")

    async def auth_OAUTHBEARER(self, server: Any, args: list[str]) -> Any:  # noqa: N802
        return await self._bearer(server, args, "OAUTHBEARER")

    async def _bearer(self, server: Any, args: list[str], mechanism: str) -> Any:
        from aiosmtpd.smtp import MISSING, AuthResult

        if len(args) > 1:
            blob = base64.b64decode(args[1])
        else:
            answer = await server.challenge_auth("")
            if answer is MISSING:
                return AuthResult(success=False, handled=True)
            blob = answer
        got = parse_sasl(mechanism, blob)
        ok = got is not None and got[0] == USER and got[1] in accepted(self.token_file)
        self.attempts.append((mechanism, ok))
        if ok:
            return AuthResult(success=True, auth_data=got[0] if got else None)
        # As Gmail does: a 334 with a JSON status, the client's empty answer, then 535.
        await server.challenge_auth(ERROR_JSON)
        return AuthResult(
            success=False, handled=False, message="535 5.7.8 Username and Password not accepted"
        )


# ------------------------------------------------------------------------- the program


def token_script(directory: Path, *, silent: bool = False, status: int = 0) -> tuple[str, Path]:
    """A token_command and the file it appends to each run: its N-th run prints `token-N`."""
    count = directory / "token-runs"
    script = directory / "print_token.py"
    body = [
        "import sys",
        f"p = {str(count)!r}",
        "open(p, 'a').write('ran\\n')",
        "n = len(open(p).read().splitlines())",
    ]
    if not silent:
        body.append("print(f'token-{n}  ')")  # trailing whitespace: removed by Dayflow
    body.append(f"sys.exit({status})")
    script.write_text("\n".join(body) + "\n")
    return f"{sys.executable} {script}", count


def runs(count: Path) -> int:
    return len(count.read_text().splitlines()) if count.exists() else 0


if __name__ == "__main__":
    if sys.argv[1] == "imap":
        _serve_imap(sys.argv[2], sys.argv[3], "sasl-ir" in sys.argv[4:])
