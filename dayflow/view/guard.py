"""Who may ask the view anything: the URL's random token (as Jupyter's), the Host a request
names (no DNS rebinding), and for a write its CSRF token and its Origin.

Why the token travels in every URL and never in a cookie: cookies ignore ports, so a cookie
set by the view on 127.0.0.1:8001 would be sent to whatever else listens on 127.0.0.1, and
another loopback port is the same *site* (SameSite does not help). Pages carry the token in
their links and forms, and say `Referrer-Policy: same-origin`, so no link out leaks it (not
`no-referrer`: under it Chromium sends `Origin: null` with the view's own forms).
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass, field
from urllib.parse import quote

TOKEN_PARAM = "token"
CSRF_FIELD = "csrf"
WILDCARDS = ("0.0.0.0", "::")
LOOPBACK = ("127.0.0.1", "::1", "localhost")


def _new() -> str:
    return secrets.token_urlsafe(32)


@dataclass(frozen=True)
class Guard:
    """The secrets of one view process and the addresses it answers to."""

    host: str
    port: int
    token: str = field(default_factory=_new)
    csrf: str = field(default_factory=_new)

    @property
    def origins(self) -> frozenset[str]:
        """The `Host` headers (and, with http://, the Origins) the view's own pages send."""
        names = {self.host}
        if self.host == "127.0.0.1":
            names.add("localhost")
        if ":" in self.host and not self.host.startswith("["):
            names = {f"[{self.host}]"}
        return frozenset(f"{name}:{self.port}" for name in names)

    @property
    def url(self) -> str:
        """The address to open, token included."""
        host = "127.0.0.1" if self.host == "0.0.0.0" else "::1" if self.host == "::" else self.host
        name = f"[{host}]" if ":" in host else host
        return f"http://{name}:{self.port}/?{TOKEN_PARAM}={self.token}"

    def link(self, path: str) -> str:
        """`path` (the view's own, starting with /) with the token."""
        joiner = "&" if "?" in path else "?"
        return f"{path}{joiner}{TOKEN_PARAM}={quote(self.token, safe='')}"

    def token_ok(self, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(given.encode(), self.token.encode())

    @property
    def everywhere(self) -> bool:
        """Listening on every address (`--host 0.0.0.0`): any Host may be named."""
        return self.host in WILDCARDS

    def host_ok(self, host: str | None) -> bool:
        if host is None:
            return False
        return self.everywhere or host.lower() in self.origins

    def origin_ok(self, origin: str | None, fetch_site: str | None, host: str | None) -> bool:
        """A write's Origin must be the view's own, the address its page was read from (a
        browser sends one with every POST); `Sec-Fetch-Site`, when sent, must say
        same-origin."""
        if fetch_site is not None and fetch_site != "same-origin":
            return False
        if origin is None or host is None or not self.host_ok(host):
            return False
        return origin.lower() == f"http://{host.lower()}"

    def csrf_ok(self, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(given.encode(), self.csrf.encode())


@dataclass(frozen=True)
class Visit:
    """One request's page: the guard whose token its links carry, the path it shows (where a
    button comes back to) and what the last correction said, if any."""

    guard: Guard
    here: str = "/"
    said: str | None = None

    def link(self, path: str) -> str:
        return self.guard.link(path)
