"""Whether a message carries a file in a part that starts past what its listing read.

A local listing reads a message's first `LIST_BYTES` (64 KB, `mime.message_head`): enough
for its headers and text, not for a file sent after a long body or an inline picture. Whether
a message delivers a file (a promise kept by "attached", `envelope.has_attachment`) must not
depend on where the file's part starts, so `files_beyond` gives a listing's message a way to
read on, run only when asked (`MailItem.carries_file`): only a promise asks, of the user's
later messages in its thread (`followups.promises`), so a listing, the inbox's or a sent
folder's, never pays for the rest of a large message. It reads the message's bytes in chunks,
one line at a time, looking only at the part headers its boundaries open, by the same rule as
`mime.attached` (`envelope.delivers_file`). The parts' content is passed over, never held:
memory stays at a chunk and one part's headers, however large the message. It reads no
further than `SCAN_BYTES`, the reach of `read_message` itself.
"""

from __future__ import annotations

import email.parser
import email.policy
import functools
from collections.abc import Callable, Iterable, Iterator
from email.message import Message
from pathlib import Path

from dayflow.files import open_regular
from dayflow.sources.envelope import delivers_file
from dayflow.sources.mime import MAX_HEADER_BYTES, MAX_PARTS, ParsedMail, header_text

SCAN_BYTES = 32 * 1024 * 1024  # as far as read_message reads one message
CHUNK = 64 * 1024
PART_HEADERS = 64 * 1024  # one part's header block at most (more: not a part's headers)
_LINE = 1024  # a longer line is content (a delimiter is at most 76 bytes and padding)


# Whether a listed message's parts past its listing's bytes hold a file (read when called).
FilesBeyond = Callable[[], bool]


def files_beyond(
    parsed: ParsedMail, whole: bool, rest: Callable[[], Iterable[bytes]]
) -> FilesBeyond | None:
    """None when `parsed` (from a message's first bytes; `whole`: they are all of it) already
    says whether it carries a file; else a function that reads on, the first time it is
    called, and says whether one of its parts further on is a file (False when the read
    fails). `rest()` gives the message's bytes from its first, in chunks."""
    if whole or not parsed.body_read or parsed.envelope.has_attachment:
        return None

    @functools.cache
    def found() -> bool:
        try:
            return attached_in(rest())
        except OSError:
            return False

    return found


def file_chunks(path: Path) -> Iterator[bytes]:
    """The bytes of the regular file at `path`, `CHUNK` at a time (a FIFO is refused, never
    waited on: `files.open_regular`)."""
    with open_regular(path) as fh:
        while chunk := fh.read(CHUNK):
            yield chunk


def span_chunks(read_at: Callable[[int, int], bytes], start: int, end: int) -> Iterator[bytes]:
    """The bytes `start`..`end` of a file read at offsets (`read_at(offset, size)`: an mbox's
    message), `CHUNK` at a time."""
    at = start
    while at < end:
        chunk = read_at(at, min(CHUNK, end - at))
        if not chunk:
            return
        yield chunk
        at += len(chunk)


def attached_in(chunks: Iterable[bytes]) -> bool:
    """Whether the message in `chunks` (its bytes from the first, an mbox's "From " line
    allowed) has a part that is a file, judged by the part's headers alone."""
    parser = email.parser.BytesHeaderParser(policy=email.policy.compat32)
    parents: dict[bytes, str] = {}  # "--boundary" -> the multipart it separates
    block: list[bytes] | None = []  # the header lines being read (the message's, at first)
    parent, size, parts = "", 0, 0
    for line in _lines(chunks, SCAN_BYTES):
        if block is not None:
            if line.strip():
                size += len(line)
                if size <= (MAX_HEADER_BYTES if not parents and not parts else PART_HEADERS):
                    block.append(line)
                continue
            part = parser.parsebytes(b"\n".join(block) + b"\n\n")
            block, size, parts = None, 0, parts + 1
            ctype = _content_type(part)
            if ctype.startswith("multipart/"):
                boundary = _boundary(part)
                if boundary:
                    parents[b"--" + boundary] = ctype
            elif _is_file(part, ctype, parent) if parents else False:
                return True
            if not parents or parts >= MAX_PARTS:
                return False  # a message of one part: the listing's own parse judged it
            continue
        mark = line.rstrip()
        if mark in parents:  # a part starts: its headers follow
            parent, block = parents[mark], []
    return False


def _lines(chunks: Iterable[bytes], limit: int) -> Iterable[bytes]:
    """The lines of the first `limit` bytes of `chunks` (without their ends), a line longer
    than `_LINE` cut to its start (content, never a delimiter or a header worth reading); the
    first line skipped when it is an mbox's "From " separator."""
    carry, long, first, read = b"", False, True, 0
    for chunk in chunks:
        read += len(chunk)
        if read > limit:
            return
        pieces = (carry + chunk).split(b"\n")
        carry = pieces.pop()
        for piece in pieces:
            if long:  # the end of a line already given
                long = False
                continue
            if first and piece.startswith(b"From "):
                first = False
                continue
            first = False
            yield piece.rstrip(b"\r")
        if len(carry) > _LINE:
            if not long:
                yield carry[:_LINE]
            carry, long = b"", True
    if carry and not long:
        yield carry.rstrip(b"\r")


def _content_type(part: Message) -> str:
    try:
        return part.get_content_type().lower()
    except Exception:  # a header the library chokes on: no file (as `mime.attached`)
        return "text/plain"


def _boundary(part: Message) -> bytes:
    try:
        found = part.get_boundary()
        return found.encode("ascii", "surrogateescape") if found else b""
    except Exception:  # an undecodable boundary: its parts are not read
        return b""


def _is_file(part: Message, ctype: str, parent: str) -> bool:
    try:
        disposition = (part.get_content_disposition() or "").lower()
        named = bool(part.get_filename() or part.get_param("name"))
    except Exception:
        return False
    embedded = bool(header_text(part, "Content-ID"))
    return delivers_file(ctype, disposition, named=named, embedded=embedded, parent=parent)
