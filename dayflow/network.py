"""Where a request goes: whether an address is on this machine, which proxy the environment
names for it, how a URL may be shown, and how much of an answer is read (`AnswerCap`: 50 MB,
before and after decompressing, for every HTTP answer: the feeds', the model's, MCP's).

Every HTTP client Dayflow makes (the Claude API and a local model through the SDK, the ICS
feeds and CalDAV through urllib, MCP servers over HTTP) is given its proxy by `proxy_for`,
never left to read the environment itself. The rule is one for all of them:

- an address on this machine (127.0.0.0/8, `::1`, `localhost`) is never sent through a proxy:
  a local model's prompt and inbox, a loopback feed or MCP server stay on the machine, whatever
  `HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY` say and whether `NO_PROXY` lists them or not;
- any other address uses the proxy the environment names for its scheme (`https_proxy` /
  `HTTPS_PROXY`, then `all_proxy` / `ALL_PROXY`; the lower-case name first, as curl and
  urllib read them), unless `NO_PROXY` covers its host (urllib's own reading of it);
- `shown_url` is how a URL appears anywhere a person or the database sees it: without the
  `user:password@` it may carry.

The environment is handed in (`environ`: the runtime's, or the `Settings.proxy_env` taken from
it), never read here: it is the one the HTTP libraries would have read, and the one the user
set the proxy in.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit


def host_of(url: str) -> str | None:
    """The host a URL names (lower case, IPv6 without brackets), or None when it has none."""
    try:
        host = urlsplit(url.strip()).hostname
    except ValueError:
        return None
    return host.lower() if host else None


def is_loopback_host(host: str) -> bool:
    """Whether `host` is this machine: 127.0.0.0/8, ::1, localhost (and *.localhost)."""
    host = host.lower().strip("[]")
    if host == "localhost" or host.endswith(".localhost"):
        return True
    import ipaddress  # here: `runs` and `tasks` import this module, and never need it

    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a name other than localhost: it could resolve anywhere


def is_loopback(url: str) -> bool:
    """Whether `url` is an address on this machine."""
    host = host_of(url)
    return host is not None and is_loopback_host(host)


def proxy_env(environ: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """The variables of `environ` that choose a proxy (`<scheme>_proxy`, NO_PROXY and CGI's
    REQUEST_METHOD), as a setting a run's model client carries (`Settings.proxy_env`)."""
    return tuple(
        (k, v)
        for k, v in sorted(environ.items())
        if (len(k) > 6 and k[-6:].lower() == "_proxy") or k == "REQUEST_METHOD"
    )


def env_proxies(environ: Mapping[str, str]) -> dict[str, str]:
    """The `<scheme>_proxy` variables of `environ` by scheme (`no` for NO_PROXY), the
    lower-case spelling winning over the upper-case one (urllib's `getproxies_environment`)."""
    found: dict[str, str] = {}
    for lower_first in (False, True):
        for name, value in environ.items():
            if len(name) > 6 and name[-6:].lower() == "_proxy" and value:
                if lower_first and name != name.lower():
                    continue
                found[name[:-6].lower()] = value
    if "REQUEST_METHOD" in environ:  # a CGI request's Proxy: header becomes HTTP_PROXY
        found.pop("http", None)
    return found


def proxy_for(url: str, environ: Mapping[str, str]) -> str | None:
    """The proxy a request to `url` goes through, or None for a direct connection: never one
    for an address on this machine; else the environment's for the URL's scheme, unless
    NO_PROXY covers the host."""
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname
    except ValueError:
        return None
    if not host or is_loopback_host(host):
        return None
    proxies = env_proxies(environ)
    chosen = proxies.get(parts.scheme.lower()) or proxies.get("all")
    if not chosen:
        return None
    if "no" in proxies:
        import urllib.request  # here: only a process with a proxy set pays for it

        netloc = host if parts.port is None else f"{host}:{parts.port}"
        bypass = urllib.request.proxy_bypass_environment  # type: ignore[attr-defined]
        if bypass(netloc, {"no": proxies["no"]}):
            return None
    return chosen if "://" in chosen else f"http://{chosen}"


def shown_url(url: str) -> str:
    """`url` as it may be shown or stored: without a `user:password@` (scheme, host, port,
    path and query kept). Text that is not a URL comes back unchanged, unless it holds an
    `@` before its first `/`, which is cut at that point."""
    try:
        parts = urlsplit(url)
        if "@" not in parts.netloc:
            return url
        host = parts.netloc.rpartition("@")[2]
        return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))
    except ValueError:
        head, sep, tail = url.partition("@")
        return "…@" + tail if sep and "/" not in head.split("//", 1)[-1] else url


DIRECT = "direct"  # `route`'s word for a connection made without a proxy


def route(url: str, environ: Mapping[str, str]) -> str:
    """How a request to `url` travels, as a run stores and shows it: `DIRECT`, or the proxy's
    URL without its credentials."""
    proxy = proxy_for(url, environ)
    return DIRECT if proxy is None else shown_url(proxy)


def direct_client_options() -> dict[str, Any]:
    """Keyword arguments that make an httpx client go straight to its server: the
    environment's proxy variables are never read (httpx builds a transport for each one it
    reads, and a SOCKS one needs a package Dayflow does not install, so a loopback server
    was unreachable with ALL_PROXY=socks5://...), while SSL_CERT_FILE and SSL_CERT_DIR still
    are, as httpx reads them."""
    import httpx2

    return {"trust_env": False, "verify": httpx2.create_ssl_context(trust_env=True)}


# --- how much of an answer is read ---------------------------------------------------------

MAX_ANSWER_BYTES = 50 * 1024 * 1024  # one answer from any server (a feed, a model, MCP)
_RECORDS = ("text/event-stream", "application/x-ndjson", "application/jsonl")  # read per line


class AnswerRefused(Exception):
    """An answer read no further: past the cap, in an encoding that is not read, or
    compressed data that does not decompress. The message is what the server did ("sent
    more than 50 MB; refused"), for the caller to put after the server's name."""


class AnswerCap:
    """One answer's bytes as they arrive (`feed` each chunk, `end` when it ends), its
    `Content-Encoding` (gzip, deflate) undone on the way, counted against `limit` before and
    after decoding: past it `AnswerRefused` is raised, having held at most `limit` bytes and
    one chunk's worth. With `per_line` (a stream of records: JSON lines, server-sent events)
    the decoded count is of the current line, so a long stream of short records is read and
    a record that never ends is not.

    The one cap every HTTP answer is read through: the calendar feeds' (`sources.http`), and
    the httpx clients' of the model and of MCP servers (`cap_body`)."""

    def __init__(
        self, encoding: str | None = None, limit: int = MAX_ANSWER_BYTES, *, per_line: bool = False
    ) -> None:
        import zlib

        name = (encoding or "").strip().lower()
        self.name, self.limit, self.per_line = name, limit, per_line
        self.received = 0  # bytes as sent
        self.size = 0  # bytes decoded (of the current line, per_line)
        self._modes: list[int] = []
        if name in ("gzip", "x-gzip"):
            self._modes = [31]
        elif name == "deflate":
            self._modes = [15, -15]  # zlib-wrapped as the RFC says, or raw as some servers send
        elif name not in ("", "identity"):
            raise AnswerRefused(f"sent its answer in the {name[:40]!r} encoding, which is not read")
        self._inflater = zlib.decompressobj(self._modes[0]) if self._modes else None
        self._replay: bytearray | None = bytearray() if len(self._modes) > 1 else None

    def feed(self, chunk: bytes) -> bytes:
        """`chunk` decoded; AnswerRefused once the answer passes the cap."""
        self.received += len(chunk)
        if self.received > self.limit and not self.per_line:
            raise self._too_large(decoded=False)
        if self._inflater is not None:
            return self._inflate(chunk)
        self._count(chunk)
        return chunk

    def _count(self, out: bytes) -> None:
        cut = out.rfind(b"\n") if self.per_line else -1
        self.size = len(out) - cut - 1 if cut >= 0 else self.size + len(out)
        if self.size > self.limit:
            raise self._too_large(decoded=self._inflater is not None)

    def end(self) -> None:
        """The answer ended: AnswerRefused if its compressed data stopped short."""
        if self._inflater is not None and not self._inflater.eof and self.received:
            raise AnswerRefused(f"sent {self.name} data that does not decompress")

    def _too_large(self, *, decoded: bool) -> AnswerRefused:
        cap = f"{self.limit // 2**20} MB" if self.limit >= 2**20 else f"{self.limit} bytes"
        if self.per_line:
            return AnswerRefused(f"sent a line of more than {cap}; refused")
        return AnswerRefused(
            f"sent more than {cap}{' once decompressed' if decoded else ''}; refused"
        )

    def _inflate(self, chunk: bytes) -> bytes:
        import zlib

        assert self._inflater is not None
        if self._replay is not None:  # deflate: which form is told by the first bytes
            self._replay += chunk
        out = bytearray()
        pending = chunk
        try:
            while pending:
                piece = self._inflater.decompress(pending, self.limit + 1)
                self._count(piece)  # at most limit + 1 bytes held past the cap
                out += piece
                pending = self._inflater.unconsumed_tail
                if self._inflater.eof:
                    pending = self._inflater.unused_data
                    if self._modes != [31] or not pending.startswith(b"\x1f\x8b"):
                        break  # what follows the end of the data is not read
                    self._inflater = zlib.decompressobj(31)  # gzip allows several members
        except zlib.error:
            if self._replay is None or len(self._modes) < 2:
                raise AnswerRefused(f"sent {self.name} data that does not decompress") from None
            data, self._replay, self._modes = bytes(self._replay), None, self._modes[1:]
            self._inflater = zlib.decompressobj(self._modes[0])
            self.size = 0
            return self._inflate(data)
        if self._replay is not None and self.received >= 2:
            self._replay = None  # the header was read: no going back
        return bytes(out)


def cap_body(
    response: Any,
    *,
    per_line: bool | None = None,
    limit: int = MAX_ANSWER_BYTES,
    said: Callable[[AnswerRefused], None] | None = None,
) -> None:
    """Read the body of `response` (an httpx response, its body not read yet) through an
    `AnswerCap`: the httpx clients of the model and of MCP servers read no more than `limit`
    of one answer (a stream of records, `per_line`, by default server-sent events and JSON
    lines by their Content-Type: of one line), and decode
    gzip and deflate themselves on the way (another encoding is refused at the first read).
    Past the cap the read raises httpx's StreamError, its cause the `AnswerRefused`, which
    `said` (when given) is told of first."""
    if per_line is None:
        kind = response.headers.get("content-type", "").lower()
        per_line = kind.startswith(
            ("text/event-stream", "application/x-ndjson", "application/jsonl")
        )
    try:
        cap: AnswerCap | AnswerRefused = AnswerCap(
            response.headers.get("content-encoding"), limit, per_line=per_line
        )
    except AnswerRefused as refused:
        cap = refused
    if "content-encoding" in response.headers:
        del response.headers["content-encoding"]  # decoded here, not again by httpx
    response.stream = _capped_stream_type()(response.stream, cap, said)


@functools.cache
def _capped_stream_type() -> Any:
    """The byte stream `cap_body` puts in front of an httpx response's (sync and async)."""
    import httpx2

    class Capped(httpx2.SyncByteStream, httpx2.AsyncByteStream):
        def __init__(self, inner: Any, cap: AnswerCap | AnswerRefused, said: Any) -> None:
            self._inner, self._cap, self._said = inner, cap, said

        def _refuse(self, refused: AnswerRefused) -> Exception:
            if self._said is not None:
                self._said(refused)
            return httpx2.StreamError(str(refused))

        def _take(self, chunk: bytes) -> bytes:
            try:
                if isinstance(self._cap, AnswerRefused):
                    raise self._cap
                return self._cap.feed(chunk)
            except AnswerRefused as refused:
                raise self._refuse(refused) from refused

        def _ended(self) -> None:
            try:
                if isinstance(self._cap, AnswerRefused):
                    raise self._cap
                self._cap.end()
            except AnswerRefused as refused:
                raise self._refuse(refused) from refused

        def __iter__(self) -> Any:
            for chunk in self._inner:
                yield self._take(chunk)
            self._ended()

        async def __aiter__(self) -> Any:
            async for chunk in self._inner:
                yield self._take(chunk)
            self._ended()

        def close(self) -> None:
            self._inner.close()

        async def aclose(self) -> None:
            await self._inner.aclose()

    return Capped
