"""An mbox file, read without changing it, at the cost of the page rather than the file.

A listing does not parse the mailbox: it finds the message boundaries (the `From ` separator
lines, searched in C over a memory map of the file: a few microseconds a message) and parses
only the page's messages, each read no further than `LIST_BYTES`. The order is the file's,
newest last (an mbox is appended to as mail arrives, as a Maildir's names are delivery times),
the cursor a byte offset, and the window (`since`, `before`) uses the delivery time the
separator line carries (`From sender Wed Nov  4 08:00:00 2026`), else the message's own date.
The boundaries are kept for as long as the file's size, mtime and inode say it is unchanged.

What is a separator: a line `From <anything> ... hh:mm ... yyyy` at the start of the file or
after a blank line (RFC 4155; what mutt, Thunderbird, Gmail's export and Python write); after a
blank line, a `From <sender>` line with no date at all (`From p1@ex.example`, as some tools and
hand-made files write) when a header line (`Name: value`) follows it, as one always does in a
mailbox and does not in prose; or, after any line, one in the exact asctime form. So a body line
"From the desk of..." never splits a message, escaped (`>From `) or not; a message's `>From `
lines are shown unescaped (mboxrd).

Unread state: a message without `R` in its `Status:` / `X-Status:` header is unread.
"""

from __future__ import annotations

import calendar
import datetime as dt
import mmap
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from dayflow.errors import SourceError
from dayflow.files import NotRegular, open_regular
from dayflow.sources.mail import LocalMailSource, MailItem, PageQuery, PathMissing
from dayflow.sources.mime import message_head, parse_message
from dayflow.sources.parts import files_beyond, span_chunks

LIST_BYTES = 64 * 1024  # how much of a message a listing reads
READ_BYTES = 32 * 1024 * 1024  # read_message reads at most this much of one message
_MONTHS = {m.encode(): i for i, m in enumerate(calendar.month_abbr) if m}
_DAYS = b"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)"
_MONTH = b"(" + b"|".join(_MONTHS) + b")"
_WHEN = _MONTH + rb" +(\d{1,2}) +(\d{1,2}):(\d{2})(?::(\d{2}))?(?: +[+-]?\w+)? +(\d{4})"
# After a blank line: "From <sender> " and, somewhere on the line, a time and a year.
_LOOSE = re.compile(
    rb"From \S+ (?=[^\r\n]*\b\d{1,2}:\d{2}\b)(?=[^\r\n]*\b(?:19|20|21)\d\d\b)[^\r\n]*\r?\n"
)
# After any line: exactly "From <sender> <weekday> <month> <day> <hh:mm:ss> [zone] <year>".
_STRICT = re.compile(rb"From \S+ +" + _DAYS + rb" +" + _WHEN + rb" *\r?\n")
# After a blank line, with no date: "From <sender>[ anything]", when a header line comes next.
_BARE = re.compile(rb"From \S+[^\r\n]*\r?\n")
_HEADER = re.compile(rb"[!-9;-~]+:")
_ASCTIME = re.compile(_WHEN)
_STATUS = re.compile(rb"^(?:X-)?Status:[ \t]*([^\r\n]*)", re.IGNORECASE | re.MULTILINE)
_ESCAPED = re.compile(rb"^>(>*From )", re.MULTILINE)
_FOLD = re.compile(rb"\r?\n(?=[ \t])")

Boundary = tuple[int, int, bytes]  # start, end (bytes), the separator line


class MboxSource(LocalMailSource):
    path_word = "mbox file"

    def __init__(self, name: str, path: str | Path) -> None:
        self.name, self.path = name, Path(path)
        self._kept: tuple[tuple[int, int, int], list[Boundary]] | None = None
        self._located: dict[str, int] = {}  # stable id -> start offset

    def _boundaries(self) -> list[Boundary]:
        """Every message's (start, end, separator line), in file order."""
        if not self.path.exists():
            raise PathMissing(self.name, str(self.path), "mbox file")
        if self.path.is_dir():
            raise SourceError(f"{self.name}: {self.path} is a directory, not an mbox file")
        try:
            with open_regular(self.path) as fh:
                st = os.fstat(fh.fileno())
                stamp = (st.st_ino, st.st_size, st.st_mtime_ns)
                if self._kept is not None and self._kept[0] == stamp:
                    return self._kept[1]
                if st.st_size == 0:
                    found: list[Boundary] = []
                else:
                    with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as data:
                        if data[:5] != b"From ":
                            raise SourceError(
                                f"{self.name}: {self.path} is not an mbox file (it does not "
                                "start with 'From ')"
                            )
                        found = _scan(data)
        except OSError as err:
            raise self._unreadable(err) from None
        self._kept = (stamp, found)
        return found

    def select(self, query: PageQuery) -> list[MailItem]:
        since, after, limit, before = query.since, query.after, query.limit, query.before
        unread_only = query.unread_only
        bounds = self._boundaries()
        below = int(after) if after is not None and after.isdigit() else None
        out: list[MailItem] = []
        with self._open() as fh:
            for start, end, line in reversed(bounds):
                if below is not None and start >= below:
                    continue
                delivered = _delivered(line)
                if delivered is not None and not _inside(delivered, since, before):
                    continue
                item = self._item(fh, start, end, delivered, LIST_BYTES)
                if delivered is None and not _inside(item.received_at, since, before):
                    continue
                if unread_only and not item.unread:
                    continue
                out.append(item)
                if len(out) >= limit:
                    break
        return out

    def _open(self) -> _File:
        try:
            return _File(open_regular(self.path))
        except FileNotFoundError:
            raise PathMissing(self.name, str(self.path), "mbox file") from None
        except OSError as err:
            raise self._unreadable(err) from None

    def _unreadable(self, err: OSError) -> SourceError:
        """The one-line error for a file that is there but cannot be read as an mbox."""
        if isinstance(err, NotRegular):
            return SourceError(f"{self.name}: {self.path} is {err.kind}, not an mbox file")
        return SourceError(f"{self.name}: cannot read {self.path} ({err.strerror or err})")

    def _item(
        self, fh: _File, start: int, end: int, delivered: dt.datetime | None, cap: int
    ) -> MailItem:
        raw, whole = message_head(lambda n: fh.read(start, min(end - start, n)), cap)
        raw = _ESCAPED.sub(rb"\1", raw[raw.find(b"\n") + 1 :])  # past the separator line
        head = raw.split(b"\n\n", 1)[0].split(b"\r\n\r\n", 1)[0]
        head = _FOLD.sub(b"", head)  # RFC 5322: a header may be folded, `Status:` / ` RO`
        status = b"".join(m.group(1) for m in _STATUS.finditer(head))
        # No delivery time on the separator: the file's mtime bounds when it arrived.
        fallback = delivered or dt.datetime.fromtimestamp(self._mtime(), dt.UTC)
        parsed = parse_message(raw, fallback_time=fallback, whole=whole)
        self._located[parsed.stable_id] = start
        stamp = self._kept[0] if self._kept is not None else None
        return MailItem.of(
            self.name,
            parsed,
            unread=b"R" not in status,
            position=f"{start:015d}",
            files_beyond=files_beyond(parsed, whole, lambda: self._span(stamp, start, end)),
        )

    def _span(self, stamp: tuple[int, int, int] | None, start: int, end: int) -> Iterator[bytes]:
        """The bytes `start`..`end` of the file, in chunks; none when it is no longer the file
        they were found in (`stamp`: its inode, size and mtime then)."""
        with open_regular(self.path) as fh:
            st = os.fstat(fh.fileno())
            if (st.st_ino, st.st_size, st.st_mtime_ns) != stamp:
                return
            yield from span_chunks(_File(fh).read, start, end)

    def _mtime(self) -> float:
        return self._kept[0][2] / 1e9 if self._kept is not None else 0.0

    def read(self, stable_id: str) -> MailItem | None:
        bounds = self._boundaries()
        where = self._located.get(stable_id)
        with self._open() as fh:
            if where is not None:
                for start, end, line in bounds:
                    if start == where:
                        item = self._item(fh, start, end, _delivered(line), READ_BYTES)
                        if item.stable_id == stable_id:
                            return item
                        break
            # Not listed by this process (a resumed run): look, newest first.
            for start, end, line in reversed(bounds):
                delivered = _delivered(line)
                if self._item(fh, start, end, delivered, LIST_BYTES).stable_id == stable_id:
                    return self._item(fh, start, end, delivered, READ_BYTES)
        return None

    def status(self) -> tuple[int, MailItem | None]:
        bounds = self._boundaries()
        newest = self.page(since=None, after=None, limit=1, unread_only=False)
        return len(bounds), (newest[0] if newest else None)


class _File:
    """A file read at offsets."""

    def __init__(self, fh: BinaryIO) -> None:
        self._fh = fh

    def read(self, offset: int, size: int) -> bytes:
        return os.pread(self._fh.fileno(), size, offset)

    def __enter__(self) -> _File:
        return self

    def __exit__(self, *exc: object) -> None:
        self._fh.close()


def _scan(data: mmap.mmap) -> list[Boundary]:
    """The messages of an mbox held in `data` (which starts with "From ")."""
    first = _LOOSE.match(data, 0)
    starts: list[tuple[int, bytes]] = [(0, first.group(0) if first else b"")]
    at = data.find(b"\nFrom ", 0)
    while at != -1:
        line = at + 1
        blank = data[at - 1 : at] == b"\n" or data[max(0, at - 3) : at] == b"\r\n\r"
        match = (_LOOSE if blank else _STRICT).match(data, line)
        if match is None and blank:
            match = _BARE.match(data, line)
            if match is not None and not _HEADER.match(data, match.end()):
                match = None
        if match is not None:
            starts.append((line, match.group(0)))
        at = data.find(b"\nFrom ", line)
    ends = [s for s, _ in starts[1:]] + [len(data)]
    return [(s, e, line) for (s, line), e in zip(starts, ends, strict=True)]


def _delivered(line: bytes) -> dt.datetime | None:
    """The time on a separator line: asctime, in no stated zone (read as UTC), else an RFC 5322
    date; None when it has neither (the message's own date is used)."""
    if not line:
        return None
    when = _ASCTIME.search(line)
    if when is None:
        from email.utils import parsedate_to_datetime

        try:
            parsed = parsedate_to_datetime(line.split(b" ", 2)[-1].decode("latin-1").strip())
        except (ValueError, TypeError, IndexError):
            return None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)
    month, day, hour, minute, second, year = when.groups()
    try:
        stamp = calendar.timegm(
            (int(year), _MONTHS[month], int(day), int(hour), int(minute), int(second or 0))
        )
        return dt.datetime.fromtimestamp(stamp, dt.UTC)
    except (ValueError, OverflowError, OSError):
        return None


def _inside(when: dt.datetime, since: dt.datetime | None, before: dt.datetime | None) -> bool:
    return (since is None or when >= since) and (before is None or when < before)
