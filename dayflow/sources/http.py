"""HTTP for the calendar readers: one request with a timeout, errors as one line naming the source.

The standard library's urllib is enough for a GET and a few WebDAV requests, and keeps the
start-up paths free of another HTTP stack; it is imported inside the functions that use it.

What one request may cost: `timeout` is a deadline for the whole request (connecting, TLS,
every redirect, every byte of the answer), not for each wait: a server trickling a byte every
two seconds is cut off when it passes (`deadline.Deadline`). An answer is at most `MAX_BYTES`,
before and after a `Content-Encoding: gzip` or `deflate` is undone (a gzip bomb stops there).

Credentials stay with their origin. A user and password in the URL, an Authorization header
(Basic or a bearer token) go only to the scheme, host and port they were given for: a redirect
elsewhere is followed without them, and a redirect from https:// to http:// is refused (it would
send the rest of the exchange, and the URL's secret path, in clear). Every header value and the
URL are checked for CR, LF and NUL before sending (`wire`).

Proxies: `dayflow.network.proxy_for` chooses each request's (the environment's, never one for
an address on this machine), not urllib.

Secrets: calendar URLs often *are* the secret (Google's "secret address in iCal format"), and
CalDAV needs a password. Neither ever appears in an error or a cache file name: errors name the
source and the host only (`redact`). The feed cache is `dayflow.sources.feeds`.
"""

from __future__ import annotations

import base64
import contextlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urljoin, urlsplit, urlunsplit

from dayflow import __version__
from dayflow.errors import SourceUnreadable
from dayflow.network import MAX_ANSWER_BYTES, AnswerCap, AnswerRefused, proxy_for
from dayflow.sources.deadline import Deadline
from dayflow.sources.oauth import AuthRefused
from dayflow.sources.wire import breaks_line

DEFAULT_TIMEOUT = 20.0
MAX_BYTES = MAX_ANSWER_BYTES  # a feed bigger than this is refused rather than held in memory
MAX_REDIRECTS = 10
_REDIRECTS = (301, 302, 303, 307, 308)
_DEFAULT_PORTS = {"http": 80, "https": 443}
USER_AGENT = f"dayflow/{__version__} (calendar reader)"
_SCHEMES = {"http": "http", "https": "https", "webcal": "https", "webcals": "https"}


def http_url(url: str) -> str | None:
    """The http(s) URL to fetch for `url` (webcal:// is https://), or None if not a web URL."""
    try:
        parts = urlsplit(url.strip())
        scheme = _SCHEMES.get(parts.scheme.lower())
        if scheme is None or not parts.hostname or not parts.hostname.isascii():
            return None
        parts.port  # noqa: B018 (raises ValueError for a port out of range)
    except ValueError:
        return None
    # Spaces, non-ASCII and control characters are percent-encoded; what is encoded stays so.
    path = quote(parts.path, safe="/%:@!$&'()*+,;=~-._")
    query = quote(parts.query, safe="/%:@!$&'()*+,;=~-._?")
    return urlunsplit((scheme, parts.netloc, path, query, ""))


def redact(url: str) -> str:
    """How a URL may be shown: scheme and host only (the path and any user:password dropped)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or "?"
        if parts.port:
            host = f"{host}:{parts.port}"
    except ValueError:
        return "(an invalid address)"
    return (
        f"{parts.scheme}://{host}/…" if parts.path not in ("", "/") else f"{parts.scheme}://{host}/"
    )


@dataclass(frozen=True)
class Response:
    status: int
    headers: dict[str, str]
    body: bytes
    url: str = ""  # where the answer came from, after any redirect ("": the URL asked)

    def moved_from(self, url: str) -> str | None:
        """Where the answer came from (shown with `redact`) when that is another origin than
        `url`'s: a credential given for `url` was not sent there."""
        if not self.url or origin(self.url) == origin(url):
            return None
        return redact(self.url)


def request(
    method: str,
    url: str,
    *,
    source: str,
    timeout: float,
    headers: dict[str, str] | None = None,
    body: bytes | None = None,
    auth: tuple[str, str] | None = None,
    bearer: str | None = None,
    ok: tuple[int, ...] = (200,),
    deadline: Deadline | None = None,
    plain_ok: bool = False,
    on_sent: Callable[[], None] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Response:
    """One HTTP request; any answer not in `ok`, and any network failure, is a SourceUnreadable
    (a 401 is `Unauthorized`, so a caller with a token can fetch another and try again).

    `auth` is Basic (a user and password), `bearer` an OAuth access token
    (`Authorization: Bearer`).

    `timeout` is a deadline for all of it (connecting, redirects, the whole answer), or
    `deadline` one shared with other requests (a CalDAV discovery). Credentials go only to the
    origin of `url` (see the module docstring); a token or a password goes over plain http://
    only when the entry says `security = "plain"` (`plain_ok`), as IMAP's rule is. `on_sent`
    is called once the connection that carries the token is open (the server may then have
    it). Whatever the server says is shown with the credentials hidden (`server_words`)."""
    import http.client
    import urllib.error
    import urllib.request

    url, all_headers = _checked(url, source, headers, auth, bearer)
    where = redact(url)
    if "Authorization" in all_headers and not plain_ok:
        in_clear(url, source, "token" if bearer is not None else "password")
    hidden = [bearer, *(auth or ()), *(_without_userinfo(url)[1] or ())]
    clock = Deadline(timeout) if deadline is None else deadline
    limit = clock.seconds
    # The proxy is chosen from `environ`, the runtime's (none given: an empty one, no proxy).
    opener = _opener(clock, source, on_sent if bearer is not None else None, environ or {})
    req = urllib.request.Request(url, data=body, headers=all_headers, method=method)

    def late() -> SourceUnreadable:
        return SourceUnreadable(
            source,
            f"no complete answer from {where} within {limit:g} s "
            "(timeout, a deadline for the whole fetch)",
        )

    with clock if deadline is None else contextlib.nullcontext(clock):
        try:
            with opener.open(req, timeout=clock.remaining()) as resp:
                status, got = resp.status, {k.lower(): v for k, v in resp.headers.items()}
                final = str(resp.geturl() or url)
                encoding = got.get("content-encoding") if status in ok else None
                data = _read_capped(resp, encoding, source, where)
            if clock.expired:  # the answer may have been cut short, not ended
                raise late()
        except SourceUnreadable:
            raise
        except urllib.error.HTTPError as err:
            return _answered(err, source, url, ok, bearer=bearer is not None, hidden=hidden)
        except TimeoutError:
            raise late() from None
        except urllib.error.URLError as err:
            if clock.expired or isinstance(err.reason, TimeoutError):
                raise late() from None
            raise SourceUnreadable(
                source, f"cannot reach {where} ({_reason(err.reason, hidden)})"
            ) from None
        except (http.client.HTTPException, OSError) as err:
            if clock.expired:
                raise late() from None
            raise SourceUnreadable(
                source, f"cannot read from {where} ({_reason(err, hidden)})"
            ) from None
        except ValueError:  # InvalidURL and friends quote the URL: never show it
            raise SourceUnreadable(source, f"{where} is not a valid address") from None
    if status not in ok:
        raise SourceUnreadable(source, f"{where} answered HTTP {status}")
    return Response(status, got, data, final)


def in_clear(url: str, source: str, what: str) -> None:
    """Refuse to send a `what` (a token, a password) to a plain http:// `url` (the caller's
    entry did not say `security = "plain"`): before it is fetched, and where it is sent."""
    if urlsplit(url).scheme.lower() == "http":
        raise SourceUnreadable(
            source,
            f"{redact(url)} is plain http://: a {what} is sent only over https:// unless the "
            'entry says security = "plain"; not sent',
        )


def _checked(
    url: str,
    source: str,
    headers: dict[str, str] | None,
    auth: tuple[str, str] | None,
    bearer: str | None,
) -> tuple[str, dict[str, str]]:
    """The URL without its user:password (they become Basic auth) and the request's headers;
    SourceUnreadable when either holds a line break (it would end the request line)."""
    all_headers = {"User-Agent": USER_AGENT, **(headers or {})}
    url, in_url = _without_userinfo(url)
    auth = auth or in_url
    if auth is not None:
        token = base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode("ascii")
        all_headers["Authorization"] = f"Basic {token}"
    if bearer is not None:
        all_headers["Authorization"] = f"Bearer {bearer}"  # dropped on a redirect elsewhere
    if breaks_line(url):
        raise SourceUnreadable(source, f"the address of {redact(url)} holds a line break; not sent")
    for name, value in all_headers.items():
        if breaks_line(name) or breaks_line(value):
            raise SourceUnreadable(source, f"the {name} header holds a line break; not sent")
    return url, all_headers


def _answered(
    err: Any,
    source: str,
    url: str,
    ok: tuple[int, ...],
    *,
    bearer: bool,
    hidden: list[str | None],
) -> Response:
    """An HTTP error answer (urllib's HTTPError) as the Response a caller expects (a status in
    `ok`), else the one-line error: Unauthorized for a 401, SourceUnreadable for the rest.

    A 401 from another origin than `url`'s, after a redirect, is no refusal of the token:
    the token was never sent there, and the error says where the request went."""
    from dayflow.sources.secrets import server_words

    where = redact(url)
    status, got = err.code, {k.lower(): v for k, v in (err.headers or {}).items()}
    final = str(getattr(err, "url", None) or url)
    err.close()
    if status in ok:
        return Response(status, got, b"", final)
    reason = server_words(str(err.reason), hidden, 200)
    if status == 401 and origin(final) != origin(url):
        what = "the token" if bearer else "the password"
        raise SourceUnreadable(
            source,
            f"{where} redirected to {redact(final)}, another origin, which answered HTTP 401 "
            f"{reason}: {what} is never sent to another origin, so it was not sent there "
            "(give the address it moved to as the entry's url, if that is where it lives)",
        ) from None
    if status == 401:
        if bearer:
            said = f"{where} answered HTTP 401 {reason}{_bearer_error(got, hidden)}"
            raise Unauthorized(source, said) from None
        raise Unauthorized(
            source, f"{where} refused the user name or password (HTTP 401)"
        ) from None
    raise SourceUnreadable(source, f"{where} answered HTTP {status} {reason}") from None


def origin(url: str) -> tuple[str, str, int | None]:
    """The scheme, host and port a URL's credentials belong to (RFC 6454's origin)."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port or _DEFAULT_PORTS.get(scheme)
    except ValueError:
        port = None
    return scheme, (parts.hostname or "").lower(), port


def _opener(
    clock: Deadline,
    source: str,
    on_sent: Callable[[], None] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Any:
    """urllib with connections whose sockets `clock` watches from the first byte, and
    redirects that keep credentials with their origin."""
    import http.client
    import socket
    import ssl
    import urllib.error
    import urllib.request

    class Watched(http.client.HTTPConnection):
        def connect(self) -> None:
            self.timeout = clock.remaining()

            def create(address: Any, timeout: Any = None, source_address: Any = None) -> Any:
                sock = socket.create_connection(address, timeout, source_address)
                clock.watch(sock)  # before TLS and any proxy tunnel
                return sock

            self._create_connection = create  # type: ignore[method-assign]
            super().connect()
            if on_sent is not None:
                on_sent()  # the request, its token with it, goes on this connection

    class WatchedTls(Watched, http.client.HTTPSConnection):
        pass

    class Plain(urllib.request.HTTPHandler):
        def http_open(self, req: Any) -> Any:
            return self.do_open(Watched, req)

    class Tls(urllib.request.HTTPSHandler):
        def https_open(self, req: Any) -> Any:
            return self.do_open(WatchedTls, req, context=ssl.create_default_context())

    class Redirects(urllib.request.HTTPRedirectHandler):
        max_redirections = MAX_REDIRECTS

        def redirect_request(
            self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str
        ) -> Any:
            old = req.full_url
            new = _redirect_target(source, old, newurl, fp)
            method = req.get_method()
            if method in ("GET", "HEAD") or (code in (301, 302, 303) and method == "POST"):
                out = super().redirect_request(req, fp, code, msg, headers, new)
            elif code in (301, 302, 307, 308):  # WebDAV: the same request, body and all
                kept = {k: v for k, v in req.header_items()}
                out = urllib.request.Request(
                    new, data=req.data, headers=kept, method=method, unverifiable=True
                )
            else:
                return None  # urllib then reports the 3xx as the answer
            if out is not None and origin(old) != origin(new):
                _drop_credentials(out)
            return out

        def http_error_302(self, req: Any, fp: Any, code: int, msg: str, headers: Any) -> Any:
            try:
                return super().http_error_302(req, fp, code, msg, headers)
            except urllib.error.HTTPError as err:
                _refuse_redirect_error(source, req.full_url, err, self.inf_msg)
                raise

        http_error_301 = http_error_303 = http_error_307 = http_error_308 = http_error_302

    class Proxies(urllib.request.ProxyHandler):
        """Each request's proxy by `network.proxy_for` (never one for this machine), in
        place of urllib's own reading of the environment."""

        def __init__(self) -> None:
            super().__init__({})

        def http_open(self, req: Any) -> Any:
            return self._route(req, "http")

        def https_open(self, req: Any) -> Any:
            return self._route(req, "https")

        def _route(self, req: Any, scheme: str) -> Any:
            proxy = proxy_for(req.full_url, environ or {})
            return None if proxy is None else self.proxy_open(req, proxy, scheme)

    return urllib.request.build_opener(Proxies, Plain, Tls, Redirects)


def _redirect_target(source: str, old: str, newurl: str, fp: Any) -> str:
    """Where a redirect from `old` goes, without credentials a server put in it; refused
    (closing the answer `fp`) when it is not http(s) or would leave TLS."""
    where = redact(old)
    new, _ = _without_userinfo(urljoin(old, newurl))  # credentials from a server: no
    scheme = urlsplit(new).scheme.lower()
    refused = scheme not in ("http", "https") or (origin(old)[0] == "https" and scheme == "http")
    if refused and fp is not None:
        fp.close()
    if scheme not in ("http", "https"):
        raise _refused(source, f"{where} redirected to an address that is not http(s); refused")
    if origin(old)[0] == "https" and scheme == "http":
        raise _refused(
            source,
            f"{where} redirected to {redact(new)}, plain http; refused (it would leave TLS)",
        )
    return new


def _drop_credentials(request: Any) -> None:
    """Take the Authorization header off a request that goes to another origin."""
    for name in [k for k in request.headers if k.lower() == "authorization"]:
        del request.headers[name]
    request.unredirected_hdrs.pop("Authorization", None)


def _refuse_redirect_error(source: str, url: str, err: Any, loop_words: str) -> None:
    """urllib's own refusals of a redirect (too many, or a scheme it will not follow), in words
    that never quote the new URL; anything else is left to the caller to raise."""
    text = str(err.reason)
    if text.startswith(loop_words):
        err.close()
        raise _refused(
            source,
            f"{redact(url)} redirected more than {MAX_REDIRECTS} times or in a loop; refused",
        ) from None
    if "is not allowed" in text:  # urllib's words quote the new URL: never shown
        err.close()
        raise _refused(
            source, f"{redact(url)} redirected to an address that is not http(s); refused"
        ) from None


def _refused(source: str, reason: str) -> SourceUnreadable:
    """A redirect refused (raised through urllib's handlers, which let it pass)."""
    return SourceUnreadable(source, reason)


class Unauthorized(SourceUnreadable, AuthRefused):
    """The server answered 401: it refused the password or the token."""


def _bearer_error(headers: dict[str, str], hidden: list[str | None]) -> str:
    """The server's own words about a refused token (RFC 6750: `WWW-Authenticate: Bearer
    error="invalid_token", error_description="..."`), on one short line."""
    import re

    from dayflow.sources.oauth import server_words

    challenge = headers.get("www-authenticate") or ""
    words = [
        f"{k}={v}" for k, v in re.findall(r'(error|error_description)="([^"]{0,200})"', challenge)
    ]
    text = server_words(" ".join(words), hidden)
    return f" ({text})" if text else ""


def _read_capped(resp: Any, encoding: str | None, source: str, where: str) -> bytes:
    """The body of `resp`, its `encoding` undone, through the one cap every answer is read
    through (`network.AnswerCap`: MAX_BYTES before and after decompressing)."""
    chunks = []
    try:
        cap = AnswerCap(encoding, MAX_BYTES)
        while chunk := resp.read(64 * 1024):
            chunks.append(cap.feed(chunk))
        cap.end()
    except AnswerRefused as refused:
        raise SourceUnreadable(source, f"{where} {refused}") from None
    return b"".join(chunks)


def _without_userinfo(url: str) -> tuple[str, tuple[str, str] | None]:
    # https://user:password@host/... works as Basic auth, and the credentials never reach a log.
    parts = urlsplit(url)
    if parts.username is None:
        return url, None
    from urllib.parse import unquote

    host = parts.hostname or ""
    netloc = f"[{host}]" if ":" in host else host
    if parts.port:
        netloc += f":{parts.port}"
    bare = urlunsplit((parts.scheme, netloc, parts.path, parts.query, ""))
    return bare, (unquote(parts.username), unquote(parts.password or ""))


def _reason(reason: object, hidden: list[str | None]) -> str:
    from dayflow.sources.secrets import server_words

    if isinstance(reason, OSError) and reason.strerror:
        return server_words(reason.strerror, hidden, 200)
    return server_words(str(reason), hidden, 200) or type(reason).__name__
