"""Writing and reading the user's own files (exports, delivered briefs, synced lists).

A write goes to a temporary file beside the target and is renamed over it: a kill at any
moment leaves the old file or the new one, never half of one. An existing file keeps its mode;
a new one is readable by its owner only, like the database (what it holds came from the inbox).
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path
from typing import BinaryIO

from dayflow.errors import FileProblem

MAX_READ_BYTES = 8 * 1024 * 1024  # a task list bigger than this is not one Dayflow wrote


class NotRegular(OSError):
    """A path that is a FIFO, a device, a socket or a directory where a file was wanted."""

    def __init__(self, kind: str) -> None:
        super().__init__(f"it is {kind}, not a regular file")
        self.kind = kind


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
            with open(shown, "wb") as stream:
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
