"""The sent folder of an IMAP account, read exactly as its inbox is (EXAMINE, BODY.PEEK).

Which folder: `sent = "..."` of the [[inbox]] entry when given; else the one the server's LIST
flags `\\Sent` (RFC 6154 SPECIAL-USE: servers that have it say so in a plain LIST), else the
first folder named, whatever the case, `Sent`, `Sent Items`, `Sent Messages` or
`[Gmail]/Sent Mail` (also under `INBOX` with the server's delimiter). It is looked up once,
when the folder is first read, inside that exchange's deadline.

In a brief it is read over its inbox's connection (`imap.Session`): one login, one password or
token a brief for both. Each read EXAMINEs its own folder first when the connection has the
other one open, so neither source ever reads the other's messages.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from dayflow.errors import SourceError
from dayflow.sources.imap import ImapSource
from dayflow.sources.mail import MailItem, PageQuery
from dayflow.sources.spec import SourceSpec
from dayflow.sources.wire import imap_utf7_decode

SENT_NAMES = ("Sent", "Sent Items", "Sent Messages", "[Gmail]/Sent Mail")
_LIST = re.compile(rb'^\((?P<attrs>[^)]*)\) (?P<delim>"(?:[^"\\]|\\.)*"|NIL) (?P<name>.*)$', re.I)


class NoSentFolder(SourceError):
    """The server flags no folder \\Sent and has none of the usual names (the entry named none:
    `sources check` warns, and `sent = false` says the account has none)."""


def sent_name(entry: str) -> str:
    """The name the sent folder of [[inbox]] `entry` is listed under."""
    return f"{entry}/sent"


class ImapSentSource(ImapSource):
    """The sent folder of the account `spec` describes, listed as `<name>/sent`. Given the
    entry's `inbox`, it is read over the inbox's connection (`Session`): one login a brief."""

    def __init__(self, spec: SourceSpec, inbox: ImapSource | None = None, **kwargs: Any) -> None:
        folders = (spec.sent,) if spec.sent else ()
        if inbox is not None:
            kwargs["session"] = inbox._session
        super().__init__(replace(spec, name=sent_name(spec.name), folders=folders), **kwargs)

    @property
    def where(self) -> str:
        folder = self.spec.folders[0] if self.spec.folders else "(its sent folder)"
        return f"{self.spec.where} {folder}"

    def select(self, query: PageQuery) -> list[MailItem]:
        with self._bounded():
            self._resolve()
            return super().select(query)

    def read(self, stable_id: str) -> MailItem | None:
        with self._bounded():
            self._resolve()
            return super().read(stable_id)

    def status(self) -> tuple[int, MailItem | None]:
        with self._bounded():
            self._resolve()
            return super().status()

    def _resolve(self) -> None:
        if not self.spec.folders:
            self.spec = replace(self.spec, folders=(self._sent_folder(),))

    def _sent_folder(self) -> str:
        listed = [_parse(item) for item in self._cmd("LIST")]
        folders = [f for f in listed if f is not None]
        for attrs, _, name in folders:
            if b"\\sent" in attrs.lower().split():
                return name
        for wanted in SENT_NAMES:
            for _, delim, name in folders:
                if name.lower() == wanted.lower() or (
                    delim and name.lower() == f"inbox{delim}{wanted}".lower()
                ):
                    return name
        entry = self.spec.name.removesuffix("/sent")
        raise NoSentFolder(
            f"{self.name}: no sent folder found (none is flagged \\Sent, and none is named "
            + ", ".join(SENT_NAMES)
            + f'); set sent = "<folder>" in [[inbox]] {entry}, or sent = false for none'
        )


def _parse(item: object) -> tuple[bytes, str, str] | None:
    """(attributes, delimiter, decoded name) of one LIST response, or None."""
    literal = None
    if isinstance(item, tuple) and len(item) == 2:  # the name came as a literal
        item, literal = item
    if not isinstance(item, bytes):
        return None
    found = _LIST.match(item.strip())
    if found is None:
        return None
    delim = found["delim"]
    sep = (
        ""
        if delim.upper() == b"NIL"
        else delim[1:-1].replace(b"\\", b"").decode("ascii", "replace")
    )
    raw = literal if isinstance(literal, bytes) else found["name"]
    text = raw.decode("utf-8", "replace").strip()
    if literal is None and text.startswith('"') and text.endswith('"') and len(text) >= 2:
        text = re.sub(r"\\(.)", r"\1", text[1:-1])
    return found["attrs"], sep, imap_utf7_decode(text)
