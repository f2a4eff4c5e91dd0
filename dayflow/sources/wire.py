"""What may be put on a protocol line: the one rule every value sent to a server obeys.

IMAP, SMTP and HTTP are line protocols. A CR or LF in a value that is written into a command
(an IMAP folder or user name, an SMTP address, an HTTP header or URL) ends that command and
starts another of the sender's choosing: `folders = ["INBOX\\r\\nA1 DELETE Work"]` deleted a
folder. A NUL ends a C string in many servers. So such values are refused twice: when the
config is validated (one line naming the key), and again at the point of sending, since a value
can reach a line from elsewhere too (a cached ETag, a password from a command).
"""

from __future__ import annotations

import base64

UNSAFE = frozenset("\r\n\x00")
WHY = "contains a line break or NUL, which would end the protocol line it is sent on"


def breaks_line(value: str) -> bool:
    """Whether `value` holds a CR, LF or NUL (and so must never be sent on a protocol line)."""
    return not UNSAFE.isdisjoint(value)


def imap_utf7(name: str) -> str:
    """An IMAP mailbox name in modified UTF-7 (RFC 3501 5.1.3): printable ASCII as itself,
    `&` as `&-`, any other run of characters as `&` + base64 of UTF-16BE (`,` for `/`) + `-`.
    `Entwürfe` is `Entw&APw-rfe`."""
    out: list[str] = []
    run: list[str] = []

    def flush() -> None:
        if run:
            raw = "".join(run).encode("utf-16-be")
            out.append("&" + base64.b64encode(raw).decode("ascii").rstrip("=").replace("/", ","))
            out.append("-")
            run.clear()

    for ch in name:
        if 0x20 <= ord(ch) <= 0x7E:
            flush()
            out.append("&-" if ch == "&" else ch)
        else:
            run.append(ch)
    flush()
    return "".join(out)


def imap_utf7_decode(name: str) -> str:
    """The text a modified UTF-7 mailbox name stands for (the inverse of `imap_utf7`); a run
    that does not decode is kept as it is."""
    out: list[str] = []
    i = 0
    while i < len(name):
        ch = name[i]
        end = name.find("-", i + 1) if ch == "&" else -1
        if ch != "&" or end < 0:
            out.append(ch)
            i += 1
            continue
        run = name[i + 1 : end]
        if not run:
            out.append("&")
        else:
            try:
                raw = base64.b64decode(run.replace(",", "/") + "=" * (-len(run) % 4))
                out.append(raw.decode("utf-16-be"))
            except (ValueError, UnicodeDecodeError):
                out.append(name[i : end + 1])
        i = end + 1
    return "".join(out)
