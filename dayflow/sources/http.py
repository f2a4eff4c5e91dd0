"""HTTP for the calendar readers: one request with a timeout, errors as one line naming the source.

The standard library's urllib is enough for a GET and a few WebDAV requests, and keeps the
start-up paths free of another HTTP stack; it is imported inside the functions that use it.

Secrets: calendar URLs often *are* the secret (Google's "secret address in iCal format"), and
CalDAV needs a password. Neither ever appears in an error or a cache file name: errors name the
source and the host only (`redact`), the cache file is named by a hash of the URL.

The feed cache (`fetch_feed`): the last body of each feed with its ETag / Last-Modified, in one
file per feed under `$XDG_CACHE_HOME/dayflow/feeds` (`~/.cache/dayflow/feeds`), owner-only. The
next GET is conditional, and a 304 reuses the file: an unchanged feed is not downloaded again.
It lives outside the database on purpose: it is a disposable copy of the user's calendar, not a
record of a run (runs keep their own saved tool results), and deleting it is always safe. Each
file is replaced atomically, so a kill -9 mid-write leaves the old copy or the new one.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

from dayflow import __version__
from dayflow.errors import SourceUnreadable

DEFAULT_TIMEOUT = 20.0
MAX_BYTES = 50 * 1024 * 1024  # a feed bigger than this is refused rather than held in memory
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


def cache_dir(env: Mapping[str, str] | None = None) -> Path:
    """Where feed copies are kept: `$XDG_CACHE_HOME/dayflow/feeds`, else `~/.cache/...`."""
    env = os.environ if env is None else env
    base = env.get("XDG_CACHE_HOME") or str(Path(env.get("HOME") or Path.home()) / ".cache")
    return Path(base) / "dayflow" / "feeds"


@dataclass(frozen=True)
class Response:
    status: int
    headers: dict[str, str]
    body: bytes


def request(
    method: str,
    url: str,
    *,
    source: str,
    timeout: float,
    headers: dict[str, str] | None = None,
    body: bytes | None = None,
    auth: tuple[str, str] | None = None,
    ok: tuple[int, ...] = (200,),
) -> Response:
    """One HTTP request; any answer not in `ok`, and any network failure, is a SourceUnreadable.

    The timeout covers connecting and each wait for data."""
    import http.client
    import urllib.error
    import urllib.request

    all_headers = {"User-Agent": USER_AGENT, **(headers or {})}
    url, in_url = _without_userinfo(url)
    auth = auth or in_url
    if auth is not None:
        token = base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode("ascii")
        all_headers["Authorization"] = f"Basic {token}"
    req = urllib.request.Request(url, data=body, headers=all_headers, method=method)
    where = redact(url)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            status, got = resp.status, {k.lower(): v for k, v in resp.headers.items()}
            data = _read_capped(resp, source, where)
    except urllib.error.HTTPError as err:
        status, got = err.code, {k.lower(): v for k, v in (err.headers or {}).items()}
        err.close()
        if status in ok:
            return Response(status, got, b"")
        if status == 401:
            raise SourceUnreadable(
                source, f"{where} refused the user name or password (HTTP 401)"
            ) from None
        raise SourceUnreadable(source, f"{where} answered HTTP {status} {err.reason}") from None
    except TimeoutError:
        raise SourceUnreadable(source, f"no answer from {where} within {timeout:g} s") from None
    except urllib.error.URLError as err:
        if isinstance(err.reason, TimeoutError):
            raise SourceUnreadable(source, f"no answer from {where} within {timeout:g} s") from None
        raise SourceUnreadable(source, f"cannot reach {where} ({_reason(err.reason)})") from None
    except (http.client.HTTPException, OSError) as err:
        raise SourceUnreadable(source, f"cannot read from {where} ({_reason(err)})") from None
    except ValueError:  # InvalidURL and friends quote the URL: never show it
        raise SourceUnreadable(source, f"{where} is not a valid address") from None
    if status not in ok:
        raise SourceUnreadable(source, f"{where} answered HTTP {status}")
    return Response(status, got, data)


def fetch_feed(url: str, *, source: str, timeout: float, cache: Path | None) -> bytes:
    """The body of an iCalendar feed, from the cache when the server says it is unchanged."""
    cached = _load(cache, url) if cache is not None else None
    headers = {"Accept": "text/calendar, */*;q=0.5"}
    if cached is not None:
        if cached.etag:
            headers["If-None-Match"] = cached.etag
        if cached.last_modified:
            headers["If-Modified-Since"] = cached.last_modified
    ok = (200, 304) if cached is not None else (200,)
    resp = request("GET", url, source=source, timeout=timeout, headers=headers, ok=ok)
    if resp.status == 304 and cached is not None:
        return cached.body
    etag, modified = resp.headers.get("etag"), resp.headers.get("last-modified")
    if cache is not None and (etag or modified):
        _save(cache, url, _Cached(etag, modified, resp.body))
    return resp.body


@dataclass(frozen=True)
class _Cached:
    etag: str | None
    last_modified: str | None
    body: bytes


def _cache_file(cache: Path, url: str) -> Path:
    # Named by a hash: a secret URL never appears in a file name.
    return cache / hashlib.sha256(url.encode("utf-8")).hexdigest()[:32]


def _load(cache: Path, url: str) -> _Cached | None:
    """The cached copy, or None when missing or unreadable (the cache is only an optimisation)."""
    try:
        raw = _cache_file(cache, url).read_bytes()
        head, _, body = raw.partition(b"\n")
        meta: dict[str, Any] = json.loads(head)
        if hashlib.sha256(body).hexdigest() != meta.get("sha256"):
            return None
        return _Cached(meta.get("etag"), meta.get("last_modified"), body)
    except (OSError, ValueError):
        return None


def _save(cache: Path, url: str, entry: _Cached) -> None:
    meta = {
        "etag": entry.etag,
        "last_modified": entry.last_modified,
        "sha256": hashlib.sha256(entry.body).hexdigest(),
    }
    try:
        cache.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=cache, prefix=".tmp-")  # created 0600
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(json.dumps(meta).encode("utf-8") + b"\n" + entry.body)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, _cache_file(cache, url))
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError:
        pass  # a read-only or full cache directory only costs the next full download


def _read_capped(resp: Any, source: str, where: str) -> bytes:
    chunks, size = [], 0
    while chunk := resp.read(64 * 1024):
        size += len(chunk)
        if size > MAX_BYTES:
            raise SourceUnreadable(
                source, f"{where} sent more than {MAX_BYTES // (1024 * 1024)} MB; refused"
            )
        chunks.append(chunk)
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


def _reason(reason: object) -> str:
    if isinstance(reason, OSError) and reason.strerror:
        return reason.strerror
    text = " ".join(str(reason).split())
    return text[:200] or type(reason).__name__
