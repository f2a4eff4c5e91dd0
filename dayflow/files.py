"""Writing and reading the user's own files (exports, delivered briefs, synced lists), and the
one guard every path a user names goes through, to read or to write.

Reading: a FIFO would wait for a writer for ever and /dev/zero never ends, so a file is opened
without waiting (`open_regular`, `read_stream`) and read no further than a cap
(`MAX_STREAM_BYTES`, the feeds' 50 MB, unless the caller has a smaller one): `NotRegular` or
`TooLarge`, both OSErrors, name what went wrong. Writing into a FIFO no one reads would wait for
ever too: `open_stream` refuses it. `tests/test_not_regular_files.py` runs every command with
every such path.

A write goes to a temporary file beside the target and is renamed over it: a kill at any
moment leaves the old file or the new one, never half of one. An existing file keeps its mode;
a new one is readable by its owner only, like the database (what it holds came from the inbox).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from pathlib import Path
from typing import BinaryIO

from dayflow.errors import FileProblem

MAX_READ_BYTES = 8 * 1024 * 1024  # a task list bigger than this is not one Dayflow wrote
MAX_STREAM_BYTES = 50 * 1024 * 1024  # any input: a file, a pipe, standard input (the feeds' cap)


class NotRegular(OSError):
    """A path that is a FIFO, a device, a socket or a directory where a file was wanted."""

    def __init__(self, kind: str, said: str | None = None) -> None:
        super().__init__(said or f"it is {kind}, not a regular file")
        self.kind = kind


class TooLarge(OSError):
    """More than the cap came from a file, a pipe or standard input (/dev/zero, a huge file)."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"it is larger than {mb(limit)}")
        self.errno, self.limit = errno.EFBIG, limit


def mb(limit: int) -> str:
    """A cap in words: "50 MB"."""
    return f"{limit // 2**20} MB" if limit >= 2**20 else f"{limit // 1024} KB"


def kind_of(mode: int) -> str:
    """What a stat mode is, in words (for "it is a FIFO, not a regular file")."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "something other than a file"


def open_regular(path: Path | str) -> BinaryIO:
    """`path` opened for reading, if it is a regular file (a symlink to one is fine).

    Opening a FIFO for reading waits for a writer, and /dev/zero never ends: so the file is
    opened without waiting (O_NONBLOCK, which a regular file ignores) and refused with
    NotRegular unless fstat says it is a regular file. A socket cannot be opened at all; it is
    recognised by a stat first. Other failures are the OSError open raises."""
    before = os.stat(path)
    if stat.S_ISSOCK(before.st_mode) or stat.S_ISDIR(before.st_mode):
        raise NotRegular(kind_of(before.st_mode))
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegular(kind_of(st.st_mode))
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_capped(fh: BinaryIO, limit: int = MAX_STREAM_BYTES) -> bytes:
    """All of `fh`, if it ends within `limit` bytes; TooLarge (having read `limit` + 1) if not."""
    data = fh.read(limit + 1)
    if len(data) > limit:
        raise TooLarge(limit)
    return data


def read_regular(path: Path | str, limit: int = MAX_STREAM_BYTES) -> bytes:
    """The bytes of the regular file `path` (`open_regular`), at most `limit` of them."""
    with open_regular(path) as fh:
        return read_capped(fh, limit)


def read_stream(path: Path | str, limit: int = MAX_STREAM_BYTES) -> bytes:
    """The bytes of a file, a pipe or a FIFO (`--inbox <(...)`, /dev/stdin), at most `limit`.

    Opened without waiting for a writer: a pipe whose writer is there is read to its end; a FIFO
    no one writes to gives nothing at once, which is refused (NotRegular) rather than waited on.
    A device such as /dev/zero meets the cap (TooLarge); a directory or a socket is NotRegular."""
    before = os.stat(path)
    if stat.S_ISSOCK(before.st_mode) or stat.S_ISDIR(before.st_mode):
        raise NotRegular(kind_of(before.st_mode))
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    fifo = stat.S_ISFIFO(os.fstat(fd).st_mode)
    os.set_blocking(fd, True)
    with os.fdopen(fd, "rb") as fh:
        data = read_capped(fh, limit)
    if fifo and not data:
        raise NotRegular(
            "a FIFO (named pipe)", "it is a FIFO (named pipe) with nothing written to it"
        )
    return data


def open_stream(path: Path | str) -> BinaryIO:
    """`path`, which exists and is not a regular file (/dev/stdout, a terminal, a FIFO, a
    device), opened for writing into. A FIFO no one reads from is refused (NotRegular) at once:
    opened without O_NONBLOCK, it would wait for a reader for ever."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise NotRegular(
                "a FIFO (named pipe)", "it is a FIFO (named pipe) that no one reads"
            ) from None
        raise
    os.set_blocking(fd, True)
    return os.fdopen(fd, "wb")


def write_atomic(path: Path, data: bytes) -> None:
    """Replace `path` with `data` in one rename; FileProblem (one line, exit 4) if it cannot."""
    shown = Path(path).expanduser()
    try:
        try:
            st: os.stat_result | None = os.stat(shown)
        except FileNotFoundError:
            st = None
        if st is not None and stat.S_ISDIR(st.st_mode):
            raise FileProblem(f"cannot write {shown}: it is a directory")
        if st is not None and not stat.S_ISREG(st.st_mode):
            # /dev/stdout, a FIFO, a terminal: a stream to write into, never to replace.
            with open_stream(shown) as stream:
                stream.write(data)
            return
        mode = None if st is None else stat.S_IMODE(st.st_mode)
        # A symlink (a note linked into a vault) keeps pointing where it did: write its target.
        target = Path(os.path.realpath(shown))
        parent = target.parent
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            if mode is not None:
                os.chmod(tmp, mode)
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    except FileProblem:
        raise
    except NotRegular as exc:
        raise FileProblem(f"cannot write {shown}: {exc}") from None
    except OSError as exc:
        raise FileProblem(f"cannot write {shown}: {exc.strerror or exc}") from None


def read_text(path: Path, what: str = "file") -> str:
    """The UTF-8 text of `path` (a BOM is dropped); FileProblem naming it when it cannot be
    read, is not UTF-8 or is implausibly large."""
    target = Path(path).expanduser()
    try:
        with open_regular(target) as fh:
            data = fh.read(MAX_READ_BYTES + 1)
    except NotRegular as exc:
        raise FileProblem(f"cannot read {what} {target}: {exc}") from None
    except OSError as exc:
        raise FileProblem(f"cannot read {what} {target}: {exc.strerror or exc}") from None
    if len(data) > MAX_READ_BYTES:
        raise FileProblem(f"{what} {target} is larger than {MAX_READ_BYTES // 2**20} MB")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise FileProblem(
            f"{what} {target} is not UTF-8 text (byte {exc.start}); nothing changed"
        ) from None
