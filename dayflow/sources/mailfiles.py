"""An mbox file and a folder of .eml files, read without changing them.

Neither format has an index, so both are parsed whole (headers and the start of each body) once
per process and ordered by `received_at`; the cost grows with the file, which is why a large
mailbox is better read as a Maildir or over IMAP. Unread state: an mbox message without `R` in
its `Status:` header is unread; an .eml file carries no state and counts as read.
"""

from __future__ import annotations

import datetime as dt
import mailbox
import time
from collections.abc import Iterator
from pathlib import Path

from dayflow.errors import SourceError
from dayflow.sources.identity import mail_key
from dayflow.sources.mail import MailItem, PathMissing
from dayflow.sources.mime import ParsedMail, parse_message

LIST_BYTES = 64 * 1024
EML_GLOB = "*.eml"


class _ParsedFiles:
    """Shared: parse every message once, newest first, and page through the list."""

    name = ""
    path = Path()

    def __init__(self) -> None:
        self._items: list[tuple[MailItem, object]] | None = None

    @property
    def where(self) -> str:
        return str(self.path)

    def _messages(self) -> Iterator[tuple[bytes, dt.datetime, bool, object]]:
        """(raw bytes, fallback time, unread, locator) for each message."""
        raise NotImplementedError

    def _raw(self, locator: object) -> bytes:
        raise NotImplementedError

    def _all(self) -> list[tuple[MailItem, object]]:
        if self._items is None:
            parsed = []
            for raw, fallback, unread, locator in self._messages():
                mail = parse_message(raw[:LIST_BYTES], fallback_time=fallback)
                parsed.append((self._item(mail, unread, ""), locator))
            parsed.sort(key=lambda p: (p[0].received_at, p[0].stable_id), reverse=True)
            self._items = [
                (_at(item, f"{n:08d}"), locator) for n, (item, locator) in enumerate(parsed)
            ]
        return self._items

    def _item(self, mail: ParsedMail, unread: bool, position: str) -> MailItem:
        return MailItem(
            source=self.name,
            stable_id=mail.stable_id,
            key=mail_key(mail.stable_id),
            sender=mail.sender,
            subject=mail.subject,
            received_at=mail.received_at,
            snippet=mail.snippet,
            unread=unread,
            thread_id=mail.thread_id,
            position=position,
            body=mail.body,
            attachments=mail.attachments,
        )

    def page(
        self,
        *,
        since: dt.datetime | None,
        after: str | None,
        limit: int,
        unread_only: bool,
        before: dt.datetime | None = None,
    ) -> list[MailItem]:
        out = []
        for item, _ in self._all():
            if after is not None and item.position <= after:
                continue
            if before is not None and item.received_at >= before:
                continue
            if since is not None and item.received_at < since:
                break  # newest first: everything after this is older still
            if unread_only and not item.unread:
                continue
            out.append(item)
            if len(out) >= limit:
                break
        return out

    def read(self, stable_id: str) -> MailItem | None:
        for item, locator in self._all():
            if item.stable_id == stable_id:
                mail = parse_message(self._raw(locator), fallback_time=item.received_at)
                return _at(self._item(mail, item.unread, item.position), item.position)
        return None

    def status(self) -> tuple[int, MailItem | None]:
        items = self._all()
        return len(items), (items[0][0] if items else None)


def _at(item: MailItem, position: str) -> MailItem:
    from dataclasses import replace

    return replace(item, position=position)


class MboxSource(_ParsedFiles):
    def __init__(self, name: str, path: str | Path) -> None:
        super().__init__()
        self.name, self.path = name, Path(path)

    def precheck(self) -> None:
        """Before a run: the file must exist (a malformed one is reported by the reads)."""
        if not self.path.exists():
            raise PathMissing(self.name, str(self.path), "mbox file")

    def _open(self) -> mailbox.mbox:
        if not self.path.exists():
            raise PathMissing(self.name, str(self.path), "mbox file")
        if self.path.is_dir():
            raise SourceError(f"{self.name}: {self.path} is a directory, not an mbox file")
        try:
            with self.path.open("rb") as fh:
                head = fh.read(5)
        except OSError as err:
            raise SourceError(f"{self.name}: cannot read {self.path} ({err.strerror})") from None
        if head and head != b"From ":
            raise SourceError(
                f"{self.name}: {self.path} is not an mbox file (it does not start with 'From ')"
            )
        # create=False: a missing file is an error, never a new empty mailbox.
        return mailbox.mbox(self.path, create=False)

    def _messages(self) -> Iterator[tuple[bytes, dt.datetime, bool, object]]:
        box = self._open()
        try:
            for key in box.iterkeys():
                try:
                    raw = box.get_bytes(key)
                    message = box.get_message(key)
                    status = (message.get("Status") or "") + (message.get("X-Status") or "")
                    fallback = _from_line_time(message.get_from()) or self._mtime()
                except Exception:  # one broken message never fails the listing
                    continue
                yield raw, fallback, "R" not in status, key
        except OSError as err:
            raise SourceError(f"{self.name}: cannot read {self.path} ({err.strerror})") from None
        finally:
            box.close()

    def _raw(self, locator: object) -> bytes:
        box = self._open()
        try:
            return box.get_bytes(str(locator))
        finally:
            box.close()

    def _mtime(self) -> dt.datetime:
        return dt.datetime.fromtimestamp(self.path.stat().st_mtime, dt.UTC)


def _from_line_time(line: str) -> dt.datetime | None:
    # "sender@example.org Mon Nov 30 09:00:00 2026" (asctime, in no stated zone: read as UTC)
    parts = line.split()
    if len(parts) < 5:
        return None
    try:
        parsed = time.strptime(" ".join(parts[-5:]), "%a %b %d %H:%M:%S %Y")
    except ValueError:
        return None
    return dt.datetime(*parsed[:6], tzinfo=dt.UTC)


class EmlFolderSource(_ParsedFiles):
    def __init__(self, name: str, path: str | Path) -> None:
        super().__init__()
        self.name, self.path = name, Path(path)

    def precheck(self) -> None:
        if not self.path.exists():
            raise PathMissing(self.name, str(self.path), "folder")

    def _files(self) -> list[Path]:
        if not self.path.exists():
            raise PathMissing(self.name, str(self.path), "folder")
        if not self.path.is_dir():
            raise SourceError(f"{self.name}: {self.path} is not a folder (kind eml)")
        try:
            return sorted(p for p in self.path.glob(EML_GLOB) if p.is_file())
        except OSError as err:
            raise SourceError(f"{self.name}: cannot list {self.path} ({err.strerror})") from None

    def _messages(self) -> Iterator[tuple[bytes, dt.datetime, bool, object]]:
        for file in self._files():
            try:
                with file.open("rb") as fh:
                    raw = fh.read(LIST_BYTES)
                mtime = dt.datetime.fromtimestamp(file.stat().st_mtime, dt.UTC)
            except OSError:
                continue  # vanished or unreadable: the others still count
            yield raw, mtime, False, file

    def _raw(self, locator: object) -> bytes:
        path = Path(str(locator))
        try:
            return path.read_bytes()
        except FileNotFoundError:
            raise PathMissing(self.name, str(path)) from None
        except OSError as err:
            raise SourceError(f"{self.name}: cannot read {path} ({err.strerror})") from None
