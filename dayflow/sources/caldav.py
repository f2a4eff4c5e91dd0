"""A CalDAV calendar (Nextcloud, Fastmail, iCloud, Radicale...), read with two WebDAV verbs.

Why plain HTTP and not the `caldav` library: reading events needs PROPFIND (find the calendars)
and one REPORT calendar-query per calendar (the events in a time range), a few dozen lines over
urllib and ElementTree. The `caldav` package (3.x) would bring lxml, niquests, dnspython, PyYAML
and two more packages for the same requests, and its write API is exactly what Dayflow must
never call. Parsing and recurrence expansion are the same as for .ics feeds (`ical`).

Read-only by construction: the only methods this module sends are PROPFIND and REPORT, so
Dayflow never creates, changes or deletes an event (tested against Radicale's storage).

Discovery from `url`, as the RFCs and real servers allow:
1. PROPFIND the URL itself: a calendar collection is read as is; otherwise follow its
   `calendar-home-set`, or its `current-user-principal` and then that one's home set; a server
   that names neither is taken to have the calendars right under the URL.
2. PROPFIND the home (Depth 1): every calendar collection that holds events, filtered by
   `calendars = [...]` (display name or the last part of its path).
3. REPORT calendar-query with a time range on each; the server returns whole objects (a
   recurring series with its overrides), which `ical` expands for the exact range.

The password is asked for (`password()`) when the first request is made, never at construction,
and never kept in an error message. With an OAuth token (`credential`, `auth = "xoauth2"` and
`token_command`) the requests carry `Authorization: Bearer` instead, and a 401 gets one retry
with a token fetched again (`sources.oauth`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urljoin, urlsplit

from dayflow.errors import SourceError, SourceUnreadable
from dayflow.sources import http, ical_text, people
from dayflow.sources.deadline import Deadline
from dayflow.sources.ics import default_range
from dayflow.sources.protocols import CalendarSource

if TYPE_CHECKING:
    from dayflow.sources.ical import Parsed
    from dayflow.sources.oauth import Credential
    from dayflow.sources.recurrence import CutShort

_DAV = "{DAV:}"
_CAL = "{urn:ietf:params:xml:ns:caldav}"
_PROPFIND_SELF = b"""<?xml version="1.0" encoding="utf-8"?>
<d:propfind xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav">
  <d:prop><d:resourcetype/><d:displayname/><d:current-user-principal/>
    <c:calendar-home-set/></d:prop>
</d:propfind>"""
_PROPFIND_HOME = b"""<?xml version="1.0" encoding="utf-8"?>
<d:propfind xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav">
  <d:prop><d:resourcetype/><d:displayname/><c:supported-calendar-component-set/></d:prop>
</d:propfind>"""
_REPORT = """<?xml version="1.0" encoding="utf-8"?>
<c:calendar-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav">
  <d:prop><d:getetag/><c:calendar-data/></d:prop>
  <c:filter><c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT">
    <c:time-range start="{start}" end="{end}"/>
  </c:comp-filter></c:comp-filter></c:filter>
</c:calendar-query>"""
_XML = {"Content-Type": "application/xml; charset=utf-8"}


@dataclass(frozen=True)
class _Collection:
    url: str
    name: str  # the display name, else the last part of the path


class CalDavCalendar(CalendarSource):
    """Events from the calendars of one CalDAV account, shown in `tz`.

    `password` is a function that returns the password (from `password_command` or
    `password_env`), called once, on the first request. `calendars` picks calendars by display
    name or path segment; empty means every calendar that holds events."""

    def __init__(
        self,
        name: str,
        *,
        url: str,
        user: str,
        password: Callable[[], str],
        tz: dt.tzinfo,
        calendars: tuple[str, ...] | list[str] = (),
        timeout: float = http.DEFAULT_TIMEOUT,
        today: dt.date | None = None,
        credential: Credential | None = None,
        me: people.Me = people.nobody,
        plain_ok: bool = False,
        env: Mapping[str, str] | None = None,  # the runtime's: the proxy variables
    ) -> None:
        real = http.http_url(url)
        if real is None:
            from dayflow.sources.spec import url_problem

            why = url_problem(url) if url.lower().startswith(("http://", "https://")) else None
            raise SourceError(
                f"calendar {name!r}: 'url' {why or 'must be an http:// or https:// address'}"
            )
        if not timeout > 0:
            raise SourceError(f"calendar {name!r}: 'timeout' must be a positive number of seconds")
        self.name = name
        self._url = real if real.endswith("/") else real + "/"
        self._user = user
        self._password = password
        self._secret: str | None = None
        self._credential = credential  # a token instead of the password (Bearer)
        self._plain_ok = plain_ok  # `security = "plain"`: a secret may go over http://
        self._env = env or {}
        self._token: str | None = None
        self._tz = tz
        self._me = me  # which attendee is the user (their `response`)
        self._wanted = tuple(calendars)
        self._timeout = float(timeout)
        self._today = today
        self._collections: list[_Collection] | None = None
        self._read: dict[tuple[dt.date, dt.date], Parsed] = {}
        self._clock: Deadline | None = None
        self.cut_short: list[CutShort] = []  # the series the last `events()` cut short

    @property
    def where(self) -> str:
        """The server's scheme and host (the path may name the user)."""
        return http.redact(self._url)

    def events(
        self, first: dt.date | None = None, last: dt.date | None = None
    ) -> list[dict[str, Any]]:
        """The events overlapping the local dates first..last (inclusive), by start time;
        without a range, the 7 days from `today`. The series cut short are in `cut_short`."""
        first, last = default_range(first, last, self._today)
        if (first, last) in self._read:
            kept = self._read[(first, last)]
            self.cut_short = list(kept.cut_short)
            return [dict(e) for e in kept.events]
        # Before the clock starts: a password_command (or token_command) has its own timeout.
        # Neither is run for a plain http:// url the entry did not say plain for.
        if not self._plain_ok:
            http.in_clear(self._url, self.name, "password" if self._credential is None else "token")
        if self._credential is None:
            self._ask_password()
        elif self._token is None:
            self._token = self._credential.take()
        # `timeout` bounds the whole read (discovery and every calendar's REPORT), not each
        # request: a server trickling its answers is cut off when it passes.
        with Deadline(self._timeout) as clock:
            self._clock = clock
            try:
                found = self._events(first, last)
            finally:
                self._clock = None
        self._read[(first, last)] = found
        self.cut_short = list(found.cut_short)
        return [dict(e) for e in found.events]

    def _events(self, first: dt.date, last: dt.date) -> Parsed:
        from dayflow.sources.ical import Parsed, parse_events, sort_key

        # The server compares in UTC; a day more on each side covers every zone, and `ical`
        # keeps exactly the events of the user's days.
        start = (first - dt.timedelta(days=1)).strftime("%Y%m%dT000000Z")
        end = (last + dt.timedelta(days=2)).strftime("%Y%m%dT000000Z")
        found: list[dict[str, Any]] = []
        cut: list[CutShort] = []
        for collection in self._calendars():
            body = _REPORT.format(start=start, end=end).encode("utf-8")
            tree = self._dav("REPORT", collection.url, body, depth="1")
            texts = [
                el.text
                for el in tree.iter(f"{_CAL}calendar-data")
                if el.text and "BEGIN:VCALENDAR" in ical_text.unfold(el.text[:4096]).upper()
            ]
            if not texts:
                continue
            parsed = parse_events(
                "\r\n".join(texts),
                source=self.name,
                tz=self._tz,
                first=first,
                last=last,
                me=self._me,
            )
            cut += parsed.cut_short
            for event in parsed.events:
                event["calendar"] = collection.name
                found.append(event)
        found.sort(key=lambda e: (sort_key(e, self._tz), e["id"]))
        return Parsed(found, cut)

    def _calendars(self) -> list[_Collection]:
        if self._collections is not None:
            return self._collections
        me = self._propfind(self._url, _PROPFIND_SELF, depth="0")
        props = me.get(_path(self._url)) or (next(iter(me.values())) if me else {})
        if _is_calendar(props):
            found = [_Collection(self._url, _label(props, self._url))]
        else:
            home = props.get("home")
            if home is None and props.get("principal"):
                principal = urljoin(self._url, props["principal"])
                there = self._propfind(principal, _PROPFIND_SELF, depth="0")
                home = next((p.get("home") for p in there.values() if p.get("home")), None)
            home_url = urljoin(self._url, home) if home else self._url
            listing = self._propfind(home_url, _PROPFIND_HOME, depth="1")
            found = [
                _Collection(urljoin(home_url, href), _label(p, href))
                for href, p in sorted(listing.items())
                if _is_calendar(p) and p.get("components") in (None, True)
            ]
        if self._wanted:
            by_name = {c.name: c for c in found}
            by_name.update({_last(c.url): c for c in found})
            missing = [w for w in self._wanted if w not in by_name]
            if missing:
                have = ", ".join(sorted({c.name for c in found})) or "none"
                raise SourceUnreadable(
                    self.name,
                    f"no calendar named {', '.join(map(repr, missing))} on {self.where} "
                    f"(found: {have})",
                )
            found = list({by_name[w].url: by_name[w] for w in self._wanted}.values())
        self._collections = found
        return found

    def _propfind(self, url: str, body: bytes, *, depth: str) -> dict[str, dict[str, Any]]:
        tree = self._dav("PROPFIND", url, body, depth=depth)
        out: dict[str, dict[str, Any]] = {}
        for response in tree.iter(f"{_DAV}response"):
            href = response.findtext(f"{_DAV}href")
            if not href:
                continue
            props: dict[str, Any] = {}
            for propstat in response.iter(f"{_DAV}propstat"):
                if " 200 " not in f" {propstat.findtext(f'{_DAV}status') or ''} ":
                    continue
                for prop in propstat.iter(f"{_DAV}prop"):
                    _read_props(prop, props)
            out[_path(urljoin(url, href.strip()))] = props
        return out

    def _ask_password(self) -> str:
        if self._secret is None:
            try:
                self._secret = self._password()
            except SourceError:
                raise
            except Exception as err:
                raise SourceUnreadable(self.name, f"cannot get the password ({err})") from None
        return self._secret

    def _dav(self, method: str, url: str, body: bytes, *, depth: str) -> Any:
        from xml.etree import ElementTree

        if self._credential is not None:
            resp = self._with_token(method, url, body, depth)
        else:
            resp = self._send(method, url, body, depth, auth=(self._user, self._ask_password()))
        try:
            # The standard parser resolves no external entities; expat refuses entity bombs.
            return ElementTree.fromstring(resp.body)
        except ElementTree.ParseError:
            raise SourceUnreadable(
                self.name, f"{http.redact(url)} did not answer with WebDAV XML (is it CalDAV?)"
            ) from None

    def _send(
        self,
        method: str,
        url: str,
        body: bytes,
        depth: str,
        *,
        auth: tuple[str, str] | None = None,
        bearer: str | None = None,
    ) -> http.Response:
        """One WebDAV request within this source's deadline, answered 207 or refused."""
        return http.request(
            method,
            url,
            source=self.name,
            timeout=self._timeout,
            headers={**_XML, "Depth": depth},
            body=body,
            auth=auth,
            bearer=bearer,
            ok=(207,),
            deadline=self._clock,
            plain_ok=self._plain_ok,
            on_sent=self._sent if bearer is not None else None,
            environ=self._env,
        )

    def _sent(self) -> None:
        if self._credential is not None:
            self._credential.sent = True

    def _with_token(self, method: str, url: str, body: bytes, depth: str) -> http.Response:
        """The request with `Authorization: Bearer`: the token is fetched on the first request
        and kept for this source's requests; a 401 fetches it once more and tries again."""
        assert self._credential is not None
        while True:
            if self._token is None:
                self._token = self._credential.take()
            token = self._token
            try:
                resp = self._send(method, url, body, depth, bearer=token)
            except http.Unauthorized as exc:
                self._token = None
                self._credential.refused(exc.reason, token)  # raises after the one retry
                continue
            moved = resp.moved_from(url)
            if moved is not None:  # another origin answered: it never had the token
                self._credential.moved = moved
            else:
                self._credential.accepted = True
            return resp


def _read_props(prop: Any, props: dict[str, Any]) -> None:
    for child in prop:
        if child.tag == f"{_DAV}resourcetype":
            props["calendar"] = child.find(f"{_CAL}calendar") is not None
        elif child.tag == f"{_DAV}displayname" and (child.text or "").strip():
            props["displayname"] = child.text.strip()
        elif child.tag == f"{_DAV}current-user-principal":
            props["principal"] = (child.findtext(f"{_DAV}href") or "").strip() or None
        elif child.tag == f"{_CAL}calendar-home-set":
            props["home"] = (child.findtext(f"{_DAV}href") or "").strip() or None
        elif child.tag == f"{_CAL}supported-calendar-component-set":
            names = {c.get("name", "").upper() for c in child.iter(f"{_CAL}comp")}
            props["components"] = "VEVENT" in names if names else None


def _is_calendar(props: dict[str, Any]) -> bool:
    return bool(props.get("calendar"))


def _label(props: dict[str, Any], href: str) -> str:
    return str(props.get("displayname") or _last(href))


def _last(url: str) -> str:
    return unquote(urlsplit(url).path.rstrip("/").rsplit("/", 1)[-1])


def _path(url: str) -> str:
    path = unquote(urlsplit(url).path)
    return path if path.endswith("/") else path + "/"
