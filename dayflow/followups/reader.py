"""Reading the window's mail from the sources: each inbox and each sent folder, page by page
from the newest back to the window's start, read exactly as `read_inbox` reads them (the
sources are read-only: EXAMINE and BODY.PEEK, files opened for reading).

The work is the window's, not the mailbox's: every source is asked only for mail received
since the window's start (a Maildir finds that in its sorted names, IMAP with a SEARCH
SINCE), and a page is parsed only as far as a listing parses it. A source that cannot be read
(a sent folder that is gone, a server that refuses) is named in `failures` with its one-line
reason, and the rest are still read. A message of the user's whose listing was cut short is
read whole (`MailSource.read`, at most `promises.MAX_READS` a window) for what it promised.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

from dayflow.errors import SourceError
from dayflow.followups.promises import Reader
from dayflow.followups.threads import Record, ThreadMessage
from dayflow.followups.view import Followups, Window, build_followups
from dayflow.sources.mail import FiledAt, MailSource, with_legacy_keys

PAGE = 200
MAX_PER_SOURCE = 50_000  # a window holding more than this is cut there (newest kept)


def read_records(
    source: MailSource,
    *,
    since: dt.datetime,
    until: dt.datetime,
    sent: bool,
    filed_at: FiledAt | None = None,
) -> list[Record]:
    """Every message of `source` received in [since, until), newest first, each with the key
    a task was filed for it under (`mail.with_legacy_keys`). Raises SourceError."""
    out: list[Record] = []
    after: str | None = None
    while len(out) < MAX_PER_SOURCE:
        page = source.page(since=since, after=after, limit=PAGE, unread_only=False, before=until)
        out += [Record.of(item, sent=sent) for item in with_legacy_keys(page, filed_at)]
        if len(page) < PAGE:
            break
        after = page[-1].position
    return out


def read_followups(
    sources: Iterable[tuple[MailSource, bool]],
    window: Window,
    failures: Iterable[tuple[str, str]] = (),
    filed_at: FiledAt | None = None,
) -> Followups:
    """The followups of the mail in `sources` ((source, is a sent folder) pairs) over
    `window`; `failures` are sources that could not even be opened, reported with the rest."""
    sources = list(sources)
    until = window.now + dt.timedelta(microseconds=1)
    records: list[Record] = []
    failed = list(failures)
    said: set[str] = set()
    for source, sent in sources:
        try:
            records += read_records(
                source, since=window.since, until=until, sent=sent, filed_at=filed_at
            )
        except SourceError as exc:
            if str(exc) in said:  # an account's one failure (its inbox's), said once
                continue
            said.add(str(exc))
            failed.append((source.name, _reason(source.name, str(exc))))
        except OSError as exc:  # a reader that let one through: still one line
            failed.append((source.name, exc.strerror or str(exc)))
    return build_followups(records, window, failed, _whole_text(sources))


def _whole_text(sources: list[tuple[MailSource, bool]]) -> Reader:
    """Reads a message's whole text from the source its listing came from (`MailSource.read`,
    as read_message does): None when it is gone, unreadable or has no body."""
    by_name = {source.name: source for source, _ in sources}

    def read(message: ThreadMessage) -> str | None:
        for name in message.sources:
            source, prefix = by_name.get(name), name + ":"
            if source is None or not message.id.startswith(prefix):
                continue
            try:
                item = source.read(message.id[len(prefix) :])
            except (SourceError, OSError):
                return None
            return item.body if item is not None and item.body else None
        return None

    return read


def _reason(name: str, message: str) -> str:
    prefix = f"{name}: "
    return message[len(prefix) :] if message.startswith(prefix) else message
