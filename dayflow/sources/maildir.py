"""A Maildir (new/ and cur/), read without ever changing it.

Listing costs what the page costs: the file names are listed (no stat, no open; an unchanged
Maildir's names are not even read again: `maildir_index` keeps them between listings), ordered
by the delivery time at the start of each name, compared as plain strings in C, and only the
page's messages are opened, each read no further than `LIST_BYTES`. Unread state is the
Maildir convention: a message in new/, or in cur/ without the `S` (Seen) flag, looked up again
where the message is when it is read (a mail client may have moved it meanwhile). Dayflow never
moves a message from new/ to cur/ or touches a flag. A message that cannot be read (a FIFO, a
directory, no permission) is listed as such and never fails the listing.

`received_at` is the message's `Date:` when it is sane, else its delivery time (for a name that
does not start with one, the file's mtime: `_odd_position`). The window
(`since`) and the order use the delivery time, which the name gives for free.
"""

from __future__ import annotations

import datetime as dt
import errno
import heapq
import math
import os
import stat
from collections.abc import Callable
from pathlib import Path

from dayflow.clock import Clock
from dayflow.errors import SourceError
from dayflow.sources.identity import mail_key, short_hash
from dayflow.sources.mail import LocalMailSource, MailItem, PageQuery, PathMissing
from dayflow.sources.maildir_index import Folder, NameIndex
from dayflow.sources.mime import message_head, parse_message
from dayflow.sources.parts import file_chunks, files_beyond

LIST_BYTES = 64 * 1024  # how much of a message a listing reads (headers and the first text)
READ_BYTES = 32 * 1024 * 1024  # read_message reads at most this much of one message


class MaildirSource(LocalMailSource):
    """`cache` is where the folder names are kept between processes (`maildir_index`; None:
    in memory only); `clock` and `stat_dir` are the index's (tests)."""

    path_word = "Maildir"

    def __init__(
        self,
        name: str,
        path: str | Path,
        *,
        cache: Path | None = None,
        clock: Clock | None = None,
        stat_dir: Callable[[Path], os.stat_result] = os.stat,
    ) -> None:
        self.name = name
        self.path = Path(path)
        self._index = NameIndex(self.path, cache, clock=clock, stat_dir=stat_dir)
        self._located: dict[str, tuple[str, str]] = {}  # stable id -> (subdir, stored name)
        self._mtimes: dict[tuple[str, str], int] = {}  # odd names' delivery times (their mtime)

    def _folders(self) -> dict[str, Folder]:
        """The names in new/ and cur/ (see maildir_index for when they are not read again)."""
        if not self.path.exists():
            raise PathMissing(self.name, str(self.path), "Maildir")
        if not self.path.is_dir():
            raise SourceError(f"{self.name}: {self.path} is not a directory (kind maildir)")
        try:
            found = self._index.folders()
        except OSError as err:
            where = err.filename or self.path
            raise SourceError(f"{self.name}: cannot list {where} ({err.strerror or err})") from None
        if not found:
            raise SourceError(f"{self.name}: {self.path} is not a Maildir (no cur/ or new/)")
        return found

    def _everything(self) -> list[tuple[str, str, str]]:
        """(position, subdir, stored name) of every message, newest first (a walk of all)."""
        return sorted(
            (
                (_position(name) if timed else self._odd_position(sub, name), sub, name)
                for sub, folder in self._folders().items()
                for timed, names in ((True, folder.timed_names()), (False, folder.odd))
                for name in names
            ),
            reverse=True,
        )

    def _odd_position(self, sub: str, name: str) -> str:
        """The position of a name that does not start with a 10-digit delivery time (`0.msg`,
        `msg1`, what some tools write): a 9-digit one (1973-2001) is padded to sort with the
        rest; any other takes the file's mtime as its delivery time (one stat per odd name,
        remembered), so it sorts among the others by when it arrived, and is dated so."""
        base = _position(name)
        digits = len(base) - len(base.lstrip("0123456789"))
        if digits == 9 and base[9:10] in (".", ""):
            return "0" + base
        mtime = self._mtimes.get((sub, name))
        if mtime is None:
            try:
                mtime = max(0, int(os.stat(self.path / sub / name.replace("\x00", ":")).st_mtime))
            except (OSError, ValueError, OverflowError):
                mtime = 0  # gone or unreadable: listed as such, as the oldest
            self._mtimes[(sub, name)] = mtime
        # '~' sorts after the letters and digits of real names delivered in the same second.
        return f"{mtime:010d}.~{base}"

    def select(self, query: PageQuery) -> list[MailItem]:
        since, after, limit, before = query.since, query.after, query.limit, query.before
        unread_only = query.unread_only
        floor = f"{max(0, int(since.timestamp())):010d}" if since is not None else None
        # Delivered before `before`: a name whose second is earlier than its ceiling.
        ceiling = f"{max(0, math.ceil(before.timestamp())):010d}" if before is not None else None
        below = min((b for b in (after, ceiling) if b is not None), default=None)
        top: list[tuple[str, str, str]] = []
        for sub, folder in self._folders().items():
            # The hot path: the folder's timed names, kept sorted, searched and read from the
            # newest down, never all made into strings. They sort by delivery time, and a name
            # compares with a cursor's position (a name up to its flags) as its own position
            # does (':' is kept as '\x00').
            keep = (lambda n: _unread("cur", n)) if unread_only and sub == "cur" else None
            names = folder.newest(limit, lowest=floor, below=below, keep=keep)
            top += ((_position(n), sub, n) for n in names)
            for name in folder.odd:  # the few names without a delivery time, one by one
                position = self._odd_position(sub, name)
                if (
                    (after is None or position < after)
                    and (floor is None or position >= floor)
                    and (ceiling is None or position < ceiling)
                    and (not unread_only or _unread(sub, name))
                ):
                    top.append((position, sub, name))
        newest = heapq.nlargest(limit, top)
        return [self._item(position, sub, name, LIST_BYTES) for position, sub, name in newest]

    def _item(self, position: str, sub: str, name: str, cap: int) -> MailItem:
        file = name.replace("\x00", ":")
        try:
            found: list[tuple[str, str]] = []

            def first(n: int) -> bytes:
                where, stored, raw = self._raw(sub, name, n)
                found[:] = [(where, stored)]
                return raw

            raw, whole = message_head(first, cap)
            sub, name = found[0]
        except OSError as err:
            # One message that cannot be read never fails the listing: it is shown as such.
            stable = short_hash("maildir-file:" + _position(name))
            why = "it is gone" if isinstance(err, FileNotFoundError) else err.strerror or str(err)
            return MailItem(
                source=self.name,
                stable_id=stable,
                key=mail_key(stable),
                sender="(unknown sender)",
                subject=f"(a message that could not be read: {sub}/{file}: {why})",
                received_at=_delivered(position),
                snippet="",
                unread=_unread(sub, name),
                thread_id=None,
                position=position,
            )
        parsed = parse_message(raw, fallback_time=_delivered(position), whole=whole)
        path = self.path / sub / name.replace("\x00", ":")
        self._located[parsed.stable_id] = (sub, name)
        return MailItem.of(
            self.name,
            parsed,
            unread=_unread(sub, name),
            position=position,
            files_beyond=files_beyond(parsed, whole, lambda: file_chunks(path)),
        )

    def _raw(self, sub: str, name: str, cap: int) -> tuple[str, str, bytes]:
        """(subdir, stored name, first `cap` bytes) of a message where it is now: a mail client
        may have moved it from new/ to cur/ or changed its flags since it was listed."""
        try:
            return sub, name, _read_file(self.path / sub / name.replace("\x00", ":"), cap)
        except FileNotFoundError:
            base = _position(name)
            for other_sub, folder in self._index.folders().items():
                timed = (n for n in folder.timed_names() if n.startswith(base))
                for other in (*folder.odd, *timed):
                    if _position(other) == base:
                        path = self.path / other_sub / other.replace("\x00", ":")
                        return other_sub, other, _read_file(path, cap)
            raise

    def read(self, stable_id: str) -> MailItem | None:
        where = self._located.get(stable_id)
        if where is not None:
            sub, name = where
            item = self._item(self._any_position(sub, name), sub, name, READ_BYTES)
            if item.stable_id == stable_id:
                return item
        # Not listed by this process (a resumed run): look, newest first.
        for position, sub, name in self._everything():
            head = self._item(position, sub, name, LIST_BYTES)
            if head.stable_id == stable_id:
                return self._item(position, sub, name, READ_BYTES)
        return None

    def _any_position(self, sub: str, name: str) -> str:
        timed = name[:10].isdigit() and name[10:11] in (".", "\x00", "")
        return _position(name) if timed else self._odd_position(sub, name)

    def status(self) -> tuple[int, MailItem | None]:
        count = sum(len(folder) for folder in self._folders().values())
        newest = self.page(since=None, after=None, limit=1, unread_only=False)
        return count, (newest[0] if newest else None)


def _delivered(position: str) -> dt.datetime:
    """The delivery time a position gives: its first 10 digits (seconds; an odd name's are its
    mtime), and the microseconds of a `1700000000.M123456P789Q1.host` name."""
    head, _, rest = position.partition(".")
    micro = 0
    if rest.startswith("M"):
        digits = rest[1:7]
        digits = digits[: len(digits) - len(digits.lstrip("0123456789"))]
        micro = int(digits or 0)
    try:
        return dt.datetime.fromtimestamp(int(head[:10] or 0), dt.UTC).replace(microsecond=micro)
    except (OverflowError, ValueError, OSError):
        return dt.datetime.fromtimestamp(0, dt.UTC)


def _read_file(path: Path, cap: int) -> bytes:
    """The first `cap` bytes of a regular file. O_NONBLOCK: a FIFO someone left in a Maildir
    must not hang the listing (it is refused, as a directory or a device is)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        return fh.read(cap)


def _position(name: str) -> str:
    """A message's place in the order: its name up to the flags (which change when mail is
    read). Names start with the delivery time in seconds (10 digits until 2286)."""
    return name.partition("\x00")[0]


def _unread(sub: str, name: str) -> bool:
    """The Maildir convention: in new/, or in cur/ without the S (Seen) flag."""
    if sub == "new":
        return True
    _, sep, info = name.replace(":", "\x00").partition("\x002,")
    return not (sep and "S" in info)
