"""An iCalendar (.ics) calendar from a file or an http(s)/webcal URL.

Nothing is read when the object is made: `resume` builds sources for every step, and a step whose
result is saved must never contact the server. The text is fetched and indexed at most once per
object (`ical.CalendarData`: each range asked is parsed once, from the components that can touch
it); URLs go through the conditional-GET cache in `feeds.fetch_feed`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dayflow.errors import SourceError, SourceUnreadable
from dayflow.sources import feeds, http, people
from dayflow.sources.protocols import CalendarSource

if TYPE_CHECKING:
    from dayflow.sources.ical import CalendarData
    from dayflow.sources.oauth import Credential
    from dayflow.sources.recurrence import CutShort


class IcsCalendar(CalendarSource):
    """Events from one .ics file (`path`) or feed (`url`), expanded and shown in `tz`.

    `timeout` is in seconds; `cache_dir` holds feed copies (default: `feeds.cache_dir()`);
    `today` is the day a range-less `events()` starts from (the brief's date)."""

    def __init__(
        self,
        name: str,
        *,
        tz: dt.tzinfo,
        path: Path | str | None = None,
        url: str | None = None,
        timeout: float = http.DEFAULT_TIMEOUT,
        cache_dir: Path | None = None,
        env: Mapping[str, str] | None = None,  # the runtime's: where the cache is
        today: dt.date | None = None,
        credential: Credential | None = None,
        me: people.Me = people.nobody,
        plain_ok: bool = False,
    ) -> None:
        if (path is None) == (url is None):
            raise SourceError(f"calendar {name!r}: give exactly one of 'path' or 'url'")
        self.name = name
        self._tz = tz
        self._me = me  # which attendee is the user (their `response`)
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
        self._env = env or {}
        self._cache = feeds.cache_dir(self._env) if cache_dir is None else cache_dir
        self._today = today
        self._data: bytes | None = None
        self._credential = credential  # a private feed's token (Authorization: Bearer)
        self._plain_ok = plain_ok  # `security = "plain"`: a token may go over http://
        self._calendar: CalendarData | None = None
        self.cut_short: list[CutShort] = []  # the series the last `events()` cut short

    @property
    def where(self) -> str:
        """The file path, or the feed's scheme and host only (a feed URL may be a secret)."""
        return str(self._path) if self._path is not None else http.redact(self._url or "")

    def events(
        self, first: dt.date | None = None, last: dt.date | None = None
    ) -> list[dict[str, Any]]:
        """The events overlapping the local dates first..last (inclusive), by start time;
        without a range, the 7 days from `today`. The series cut short are in `cut_short`."""
        from dayflow.sources.ical import CalendarData

        first, last = default_range(first, last, self._today)
        if self._calendar is None:
            self._calendar = CalendarData(self._read(), source=self.name, tz=self._tz, me=self._me)
            self._data = None  # indexed: the bytes are not needed again
        parsed = self._calendar.read(first, last)
        self.cut_short = parsed.cut_short
        return parsed.events

    def _read(self) -> bytes:
        if self._data is None:
            if self._url is not None:
                self._data = self._fetch(self._url)
            else:
                self._data = self._read_file()
        return self._data

    def _fetch(self, url: str) -> bytes:
        """The feed, with the token when it takes one: a 401 fetches the token once more and
        tries again (`sources.oauth`)."""
        if self._credential is None:
            return feeds.fetch_feed(
                url,
                source=self.name,
                timeout=self._timeout,
                cache=self._cache,
                plain_ok=self._plain_ok,
                environ=self._env,
            )
        credential = self._credential
        if not self._plain_ok:  # before the token_command runs
            http.in_clear(url, self.name, "token")
        while True:
            token = credential.take()
            try:
                body = feeds.fetch_feed(
                    url,
                    source=self.name,
                    timeout=self._timeout,
                    cache=self._cache,
                    bearer=token,
                    plain_ok=self._plain_ok,
                    on_sent=lambda: setattr(credential, "sent", True),
                    environ=self._env,
                    on_moved=lambda where: setattr(credential, "moved", where),
                )
            except http.Unauthorized as exc:
                credential.refused(exc.reason, token)  # raises after the one retry
                continue
            credential.accepted = credential.moved is None  # else: never sent where it answered
            return body

    def _read_file(self) -> bytes:
        from dayflow import files

        assert self._path is not None
        try:
            return files.read_regular(self._path, http.MAX_BYTES)
        except FileNotFoundError:
            raise SourceUnreadable(self.name, f"file not found: {self._path}") from None
        except files.TooLarge as err:
            raise SourceUnreadable(
                self.name, f"{self._path} is larger than {files.mb(err.limit)}; refused"
            ) from None
        except files.NotRegular as err:
            raise SourceUnreadable(self.name, f"{self._path} is {err.kind}, not a file") from None
        except OSError as err:
            reason = err.strerror or str(err)
            raise SourceUnreadable(self.name, f"cannot read {self._path} ({reason})") from None


def default_range(
    first: dt.date | None, last: dt.date | None, today: dt.date | None
) -> tuple[dt.date, dt.date]:
    """The range asked for, or the week from `today` when none was (as `sources check` does)."""
    if first is None:
        if today is None:
            raise ValueError("events() needs a range, or a source made with today=")
        first = today
    return first, (first + dt.timedelta(days=6)) if last is None else last
