"""A Maildir (new/ and cur/), read without ever changing it.

Listing costs what the page costs: the file names are listed (cheap: no stat, no open), ordered
by the delivery time at the start of each name, and only the page's messages are opened, each
read no further than `LIST_BYTES`. Unread state is the Maildir convention: a message in new/,
or in cur/ without the `S` (Seen) flag. Dayflow never moves a message from new/ to cur/ or
touches a flag.

`received_at` is the message's `Date:` when it is sane, else its delivery time. The window
(`since`) and the order use the delivery time, which the name gives for free.
"""

from __future__ import annotations

import datetime as dt
import heapq
import os
from pathlib import Path

from dayflow.errors import SourceError
from dayflow.sources.identity import mail_key
from dayflow.sources.mail import MailItem, PathMissing
from dayflow.sources.mime import parse_message

LIST_BYTES = 64 * 1024  # how much of a message a listing reads (headers and the first text)
READ_BYTES = 32 * 1024 * 1024  # read_message reads at most this much of one message


class MaildirSource:
    def __init__(self, name: str, path: str | Path) -> None:
        self.name = name
        self.path = Path(path)
        self._located: dict[str, tuple[str, str]] = {}  # stable id -> (subdir, file name)

    @property
    def where(self) -> str:
        return str(self.path)

    def precheck(self) -> None:
        """Before a run: the folder must exist (what is in it is the run's to find out)."""
        if not self.path.exists():
            raise PathMissing(self.name, str(self.path), "Maildir")

    def _listing(self) -> dict[str, list[str]]:
        """The file names in new/ and cur/."""
        if not self.path.exists():
            raise PathMissing(self.name, str(self.path), "Maildir")
        if not self.path.is_dir():
            raise SourceError(f"{self.name}: {self.path} is not a directory (kind maildir)")
        found: dict[str, list[str]] = {}
        for sub in ("new", "cur"):
            try:
                found[sub] = os.listdir(self.path / sub)
            except FileNotFoundError:
                continue
            except OSError as err:
                raise SourceError(
                    f"{self.name}: cannot list {self.path / sub} ({err.strerror or err})"
                ) from None
        if not found:
            raise SourceError(f"{self.name}: {self.path} is not a Maildir (no cur/ or new/)")
        return found

    def _names(self) -> list[tuple[str, str, str]]:
        """(position, subdir, file name) of every message, unordered."""
        return [
            (self._position(sub, file), sub, file)
            for sub, names in self._listing().items()
            for file in names
            if file[:1] != "."
        ]

    @staticmethod
    def _position(sub: str, file: str) -> str:
        """The order key of a message: its name up to the flags (which change when mail is
        read). Names start with the delivery time in seconds (10 digits until 2286), so names
        sort by delivery; a name that does not start with a digit sorts as the oldest."""
        base = file.split(":", 1)[0]
        return base if base[:1].isdigit() else "0" + base

    def _delivered(self, position: str, sub: str, file: str) -> dt.datetime:
        head, _, rest = position.partition(".")
        micro = 0
        if rest.startswith("M"):  # 1700000000.M123456P789Q1.host: "M" is microseconds
            digits = ""
            for ch in rest[1:7]:
                if not ch.isdigit():
                    break
                digits += ch
            micro = int(digits or 0)
        try:
            if head.isdigit() and len(head) <= 12:
                return dt.datetime.fromtimestamp(int(head), dt.UTC).replace(microsecond=micro)
            return dt.datetime.fromtimestamp((self.path / sub / file).stat().st_mtime, dt.UTC)
        except (OverflowError, ValueError, OSError):
            return dt.datetime.fromtimestamp(0, dt.UTC)

    def page(
        self, *, since: dt.datetime | None, after: str | None, limit: int, unread_only: bool
    ) -> list[MailItem]:
        floor = f"{max(0, int(since.timestamp())):010d}" if since is not None else None
        top: list[tuple[str, str, str]] = []
        for sub, every in self._listing().items():
            # The hot path of a listing: every name of the Maildir, compared as plain strings
            # in C (names start with the delivery time, so they sort by it). A raw name compares
            # with a cursor position (a name up to its flags) as its position does.
            names = every
            if floor is not None:
                names = [n for n in names if n >= floor]
            if after is not None:
                names = [n for n in names if n < after]
            if unread_only and sub == "cur":
                names = [n for n in names if _unread(sub, n)]
            for file in heapq.nlargest(limit, names):
                if file[:1].isdigit():
                    top.append((self._position(sub, file), sub, file))
            # Names that do not start with a delivery time sort above "9" or below "0": look
            # for them only when the extremes say there are some. They count as the oldest.
            if every and not (min(every)[:1].isdigit() and max(every)[:1].isdigit()):
                for n in every:
                    if n[:1].isdigit() or n[:1] == ".":
                        continue
                    position = self._position(sub, n)
                    if (
                        (after is None or position < after)
                        and (floor is None or position >= floor)
                        and (not unread_only or _unread(sub, n))
                    ):
                        top.append((position, sub, n))
        newest = heapq.nlargest(limit, top)
        return [self._item(position, sub, file, LIST_BYTES) for position, sub, file in newest]

    def _item(self, position: str, sub: str, file: str, cap: int) -> MailItem:
        path = self.path / sub / file
        try:
            with path.open("rb") as fh:
                raw = fh.read(cap)
        except FileNotFoundError:
            # Moved between the listing and now (read by a mail client: new/ -> cur/).
            raw = self._reopen(file, cap)
        except OSError as err:
            raise SourceError(f"{self.name}: cannot read {path} ({err.strerror or err})") from None
        parsed = parse_message(raw, fallback_time=self._delivered(position, sub, file))
        self._located[parsed.stable_id] = (sub, file)
        return MailItem(
            source=self.name,
            stable_id=parsed.stable_id,
            key=mail_key(parsed.stable_id),
            sender=parsed.sender,
            subject=parsed.subject,
            received_at=parsed.received_at,
            snippet=parsed.snippet,
            unread=_unread(sub, file),
            thread_id=parsed.thread_id,
            position=position,
            body=parsed.body,
            attachments=parsed.attachments,
        )

    def _reopen(self, file: str, cap: int) -> bytes:
        base = file.split(":", 1)[0]
        for sub in ("cur", "new"):
            for other in os.listdir(self.path / sub):
                if other.split(":", 1)[0] == base:
                    with (self.path / sub / other).open("rb") as fh:
                        return fh.read(cap)
        return b""

    def read(self, stable_id: str) -> MailItem | None:
        where = self._located.get(stable_id)
        if where is not None:
            position = self._position(*where)
            item = self._item(position, where[0], where[1], READ_BYTES)
            if item.stable_id == stable_id:
                return item
        # Not listed by this process (a resumed run): look, newest first.
        for position, sub, file in sorted(self._names(), reverse=True):
            head = self._item(position, sub, file, LIST_BYTES)
            if head.stable_id == stable_id:
                return self._item(position, sub, file, READ_BYTES)
        return None

    def status(self) -> tuple[int, MailItem | None]:
        names = self._names()
        if not names:
            return 0, None
        position, sub, file = max(names)
        return len(names), self._item(position, sub, file, LIST_BYTES)


def _unread(sub: str, file: str) -> bool:
    if sub == "new":
        return True
    _, sep, info = file.partition(":2,")
    return not (sep and "S" in info)
