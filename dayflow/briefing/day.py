"""Today's brief: which run it is, one writer of it at a time, and what a second
`dayflow brief` on the same day does.

A day's brief is the newest run whose brief date is that day. `brief --ensure-today` (what a
schedule runs) starts it, resumes it, or prints it when it is done, with no model call. A plain
`brief` on a day whose brief is done says so and writes an *update* covering only the messages
that arrived since that brief started (`--since-last`, the default), or a full new brief
(`--new`).

Two processes deciding at the same moment (the timer and the user) must not both start a
brief. Each holds the day's lock while it decides and drives: a POSIX record lock on one byte
(the day's ordinal) of a lock file beside the database. The kernel releases it when the
process exits, kill -9 included, so a waiter then finds the run interrupted and resumes it. A
run's own lease still decides who may write the run (a plain `dayflow resume` takes no day
lock). Machines sharing one database (PostgreSQL) do not share that file: there the store
creates the day's run under a lock of its own and refuses a second (`DayTaken`), which the CLI
turns into printing or resuming the first.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime, timedelta, tzinfo
from datetime import time as day_time
from pathlib import Path
from typing import Any

from dayflow.clock import iso
from dayflow.errors import RunBusy, StoreError
from dayflow.models import DONE, Run, RunSettings
from dayflow.store.runs import DAY_LOOKBACK_DAYS, Runs
from dayflow.store.values import DEFAULT_PROFILE, command_hint

# A run for a day is created within a day or so of it in any timezone: look back far enough
# without reading the whole history (as far as the store does when it creates the day's run).
_LOOKBACK = timedelta(days=DAY_LOOKBACK_DAYS)
MAIL_WINDOW = timedelta(hours=24)  # a brief's mail when no earlier brief was finished
WAIT_LIMIT_S = 30 * 60  # a waiter gives up (exit 5) after this long
_POLL_S = 0.2


def latest_for(runs: Runs, day: date, now: datetime, real: bool = False) -> Run | None:
    """The newest run (any status) whose brief date is `day`, created in the last few days.
    `real`: for a brief of the user's own mail, to which a run of the bundled sample (the quick
    start's) is not the day's brief."""
    for run in runs.list(since=iso(now - _LOOKBACK), limit=None):
        if run.brief_date != day.isoformat() or run.pruned_at:
            continue
        if real and run.settings.reads_sample:
            continue
        return run
    return None


def declares_sources(document: dict[str, Any] | None) -> bool:
    """Whether a config file's document (unvalidated) names mail or calendar sources: a brief
    with it reads the user's own, and a run of the bundled sample is not its day's brief."""
    return bool(document and (document.get("inbox") or document.get("calendar")))


def brief_moment(day: date, tz: tzinfo, now: datetime) -> datetime:
    """The moment a brief of `day` is written as of: `now` for today's brief (in `tz`), else the
    same wall-clock time on `day`: a brief for another day (`brief --date`) reads that day's
    mail, not today's."""
    local = now.astimezone(tz)
    if local.date() == day:
        return now
    return datetime.combine(day, local.time(), tzinfo=tz).astimezone(UTC)


def mail_since(runs: Runs, day: date, tz: tzinfo, now: datetime) -> datetime:
    """Where a new full brief's mail window starts (read_inbox's default): where the last
    finished brief of an earlier day stopped reading (its start, or the end of its day if it
    was written later), if that is before this brief's moment; else 24 hours before that
    moment. A finished brief of the same day (`brief --new`) or of a later one is not "the
    last brief" of this one, nor is a run of the bundled sample. The window ends with the
    brief's day (factory.build_sources)."""
    at = brief_moment(day, tz, now)
    # The newest runs first: yesterday's brief is found in the first query on a daily habit.
    for lookback in (_LOOKBACK, timedelta(days=60), None):
        since = None if lookback is None else iso(at - lookback)
        for run in runs.list(status=DONE, since=since, limit=None):
            if run.brief_date >= day.isoformat() or run.settings.reads_sample:
                continue  # (a sample run read no mail of the user's)
            # What that brief covered: mail up to its start, or to the end of its day when it
            # was written later (`--date` for a past day).
            end_of_day = datetime.combine(
                date.fromisoformat(run.brief_date) + timedelta(days=1), day_time(), tzinfo=tz
            )
            covered = min(datetime.fromisoformat(run.created_at), end_of_day)
            if covered < at:
                return covered
    return at - MAIL_WINDOW


def lock_path(db_path: Path | str, state_dir: Path | None = None) -> Path:
    """The lock file beside a SQLite database (its directory exists by now); for a database
    named by URL (PostgreSQL), a file named by the URL's hash in the state directory. The lock
    is a per-machine one: across machines sharing one PostgreSQL database, the store's day
    lock (`runs.create(sole_for_day=True)`) keeps the day to one brief. The state directory
    is the settings' (`Settings.local_dir`, from the runtime's environment): a brief passes
    `Settings.local_db`, a file there, so a URL comes only with the directory it names."""
    target = str(db_path)
    if re.match(r"^[a-z][a-z0-9+.-]*:/", target, re.IGNORECASE):
        if state_dir is None:
            raise ValueError("the lock of a database named by URL needs its state directory")
        base = state_dir
        base.mkdir(parents=True, exist_ok=True, mode=0o700)
        digest = hashlib.sha256(target.encode()).hexdigest()[:16]
        return base / f"day-{digest}.lock"
    return Path(target + ".lock")


@contextlib.contextmanager
def day_lock(
    db_path: Path | str,
    day: date,
    on_wait: Callable[[], None],
    limit_s: float = WAIT_LIMIT_S,
    profile: str = DEFAULT_PROFILE,
) -> Iterator[None]:
    """Hold the lock of `profile`'s brief of `day`; if another process holds it, call
    `on_wait` once and wait for it (RunBusy after `limit_s`). Threads of one process (a
    worker's) share one open file per lock file: closing any descriptor of a file drops every
    POSIX lock the process holds on it, so the file stays open while any thread holds one."""
    path = lock_path(db_path)
    offset = day.toordinal()
    if profile != DEFAULT_PROFILE:  # a byte of its own, above every day's ordinal (< 2**22)
        offset += (1 + zlib.crc32(profile.encode()) % 2**20) * 2**22
    with _locks.holding(path, offset) as fd:
        waited = False
        deadline = time.monotonic() + limit_s
        while True:
            try:
                fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, offset)
                break
            except OSError:
                if not waited:
                    on_wait()
                    waited = True
                if time.monotonic() > deadline:
                    raise RunBusy(
                        f"another dayflow is still writing the brief for {day} after "
                        f"{limit_s:.0f} s; `{command_hint(profile, 'runs')}` shows it"
                    ) from None
                time.sleep(_POLL_S)
        try:
            yield
        finally:
            fcntl.lockf(fd, fcntl.LOCK_UN, 1, offset)


class _LockFiles:
    """This process's open lock files, each with how many holders it has, and one thread
    lock per byte (POSIX record locks do not exclude the threads of one process)."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._files: dict[Path, list[int]] = {}  # path -> [descriptor, holders]
        self._bytes: dict[tuple[Path, int], threading.Lock] = {}

    @contextlib.contextmanager
    def holding(self, path: Path, offset: int) -> Iterator[int]:
        with self._guard:
            entry = self._files.get(path)
            if entry is None:
                try:
                    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
                except OSError as exc:
                    raise StoreError(
                        f"cannot open the lock file {path}: {exc.strerror or exc}"
                    ) from None
                entry = self._files[path] = [fd, 0]
            entry[1] += 1
            byte = self._bytes.setdefault((path, offset), threading.Lock())
        try:
            with byte:
                yield entry[0]
        finally:
            with self._guard:
                entry[1] -= 1
                if entry[1] == 0:
                    del self._files[path]
                    self._bytes.pop((path, offset), None)
                    os.close(entry[0])  # no holder left: nothing of ours to release


# Process-wide by nature: the kernel keeps POSIX locks per process, not per object.
_locks = _LockFiles()


def second_brief_notice(
    say: Callable[[str], None], done: Run, day: date, tz: tzinfo, full: str | None, profile: str
) -> Run | None:
    """Say that the day has its brief (`profile`'s); return it when the new run is an update
    of it (not when the flag `full` asks for a full one)."""
    at = datetime.fromisoformat(done.finished_at or done.created_at).astimezone(tz)
    head = f"the brief for {day} exists: run {done.id}, done at {at:%H:%M}"
    if full:
        say(f"{head}; writing a full new one ({full})")
        return None
    say(
        f"{head}; writing an update with only what arrived since (--since-last; --new writes "
        f"a full brief, --ensure-today or `{command_hint(profile, 'show', done.id)}` shows "
        "that one)"
    )
    return done


def wait_while_driven(get: Callable[[], Run], limit_s: float = WAIT_LIMIT_S) -> Run:
    """Poll a run driven by a live process (one that holds no day lock, e.g. `resume`) until
    it is not running any more."""
    deadline = time.monotonic() + limit_s
    run = get()
    while run.status == "running":
        if time.monotonic() > deadline:
            raise RunBusy(
                f"run {run.id} is being driven by pid {run.owner_pid} on host {run.owner_host}"
            )
        time.sleep(_POLL_S)
        run = get()
    return run


def since_sources(base: Callable[[Any, date], tuple[Any, Any]]) -> Callable[..., tuple[Any, Any]]:
    """The source factory `base`, its inbox narrowed to what arrived since for an update run."""

    def factory(settings: RunSettings, day: date) -> tuple[Any, Any]:
        inbox, calendar = base(settings, day)
        since = settings.since
        if not since:
            return inbox, calendar
        return inbox.only_after(datetime.fromisoformat(since)), calendar

    return factory
