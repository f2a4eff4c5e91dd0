"""One run's followups, read when a tool first asks and kept for the rest of the process.

`build_sources` makes a `Feed` beside the run's inbox: the same mail sources, the sent
folders of the config's entries, who "me" is, and the window. The window ends with the
brief's day (in the user's zone), never with the clock, so a run resumed tomorrow counts the
same ages over the same mail as it did today: a tool result is the same bytes after a crash.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from dayflow.followups.reader import read_followups
from dayflow.followups.view import FOLLOWUP_DAYS, WAITING_AFTER_DAYS, Followups, Window
from dayflow.sources.mail import FiledAt, MailSource
from dayflow.sources.me import Me


class Feed:
    """The followups of `inbox` and `sent` sources up to the end of `brief_date`."""

    def __init__(
        self,
        inbox: Sequence[MailSource],
        sent: Sequence[MailSource] = (),
        *,
        me: Me,
        brief_date: dt.date,
        tz: dt.tzinfo,
        window_days: int = FOLLOWUP_DAYS,
        waiting_after_days: int = WAITING_AFTER_DAYS,
        failures: Sequence[tuple[str, str]] = (),
    ) -> None:
        self.inbox, self.sent, self.me, self.tz = list(inbox), list(sent), me, tz
        self.window_days, self.waiting_after_days = window_days, waiting_after_days
        self.failures = list(failures)
        end = dt.datetime.combine(brief_date + dt.timedelta(days=1), dt.time(), tzinfo=tz)
        self.at = end - dt.timedelta(microseconds=1)
        self._read: Followups | None = None
        # The task book's filing times (`Inbox.keep_filed_keys`): messages keep the key a
        # task was filed under before keys carried the sender.
        self.filed_at: FiledAt | None = None

    @property
    def remote(self) -> bool:
        """Whether a source is a server (what it answered is saved the moment it answers)."""
        return any(s.remote for s in (*self.inbox, *self.sent))

    def close(self) -> None:
        """Let go of the sent folders' connections (the inbox's are its own to close)."""
        for source in self.sent:
            source.close()

    def __call__(self) -> Followups:
        """The followups (read once; later calls return the same value)."""
        if self._read is None:
            pairs = [(s, False) for s in self.inbox] + [(s, True) for s in self.sent]
            window = Window(self.me, self.at, self.tz, self.window_days, self.waiting_after_days)
            self._read = read_followups(pairs, window, self.failures, self.filed_at)
        return self._read
