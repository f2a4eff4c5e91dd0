"""The faces the loop and the tools see: `InboxSource`, the shape of a reader that lists its
messages as dicts (the JSON files; `dayflow.sources.inbox.legacy_inbox` makes it an `Inbox`),
and `CalendarSource`, every calendar, with its optional capabilities declared here with their
defaults (a local file is not remote, cuts no series short, has no failures and nothing to
close), so a caller reads them as attributes instead of asking `getattr`.

A reader subclasses the protocol to take the defaults; `as_calendar` gives the same defaults
to a calendar that only has `events()` (a test's fake)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from dayflow.sources.recurrence import CutShort


@runtime_checkable
class InboxSource(Protocol):
    """Where messages come from, as dicts."""

    def messages(self) -> list[dict[str, Any]]:
        """All messages, newest first, as fresh copies."""
        ...

    @property
    def is_sample(self) -> bool:
        """The bundled sample (its items live in their own `sample:` namespace)."""
        return False

    @property
    def label(self) -> str:
        """How messages name where it reads."""
        return "(messages)"


@runtime_checkable
class CalendarSource(Protocol):
    """Where events come from."""

    # A server (CalDAV, a URL): what it answered is saved the moment it answers.
    remote: bool = False
    # The recurring series the last `events()` did not expand in full.
    cut_short: Sequence[CutShort] = ()
    # The calendars that did not answer the last `events()`, with why (a merged calendar).
    failures: Sequence[tuple[str, str]] = ()
    # Its dates follow the brief's day (a JSON file with an `anchor_date`: the bundled sample):
    # a brief of another day sees its events moved by whole days, which is no move.
    follows_brief_date: bool = False
    # The calendars (by their events' `source`) of the last `events()` that follow the brief's
    # day (a merged calendar).
    anchored: Sequence[str] = ()

    def events(self, *, first: dt.date, last: dt.date) -> list[dict[str, Any]]:
        """The events overlapping the user's dates first..last (inclusive), by start time, as
        fresh copies; a source may return more (the caller filters). Raises SourceError."""
        ...

    def configured(self) -> bool:
        """Whether any calendar is configured (a merged calendar of none says no)."""
        return True

    def close(self) -> None:
        """Let go of a connection; nothing for a file."""
        return None


class _Bare(CalendarSource):
    """A calendar that only has `events()`, with the protocol's defaults."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def events(self, *, first: dt.date, last: dt.date) -> list[dict[str, Any]]:
        return list(self.inner.events(first=first, last=last))


def as_calendar(source: Any) -> CalendarSource:
    """`source` as a CalendarSource: itself when it is one, else with the defaults."""
    return source if isinstance(source, CalendarSource) else _Bare(source)
