"""The HTTP client under the calendar readers, against loopback servers: credentials stay with
their origin across redirects, the timeout is a deadline for the whole fetch, compressed answers
are read and bounded, and nothing with a line break is sent."""

from __future__ import annotations

import datetime as dt
import gzip
import socket
import ssl
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from dayflow.errors import SourceUnreadable
from dayflow.sources import feeds, http
from dayflow.sources.caldav import CalDavCalendar
from tests.httpkit import Loopback

Answer = tuple[int, dict[str, str], bytes]
CALENDAR = b"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nEND:VCALENDAR\r\n"


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]


@dataclass
class Server:
    """A loopback HTTP(S) server whose answers come from `route(seen) -> (status, headers,
    body)`, recording every request."""

    route: Callable[[Seen], Answer]
    tls: ssl.SSLContext | None = None
    seen: list[Seen] = field(default_factory=list)

    def __post_init__(self) -> None:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def _any(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                seen = Seen(
                    self.command, self.path, {k.lower(): v for k, v in self.headers.items()}
                )
                server.seen.append(seen)
                status, headers, body = server.route(seen)
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_PROPFIND = do_REPORT = _any  # noqa: N815 (the stdlib's names)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._http = Loopback(Handler, self.tls)

    @property
    def port(self) -> int:
        return self._http.port

    def url(self, path: str = "/", host: str = "127.0.0.1") -> str:
        scheme = "https" if self.tls is not None else "http"
        return f"{scheme}://{host}:{self.port}{path}"

    def __enter__(self) -> Server:
        self._http.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.close()


def redirect(to: str, code: int = 302) -> Answer:
    return code, {"Location": to}, b""


def ok(body: bytes = CALENDAR, **headers: str) -> Answer:
    return 200, {"Content-Type": "text/calendar", **headers}, body


@pytest.fixture
def other() -> Iterator[Server]:
    """The host a redirect points to: it records what it was sent."""
    with Server(lambda seen: ok()) as server:
        yield server


def get(url: str, **kwargs: Any) -> http.Response:
    kwargs.setdefault("timeout", 10)
    kwargs.setdefault("plain_ok", True)  # the test servers are http:// on loopback
    return http.request("GET", url, source="cal", **kwargs)


# ----------------------------------------------------------------- credentials and redirects


def test_credentials_in_the_url_are_not_sent_to_the_host_a_redirect_names(
    other: Server,
) -> None:
    """The case: http://alex:pw@host1/x redirected to another host sent Basic auth there."""
    with Server(lambda seen: redirect(other.url("/y"))) as first:
        resp = get(first.url("/x").replace("//", "//alex:pw@"))
    assert resp.body == CALENDAR
    assert first.seen[0].headers["authorization"].startswith("Basic ")
    assert [s.path for s in other.seen] == ["/y"]
    assert "authorization" not in other.seen[0].headers


@pytest.mark.parametrize("code", [301, 302, 303, 307, 308])
def test_an_authorization_header_or_bearer_token_stays_with_its_origin(
    other: Server, code: int
) -> None:
    """Cousins: every redirect code, the auth= argument and a bearer token in a header; the
    same host under another name (localhost for 127.0.0.1) is another origin too."""
    with Server(lambda seen: redirect(other.url("/y", host="localhost"), code)) as first:
        get(first.url("/x"), auth=("alex", "pw"))
        get(first.url("/x"), headers={"Authorization": "Bearer t0ken"})
    assert len(other.seen) == 2
    assert all("authorization" not in s.headers for s in other.seen)


def test_a_redirect_to_another_port_of_the_same_host_drops_credentials_too(
    other: Server,
) -> None:
    with Server(lambda seen: redirect(other.url("/y"))) as first:
        assert first.port != other.port
        get(first.url("/x"), auth=("alex", "pw"))
    assert "authorization" not in other.seen[0].headers


def test_a_redirect_within_the_origin_keeps_the_credentials() -> None:
    def route(seen: Seen) -> Answer:
        return redirect("/moved") if seen.path == "/x" else ok()

    with Server(route) as server:
        get(server.url("/x").replace("//", "//alex:pw@"))
    assert [s.path for s in server.seen] == ["/x", "/moved"]
    assert server.seen[0].headers["authorization"] == server.seen[1].headers["authorization"]


def test_credentials_a_server_puts_in_a_redirect_are_never_used(other: Server) -> None:
    target = other.url("/y").replace("//", "//mallory:evil@")
    with Server(lambda seen: redirect(target)) as first:
        get(first.url("/x"))
    assert "authorization" not in other.seen[0].headers


def test_a_redirect_from_https_to_http_is_refused(
    tmp_path: Path, other: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.imapserver import make_cert

    cert, key = make_cert(tmp_path)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    with Server(lambda seen: redirect(other.url("/secret-path")), tls=context) as secure:
        with pytest.raises(SourceUnreadable) as caught:
            get(secure.url("/x"), auth=("alex", "pw"))
        assert secure.seen  # it was asked, over TLS
    assert other.seen == []
    assert str(caught.value) == (
        f"source 'cal' could not be read: https://127.0.0.1:{secure.port}/… redirected to "
        f"http://127.0.0.1:{other.port}/…, plain http; refused (it would leave TLS)"
    )


@pytest.mark.parametrize("target", ["ftp://127.0.0.1/secret", "file:///etc/passwd"])
def test_a_redirect_to_another_scheme_is_refused_without_quoting_it(target: str) -> None:
    with Server(lambda seen: redirect(target)) as first:
        with pytest.raises(SourceUnreadable) as caught:
            get(first.url("/x"))
    line = str(caught.value)
    assert "redirected to an address that is not http(s); refused" in line
    assert "secret" not in line and "passwd" not in line and "\n" not in line


def test_a_redirect_loop_is_one_line() -> None:
    """It was three lines (urllib's own message)."""
    with Server(lambda seen: redirect(seen.path)) as server:
        with pytest.raises(SourceUnreadable) as caught:
            get(server.url("/loop?token=secret"))
    line = str(caught.value)
    assert "\n" not in line and "secret" not in line
    assert line.endswith(f"{server.url('/…')} redirected more than 10 times or in a loop; refused")


def test_caldav_never_sends_the_password_to_the_host_a_redirect_names() -> None:
    """A PROPFIND redirected (307, method and body kept, as WebDAV servers do) to another
    port: the request goes there without the password, which answers 401."""

    def target(seen: Seen) -> Answer:
        return 401, {"WWW-Authenticate": 'Basic realm="x"'}, b""

    with Server(target) as elsewhere:
        with Server(lambda seen: redirect(elsewhere.url("/dav/"), 307)) as first:
            source = CalDavCalendar(
                "dav",
                url=first.url("/dav/"),
                user="alex",
                password=lambda: "correct horse",
                tz=ZoneInfo("UTC"),
                timeout=10,
                plain_ok=True,  # the test servers are http:// on loopback
            )
            with pytest.raises(SourceUnreadable, match=r"another origin, which answered HTTP 401"):
                source.events(dt.date(2026, 11, 2), dt.date(2026, 11, 8))
    assert first.seen[0].method == "PROPFIND" and "authorization" in first.seen[0].headers
    assert [s.method for s in elsewhere.seen] == ["PROPFIND"]
    assert "authorization" not in elsewhere.seen[0].headers


# ------------------------------------------------------------------------- the deadline


def _trickler(head: bytes, body: bytes, every: float) -> tuple[socket.socket, threading.Event]:
    """A server that sends `head` at once, then `body` one byte every `every` seconds."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                client, _ = listener.accept()
            except OSError:
                return
            with client:
                try:
                    client.recv(65536)
                    client.sendall(head)
                    for i in range(len(body)):
                        if stop.wait(every):
                            return
                        client.sendall(body[i : i + 1])
                except OSError:
                    continue

    threading.Thread(target=serve, daemon=True).start()
    return listener, stop


@pytest.mark.parametrize("where", ["body", "headers"])
def test_the_timeout_is_a_deadline_for_the_whole_fetch_not_each_read(where: str) -> None:
    """A feed trickling a byte every 0.3 s never trips a 2 s timeout on a read; the deadline
    ends the fetch and says so (cousin: the trickle in the headers, before any body)."""
    body = CALENDAR * 20
    if where == "body":
        head = f"HTTP/1.1 200 OK\r\nContent-Length: {len(body)}\r\n\r\n".encode()
    else:
        head, body = b"HTTP/1.1 200 OK\r\n", b"X-Slow: " + b"a" * 500 + b"\r\n\r\n"
    listener, stop = _trickler(head, body, 0.3)
    try:
        started = time.monotonic()
        with pytest.raises(SourceUnreadable) as caught:
            get(f"http://127.0.0.1:{listener.getsockname()[1]}/x.ics", timeout=2)
        assert time.monotonic() - started < 60  # generous: the old code took minutes
    finally:
        stop.set()
        listener.close()
    assert "within 2 s (timeout, a deadline for the whole fetch)" in str(caught.value)


def test_a_shared_deadline_bounds_several_requests() -> None:
    from dayflow.sources.deadline import Deadline

    listener, stop = _trickler(b"HTTP/1.1 200 OK\r\n", b"X: " + b"a" * 100, 0.3)
    try:
        with Deadline(1.5) as clock, pytest.raises(SourceUnreadable, match="within 1.5 s"):
            url = f"http://127.0.0.1:{listener.getsockname()[1]}/x"
            get(url, deadline=clock)
    finally:
        stop.set()
        listener.close()


# ---------------------------------------------------------------------- compressed answers


@pytest.mark.parametrize(
    ("encoding", "pack"),
    [
        ("gzip", gzip.compress),
        ("x-gzip", gzip.compress),
        ("deflate", zlib.compress),
        ("deflate", lambda b: zlib.compress(b, wbits=-15)),  # raw deflate, as some servers send
        ("gzip", lambda b: gzip.compress(b[:10]) + gzip.compress(b[10:])),  # two members
    ],
)
def test_a_compressed_feed_is_read(encoding: str, pack: Callable[[bytes], bytes]) -> None:
    """`Content-Encoding: gzip` was read as garbage."""
    with Server(lambda seen: ok(pack(CALENDAR), **{"Content-Encoding": encoding})) as server:
        assert get(server.url("/x.ics")).body == CALENDAR
        assert feeds.fetch_feed(server.url("/x.ics"), source="cal", timeout=10, cache=None) == (
            CALENDAR
        )
    assert "gzip" in server.seen[-1].headers["accept-encoding"]


def test_a_gzip_bomb_stops_at_the_size_cap() -> None:
    """200 MB of zeros in 200 KB: refused at MAX_BYTES (50 MB) decompressed, never held whole."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    zeros = bytes(1024 * 1024)
    bomb = b"".join(packer.compress(zeros) for _ in range(200)) + packer.flush()
    assert len(bomb) < 1024 * 1024
    with Server(lambda seen: ok(bomb, **{"Content-Encoding": "gzip"})) as server:
        with pytest.raises(SourceUnreadable, match="more than 50 MB once decompressed; refused"):
            get(server.url("/x.ics"))


@pytest.mark.parametrize(
    ("encoding", "body", "expected"),
    [
        ("gzip", b"not gzip at all", "sent gzip data that does not decompress"),
        ("gzip", gzip.compress(CALENDAR, mtime=0)[:-12], "sent gzip data that does not decompress"),
        ("br", b"\x0b\x02\x80", "sent its answer in the 'br' encoding, which is not read"),
    ],
    ids=["not-gzip", "cut-short-gzip", "brotli"],  # the same on every xdist worker
)
def test_a_broken_or_unknown_encoding_is_one_line(
    encoding: str, body: bytes, expected: str
) -> None:
    with Server(lambda seen: ok(body, **{"Content-Encoding": encoding})) as server:
        with pytest.raises(SourceUnreadable, match=expected):
            get(server.url("/x.ics"))


# --------------------------------------------------------------------- what reaches the wire


@pytest.mark.parametrize(
    "headers", [{"Depth": "1\r\nX-Evil: 1"}, {"If-None-Match": '"a"\n'}, {"X": "a\x00b"}]
)
def test_a_header_value_with_a_line_break_is_never_sent(headers: dict[str, str]) -> None:
    with Server(lambda seen: ok()) as server:
        with pytest.raises(SourceUnreadable, match="header holds a line break; not sent"):
            get(server.url("/x"), headers=headers)
    assert server.seen == []


def test_a_cached_validator_with_a_line_break_is_left_out(tmp_path: Path) -> None:
    """An ETag reaches a header from the cache file: a tampered one is not sent (and the
    feed is downloaded whole instead of failing for ever)."""
    import hashlib
    import json

    with Server(lambda seen: ok(ETag='"v1"')) as server:
        url = server.url("/x.ics")
        body = b"old"
        meta = {"etag": '"v1"\r\nX-Evil: 1', "last_modified": None}
        meta["sha256"] = hashlib.sha256(body).hexdigest()
        tmp_path.mkdir(exist_ok=True)
        name = hashlib.sha256(url.encode()).hexdigest()[:32]
        (tmp_path / name).write_bytes(json.dumps(meta).encode() + b"\n" + body)
        assert feeds.fetch_feed(url, source="cal", timeout=10, cache=tmp_path) == CALENDAR
    assert "if-none-match" not in server.seen[0].headers


@pytest.mark.parametrize("tail", ["/x\r\nX-Evil: 1", "/x\nHost: elsewhere", "/x\x00y"])
def test_an_address_with_a_line_break_is_never_sent(tail: str) -> None:
    """A URL can come from a server too (a CalDAV href joined to the base): checked where it
    is sent, whatever validated the config."""
    with Server(lambda seen: ok()) as server:
        with pytest.raises(SourceUnreadable, match="holds a line break; not sent") as caught:
            get(server.url(tail))
    assert server.seen == [] and "Evil" not in str(caught.value)
