"""The drafts folder of an IMAP account: the one IMAP folder Dayflow ever writes into, and only
with APPEND (issue 36). Everything else stays as `imap.py` says: EXAMINE, BODY.PEEK.

Which folder: `drafts = "..."` of the [[inbox]] entry when it names one; with `drafts = true`
the one the server's LIST flags `\\Drafts` (RFC 6154), else the first named, whatever the case,
`Drafts`, `Draft` or `[Gmail]/Drafts` (also under `INBOX` with the server's delimiter). It is
looked up once, inside the exchange's deadline, over the inbox's own connection (`Session`).

Reads are `EXAMINE` then `UID SEARCH HEADER Message-ID` (is this draft there: a resume asks
before writing again) or `UID SEARCH HEADER In-Reply-To` (is any draft answering this message
there: ours, or one the user began). The write is one `APPEND` with the `\\Draft` flag; no
STORE, COPY, MOVE, EXPUNGE or DELETE is ever sent.
"""

from __future__ import annotations

import imaplib
import time
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from dayflow.errors import SourceError
from dayflow.sources.drafts import AppendRefused
from dayflow.sources.imap import ImapSource
from dayflow.sources.imap_sent import _parse
from dayflow.sources.imap_wire import mailbox, quote
from dayflow.sources.spec import SourceSpec

DRAFT_NAMES = ("Drafts", "Draft", "[Gmail]/Drafts")


class NoDraftsFolder(SourceError):
    """The server flags no folder \\Drafts and has none of the usual names."""


class ImapDrafts(ImapSource):
    """The drafts folder of the account `spec` describes, over `inbox`'s connection."""

    def __init__(self, spec: SourceSpec, inbox: ImapSource | None = None, **kwargs: Any) -> None:
        named = spec.drafts if isinstance(spec.drafts, str) else None
        if inbox is not None:
            kwargs["session"] = inbox._session
        super().__init__(replace(spec, folders=(named,) if named else ()), **kwargs)
        self.name = spec.name

    @property
    def folder(self) -> str:
        return self.spec.folders[0] if self.spec.folders else "(its drafts folder)"

    def _resolve(self) -> str:
        if not self.spec.folders:
            self.spec = replace(self.spec, folders=(self._drafts_folder(),))
        return self.spec.folders[0]

    def _drafts_folder(self) -> str:
        listed = [f for f in (_parse(item) for item in self._cmd("LIST")) if f is not None]
        for attrs, _, name in listed:
            if b"\\drafts" in attrs.lower().split():
                return name
        for wanted in DRAFT_NAMES:
            for _, delim, name in listed:
                if name.lower() == wanted.lower() or (
                    delim and name.lower() == f"inbox{delim}{wanted}".lower()
                ):
                    return name
        raise NoDraftsFolder(
            f"{self.name}: no drafts folder found (none is flagged \\Drafts, and none is named "
            + ", ".join(DRAFT_NAMES)
            + f'); set drafts = "<folder>" in [[inbox]] {self.name}'
        )

    def _has(self, header: str, value: str) -> bool:
        if not value.isascii():
            return False  # a SEARCH string outside ASCII needs a CHARSET few servers take
        self._session.selected = None
        self._examine(self._resolve())
        data = self._cmd("SEARCH", "HEADER", header, quote(value))
        return any(d.split() for d in data if isinstance(d, bytes))

    def holds(self, message_id: str) -> bool:
        with self._bounded():
            return self._has("Message-ID", _angled(message_id))

    def answers(self, message_ids: Iterable[str]) -> bool:
        with self._bounded():
            return any(self._has("In-Reply-To", _angled(m)) for m in message_ids if m)

    def append(self, raw: bytes, message_id: str) -> None:
        with self._bounded():
            folder = self._resolve()
            conn = self._connect()
            try:
                typ, data = conn.append(mailbox(folder), "(\\Draft)", time.time(), raw)
            except imaplib.IMAP4.abort as err:
                self._drop()
                raise self._fail(
                    f"the connection was lost during APPEND ({self._said(err)})"
                ) from None
            except OSError as err:
                raise self._fail(f"APPEND to {folder} failed ({self._said(err)})") from None
            except imaplib.IMAP4.error as err:  # a BAD answer
                what = f"{self.name}: the server refused APPEND to {folder} ({self._said(err)})"
                raise AppendRefused(what) from None
            if typ != "OK":
                first = data[0] if data else typ
                said = first.decode("utf-8", "replace") if isinstance(first, bytes) else first
                what = f"{self.name}: the server refused APPEND to {folder} ({self._said(said)})"
                raise AppendRefused(what)

    def check(self) -> dict[str, Any]:
        """The folder and whether the server lets this account APPEND there (its MYRIGHTS
        with the `i` right, RFC 4314, where it has ACL; else the folder can be selected)."""
        with self._bounded():
            folder = self._resolve()
            conn = self._connect()
            if "ACL" in conn.capabilities:
                typ, data = conn.myrights(mailbox(folder))
                rights = b" ".join(d for d in data if isinstance(d, bytes)).split()[-1:]
                ok = typ == "OK" and bool(rights) and b"i" in rights[0]
                return {"folder": folder, "append": ok, "how": "MYRIGHTS"}
            self._session.selected = None
            self._examine(folder)
            return {"folder": folder, "append": True, "how": "EXAMINE (the server has no ACL)"}


def _angled(message_id: str) -> str:
    text = message_id.strip()
    return text if text.startswith("<") else f"<{text}>"
