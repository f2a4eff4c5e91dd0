"""Several mailboxes as one inbox: the merged `Inbox` view with its window and cursor.

Each source lists its own messages newest first in its own cheap order (a Maildir by delivery
time from the file names, IMAP by UID) and says where an item sits in that order (`position`).
The inbox merges the sources' pages by `received_at` and hands out an opaque cursor that holds
each source's last position, so a listing of thousands is walked page by page and costs what
the page costs. The same message in two sources (a Maildir configured twice, IMAP beside its
mbsync copy) is listed once per walk through the pages, the first copy in the merged order: an
item whose key (`mail:<hash of its Message-ID and sender>`) was listed already is skipped. The
keys listed are kept by the Inbox for the walk its cursor names, not in the cursor (which the
model copies back, and which would grow with every page); the walk's name is a hash of its
first page, so a resumed run sends the same bytes, and a cursor from another process lists on
without them.
A source that fails is reported by name (`Listing.failures`) while the others still answer;
a local file or folder that is gone raises `PathMissing`, which the tools turn
into a failed, resumable run (it must never end as a `done` run with a broken brief).
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dayflow.errors import SourceError, SourceUnavailable
from dayflow.sources.identity import SAMPLE_SOURCE
from dayflow.sources.mail import (
    DictMail,
    FiledAt,
    MailItem,
    MailSource,
    PathMissing,
    with_legacy_keys,
)
from dayflow.sources.protocols import InboxSource

if TYPE_CHECKING:
    from dayflow.followups.feed import Feed
    from dayflow.sources.drafts import DraftBox


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
        # The followups of these sources and their sent folders (set by build_sources).
        self.followups: Feed | None = None
        # The drafts folders replies are drafted into, by [[inbox]] entry (issue 36; set by
        # build_sources for a run with drafts on): empty, nothing is ever written.
        self.drafts: dict[str, DraftBox] = {}
        # When tasks were filed under keys (the task book's, `keep_filed_keys`): a message
        # filed under its key of before the sender was part of it keeps it.
        self.filed_at: FiledAt | None = None

    def keep_filed_keys(self, filed_at: FiledAt) -> None:
        """Give each message listed or read here, and in its followups, the key of a task
        filed for it before its key carried its sender (`mail.with_legacy_keys`)."""
        self.filed_at = filed_at
        if self.followups is not None:
            self.followups.filed_at = filed_at

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
        if cursor is not None:
            walk = _Walk.resume(cursor)
        else:
            walk = _Walk(self.default_since if since is None else since, source, unread_only)
        # A cursor this Inbox did not make (another process's: a resumed run) starts afresh.
        listed = self._walks.get(walk.name, set()) if walk.name else set()
        if self.floor is not None and (walk.since is None or walk.since < self.floor):
            walk.since = self.floor
        heads, failures = self._heads(walk, limit)
        merged, taken = _merge(heads, limit, listed)
        more = walk.advance(heads, taken, limit)
        merged = with_legacy_keys(merged, self.filed_at)
        if not walk.name:
            # Named by what the walk is and what its first page holds: the same in every
            # process (a resumed run's requests are the same bytes), and two walks with one
            # name list the same messages first, so sharing the keys listed hides nothing.
            keys = [item.key for item in merged]
            since_iso = walk.since.isoformat() if walk.since else None
            basis = [since_iso, walk.source, walk.unread_only, keys]
            walk.name = hashlib.sha256(json.dumps(basis).encode()).hexdigest()[:12]
        self._walks[walk.name] = listed
        return Listing(merged, walk.cursor() if more else None, failures, walk.since)

    def _heads(
        self, walk: _Walk, limit: int
    ) -> tuple[list[tuple[MailSource, list[MailItem]]], list[tuple[str, str]]]:
        """Each source's next page of the walk (not those walked to their end), and the
        sources that failed with why."""
        chosen = [s for s in self.sources if walk.source is None or s.name == walk.source]
        if walk.source is not None and not chosen:
            names = ", ".join(s.name for s in self.sources)
            raise SourceError(f"no mail source named {walk.source!r} (sources: {names})")
        heads: list[tuple[MailSource, list[MailItem]]] = []
        failures: list[tuple[str, str]] = []
        for src in chosen:
            if src.name in walk.positions and walk.positions[src.name] is None:
                continue  # this source was walked to its end
            try:
                got = src.page(
                    since=walk.since,
                    after=walk.positions.get(src.name),
                    limit=limit,
                    unread_only=walk.unread_only,
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
        return heads, failures

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
                    return with_legacy_keys([found], self.filed_at)[0]
                break
        raise KeyError(wanted)

    def close(self) -> None:
        """Close the sources that hold a connection (IMAP), the sent folders' too."""
        for src in self.sources:
            src.close()
        if self.followups is not None:
            self.followups.close()
        for box in self.drafts.values():
            box.close()

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


@dataclass
class _Walk:
    """Where a walk through the pages is: its window, its source and unread filters, each
    source's last position (None: walked to its end), and its name (empty before its first
    page). The cursor is this, encoded."""

    since: dt.datetime | None
    source: str | None
    unread_only: bool
    positions: dict[str, str | None] = field(default_factory=dict)
    name: str = ""

    @classmethod
    def resume(cls, cursor: str) -> _Walk:
        state = _decode_cursor(cursor)
        return cls(
            _from_iso(state.get("since")),
            state.get("source"),
            bool(state.get("unread")),
            dict(state.get("pos") or {}),
            str(state.get("walk") or ""),
        )

    def advance(
        self, heads: list[tuple[MailSource, list[MailItem]]], taken: list[int], limit: int
    ) -> bool:
        """Move each source's position past what the page took; whether any has more."""
        more = False
        for i, (src, got) in enumerate(heads):
            if taken[i]:
                self.positions[src.name] = got[taken[i] - 1].position
            if taken[i] == len(got) and len(got) < limit:
                self.positions[src.name] = None  # walked to its end
            else:
                more = True
        return more

    def cursor(self) -> str:
        return _encode_cursor(
            {
                "since": self.since.isoformat() if self.since else None,
                "source": self.source,
                "unread": self.unread_only,
                "pos": self.positions,
                "walk": self.name,
            }
        )


def _merge(
    heads: list[tuple[MailSource, list[MailItem]]], limit: int, listed: set[str]
) -> tuple[list[MailItem], list[int]]:
    """Up to `limit` items newest first from the sources' pages, skipping (and adding to
    `listed`) keys listed already, and how many items each page gave. A k-way merge that
    takes from each source a prefix of its own order, so a cursor of one position per source
    never skips an item, whatever order a source keeps."""
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
    return merged, taken


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
    except (ValueError, TypeError, RecursionError):  # the model's: it can be anything
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


def legacy_inbox(inner: Any) -> Inbox:
    """An Inbox over an old-style source (`messages()` only): the bundled sample keeps its own
    namespace, anything else is named "inbox"."""
    if isinstance(inner, Inbox):
        return inner
    declared = isinstance(inner, InboxSource)  # else only `messages()`: the defaults
    sample = declared and inner.is_sample is True
    name = SAMPLE_SOURCE if sample else "inbox"
    where = str(inner.label) if declared else "(messages)"
    return Inbox([DictMail(name, inner, sample=sample, where=where)])
