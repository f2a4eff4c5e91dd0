"""An iCalendar (.ics) calendar from a file or an http(s)/webcal URL.

Nothing is read when the object is made: `resume` builds sources for every step, and a step whose
result is saved must never contact the server. The text is fetched at most once per object; URLs
go through the conditional-GET cache in `http.fetch_feed`.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from dayflow.errors import SourceError, SourceUnreadable
from dayflow.sources import http


class IcsCalendar:
    """Events from one .ics file (`path`) or feed (`url`), expanded and shown in `tz`."""

    def __init__(
        self,
        name: str,
        *,
        tz: dt.tzinfo,
        path: Path | str | None = None,
        url: str | None = None,
        timeout: float = http.DEFAULT_TIMEOUT,
        cache_dir: Path | None = None,
    ) -> None:
        if (path is None) == (url is None):
            raise SourceError(f"calendar {name!r}: give exactly one of 'path' or 'url'")
        self.name = name
        self._tz = tz
        self._path = None if path is None else Path(path).expanduser()
        self._url: str | None = None
        if url is not None:
            self._url = http.http_url(url)
            if self._url is None:
                raise SourceError(
                    f"calendar {name!r}: 'url' must be an http://, https:// or webcal:// address"
                )
        if not timeout > 0:
            raise SourceError(f"calendar {name!r}: 'timeout' must be a positive number of seconds")
        self._timeout = float(timeout)
        self._cache = http.cache_dir() if cache_dir is None else cache_dir
        self._data: bytes | None = None

    @property
    def where(self) -> str:
        """The file path, or the feed's scheme and host only (a feed URL may be a secret)."""
        return str(self._path) if self._path is not None else http.redact(self._url or "")

    def events(self, first: dt.date, last: dt.date) -> list[dict[str, Any]]:
        """The events overlapping the local dates first..last (inclusive), by start time."""
        from dayflow.sources.ical import parse_events

        return parse_events(self._read(), source=self.name, tz=self._tz, first=first, last=last)

    def _read(self) -> bytes:
        if self._data is None:
            if self._url is not None:
                self._data = http.fetch_feed(
                    self._url, source=self.name, timeout=self._timeout, cache=self._cache
                )
            else:
                self._data = self._read_file()
        return self._data

    def _read_file(self) -> bytes:
        assert self._path is not None
        try:
            return self._path.read_bytes()
        except FileNotFoundError:
            raise SourceUnreadable(self.name, f"file not found: {self._path}") from None
        except IsADirectoryError:
            raise SourceUnreadable(self.name, f"{self._path} is a directory, not a file") from None
        except OSError as err:
            reason = err.strerror or str(err)
            raise SourceUnreadable(self.name, f"cannot read {self._path} ({reason})") from None
