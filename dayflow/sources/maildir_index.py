"""The names in a Maildir's new/ and cur/, kept between listings so that an unchanged Maildir
is not read again.

Why: reading a directory of 10,000 names costs the kernel about 3.4 ms on ext4 whatever
Python does with them (getdents over the whole htree), which is most of what a page of 50 costs
beyond the page itself. So the names are kept, per folder, in memory and in one file per Maildir
under `$XDG_CACHE_HOME/dayflow/maildir` (`~/.cache/...`), owner-only, replaced atomically, and
disposable like the feed cache: deleting it only costs the next listing a directory read.

When the copy may be used: a Maildir changes only by adding, removing or renaming a file in
new/ or cur/, and each of those changes the folder's mtime and ctime. A copy is stamped with the
folder's (device, inode, mtime, ctime) and used only while `os.stat` gives the same stamp (ctime
cannot be set back by a tool, so an `rsync -t` of the folder's mtime does not fool it).

The catch is granularity: timestamps are coarse (a kernel tick, a second on some file systems,
two on FAT), so a file delivered in the same tick as the change before a listing leaves the stamp
as it was. So a copy is kept only when the folder's ctime is at least `SETTLE` before the time
the listing started (taken before the first stat) and the stamp did not move while the folder
was read: any later change then lands in a later tick and moves the stamp. A folder that
changed in the last `SETTLE` seconds is read from the directory every time until it settles.
This trusts the file system's clock to agree with ours within `SETTLE`; a network file system
whose server clock runs behind ours by more than that could outwit it (delete the cache, or
keep the Maildir on a local disk).

Names are kept with ':' written as '\\x00' (a file name holds neither '\\x00' nor '/'), so that
names compare as their positions do: a name's position is its part before the flags, and a
base that is a prefix of another ('1.M1' and '1.M10') must sort first whatever flags follow.
"""

from __future__ import annotations

import hashlib
import json
import mmap
import os
import re
import tempfile
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from dayflow.clock import Clock, SystemClock

SUBDIRS = ("new", "cur")
SETTLE_NS = 3_000_000_000  # a folder changed less than 3 s ago is never taken from a copy
FORMAT = 3
# A name starting with a 10-digit delivery time (2001-09-09 to 2286) followed by '.' or the
# flags: these order by time as plain strings, in C. Everything else is "odd" and handled
# one by one (its time comes from elsewhere).
_ODD = re.compile("/(?!\\d{10}[.\x00/])([^/]*)")

Stamp = tuple[int, int, int, int]  # st_dev, st_ino, st_mtime_ns, st_ctime_ns


@dataclass(frozen=True)
class Folder:
    """The message names of one of new/ or cur/ (':' written as '\\x00', dot files left out).
    Those starting with a 10-digit delivery time are kept sorted in one string, each preceded
    by '/' (`timed`), so that a page is found by binary search and read from the end without
    making 10,000 string objects; `odd` are the rest, few, one by one."""

    stamp: Stamp
    timed: str  # "/name/name/..." sorted ascending ("" when none)
    count: int  # how many names `timed` holds
    odd: list[str]

    @classmethod
    def of(cls, stamp: Stamp, timed: list[str], odd: list[str]) -> Folder:
        timed.sort()
        return cls(stamp, "/" + "/".join(timed) if timed else "", len(timed), odd)

    def __len__(self) -> int:
        return self.count + len(self.odd)

    def timed_names(self) -> list[str]:
        """Every timed name, oldest first (a walk of the whole folder)."""
        return self.timed[1:].split("/") if self.timed else []

    def newest(
        self,
        limit: int,
        *,
        lowest: str | None = None,
        below: str | None = None,
        keep: Callable[[str], bool] | None = None,
    ) -> list[str]:
        """Up to `limit` timed names, greatest first, with `lowest` <= name < `below`, that
        `keep` accepts."""
        blob = self.timed
        start = 0 if lowest is None else self._bound(lowest)
        end = len(blob) if below is None else self._bound(below)
        out: list[str] = []
        while end > start and len(out) < limit:
            cut = blob.rfind("/", start, end)
            name = blob[cut + 1 : end]
            if keep is None or keep(name):
                out.append(name)
            end = cut
        return out

    def _bound(self, x: str) -> int:
        """Where the first name >= `x` starts (its '/'), or the end: a binary search over the
        characters, each probe widened to the name it falls in."""
        blob = self.timed
        lo, hi = 0, len(blob)  # both at a '/' (or the end): names before lo < x <= names at hi
        while lo < hi:
            at = blob.rfind("/", lo, (lo + hi) // 2 + 1)
            stop = blob.find("/", at + 1)
            stop = len(blob) if stop == -1 else stop
            if blob[at + 1 : stop] >= x:
                hi = at
            else:
                lo = stop
        return lo


def split_names(names: list[str]) -> tuple[list[str], list[str]]:
    """(timed, odd) from a directory's names, dot files left out, with no Python work per name
    unless some are odd: the scan is one regular expression over the joined names."""
    joined = "/".join(names).replace(":", "\x00")
    if not joined:
        return [], []
    other = [n for n in _ODD.findall(f"/{joined}/") if n]  # odd ones and dot files
    every = joined.split("/")
    if not other:
        return every, []
    leave = set(other)
    return [n for n in every if n not in leave], [n for n in other if n[0] != "."]


def cache_dir(env: Mapping[str, str]) -> Path:
    """Where Maildir name copies are kept: `$XDG_CACHE_HOME/dayflow/maildir`, else
    `~/.cache/dayflow/maildir`."""
    base = env.get("XDG_CACHE_HOME") or str(Path(env.get("HOME") or Path.home()) / ".cache")
    return Path(base) / "dayflow" / "maildir"


class NameIndex:
    """The names of one Maildir's folders, from memory, the cache file or the directory.

    `cache` None keeps copies in memory only (one process); `clock` says when a listing starts;
    `stat_dir` is `os.stat` (a test gives one that answers like a coarse file system)."""

    def __init__(
        self,
        root: Path,
        cache: Path | None,
        *,
        clock: Clock | None = None,
        stat_dir: Callable[[Path], os.stat_result] = os.stat,
    ) -> None:
        self.root = root
        self.cache = cache
        self._clock = clock or SystemClock()
        self._stat = stat_dir
        self._memory: dict[str, Folder] = {}
        self._file: dict[str, Folder] | None = None  # the cache file's folders, once read

    def folders(self) -> dict[str, Folder]:
        """The folders that exist (new/, cur/ or both; none: an empty dict). Raises OSError
        (other than a missing folder) from the stat or the directory read."""
        started = int(self._clock.now().timestamp() * 1e9)
        out: dict[str, Folder] = {}
        fresh = False
        for sub in SUBDIRS:
            path = self.root / sub
            try:
                st = self._stat(path)
            except FileNotFoundError:
                continue
            stamp = _stamp(st)
            kept = self._memory.get(sub)
            if kept is None or kept.stamp != stamp:
                kept = self._from_file(sub, stamp)
            if kept is None:
                kept, settled = self._read(path, stamp, started)
                if not settled:  # changed too recently to keep: used, never kept
                    self._memory.pop(sub, None)
                    out[sub] = kept
                    continue
                fresh = True
            self._memory[sub] = kept
            out[sub] = kept
        if fresh and self.cache is not None:
            self._save()
        return out

    def _read(self, path: Path, stamp: Stamp, started: int) -> tuple[Folder, bool]:
        """The folder from the directory, and whether it may be kept (see the module's doc)."""
        timed, odd = split_names(os.listdir(path))
        settled = max(stamp[2], stamp[3]) <= started - SETTLE_NS
        if settled:
            settled = _stamp(self._stat(path)) == stamp  # not changed while it was read
        return Folder.of(stamp, timed, odd), settled

    def _from_file(self, sub: str, stamp: Stamp) -> Folder | None:
        if self.cache is None:
            return None
        if self._file is None:
            self._file = self._load()
        kept = self._file.get(sub)
        return kept if kept is not None and kept.stamp == stamp else None

    def _path(self) -> Path:
        assert self.cache is not None
        key = os.fsencode(os.path.abspath(self.root))
        return self.cache / hashlib.sha256(key).hexdigest()[:32]

    def _load(self) -> dict[str, Folder]:
        """The cache file's folders; {} when it is missing, another Maildir's, or damaged.
        Read through a memory map and decoded folder by folder: no copy of the payload beyond
        the strings kept (this is most of what a listing of an unchanged Maildir costs)."""
        try:
            with (
                self._path().open("rb") as fh,
                mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm,
            ):
                with memoryview(mm) as view:
                    return self._parse(view)
        except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
            return {}

    def _parse(self, view: memoryview) -> dict[str, Folder]:
        newline = bytes(view[:4096]).find(b"\n")
        if newline < 0:
            return {}
        meta = json.loads(bytes(view[:newline]))
        payload = view[newline + 1 :]
        try:
            if (
                meta.get("format") != FORMAT
                or meta.get("root") != os.fsdecode(os.path.abspath(self.root))
                or meta.get("crc") != zlib.crc32(payload)
            ):
                return {}
            out: dict[str, Folder] = {}
            at = 0
            for sub, entry in meta["folders"].items():
                timed_bytes, odd_bytes = int(entry["timed_bytes"]), int(entry["odd_bytes"])
                timed = str(payload[at : at + timed_bytes], "utf-8", "surrogateescape")
                odd_text = str(
                    payload[at + timed_bytes : at + timed_bytes + odd_bytes],
                    "utf-8",
                    "surrogateescape",
                )
                odd = odd_text[1:].split("/") if odd_text else []
                if len(odd) != int(entry["odd"]) or timed[:1] not in ("/", ""):
                    return {}
                at += timed_bytes + odd_bytes
                dev, ino, mtime, ctime = (int(x) for x in entry["stamp"])
                out[sub] = Folder((dev, ino, mtime, ctime), timed, int(entry["timed"]), odd)
            return out if at == len(payload) else {}
        finally:
            payload.release()

    def _save(self) -> None:
        folders = dict(self._memory)
        parts: list[bytes] = []
        sizes: dict[str, tuple[int, int]] = {}
        for sub, folder in folders.items():
            timed = folder.timed.encode("utf-8", "surrogateescape")
            odd = ("/" + "/".join(folder.odd) if folder.odd else "").encode(
                "utf-8", "surrogateescape"
            )
            parts += [timed, odd]
            sizes[sub] = (len(timed), len(odd))
        payload = b"".join(parts)
        meta = {
            "format": FORMAT,
            "root": os.fsdecode(os.path.abspath(self.root)),
            "crc": zlib.crc32(payload),
            "folders": {
                sub: {
                    "stamp": list(f.stamp),
                    "timed": f.count,
                    "odd": len(f.odd),
                    "timed_bytes": sizes[sub][0],
                    "odd_bytes": sizes[sub][1],
                }
                for sub, f in folders.items()
            },
        }
        assert self.cache is not None
        try:
            self.cache.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.cache, prefix=".tmp-")  # created 0600
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(json.dumps(meta).encode("ascii") + b"\n" + payload)
                # Unlink, then rename: renaming over a file makes ext4 flush the new one at
                # once (auto_da_alloc), which doubles the cost; between the two there is no
                # file, which only costs a reader a directory read.
                self._path().unlink(missing_ok=True)
                os.rename(tmp, self._path())
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError:
            pass  # a read-only or full cache directory only costs the next directory read
        self._file = folders


def _stamp(st: os.stat_result) -> Stamp:
    return (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_ctime_ns)
