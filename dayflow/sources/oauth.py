"""OAuth 2 access tokens from the user's own program: Dayflow owns no OAuth client.

People whose mail is behind OAuth (Microsoft 365, Outlook.com, Google Workspace) already have a
program that prints a fresh access token: oama, pizauth, `mutt_oauth2.py`. An entry names it,
the way mbsync's `PassCmd` and msmtp's `passwordeval` do:

    auth = "xoauth2"                       # password (the default) | xoauth2 | oauthbearer
    token_command = "oama access alex@contoso.example"   # or token_env = "WORK_TOKEN"

- The token is fetched when the account is first opened (the command's first line of output,
  trailing whitespace removed), kept in memory for the account's other folders and
  connections (`Accounts`: one per brief or `sources check`, an account being a host, a user and
  a token source), and never written: not in the database, a run's settings, an error or a log
  line. A token_command may open a browser, so it runs at most once per account, plus once
  after a refusal. The command runs through the same runner as `password_command`
  (`secret_command.secret_from_command`), so it is killed with everything it started when it
  hangs, and its output is never echoed. What cannot be a token (JSON, `Bearer ...`) is
  refused before anything is sent.
- A server that refuses a token (IMAP NO, SMTP 535, HTTP 401) gets one more try with a token
  fetched again (`Credential.refused`): an access token lives about an hour, and the program
  refreshes it when asked. A second refusal is `AuthRefused`, one line naming the source, the
  mechanism and the server's own words (the token hidden in them), remembered for the
  account's other folders.
- IMAP and SMTP send SASL `XOAUTH2` (Google's and Microsoft's) or `OAUTHBEARER` (RFC 7628); HTTP
  sources (CalDAV, a private ICS feed) send `Authorization: Bearer`.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from dayflow.errors import SourceError
from dayflow.sources.secrets import server_words

__all__ = ["server_words"]  # re-exported: the readers show a server's words through it

AUTH_MECHANISMS = ("password", "xoauth2", "oauthbearer")
PASSWORD_KEYS = ("password_command", "password_env")
TOKEN_KEYS = ("token_command", "token_env")
BEARER = "bearer"  # what an HTTP source with a token sends, whichever SASL name was written
MAX_TOKEN = 16 * 1024  # a JWT is 1-4 KB; a line longer than this is not a token


class AuthRefused(SourceError):
    """The server refused the credential, twice (after a fresh token) when it was a token.
    The message names the source, the mechanism and the server's words, never the token."""


class TokenUnavailable(SourceError):
    """`token_command` / `token_env` gave no token (the message never holds its output)."""


def auth_problems(entry: Mapping[str, Any], *, http: bool = False) -> tuple[str | None, list[str]]:
    """The mechanism an entry uses and what is wrong with its credential keys, each problem a
    phrase that follows the entry's name ("both a password and a token given ...").

    The mechanism is `auth` as written, else `xoauth2` when a token source is given (`bearer`
    for an HTTP source), else `password` when a password source is; None for neither."""
    problems: list[str] = []
    given = {k for k in (*PASSWORD_KEYS, *TOKEN_KEYS) if entry.get(k) not in (None, "")}
    password = [k for k in PASSWORD_KEYS if k in given]
    token = [k for k in TOKEN_KEYS if k in given]
    auth = entry.get("auth")
    if auth is not None and auth not in AUTH_MECHANISMS:
        problems.append(f"'auth' must be one of {', '.join(AUTH_MECHANISMS)}, got {auth!r}")
        auth = None
    if len(token) == 2:
        problems.append("both 'token_command' and 'token_env' given; keep one of them")
    if password and token:
        problems.append(
            f"both a password ({password[0]!r}) and a token ({token[0]!r}) given; keep one of them"
        )
    elif token and auth == "password":
        problems.append(
            f'{token[0]!r} gives an OAuth token, but auth = "password"; write '
            'auth = "xoauth2" or "oauthbearer" (or use password_command / password_env)'
        )
    elif password and auth in ("xoauth2", "oauthbearer"):
        problems.append(
            f'auth = "{auth}" takes an OAuth token from token_command or token_env, '
            f"not {password[0]!r}"
        )
    elif not token and auth in ("xoauth2", "oauthbearer"):
        problems.append(f'auth = "{auth}" needs token_command or token_env for its token')
    if token:
        mechanism = BEARER if http else (auth if auth in ("xoauth2", "oauthbearer") else "xoauth2")
    elif password or auth == "password":
        mechanism = "password"
    else:
        mechanism = None
    return mechanism, problems


# ------------------------------------------------------------------------------ the token


def fetch_token(
    source: str,
    *,
    command: str | None,
    env_name: str | None,
    timeout: float,
    env: Mapping[str, str],
) -> str:
    """A token, fetched now: the first line `command` prints (trailing whitespace removed), or
    the value of the environment variable `env_name`. TokenUnavailable names the source and
    the command's exit status, never its output."""
    if env_name:
        value = (env.get(env_name) or "").strip()
        if not value:
            raise TokenUnavailable(
                f"{source}: the environment variable {env_name} (token_env) is not set"
            )
        return _checked(source, value, "token_env")
    if not command:
        raise TokenUnavailable(f"{source}: no token_command or token_env configured")
    from dayflow.sources.secret_command import SecretCommandFailed, secret_from_command

    try:
        line = secret_from_command(command, timeout, env=env, key="token_command", what="token")
    except SecretCommandFailed as err:
        raise TokenUnavailable(f"{source}: {err}") from None
    return _checked(source, line.rstrip(), "token_command")


# RFC 6750's b64token, all a token can be ("=" let in anywhere, as some providers write it).
_B64TOKEN = re.compile(r"[A-Za-z0-9\-._~+/=]+")


def _checked(source: str, token: str, key: str) -> str:
    # A token goes on a protocol line (base64 in SASL, raw in an HTTP header): only the
    # characters of RFC 6750's b64token, and never a line break. What cannot be a token (JSON,
    # a quoted string, "Bearer ...") is refused before anything is sent, saying what it was.
    if not token:
        raise TokenUnavailable(f"{source}: {key} printed no token")
    if len(token) > MAX_TOKEN:
        raise TokenUnavailable(
            f"{source}: what {key} gave is not an OAuth access token (it is longer than "
            "16 KB); not sent"
        )
    if not _B64TOKEN.fullmatch(token):
        raise TokenUnavailable(f"{source}: what {key} gave {_not_a_token(token)}; not sent")
    return token


def _not_a_token(token: str) -> str:
    """Why a line is not an access token, in words that follow "what token_command gave",
    with how to get the token out of what it is (never quoting it)."""
    if token[:1] in ("{", "["):
        return (
            "is JSON, not an access token (print the token alone: for `az account "
            "get-access-token` add `--query accessToken -o tsv`, or write "
            "sh -c '... | jq -r .accessToken')"
        )
    if token[:1] in ('"', "'"):
        return "is a quoted string, not a bare access token (print it without quotes: jq -r)"
    if token.split(None, 1)[0].lower() in ("bearer", "token"):
        return "starts with 'Bearer'; print the token alone (Dayflow adds the 'Bearer')"
    return (
        "is not an OAuth access token (it holds spaces, control characters, non-ASCII or "
        "punctuation no token has)"
    )


@dataclass
class Credential:
    """The token of one account, shared by the sources that read it (an inbox and its sent
    folder, a calendar), and how to get another.

    `take()` gives the account's token, fetched on the first call only: a `token_command` may
    open a browser, so it runs once per account and process (`Accounts`), plus once more after a
    refusal (`refused`). A command that gave no token, and a token refused twice, are
    remembered: the account's other folders get the same error without running it again. The
    token is kept in memory only, and never shown by repr."""

    source: str
    mechanism: str  # xoauth2 | oauthbearer | bearer
    command: str | None = None
    env_name: str | None = None
    timeout: float = 30.0
    env: Mapping[str, str] | None = field(default=None, repr=False)
    retry_left: bool = True
    sent: bool = False  # a token went to the server (`sources check`: "sent, no answer")
    accepted: bool = False  # and the server took it
    moved: str | None = None  # the answer came from another origin, where it was not sent
    _held: str | None = field(default=None, repr=False)
    _failed: SourceError | None = field(default=None, repr=False)
    _spent: set[str] = field(default_factory=set, repr=False)  # the tokens refused so far
    _lock: threading.RLock = field(default_factory=threading.RLock, repr=False)

    def prefetch(self) -> None:
        """Fetch the token now, before connecting (a failing command never leaves a
        connection open)."""
        self.take()

    def take(self) -> str:
        with self._lock:
            if self._failed is not None:
                raise type(self._failed)(*self._failed.args)
            if self._held is None:
                try:
                    self._held = self._fetch()
                except TokenUnavailable as err:
                    self._failed = err
                    raise
            return self._held

    def held(self) -> tuple[str, ...]:
        """The token held now, to hide from what a server says (`secrets.server_words`)."""
        return (self._held,) if self._held else ()

    def _fetch(self) -> str:
        return fetch_token(
            self.source,
            command=self.command,
            env_name=self.env_name,
            timeout=self.timeout,
            env=self.env or {},  # the runtime's (`Config.file_env`); none: an empty one
        )

    def refused(self, words: str, token: str | None = None) -> None:
        """The server refused `token`: return when the one retry (with a fresh token) is
        left, else raise AuthRefused naming the mechanism and the server's words (the token
        hidden in them), and remember it for the account's other folders. A token already
        replaced (another folder's refusal fetched the next one) costs no retry."""
        with self._lock:
            if self._failed is not None:
                raise type(self._failed)(*self._failed.args)
            if token is not None and token != self._held and token in self._spent:
                return  # refused already, and replaced (or being replaced): no second retry
            if token is not None:
                self._spent.add(token)
            hidden = [token, self._held]
            if self.retry_left:
                self.retry_left = False
                self._held = None
                return
            self._held = None
            self._failed = refusal(self.source, self.mechanism, words, secrets=hidden)
            raise type(self._failed)(*self._failed.args)

    def shown(self, words: str) -> str:
        """What a server said, with this account's token hidden."""
        return server_words(words, self.held())


def refusal(
    source: str,
    mechanism: str,
    words: str,
    *,
    twice: bool = True,
    secrets: Iterable[str | None] = (),
) -> AuthRefused:
    said = server_words(words, secrets) or "no reason given"
    if mechanism == "password":
        return AuthRefused(f"{source}: the server refused the user name or password ({said})")
    again = " (and again with a fresh token)" if twice else ""
    return AuthRefused(f"{source}: the server refused the {mechanism} token{again}: {said}")


class Accounts:
    """The accounts of one brief or `sources check` (one process's reading of its config),
    each with its one Credential and its one password: an account is a host, a user and where
    its secret comes from, so an inbox and its sent folder, read over two connections, share
    one token (one refusal) or one password_command run."""

    def __init__(self) -> None:
        self._tokens: dict[tuple[str, ...], Credential] = {}
        self._passwords: dict[tuple[str, ...], str | SourceError] = {}
        self._lock = threading.RLock()

    def credential(
        self,
        source: str,
        mechanism: str,
        *,
        host: str,
        user: str,
        command: str | None,
        env_name: str | None,
        timeout: float,
        env: Mapping[str, str] | None,
    ) -> Credential:
        key = (host.lower(), user, mechanism, command or "", env_name or "")
        with self._lock:
            found = self._tokens.get(key)
            if found is None:
                found = Credential(source, mechanism, command, env_name, timeout, env=env)
                self._tokens[key] = found
            return found

    def password(self, key: tuple[str, ...], fetch: Callable[[], str]) -> str:
        """The account's password, `fetch`ed once (a failure too is remembered: a
        password_command that asks for a passphrase is not asked twice)."""
        with self._lock:
            if key not in self._passwords:
                try:
                    self._passwords[key] = fetch()
                except SourceError as err:
                    self._passwords[key] = err
            got = self._passwords[key]
        if isinstance(got, SourceError):
            raise type(got)(*got.args)
        return got


def token_credential(
    source: str,
    mechanism: str | None,
    *,
    command: str | None,
    env_name: str | None,
    timeout: float,
    env: Mapping[str, str] | None,
    accounts: Accounts | None = None,
    host: str = "",
    user: str = "",
) -> Credential | None:
    """The Credential of an entry whose mechanism takes a token, else None: the account's
    one Credential in `accounts` (host, user and token source), else one of its own."""
    if mechanism in (None, "password"):
        return None
    if accounts is None:
        return Credential(source, mechanism, command, env_name, timeout, env=env)
    return accounts.credential(
        source,
        mechanism,
        host=host,
        user=user,
        command=command,
        env_name=env_name,
        timeout=timeout,
        env=env,
    )


# ------------------------------------------------------------------------- SASL payloads


def xoauth2(user: str, token: str) -> bytes:
    """Google's and Microsoft's XOAUTH2 initial response (before base64)."""
    return f"user={user}\x01auth=Bearer {token}\x01\x01".encode()


def oauthbearer(user: str, host: str, port: int, token: str) -> bytes:
    """RFC 7628 OAUTHBEARER initial response (before base64): the GS2 header with the user
    as authzid (`,` and `=` escaped as RFC 5801 says), then host, port and the token."""
    authzid = user.replace("=", "=3D").replace(",", "=2C")
    return f"n,a={authzid},\x01host={host}\x01port={port}\x01auth=Bearer {token}\x01\x01".encode()


def sasl_payload(mechanism: str, user: str, host: str, port: int, token: str) -> bytes:
    """The initial response of `mechanism`. The fields are separated by ^A: a user name or
    host holding a control character would forge one, so it is refused."""
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in user + host):
        raise SourceError("the user name or host holds a control character; the token is not sent")
    if mechanism == "oauthbearer":
        return oauthbearer(user, host, port, token)
    return xoauth2(user, token)


def sasl_error_reply(mechanism: str) -> bytes:
    """What a client answers to the server's error challenge (a JSON status) so the server
    can finish with its refusal: empty for XOAUTH2, a single ^A for OAUTHBEARER (RFC 7628
    3.2.3)."""
    return b"\x01" if mechanism == "oauthbearer" else b""
