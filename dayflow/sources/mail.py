"""A mailbox: the `MailItem` every source lists, the `MailSource` protocol each mail reader
subclasses (`LocalMailSource` for a file or folder), and `DictMail`, the adapter for sources
that only know `messages()` (the JSON files). Several of them make one `Inbox`
(`dayflow.sources.inbox`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from dayflow.errors import SourceError
from dayflow.sources.envelope import Envelope, envelope_from_json
from dayflow.sources.identity import (
    json_message_stable_id,
    legacy_stable_id,
    mail_key,
    prefixed,
)
from dayflow.sources.injected import addresses_assistant
from dayflow.sources.mime import HEADER_CHARS, Attachment, ParsedMail, clean_line, snippet

if TYPE_CHECKING:
    from dayflow.sources.parts import FilesBeyond

MAX_ATTACHMENTS = 100  # of a JSON message's, the first shown

BODY_CHARS = 20_000  # read_message's cap on one body
# How much later than a task's filing a message may say it arrived and still be the message
# that task was filed for (a sender's clock ahead of this machine's).
FILED_SKEW = dt.timedelta(minutes=10)
# When a task was filed under each of the keys asked for that has one (the task book's).
FiledAt = Callable[[list[str]], dict[str, dt.datetime]]


class PathMissing(SourceError):
    """A local file or folder a source reads is gone."""

    def __init__(self, source: str, path: str, what: str = "file") -> None:
        super().__init__(
            f"{source}: {what} {path} does not exist (moved, deleted, or mistyped in the config?)"
        )
        self.source, self.path = source, path


def is_whole(snippet: str, body: str | None) -> bool | None:
    """Whether `snippet` shows all of `body` (as one line); None when the body is unknown."""
    if body is None:
        return None
    return clean_line(body, len(body) + 1) == clean_line(snippet, len(snippet) + 1)


def with_legacy_keys(items: Sequence[MailItem], filed_at: FiledAt | None) -> list[MailItem]:
    """`items` with the key each had before its sender was part of it, where a task was
    filed under that key when the message had already arrived: a message filed before the
    change is found again under its task, never filed twice. A message that arrived after
    that task was filed is not the one it was filed for (the same Message-ID from another
    sender, issue 32.23) and keeps its own key. `filed_at` is the task book's (None: no
    book, the keys as they are). Read from the store at the read, the keys are saved in the
    read's result, so a resumed run files under the same key."""
    wanted = sorted({i.legacy_key for i in items if i.legacy_key})
    if filed_at is None or not wanted:
        return list(items)
    when = filed_at(wanted)
    out = []
    for item in items:
        filed = when.get(item.legacy_key or "")
        if filed is not None and item.received_at <= filed + FILED_SKEW:
            item = replace(item, key=item.legacy_key or item.key)
        out.append(item)
    return out


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
    # Whether the snippet is the whole text, when the source read the body to list it (a
    # listing drops the body, not this); None when it cannot tell.
    snippet_whole: bool | None = None
    # Its key before the sender was part of it (`identity.legacy_stable_id`), when that differs:
    # `with_legacy_keys` gives it back when a task was filed under it then.
    legacy_key: str | None = None
    # Whether its parts past what the listing read hold a file, read only when asked
    # (`parts.files_beyond`); None: `envelope.has_attachment` is the whole answer.
    files_beyond: FilesBeyond | None = field(default=None, compare=False, repr=False)

    @classmethod
    def of(
        cls,
        source: str,
        parsed: ParsedMail,
        *,
        unread: bool,
        position: str,
        received_at: dt.datetime | None = None,
        files_beyond: FilesBeyond | None = None,
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
            # Whole only when the body was read: headers past the listing's bytes hid it.
            snippet_whole=is_whole(parsed.snippet, parsed.body) if parsed.body_read else False,
            legacy_key=mail_key(parsed.legacy_id) if parsed.legacy_id else None,
            files_beyond=files_beyond,
        )

    def carries_file(self) -> bool:
        """Whether it carries a file, reading past the listing's bytes if it must."""
        return self.envelope.has_attachment or (
            self.files_beyond is not None and self.files_beyond()
        )

    @property
    def id(self) -> str:
        return prefixed(self.source, self.stable_id)

    def listing_json(self, tz: dt.tzinfo) -> dict[str, Any]:
        """The message as read_inbox lists it; `snippet_is_whole` says whether the snippet is
        all of the text (when the listing read the body: JSON, Maildir, mbox, .eml, IMAP's
        first bytes), so that a reader knows when read_message would show nothing more;
        `bulk` marks mailing-list, bulk and automated mail (the envelope's one predicate,
        the one read_followups' `bulk` list uses), which asks nothing of the user."""
        snippet = clean_line(self.snippet, 2 * 200)
        out: dict[str, Any] = {
            "id": self.id,
            "source": self.source,
            "key": self.key,
            "from": clean_line(self.sender, HEADER_CHARS),
            "subject": clean_line(self.subject, HEADER_CHARS),
            "received_at": self.received_at.astimezone(tz).isoformat(),
            "snippet": snippet,
            "unread": self.unread,
        }
        whole = self.snippet_whole
        if whole is None and self.body is not None:
            whole = is_whole(self.snippet, self.body)
        if whole is not None:
            out["snippet_is_whole"] = whole
        if self.envelope.listed or self.envelope.automated:
            # On the message itself, not only in read_followups' `bulk` list: that list is
            # capped (the newest keys), and a busy inbox has more list mail than it shows.
            out["bulk"] = True
        if self.envelope.list_id:  # what `dayflow mute list:ID` and a rejection name
            out["list_id"] = clean_line(self.envelope.list_id, HEADER_CHARS)
        if addresses_assistant(f"{self.subject}\n{self.snippet}\n{self.body or ''}"):
            # Text written to an AI assistant, not to the user (a prompt injection): what it
            # asks is never a task, and no tool is called for it (`sources/injected.py`).
            out["to_assistant"] = True
        if self.envelope.auth_failed:
            # The receiving server found the From address forged: whoever it names did not
            # send it (a "note to yourself" from outside is not the user's).
            out["sender_unverified"] = True
        return out

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
                legacy = None
                if self._sample:
                    key = mail_key(stable, sample=True)
                else:
                    key = mail_key(json_message_stable_id(m))
                    mid = m.get("message_id")
                    old = (
                        legacy_stable_id(mid, str(m.get("from", "")))
                        if isinstance(mid, str)
                        else None
                    )
                    legacy = mail_key(old) if old else None
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
                        attachments=_json_attachments(m.get("attachments")),
                        envelope=envelope_from_json(m),
                        snippet_whole=is_whole(m.get("snippet") or snippet(body), body),
                        legacy_key=legacy,
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


def _json_attachments(given: object) -> tuple[Attachment, ...]:
    """A JSON message's `attachments` (as `json_files` checked them: name, type, size)."""
    if not isinstance(given, list):
        return ()
    return tuple(
        Attachment(
            clean_line(str(a.get("name") or "(unnamed)"), 200),
            clean_line(str(a.get("type") or "application/octet-stream"), 100),
            a["size"] if isinstance(a.get("size"), int) else 0,
        )
        for a in given[:MAX_ATTACHMENTS]
        if isinstance(a, dict)
    )
