"""A forward HTTP proxy on 127.0.0.1 that records every request it is asked to carry, and
carries plain-http ones to `upstream` (a loopback fake standing for the named host), whatever
host they name: a test sets HTTP_PROXY / HTTPS_PROXY / ALL_PROXY to it and sees what went
through the proxy and what did not. CONNECT (an https tunnel) is recorded and refused."""

from __future__ import annotations

import threading
import urllib.error
import urllib.request
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import urlsplit

from tests.httpkit import Loopback


@dataclass(frozen=True)
class Carried:
    method: str
    target: str  # the absolute URL (or host:port for CONNECT) the client asked for
    headers: dict[str, str]
    body: bytes


class RecordingProxy:
    """Use as a context manager; `seen` is what clients sent through it."""

    def __init__(self, upstream: str | None = None) -> None:
        self.upstream = upstream
        self.seen: list[Carried] = []
        self._lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _carry(self) -> None:
                size = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(size) if size else b""
                with proxy._lock:
                    proxy.seen.append(Carried(self.command, self.path, dict(self.headers), body))
                if self.command == "CONNECT" or proxy.upstream is None:
                    self.send_response(502)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                parts = urlsplit(self.path)
                path = parts.path + (f"?{parts.query}" if parts.query else "")
                headers = {
                    k: v
                    for k, v in self.headers.items()
                    if k.lower() not in ("host", "proxy-authorization", "proxy-connection")
                }
                req = urllib.request.Request(
                    proxy.upstream + path, data=body or None, headers=headers, method=self.command
                )
                direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))
                try:
                    with direct.open(req, timeout=30) as resp:
                        status, got, data = resp.status, resp.headers.items(), resp.read()
                except urllib.error.HTTPError as err:
                    status, got, data = err.code, err.headers.items(), err.read()
                self.send_response(status)
                for k, v in got:
                    if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = do_CONNECT = _carry
            do_OPTIONS = do_PROPFIND = do_REPORT = _carry

        self._server = Loopback(Handler)

    @property
    def url(self) -> str:
        return self._server.base_url

    def __enter__(self) -> RecordingProxy:
        self._server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.close()

    def targets(self) -> list[str]:
        with self._lock:
            return [c.target for c in self.seen]


PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy")


def point_at(
    monkeypatch: Any, proxy_url: str, *, no_proxy: str | None = "localhost"
) -> dict[str, str]:
    """Set every proxy variable of the process to `proxy_url` (NO_PROXY to `no_proxy`, as
    people write it: localhost, which does not cover 127.0.0.1); returns them, for the
    environment a test's runtime is given (Dayflow reads the process's only there)."""
    set_now: dict[str, str] = {}
    for name in PROXY_VARIABLES + ("all_proxy",):
        monkeypatch.setenv(name, proxy_url)
        set_now[name] = proxy_url
    for name in ("NO_PROXY", "no_proxy"):
        if no_proxy is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, no_proxy)
            set_now[name] = no_proxy
    return set_now
