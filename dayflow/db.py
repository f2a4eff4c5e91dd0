"""SQLite connections and the one `transaction()` helper.

Connections run in explicit-transaction mode (`isolation_level=None`): nothing is committed
except by `transaction()`. The outermost level takes the write lock up front with
`BEGIN IMMEDIATE`, so two processes never deadlock upgrading a read lock, and waits for it up to
the busy timeout instead of failing with "database is locked". Nested levels are savepoints.
Any exception, KeyboardInterrupt included, rolls back and is re-raised unchanged.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path

from dayflow.errors import StoreError

BUSY_TIMEOUT_MS = 30_000
# PRAGMA application_id marks a file as Dayflow's (DAYF).
APPLICATION_ID = 0x44415946
# "NORMAL" in WAL mode survives any process crash (kill -9); a power loss may lose the last
# transactions but never corrupts the file. "FULL" also survives power loss (fsync per commit).
SYNCHRONOUS_MODES = ("NORMAL", "FULL")

_savepoints = itertools.count(1)


def connect(path: Path | str, *, synchronous: str = "NORMAL") -> sqlite3.Connection:
    """Open (creating if needed, owner-only) a database file ready for Dayflow.

    A file that is not Dayflow's is refused before anything is written to it: another
    application's SQLite file is left byte for byte as it was (its journal mode included)."""
    if synchronous not in SYNCHRONOUS_MODES:
        raise StoreError(f"unknown durability setting {synchronous!r}")
    target = str(path)
    if target != ":memory:":
        _create(Path(target))
    try:
        conn = sqlite3.connect(target, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000)
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        if target != ":memory:":
            try:
                _refuse_foreign(conn, target)
            except BaseException:
                conn.close()
                raise
        conn.execute("PRAGMA foreign_keys = ON")
        if target != ":memory:":
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise StoreError(f"{target}: could not switch the database to WAL mode")
        conn.execute(f"PRAGMA synchronous = {synchronous}")
    except sqlite3.DatabaseError as exc:
        raise StoreError(_why(target, exc)) from None
    return conn


def _create(p: Path) -> None:
    """The directory (0700) and the empty file (0600: it will hold inbox contents), with an
    error that names the path and the fix instead of a PermissionError."""
    try:
        p.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        if not p.exists():
            fd = os.open(p, os.O_CREAT | os.O_WRONLY, 0o600)
            os.close(fd)
    except OSError as exc:
        raise StoreError(
            f"cannot create the database at {p}: {exc.strerror or exc} "
            f"({exc.filename or p.parent}); use --db or DAYFLOW_DB to put it elsewhere"
        ) from None
    if p.is_dir():
        raise StoreError(f"{p} is a directory; --db names the database file")
    if not os.access(p, os.R_OK | os.W_OK):
        raise StoreError(
            f"{p} is not readable and writable by you (mode "
            f"{stat.S_IMODE(p.stat().st_mode):o}): chmod u+rw {p}"
        )
    if not os.access(p.parent, os.W_OK | os.X_OK):
        raise StoreError(
            f"the directory {p.parent} is not writable: SQLite keeps {p.name}-wal and "
            f"{p.name}-shm beside the database (chmod u+w {p.parent}, or --db elsewhere)"
        )


def _refuse_foreign(conn: sqlite3.Connection, target: str) -> None:
    """Refuse another application's file (only reads: nothing is written before this)."""
    app_id = conn.execute("PRAGMA application_id").fetchone()[0]
    user_version = conn.execute("PRAGMA user_version").fetchone()[0]
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    ours = app_id == APPLICATION_ID or (app_id == 0 and not tables and user_version == 0)
    if not ours and not (app_id == 0 and "schema_migrations" in tables):
        raise StoreError(f"{target}: not a Dayflow database (use --db to pick another file)")


def _why(target: str, exc: sqlite3.DatabaseError) -> str:
    text = str(exc)
    if "file is not a database" in text:
        return f"{target}: not a Dayflow database (not an SQLite file)"
    if "readonly" in text or "unable to open" in text:
        return f"{target}: cannot open it for writing ({text}): check its permissions"
    return f"{target}: not a usable SQLite database ({text})"


@contextlib.contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """Run the block atomically: BEGIN IMMEDIATE at the outermost level, a savepoint inside."""
    if conn.in_transaction:
        name = f"sp_{next(_savepoints)}"
        conn.execute(f"SAVEPOINT {name}")
        try:
            yield conn
        except BaseException:
            conn.execute(f"ROLLBACK TO {name}")
            conn.execute(f"RELEASE {name}")
            raise
        conn.execute(f"RELEASE {name}")
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        with contextlib.suppress(sqlite3.Error):
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


# Re-exported so the CLI can report database failures without importing sqlite3.
DatabaseError = sqlite3.DatabaseError
