"""Where a reply's draft is written: the one place Dayflow writes into a mailbox, and only when
an [[inbox]] entry says `drafts = ...` (issue 36).

A `DraftBox` is an account's drafts folder seen as three questions and one write: does it hold
the message with this Message-ID (`holds`: the check a resume makes before writing again), does
it hold a draft answering any of these messages (`answers`: one of ours, or one the user began),
and `append` (a new message, flagged as a draft). Nothing in it is ever changed, moved or
deleted: a draft the user edits or throws away is theirs.

`MaildirDrafts` is a Maildir folder: a draft is a new file written in `tmp/`, flushed to disk,
then linked into `cur/` with the `D` flag (`:2,D`) and its `tmp/` name removed. Its name holds a
hash of its Message-ID, so a resume finds it by name; a mail client that renamed or rewrote it
is found by its headers. A kill before the link leaves at most a file in `tmp/`, which no
reader lists (Maildir's own rule), and the next try writes it again; a kill after it leaves the
draft, found by `holds`. `sources/imap_drafts.py` is the IMAP one (APPEND).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import socket
import time
from collections.abc import Iterable, Iterator
from email.parser import BytesHeaderParser
from email.policy import compat32
from pathlib import Path
from typing import Any, Protocol

from dayflow.errors import SourceError
from dayflow.sources.identity import normalise_message_id

HEAD_BYTES = 64 * 1024  # of a file, to read its headers
MAX_SCANNED = 5000  # files of a drafts Maildir looked at by their headers


class AppendRefused(SourceError):
    """The folder refused the draft (the IMAP server answered the APPEND NO or BAD): nothing
    was written, and trying again now would be refused again (a lost connection is a plain
    SourceError: it may have been written)."""


class DraftBox(Protocol):
    """An account's drafts folder: `name` is the [[inbox]] entry, `folder` what it is called."""

    name: str

    @property
    def folder(self) -> str: ...

    def holds(self, message_id: str) -> bool: ...

    def answers(self, message_ids: Iterable[str]) -> bool: ...

    def append(self, raw: bytes, message_id: str) -> None: ...

    def check(self) -> dict[str, Any]: ...

    def close(self) -> None: ...


def draft_file_stem(message_id: str) -> str:
    """The part of a draft's Maildir file name that comes from its Message-ID."""
    return "dayflow_" + hashlib.sha256(message_id.encode("utf-8")).hexdigest()[:24]


class MaildirDrafts:
    """A Maildir folder (`cur/`, `new/`, `tmp/`) that drafts are written into."""

    def __init__(self, name: str, path: str) -> None:
        self.name, self.path = name, Path(path)

    @property
    def folder(self) -> str:
        return str(self.path)

    def problem(self) -> str | None:
        """Why no draft can be written here (not a Maildir), or None: a look, no write."""
        missing = [d for d in ("cur", "new", "tmp") if not (self.path / d).is_dir()]
        if missing:
            return (
                f"{self.name}: the drafts folder {self.path} is not a Maildir (no "
                f"{', '.join(d + '/' for d in missing)}); no draft is written"
            )
        return None

    def _ready(self) -> None:
        problem = self.problem()
        if problem is not None:
            raise SourceError(problem)

    def _files(self) -> Iterator[Path]:
        for sub in ("cur", "new"):
            entries: list[os.DirEntry[str]] = []
            with contextlib.suppress(OSError), os.scandir(self.path / sub) as listing:
                entries = list(listing)
            for entry in entries:
                if entry.is_file(follow_symlinks=False) and not entry.name.startswith("."):
                    yield Path(entry.path)

    def _heads(self) -> Iterator[Any]:
        parser = BytesHeaderParser(policy=compat32)
        for n, path in enumerate(self._files()):
            if n >= MAX_SCANNED:
                return
            try:
                with open(path, "rb") as f:
                    head = f.read(HEAD_BYTES)
            except OSError:
                continue
            yield parser.parsebytes(head.split(b"\r\n\r\n", 1)[0].split(b"\n\n", 1)[0])

    def holds(self, message_id: str) -> bool:
        self._ready()
        stem = draft_file_stem(message_id)
        if any(stem in p.name for p in self._files()):
            return True
        wanted = normalise_message_id(message_id)
        return any(
            normalise_message_id(str(h.get("Message-ID", ""))) == wanted for h in self._heads()
        )

    def answers(self, message_ids: Iterable[str]) -> bool:
        self._ready()
        wanted = {normalise_message_id(m) for m in message_ids} - {None}
        if not wanted:
            return False
        for head in self._heads():
            named = {normalise_message_id(str(head.get("In-Reply-To", "")))}
            named |= {normalise_message_id(r) for r in str(head.get("References", "")).split()}
            if named & wanted:
                return True
        return False

    def append(self, raw: bytes, message_id: str) -> None:
        """Write `raw` as a new draft: `tmp/`, fsync, linked into `cur/` with the D flag."""
        self._ready()
        base = f"{int(time.time())}.{draft_file_stem(message_id)}.{_host()}"
        tmp, final = self.path / "tmp" / base, self.path / "cur" / f"{base}:2,D"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            try:
                os.write(fd, raw)
                os.fsync(fd)
            finally:
                os.close(fd)
            os.link(tmp, final)
            os.unlink(tmp)
            _sync_dir(self.path / "cur")
        except OSError as exc:
            raise SourceError(
                f"{self.name}: could not write a draft in {self.path} ({exc.strerror or exc})"
            ) from None

    def check(self) -> dict[str, Any]:
        """The folder and whether a draft can be written there (nothing is written)."""
        try:
            self._ready()
        except SourceError as exc:
            return {"folder": self.folder, "append": False, "why": str(exc)}
        ok = all(os.access(self.path / d, os.W_OK) for d in ("cur", "tmp"))
        return {"folder": self.folder, "append": ok} | ({} if ok else {"why": "not writable"})

    def close(self) -> None:
        return None


def _host() -> str:
    return socket.gethostname().replace("/", "_").replace(":", "_") or "localhost"


def _sync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
