"""Several mailboxes as one inbox: the `MailSource` protocol, the merged `Inbox` view with its
window and cursor, and the adapter for sources that only know `messages()` (the JSON files).

Each source lists its own messages newest first in its own cheap order (a Maildir by delivery
time from the file names, IMAP by UID) and says where an item sits in that order (`position`).
The inbox merges the sources' pages by `received_at` and hands out an opaque cursor that holds
each source's last position, so a listing of thousands is walked page by page and costs what
the page costs. The same message in two sources (a Maildir configured twice, IMAP beside its
mbsync copy) is listed once per walk through the pages, the first copy in the merged order: an
item whose key (`mail:<hash of its Message-ID>`) was listed already is skipped. The keys listed
are kept by the Inbox for the walk its cursor names, not in the cursor (which the model copies
back, and which would grow with every page); the walk's name is a hash of its first page, so a
resumed run sends the same bytes, and a cursor from another process lists on without them.
A source that fails is reported by name (`Listing.failures`) while the others still answer;
a local file or folder that is gone raises `PathMissing`, which the tools turn
into a failed, resumable run (it must never end as a `done` run with a broken brief).
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from dayflow.errors import SourceError, SourceUnavailable
from dayflow.sources.envelope import Envelope, envelope_from_json
from dayflow.sources.identity import (
    SAMPLE_SOURCE,
    json_message_stable_id,
    mail_key,
    prefixed,
)
from dayflow.sources.mime import HEADER_CHARS, Attachment, ParsedMail, clean_line, snippet

BODY_CHARS = 20_000  # read_message's cap on one body


class PathMissing(SourceError):
    """A local file or folder a source reads is gone."""

    def __init__(self, source: str, path: str, what: str = "file") -> None:
        super().__init__(
            f"{source}: {what} {path} does not exist (moved, deleted, or mistyped in the config?)"
        )
        self.source, self.path = source, path


@dataclass(frozen=True)
class MailItem:
    """One message of one source; `body` and `attachments` are filled by `read` only."""

    source: str
    stable_id: str
    key: str
    sender: str
    subject: str
    received_at: dt.datetime  # aware
    snippet: str
    unread: bool
    thread_id: str | None
    position: str  # where it sits in its source's order (for cursors)
    body: str | None = None
    attachments: tuple[Attachment, ...] = ()
    envelope: Envelope = Envelope()  # from, to, cc, thread links (dayflow.followups)

    @classmethod
    def of(
        cls,
        source: str,
        parsed: ParsedMail,
        *,
        unread: bool,
        position: str,
        received_at: dt.datetime | None = None,
    ) -> MailItem:
        """A parsed message of `source` (received when its headers say, unless given)."""
        return cls(
            source=source,
            stable_id=parsed.stable_id,
            key=mail_key(parsed.stable_id),
            sender=parsed.sender,
            subject=parsed.subject,
            received_at=received_at or parsed.received_at,
            snippet=parsed.snippet,
            unread=unread,
            thread_id=parsed.thread_id,
            position=position,
            body=parsed.body,
            attachments=parsed.attachments,
            envelope=parsed.envelope,
        )

    @property
    def id(self) -> str:
        return prefixed(self.source, self.stable_id)

    def listing_json(self, tz: dt.tzinfo) -> dict[str, Any]:
        """The message as read_inbox lists it."""
        return {
            "id": self.id,
            "source": self.source,
            "key": self.key,
            "from": clean_line(self.sender, HEADER_CHARS),
            "subject": clean_line(self.subject, HEADER_CHARS),
            "received_at": self.received_at.astimezone(tz).isoformat(),
            "snippet": clean_line(self.snippet, 2 * 200),
            "unread": self.unread,
        }

    def message_json(self, tz: dt.tzinfo, cap: int = BODY_CHARS) -> dict[str, Any]:
        """The message as read_message returns it: the body cut at `cap` characters with a
        marker saying how much was cut, and the attachments by name, type and size."""
        body = self.body if self.body is not None else self.snippet
        if len(body) > cap:
            cut = len(body) - cap
            body = body[:cap] + f"\n[… {cut:,} more characters not shown]"
        return {
            **self.listing_json(tz),
            "thread_id": self.thread_id,
            "body": body,
            "attachments": [a.to_json() for a in self.attachments],
        }


@dataclass(frozen=True)
class PageQuery:
    """What one page of one source is asked for: received at or after `since` and before
    `before`, strictly after position `after` (None: from the newest), `limit` at most."""

    since: dt.datetime | None
    after: str | None
    limit: int
    unread_only: bool
    before: dt.datetime | None = None

    def admits(self, item: MailItem) -> bool:
        """Whether `item` belongs on the page (the limit aside)."""
        return not (
            (self.after is not None and item.position <= self.after)
            or (self.since is not None and item.received_at < self.since)
            or (self.before is not None and item.received_at >= self.before)
            or (self.unread_only and not item.unread)
        )


class MailSource(Protocol):
    """One mailbox: every mail source subclasses this and writes `select`, `read`, `status`
    and `where`; `remote`, `precheck` and `close` have defaults for a local source. Errors are
    SourceError lines naming the source (PathMissing for a local path that is gone)."""

    name: str
    remote: bool = False  # a server: what it answered is saved the moment it answers

    @property
    def where(self) -> str: ...

    def page(
        self,
        *,
        since: dt.datetime | None,
        after: str | None,
        limit: int,
        unread_only: bool,
        before: dt.datetime | None = None,
    ) -> list[MailItem]:
        """Up to `limit` messages newest first, received at or after `since` and before
        `before`, strictly after position `after` (None: from the newest)."""
        return self.select(PageQuery(since, after, limit, unread_only, before))

    def select(self, query: PageQuery) -> list[MailItem]:
        """`page`, its arguments as one value."""
        ...

    def read(self, stable_id: str) -> MailItem | None:
        """One message with its body and attachments, or None when it is not there."""
        ...

    def status(self) -> tuple[int, MailItem | None]:
        """How many messages there are, and the newest (for `sources check`)."""
        ...

    def precheck(self) -> None:
        """Before a run: fail (SourceError) when a local path cannot be read; a server is
        not contacted here."""
        return None

    def close(self) -> None:
        """Let go of a connection (IMAP); nothing for a local source."""
        return None


class LocalMailSource(MailSource):
    """A mail source over a local file or folder, `path`: `where` names it, and the precheck
    asks only that it exists (what is in it is the reads' to find out)."""

    path: Path
    path_word = "file"  # how PathMissing names the path

    @property
    def where(self) -> str:
        return str(self.path)

    def precheck(self) -> None:
        if not self.path.exists():
            raise PathMissing(self.name, str(self.path), self.path_word)


@dataclass(frozen=True)
class Listing:
    items: list[MailItem]
    next_cursor: str | None
    failures: list[tuple[str, str]] = field(default_factory=list)  # (source, reason)
    since: dt.datetime | None = None


class CursorError(ValueError):
    pass


class Inbox:
    """Several mail sources as one, newest first. `default_since` is the run's window (None:
    everything) and `until` its end (a brief for a past day reads no later mail; None: none);
    `strict` turns any source failure into SourceUnavailable."""

    def __init__(
        self,
        sources: list[MailSource],
        *,
        default_since: dt.datetime | None = None,
        until: dt.datetime | None = None,
        strict: bool = False,
    ) -> None:
        self.sources = sources
        self.default_since = default_since
        self.until = until
        self.strict = strict
        # An update run sees only mail received after the brief it updates, whatever it asks.
        self.floor: dt.datetime | None = None
        # The keys listed so far in each walk through the pages (the cursor names its walk).
        self._walks: dict[str, set[str]] = {}

    @property
    def remote(self) -> bool:
        """Whether a source is a server (its reads are saved as they return)."""
        return any(s.remote for s in self.sources)

    def only_after(self, when: dt.datetime) -> Inbox:
        """This inbox narrowed to mail received strictly after `when` (an update's inbox)."""
        self.floor = when + dt.timedelta(microseconds=1)
        return self

    def listing(
        self,
        *,
        limit: int,
        since: dt.datetime | None = None,
        source: str | None = None,
        cursor: str | None = None,
        unread_only: bool = False,
    ) -> Listing:
        """One page of the merged inbox; raises SourceError when every source asked failed
        (or, strict, when any did), PathMissing when a local source is gone."""
        positions: dict[str, str | None]
        if cursor is not None:
            state = _decode_cursor(cursor)
            since = _from_iso(state.get("since"))
            source, unread_only = state.get("source"), bool(state.get("unread"))
            positions = dict(state.get("pos") or {})
            walk = str(state.get("walk") or "")
        else:
            if since is None:
                since = self.default_since
            positions = {}
            walk = ""
        # A cursor this Inbox did not make (another process's: a resumed run) starts afresh.
        listed = self._walks.get(walk, set()) if walk else set()
        if self.floor is not None and (since is None or since < self.floor):
            since = self.floor
        chosen = [s for s in self.sources if source is None or s.name == source]
        if source is not None and not chosen:
            names = ", ".join(s.name for s in self.sources)
            raise SourceError(f"no mail source named {source!r} (sources: {names})")
        heads: list[tuple[MailSource, list[MailItem]]] = []
        failures: list[tuple[str, str]] = []
        for src in chosen:
            if src.name in positions and positions[src.name] is None:
                continue  # this source was walked to its end
            try:
                got = src.page(
                    since=since,
                    after=positions.get(src.name),
                    limit=limit,
                    unread_only=unread_only,
                    before=self.until,
                )
            except PathMissing:
                raise
            except SourceError as exc:
                if self.strict:
                    raise SourceUnavailable(f"{exc} (--strict-sources)") from None
                failures.append((src.name, _reason(src.name, str(exc))))
                continue
            heads.append((src, got))
        if failures and not heads:
            raise SourceError("; ".join(f"{name}: {why}" for name, why in failures))
        # A k-way merge that takes from each source a prefix of its own order, so a cursor of
        # one position per source never skips an item, whatever order a source keeps.
        merged: list[MailItem] = []
        taken = [0] * len(heads)
        while len(merged) < limit:
            best: int | None = None
            for i, (_src, got) in enumerate(heads):
                if taken[i] < len(got) and (
                    best is None or _newer(got[taken[i]], heads[best][1][taken[best]])
                ):
                    best = i
            if best is None:
                break
            item = heads[best][1][taken[best]]
            taken[best] += 1
            if item.key in listed:
                continue  # the same message from another source, listed already
            listed.add(item.key)
            merged.append(item)
        more = False
        for i, (src, got) in enumerate(heads):
            if taken[i]:
                positions[src.name] = got[taken[i] - 1].position
            if taken[i] == len(got) and len(got) < limit:
                positions[src.name] = None  # walked to its end
            else:
                more = True
        if not walk:
            # Named by what the walk is and what its first page holds: the same in every
            # process (a resumed run's requests are the same bytes), and two walks with one
            # name list the same messages first, so sharing the keys listed hides nothing.
            keys = [item.key for item in merged]
            basis = [since.isoformat() if since else None, source, unread_only, keys]
            walk = hashlib.sha256(json.dumps(basis).encode()).hexdigest()[:12]
        self._walks[walk] = listed
        next_cursor = None
        if more:
            next_cursor = _encode_cursor(
                {
                    "since": since.isoformat() if since else None,
                    "source": source,
                    "unread": unread_only,
                    "pos": positions,
                    "walk": walk,
                }
            )
        return Listing(merged, next_cursor, failures, since)

    def read(self, wanted: str) -> MailItem:
        """The message with item id `wanted` (`<source>:<stable id>`); KeyError when none."""
        name, sep, stable = wanted.partition(":")
        if not sep and len(self.sources) == 1:
            # A run started before ids carried their source (an older database resumed).
            name, stable = self.sources[0].name, wanted
        for src in self.sources:
            if src.name == name:
                found = src.read(stable)
                if found is not None:
                    return found
                break
        raise KeyError(wanted)

    def close(self) -> None:
        """Close the sources that hold a connection (IMAP)."""
        for src in self.sources:
            src.close()

    def messages(self) -> list[dict[str, Any]]:
        """Every message of every source as plain dicts, newest first (the old protocol)."""
        out: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            page = self.listing(limit=200, cursor=cursor)
            out += [_as_dict(i) for i in page.items]
            if page.next_cursor is None:
                return out
            cursor = page.next_cursor


def select_page(items: Iterable[MailItem], query: PageQuery) -> list[MailItem]:
    """`MailSource.select` over items already in order (newest first, positions falling), for
    a source that holds its messages in memory."""
    out = []
    for item in items:
        if query.admits(item):
            out.append(item)
            if len(out) >= query.limit:
                break
    return out


def _newer(a: MailItem, b: MailItem) -> bool:
    return (a.received_at, b.id) > (b.received_at, a.id)


def _as_dict(item: MailItem) -> dict[str, Any]:
    return {
        "id": item.id,
        "source": item.source,
        "key": item.key,
        "from": item.sender,
        "subject": item.subject,
        "received_at": item.received_at.isoformat(),
        "snippet": item.snippet,
        "body": item.body if item.body is not None else item.snippet,
        "unread": item.unread,
        "thread_id": item.thread_id,
    }


def _reason(name: str, message: str) -> str:
    prefix = f"{name}: "
    return message[len(prefix) :] if message.startswith(prefix) else message


def _encode_cursor(state: dict[str, Any]) -> str:
    raw = json.dumps(state, separators=(",", ":"), sort_keys=True).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_cursor(cursor: str) -> dict[str, Any]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        state = json.loads(raw)
        if not isinstance(state, dict) or not isinstance(state.get("pos", {}), dict):
            raise ValueError(cursor)
        _from_iso(state.get("since"))
        return state
    except (ValueError, TypeError):
        raise CursorError("'cursor' is not one that read_inbox returned") from None


def _from_iso(value: object) -> dt.datetime | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(value)
    parsed = dt.datetime.fromisoformat(value)
    if parsed.tzinfo is None:
        raise ValueError(value)
    return parsed


# --- sources that only have messages() (the JSON files, tests' fakes) ---------------------------


class DictMail(MailSource):
    """A MailSource over any object with `messages()` returning Dayflow's message dicts (the
    JSON reader). The file's own ids stay readable in the item id (`<name>:<id>`); the key is
    `sample:<id>` for the bundled sample, else `identity.json_message_stable_id`, so two files
    reusing an id never share a task."""

    def __init__(
        self, name: str, inner: Any, *, sample: bool = False, where: str = "(messages)"
    ) -> None:
        self.name = name
        self._inner = inner
        self._sample = sample
        self._where = where
        self._items: list[MailItem] | None = None

    @property
    def where(self) -> str:
        return self._where

    def precheck(self) -> None:
        self._all()

    def _all(self) -> list[MailItem]:
        if self._items is None:
            items = []
            for n, m in enumerate(self._inner.messages()):
                stable = str(m["id"])
                if self._sample:
                    key = mail_key(stable, sample=True)
                else:
                    key = mail_key(json_message_stable_id(m))
                received = dt.datetime.fromisoformat(m["received_at"])
                body = m.get("body") or m.get("snippet") or ""
                items.append(
                    MailItem(
                        source=self.name,
                        stable_id=stable,
                        key=key,
                        sender=str(m.get("from", "")),
                        subject=str(m.get("subject", "")),
                        received_at=received,
                        snippet=m.get("snippet") or snippet(body),
                        unread=bool(m.get("unread", False)),
                        thread_id=m.get("thread_id"),
                        position=f"{n:08d}",
                        body=body,
                        envelope=envelope_from_json(m),
                    )
                )
            self._items = items
        return self._items

    def select(self, query: PageQuery) -> list[MailItem]:
        page = select_page(self._all(), query)
        return [replace(item, body=None) for item in page]

    def read(self, stable_id: str) -> MailItem | None:
        return next((i for i in self._all() if i.stable_id == stable_id), None)

    def status(self) -> tuple[int, MailItem | None]:
        items = self._all()
        return len(items), (max(items, key=lambda i: i.received_at) if items else None)


def legacy_inbox(inner: Any) -> Inbox:
    """An Inbox over an old-style source (`messages()` only): the bundled sample keeps its own
    namespace, anything else is named "inbox"."""
    if isinstance(inner, Inbox):
        return inner
    sample = getattr(inner, "is_sample", False) is True
    name = SAMPLE_SOURCE if sample else "inbox"
    where = str(getattr(inner, "label", "(messages)"))
    return Inbox([DictMail(name, inner, sample=sample, where=where)])
