"""The user's sent mail beside each [[inbox]] entry (`sent = ...`), as mail sources.

Beside a local `path` the value is a path, and what is there says how to read it: a folder
with `cur/` or `new/` is a Maildir, any other folder a folder of `.eml` files, a file an mbox.
For IMAP it is a folder name (none: the folder the server flags `\\Sent`, see `imap_sent`).
`sent = false` says an entry has none: nothing is looked for.
A sent source is listed as `<entry>/sent` and read exactly as its inbox is: read-only. One
that is not there is not an error that stops the brief: it is named with why (`SentFolders`)
and the rest is read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from dayflow.sources.imap_sent import sent_name
from dayflow.sources.mail import MailSource
from dayflow.sources.spec import SourceSpec

if TYPE_CHECKING:
    from dayflow.sources.oauth import Accounts


@dataclass
class SentFolders:
    """The sent sources that could be opened, and (name, why) of those that could not."""

    sources: list[MailSource] = field(default_factory=list)
    failures: list[tuple[str, str]] = field(default_factory=list)


def open_sent(
    specs: tuple[SourceSpec, ...] | list[SourceSpec],
    env: Mapping[str, str] | None = None,
    inboxes: Sequence[MailSource] = (),
    accounts: Accounts | None = None,
) -> SentFolders:
    """The sent folders of these [[inbox]] entries (IMAP ones unless `sent = false`: found by
    the server). An IMAP one shares the connection of its entry's source among `inboxes` (the
    run's), else its account's token or password in `accounts`."""
    out = SentFolders()
    for spec in specs:
        if not spec.read_sent:
            continue
        if spec.kind == "imap":
            from dayflow.sources.imap import ImapSource
            from dayflow.sources.imap_sent import ImapSentSource

            inbox = next(
                (s for s in inboxes if isinstance(s, ImapSource) and s.name == spec.name), None
            )
            out.sources.append(ImapSentSource(spec, inbox, env=env, accounts=accounts))
        elif spec.sent:
            source, why = local_sent(spec.name, Path(spec.sent))
            if source is not None:
                out.sources.append(source)
            else:
                out.failures.append((sent_name(spec.name), why))
    return out


def local_kind(path: Path) -> str | None:
    """What a local sent folder is read as: "maildir", "eml" (a folder of .eml files) or "mbox"
    (a file); None when it is neither (missing, or not a folder nor a file). May raise OSError."""
    if path.is_dir():
        return "maildir" if (path / "cur").is_dir() or (path / "new").is_dir() else "eml"
    return "mbox" if path.is_file() else None


def local_sent(entry: str, path: Path) -> tuple[MailSource | None, str]:
    """The reader for a local sent folder or file, or None and why it cannot be read."""
    name = sent_name(entry)
    try:
        kind = local_kind(path)
        if kind == "maildir":
            from dayflow.sources.maildir import MaildirSource

            return MaildirSource(name, path), ""
        if kind == "eml":
            from dayflow.sources.mailfiles import EmlFolderSource

            return EmlFolderSource(name, path), ""
        if kind == "mbox":
            from dayflow.sources.mbox import MboxSource

            return MboxSource(name, path), ""
    except OSError as err:
        return None, f"sent folder {path} cannot be opened ({err.strerror or err})"
    if path.exists():
        return None, f"sent folder {path} is neither a folder nor a file"
    return None, f"sent folder {path} does not exist (moved, deleted, or mistyped in the config?)"
