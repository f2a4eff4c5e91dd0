"""Calendars behind an OAuth token (issue 20): CalDAV (Radicale behind a bearer-checking WSGI
wrapper, as Google's CalDAV takes a token) and a private ICS feed, both sending
`Authorization: Bearer`; the one retry with a fresh token after a 401, a token refused twice in
one line, a bearer token never sent to another origin on a redirect, and the server's storage
unchanged."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from dayflow.errors import SourceUnreadable
from dayflow.sources.config import SourceSpec
from dayflow.sources.factory import SourceContext, check_source, open_calendar
from dayflow.sources.oauth import AuthRefused, TokenUnavailable
from tests.davserver import DavServer
from tests.httpkit import Loopback
from tests.oauthservers import runs, token_script

pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).parent / "ical"
MONDAY, SUNDAY = dt.date(2026, 11, 2), dt.date(2026, 11, 8)
CTX = SourceContext(MONDAY, ZoneInfo("Europe/Berlin"), {})


@pytest.fixture(scope="module")
def dav(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DavServer]:
    root = tmp_path_factory.mktemp("radicale-bearer")
    tokens = root / "accepted-tokens"
    tokens.write_text("token-2\n")
    with DavServer(root, bearer=tokens) as server:
        server.make_calendar("personal", "Personal")
        server.put("personal", "standup.ics", (FIXTURES / "recurrence.ics").read_bytes())
        yield server


def caldav(url: str, command: str) -> SourceSpec:
    return SourceSpec(
        table="calendar",
        name="gcal",
        kind="caldav",
        url=url,
        user="alex",
        auth="bearer",
        token_command=command,
        timeout=10.0,
        security="plain",  # the test server is http:// on loopback
    )


def test_caldav_sends_a_bearer_token_and_a_401_gets_one_retry_with_a_fresh_one(
    dav: DavServer, tmp_path: Path
) -> None:
    before, logged = dav.snapshot(), len(dav.auth())
    command, count = token_script(tmp_path)  # token-1 first: refused; token-2 taken
    calendar = open_calendar(caldav(dav.base_url + "/", command), CTX)
    events = calendar.events(first=MONDAY, last=SUNDAY)
    assert {e["title"] for e in events} >= {"Team standup"}
    assert runs(count) == 2  # once more after the 401, then kept for the source's requests
    seen = dav.auth()[logged:]
    assert seen[0] == "Bearer refused" and set(seen[1:]) == {"Bearer ok"} and len(seen) >= 3
    assert dav.snapshot() == before  # read-only
    assert {m for m, _ in dav.requests()} <= {"PROPFIND", "REPORT", "MKCALENDAR", "PUT"}


def test_caldav_refusing_the_token_twice_is_one_line_with_the_servers_words(
    dav: DavServer, tmp_path: Path
) -> None:
    leak = tmp_path / "t.py"
    leak.write_text("print('token-never')\n")
    import sys

    with pytest.raises(AuthRefused) as caught:
        open_calendar(caldav(dav.base_url + "/", f"{sys.executable} {leak}"), CTX).events(
            first=MONDAY, last=SUNDAY
        )
    line = str(caught.value)
    assert line.startswith("gcal: the server refused the bearer token (and again with a fresh")
    assert "HTTP 401" in line and "error_description=The token expired" in line
    assert "token-never" not in line and "\n" not in line
    result = check_source(caldav(dav.base_url + "/", f"{sys.executable} {leak}"), CTX)
    assert (result["ok"], result["auth"], result["accepted"]) == (False, "bearer", False)
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    ok = check_source(caldav(dav.base_url + "/", token_script(fresh)[0]), CTX)
    assert (ok["ok"], ok["auth"], ok["accepted"]) == (True, "bearer", True)


# --- a private ICS feed on two loopback origins ------------------------------------------

FEED = (FIXTURES / "recurrence.ics").read_bytes()


class Origin:
    """One loopback origin: `/private.ics` wants `Bearer <one of tokens>`; `/moved.ics`
    redirects to `target` (another origin); every request's Authorization is kept."""

    def __init__(self, tokens: set[str]) -> None:
        self.tokens = tokens
        self.target = ""
        self.seen: list[tuple[str, str | None]] = []
        origin = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                given = self.headers.get("Authorization")
                origin.seen.append((self.path, given))
                if self.path in ("/moved.ics", "/here.ics"):
                    self.send_response(302)
                    self.send_header(
                        "Location", origin.target if self.path == "/moved.ics" else "/private.ics"
                    )
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if given not in {f"Bearer {t}" for t in origin.tokens} and (
                    self.path != "/public.ics"
                ):
                    self.send_response(401)
                    self.send_header("WWW-Authenticate", 'Bearer error="invalid_token"')
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/calendar")
                self.send_header("Content-Length", str(len(FEED)))
                self.end_headers()
                self.wfile.write(FEED)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._http = Loopback(Handler).start()

    @property
    def url(self) -> str:
        return self._http.base_url

    def close(self) -> None:
        self._http.close()


@pytest.fixture
def origins() -> Iterator[tuple[Origin, Origin]]:
    home, elsewhere = Origin({"token-2"}), Origin(set())
    try:
        yield home, elsewhere
    finally:
        home.close()
        elsewhere.close()


def feed(url: str, command: str | None = None, env_name: str | None = None) -> SourceSpec:
    return SourceSpec(
        table="calendar",
        name="feed",
        kind="ics",
        url=url,
        auth="bearer",
        token_command=command,
        token_env=env_name,
        timeout=5.0,
        security="plain",  # the test server is http:// on loopback
    )


def test_a_private_feed_takes_a_bearer_token_with_one_retry(
    origins: tuple[Origin, Origin], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    home, _ = origins
    command, count = token_script(tmp_path)
    events = open_calendar(feed(home.url + "/private.ics", command), CTX).events(
        first=MONDAY, last=SUNDAY
    )
    assert events and runs(count) == 2
    assert home.seen == [("/private.ics", "Bearer token-1"), ("/private.ics", "Bearer token-2")]
    ctx = SourceContext(MONDAY, CTX.tz, {"FEED_TOKEN": "token-1"})
    with pytest.raises(AuthRefused, match=r"^feed: the server refused the bearer token"):
        open_calendar(feed(home.url + "/private.ics", env_name="FEED_TOKEN"), ctx).events(
            first=MONDAY, last=SUNDAY
        )
    with pytest.raises(TokenUnavailable, match=r"^feed: the environment variable FEED_TOKEN"):
        open_calendar(feed(home.url + "/private.ics", env_name="FEED_TOKEN"), CTX).events(
            first=MONDAY, last=SUNDAY
        )


def test_a_bearer_token_is_never_sent_to_another_origin_on_a_redirect(
    origins: tuple[Origin, Origin], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    home, elsewhere = origins
    home.target = elsewhere.url + "/private.ics"
    command, count = token_script(tmp_path)
    with pytest.raises(SourceUnreadable) as caught:  # the other origin, given no token: 401
        open_calendar(feed(home.url + "/moved.ics", command), CTX).events(first=MONDAY, last=SUNDAY)
    # Issue 32.25: not "the server refused the token", and no retry: where it went, and why
    # the token was not sent there.
    line = str(caught.value)
    assert not isinstance(caught.value, AuthRefused) and runs(count) == 1, line
    assert f"redirected to {elsewhere.url}/…, another origin, which answered HTTP 401" in line
    assert "the token is never sent to another origin, so it was not sent there" in line
    assert home.seen and home.seen[0][1] == "Bearer token-1"
    assert elsewhere.seen and all(given is None for _, given in elsewhere.seen), elsewhere.seen
    # On the same origin the token goes along: the feed is read.
    home.seen.clear()
    home.tokens = {"token-2"}
    events = open_calendar(feed(home.url + "/here.ics", command), CTX).events(
        first=MONDAY, last=SUNDAY
    )
    assert events and home.seen == [
        ("/here.ics", "Bearer token-1"),
        ("/private.ics", "Bearer token-1"),
        ("/here.ics", "Bearer token-2"),
        ("/private.ics", "Bearer token-2"),
    ]


def test_a_token_is_never_sent_over_plain_http_unless_the_entry_says_plain(
    origins: tuple[Origin, Origin], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 32.7: IMAP's rule (a token only over TLS unless security = "plain") for the
    calendars too: refused when the config is read, and again where it would be sent."""
    from dataclasses import replace

    from tests.conftest import config_problems, parse_sources

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    home, _ = origins
    command, count = token_script(tmp_path)
    for kind, extra in (("ics", ""), ("caldav", 'user = "alex"\n')):
        toml = (
            f'[[calendar]]\nname = "c"\nkind = "{kind}"\nurl = "http://cal.example.org/x"\n'
            f'{extra}token_command = "oama access alex"\n'
        )
        [problem] = config_problems(toml)
        assert "a token is sent only over https:// (the url is plain http://)" in problem
        assert 'security = "plain"' in problem
        parse_sources(toml + 'security = "plain"\n')  # said so: accepted
    clear = replace(feed(home.url + "/private.ics", command), security="tls")
    with pytest.raises(SourceUnreadable, match="a token is sent only over https://"):
        open_calendar(clear, CTX).events(first=MONDAY, last=SUNDAY)
    assert home.seen == []  # nothing went
    assert runs(count) <= 1


def test_sources_check_says_a_feed_took_the_token_and_never_answered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 32.26 for HTTP: the token went (the connection carrying it opened) and the
    server hung: `sent, no answer in N s`, not `not tried`."""
    import socket
    from dataclasses import replace

    from dayflow.cli_sources import _check_line

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    try:
        spec = replace(feed(f"http://127.0.0.1:{port}/private.ics", env_name="TOK"), timeout=1.5)
        ctx = SourceContext(MONDAY, CTX.tz, {"TOK": "tok-1"})
        hung = check_source(spec, ctx)
    finally:
        listener.close()
    assert (hung["ok"], hung["accepted"], hung.get("token_sent")) == (False, None, True), hung
    assert "bearer sent, no answer in 1.5 s; error:" in _check_line(hung)


def test_sources_check_never_says_accepted_for_a_token_another_origin_never_had(
    origins: tuple[Origin, Origin], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A redirect to another origin that answers without a token: the feed is read, but the
    token was never sent there, so `sources check` said "bearer accepted" of nothing."""
    from dayflow.cli_sources import _check_line

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    home, elsewhere = origins
    home.target = elsewhere.url + "/public.ics"
    command, _ = token_script(tmp_path)
    result = check_source(feed(home.url + "/moved.ics", command), CTX)
    assert result["ok"] and result["accepted"] is None
    assert result["moved"] == elsewhere.url + "/…"
    line = _check_line(result)
    assert "accepted" not in line
    assert f"bearer not sent: {elsewhere.url}/…, another origin, answered without it" in line
    assert all(given is None for _, given in elsewhere.seen)
    home.target = home.url + "/private.ics"  # the same origin: the token is taken there
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    same = check_source(feed(home.url + "/moved.ics", token_script(fresh)[0]), CTX)
    assert same["accepted"] is True and "moved" not in same
