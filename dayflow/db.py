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
from collections.abc import Iterator
from pathlib import Path

from dayflow.errors import StoreError

BUSY_TIMEOUT_MS = 30_000
# "NORMAL" in WAL mode survives any process crash (kill -9); a power loss may lose the last
# transactions but never corrupts the file. "FULL" also survives power loss (fsync per commit).
SYNCHRONOUS_MODES = ("NORMAL", "FULL")

_savepoints = itertools.count(1)


def connect(path: Path | str, *, synchronous: str = "NORMAL") -> sqlite3.Connection:
    """Open (creating if needed, owner-only) a database file ready for Dayflow."""
    if synchronous not in SYNCHRONOUS_MODES:
        raise StoreError(f"unknown durability setting {synchronous!r}")
    target = str(path)
    if target != ":memory:":
        p = Path(target)
        p.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        if not p.exists():
            # Create the file readable by its owner only: it holds inbox contents.
            fd = os.open(p, os.O_CREAT | os.O_WRONLY, 0o600)
            os.close(fd)
    try:
        conn = sqlite3.connect(target, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000)
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA foreign_keys = ON")
        if target != ":memory:":
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise StoreError(f"{target}: could not switch the database to WAL mode")
        conn.execute(f"PRAGMA synchronous = {synchronous}")
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"{target}: not a usable SQLite database ({exc})") from None
    return conn


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
