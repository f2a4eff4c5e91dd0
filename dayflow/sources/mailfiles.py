"""A folder of .eml files, read without changing it.

The folder has no index and its file names say nothing of when mail arrived, so every file is
parsed (headers and the start of the body) once per process and ordered by `received_at`; the
cost grows with the folder, which is why a large mailbox is better read as a Maildir, an mbox
or over IMAP. An .eml file carries no read state and counts as read.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from dayflow.errors import SourceError
from dayflow.files import open_regular
from dayflow.sources.mail import LocalMailSource, MailItem, PageQuery, PathMissing, select_page
from dayflow.sources.mime import ParsedMail, message_head, parse_message
from dayflow.sources.parts import FilesBeyond, file_chunks, files_beyond

LIST_BYTES = 64 * 1024
READ_BYTES = 32 * 1024 * 1024  # read_message reads at most this much of one message (as a Maildir)
EML_GLOB = "*.eml"


class _ParsedFiles(LocalMailSource):
    """Shared: parse every message once, newest first, and page through the list."""

    name = ""
    path = Path()

    def __init__(self) -> None:
        self._items: list[tuple[MailItem, object]] | None = None

    def _messages(self) -> Iterator[tuple[bytes, bool, dt.datetime, bool, object]]:
        """(its first bytes, whether they are all of it, fallback time, unread, locator) for
        each message."""
        raise NotImplementedError

    def _raw(self, locator: object) -> bytes:
        raise NotImplementedError

    def _chunks(self, locator: object) -> Iterator[bytes]:
        """All of a message, in chunks (`parts.files_beyond` reads past its start)."""
        raise NotImplementedError

    def _all(self) -> list[tuple[MailItem, object]]:
        if self._items is None:
            parsed = []
            for raw, whole, fallback, unread, locator in self._messages():
                mail = parse_message(raw, fallback_time=fallback, whole=whole)
                beyond = files_beyond(mail, whole, functools.partial(self._chunks, locator))
                parsed.append((self._item(mail, unread, "", beyond), locator))
            parsed.sort(key=lambda p: (p[0].received_at, p[0].stable_id), reverse=True)
            self._items = [
                (_at(item, f"{n:08d}"), locator) for n, (item, locator) in enumerate(parsed)
            ]
        return self._items

    def _item(
        self, mail: ParsedMail, unread: bool, position: str, beyond: FilesBeyond | None = None
    ) -> MailItem:
        return MailItem.of(self.name, mail, unread=unread, position=position, files_beyond=beyond)

    def select(self, query: PageQuery) -> list[MailItem]:
        return select_page((item for item, _ in self._all()), query)

    def read(self, stable_id: str) -> MailItem | None:
        for item, locator in self._all():
            if item.stable_id == stable_id:
                mail = parse_message(self._raw(locator), fallback_time=item.received_at)
                return _at(self._item(mail, item.unread, item.position), item.position)
        return None

    def status(self) -> tuple[int, MailItem | None]:
        items = self._all()
        return len(items), (items[0][0] if items else None)


def _first(fh: BinaryIO, n: int) -> bytes:
    fh.seek(0)
    return fh.read(n)


def _at(item: MailItem, position: str) -> MailItem:
    from dataclasses import replace

    return replace(item, position=position)


class EmlFolderSource(_ParsedFiles):
    path_word = "folder"

    def __init__(self, name: str, path: str | Path) -> None:
        super().__init__()
        self.name, self.path = name, Path(path)

    def _files(self) -> list[Path]:
        if not self.path.exists():
            raise PathMissing(self.name, str(self.path), "folder")
        if not self.path.is_dir():
            raise SourceError(f"{self.name}: {self.path} is not a folder (kind eml)")
        try:
            return sorted(p for p in self.path.glob(EML_GLOB) if p.is_file())
        except OSError as err:
            raise SourceError(f"{self.name}: cannot list {self.path} ({err.strerror})") from None

    def _messages(self) -> Iterator[tuple[bytes, bool, dt.datetime, bool, object]]:
        for file in self._files():
            try:
                with open_regular(file) as fh:
                    raw, whole = message_head(functools.partial(_first, fh), LIST_BYTES)
                mtime = dt.datetime.fromtimestamp(file.stat().st_mtime, dt.UTC)
            except OSError:
                continue  # vanished or unreadable: the others still count
            yield raw, whole, mtime, False, file

    def _chunks(self, locator: object) -> Iterator[bytes]:
        return file_chunks(Path(str(locator)))

    def _raw(self, locator: object) -> bytes:
        path = Path(str(locator))
        try:
            with open_regular(path) as fh:
                return fh.read(READ_BYTES)  # as a Maildir's or an mbox's message is
        except FileNotFoundError:
            raise PathMissing(self.name, str(path)) from None
        except OSError as err:
            raise SourceError(f"{self.name}: cannot read {path} ({err.strerror})") from None
