"""The feed cache (`fetch_feed`): the last body of each iCalendar feed with its ETag /
Last-Modified, in one file per feed under `$XDG_CACHE_HOME/dayflow/feeds`
(`~/.cache/dayflow/feeds`), owner-only. The next GET is conditional, and a 304 reuses the file:
an unchanged feed is not downloaded again. It lives outside the database on purpose: it is a
disposable copy of the user's calendar, not a record of a run (runs keep their own saved tool
results), and deleting it is always safe. Each file is replaced atomically, so a kill -9
mid-write leaves the old copy or the new one. The file is named by a hash of the URL (a
calendar's URL is often its secret)."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dayflow.sources.http import request
from dayflow.sources.wire import breaks_line


def cache_dir(env: Mapping[str, str]) -> Path:
    """Where feed copies are kept: `$XDG_CACHE_HOME/dayflow/feeds`, else `~/.cache/...`
    (`env`: the runtime's)."""
    base = env.get("XDG_CACHE_HOME") or str(Path(env.get("HOME") or Path.home()) / ".cache")
    return Path(base) / "dayflow" / "feeds"


def fetch_feed(
    url: str,
    *,
    source: str,
    timeout: float,
    cache: Path | None,
    bearer: str | None = None,
    plain_ok: bool = False,
    on_sent: Callable[[], None] | None = None,
    environ: Mapping[str, str] | None = None,
    on_moved: Callable[[str], None] | None = None,
) -> bytes:
    """The body of an iCalendar feed, from the cache when the server says it is unchanged;
    `bearer`, a token for a private feed (`plain_ok` and `on_sent` as `http.request` takes
    them); `on_moved` is told where the answer came from when a redirect took it to another
    origin (where the token was not sent)."""
    cached = _load(cache, url) if cache is not None else None
    headers = {"Accept": "text/calendar, */*;q=0.5", "Accept-Encoding": "gzip, deflate"}
    if cached is not None:
        # Validators come from the server, through a file: sent only when they fit on a line.
        if cached.etag and not breaks_line(cached.etag):
            headers["If-None-Match"] = cached.etag
        if cached.last_modified and not breaks_line(cached.last_modified):
            headers["If-Modified-Since"] = cached.last_modified
    ok = (200, 304) if cached is not None else (200,)
    resp = request(
        "GET",
        url,
        source=source,
        timeout=timeout,
        headers=headers,
        ok=ok,
        environ=environ,
        bearer=bearer,
        plain_ok=plain_ok,
        on_sent=on_sent,
    )
    moved = resp.moved_from(url)
    if moved is not None and on_moved is not None:
        on_moved(moved)
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
    except (OSError, ValueError, RecursionError):
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
