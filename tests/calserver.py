"""A loopback HTTP server that serves iCalendar feeds the way real hosts do, and counts requests.

Routes (set `feeds[path] = bytes` first):
- a feed with an ETag and a Last-Modified: 200, or 304 when If-None-Match / If-Modified-Since match;
- `/missing.ics`: 404; `/hang.ics`: accepts the request and never answers (until closed);
- `/private.ics` answers 401 without the right Basic credentials.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.httpkit import Loopback

LAST_MODIFIED = "Wed, 04 Nov 2026 10:00:00 GMT"


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    status: int = 0


@dataclass
class FeedServer:
    feeds: dict[str, bytes] = field(default_factory=dict)
    requests: list[Seen] = field(default_factory=list)
    etags: bool = True
    last_modified: bool = True

    def __post_init__(self) -> None:
        self._closing = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (the stdlib's name)
                seen = Seen("GET", self.path, {k.lower(): v for k, v in self.headers.items()})
                server.requests.append(seen)
                # The status is recorded before a byte is sent: the client may be done first.
                server._answer(self, seen)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._http = Loopback(Handler)

    @property
    def base_url(self) -> str:
        return self._http.base_url

    def gets(self, path: str) -> list[Seen]:
        return [r for r in self.requests if r.path == path]

    def __enter__(self) -> FeedServer:
        self._http.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._closing.set()
        self._http.close()

    def _answer(self, handler: BaseHTTPRequestHandler, seen: Seen) -> int:
        if seen.path == "/hang.ics":
            self._closing.wait(30)
            return 0
        if seen.path == "/private.ics" and seen.headers.get("authorization") != "Basic dTpw":
            return _send(
                handler, seen, 401, b"who are you?", {"WWW-Authenticate": 'Basic realm="x"'}
            )
        body = self.feeds.get(seen.path.split("?")[0])
        if body is None:
            return _send(handler, seen, 404, b"not here", {})
        etag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
        headers = {"Content-Type": "text/calendar; charset=utf-8"}
        if self.etags:
            headers["ETag"] = etag
        if self.last_modified:
            headers["Last-Modified"] = LAST_MODIFIED
        if self.etags and seen.headers.get("if-none-match") == etag:
            return _send(handler, seen, 304, b"", headers)
        if (
            not self.etags
            and self.last_modified
            and seen.headers.get("if-modified-since") == LAST_MODIFIED
        ):
            return _send(handler, seen, 304, b"", headers)
        return _send(handler, seen, 200, body, headers)


def _send(
    handler: BaseHTTPRequestHandler, seen: Seen, status: int, body: bytes, headers: dict[str, str]
) -> int:
    seen.status = status
    handler.send_response(status)
    for name, value in headers.items():
        handler.send_header(name, value)
    if status != 304:
        handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    if status != 304:
        handler.wfile.write(body)
    return status
