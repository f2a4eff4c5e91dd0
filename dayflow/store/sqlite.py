"""The SQLite backend: connections, the one `transaction()`, and the upkeep only a file needs.

Connections run in explicit-transaction mode (`isolation_level=None`): nothing is committed
except by `transaction()`. The outermost level takes the write lock up front with
`BEGIN IMMEDIATE`, so two processes never deadlock upgrading a read lock, and waits for it up to
the busy timeout instead of failing with "database is locked". Nested levels are savepoints.
Any exception, KeyboardInterrupt included, rolls back and is re-raised unchanged.

The file, its directory, its `-wal` and `-shm` are owner-only: they hold inbox contents.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from dayflow.clock import Clock
from dayflow.errors import DayflowError, StoreError
from dayflow.store.sql import Cursor, DatabaseError, Dialect, IntegrityError, Unless, savepoint
from dayflow.store.sqlite_schema import APPLICATION_ID, MIGRATIONS, migrate, schema_version
from dayflow.store.values import UpkeepFinding

BUSY_TIMEOUT_MS = 30_000
# "NORMAL" in WAL mode survives any process crash (kill -9); a power loss may lose the last
# transactions but never corrupts the file. "FULL" also survives power loss (fsync per commit).
SYNCHRONOUS_MODES = ("NORMAL", "FULL")
SQLITE = Dialect(
    "sqlite",
    lock_row="",
    insertion_order="rowid",
    batched_steps="steps b INDEXED BY steps_batched",
)


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
            mode = _switch_to_wal(conn)
            if str(mode).lower() != "wal":
                raise StoreError(f"{target}: could not switch the database to WAL mode")
        conn.execute(f"PRAGMA synchronous = {synchronous}")
    except sqlite3.DatabaseError as exc:
        raise StoreError(_why(target, exc)) from None
    return conn


def _switch_to_wal(conn: sqlite3.Connection) -> str:
    """Put the file in WAL mode, waiting out another process that is creating it right now.

    On a new file (still in rollback mode) the switch needs an exclusive lock, and when another
    process holds the write lock SQLite answers "database is locked" at once instead of calling
    the busy handler (it would deadlock): so wait and try again, for up to the busy timeout."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            return str(conn.execute("PRAGMA journal_mode = WAL").fetchone()[0])
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


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
    if not stat.S_ISREG(p.stat().st_mode):  # a FIFO, a device: SQLite's "disk I/O error"
        from dayflow.files import kind_of

        raise StoreError(f"{p}: is {kind_of(p.stat().st_mode)}, not a database file")
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


def _wrap(exc: sqlite3.Error) -> DatabaseError:
    """The driver's error in the store's family, as `postgres._wrap` does psycopg's: the one
    place a sqlite3 exception becomes a Dayflow one (exit 4, one line)."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if isinstance(exc, sqlite3.IntegrityError):
        return IntegrityError(text)
    return DatabaseError(text)


class SqliteDatabase:
    """One SQLite connection behind the store's `Database` face."""

    dialect = SQLITE
    lazy_commits = False
    server_clock: Clock | None = None  # leases run on the store's clock: one machine's file

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.statements = 0
        self.transactions = 0

    def execute(self, sql: str, args: Sequence[Any] = ()) -> Cursor:
        self.statements += 1
        try:
            return self.conn.execute(sql, args)
        except sqlite3.Error as exc:
            raise _wrap(exc) from exc

    def execute_one(
        self, sql: str, args: Sequence[Any], miss: DayflowError, unless: Unless | None = None
    ) -> None:
        if self.execute(sql, args).rowcount == 1:
            return
        if unless is not None:
            held = self.execute(f"SELECT {unless[0]}", unless[1]).fetchone()
            if held is None or not held[0]:
                raise unless[2]
        raise miss

    def batch(
        self, *, independent: bool = False, flush: bool = True
    ) -> contextlib.AbstractContextManager[None]:
        # One file, no network: nothing to save; `flush` is the file's `synchronous` setting.
        return self.transaction()

    @property
    def in_transaction(self) -> bool:
        return self.conn.in_transaction

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """Run the block atomically: BEGIN IMMEDIATE at the outermost level, a savepoint
        inside."""
        conn = self.conn
        if conn.in_transaction:
            with savepoint(self._control):
                yield
            return
        self.transactions += 1
        self._control("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            raise
        self._control("COMMIT")

    def _control(self, sql: str) -> None:
        """A transaction statement (BEGIN waits out the busy timeout; COMMIT may meet a full
        disk), its failure in the store's error family as every other statement's."""
        try:
            self.conn.execute(sql)
        except sqlite3.Error as exc:
            raise _wrap(exc) from exc

    def close(self) -> None:
        self.conn.close()


def open_database(path: Path | str, *, synchronous: str = "NORMAL") -> SqliteDatabase:
    """A connection to the file at `path` with its schema brought up to date."""
    db = SqliteDatabase(connect(path, synchronous=synchronous))
    try:
        migrate(db.conn, str(path), db.transaction)
    except sqlite3.Error as exc:
        db.close()
        raise _wrap(exc) from exc
    except BaseException:
        db.close()
        raise
    return db


def database_size(path: str | Path) -> int:
    """Bytes on disk of the database and its WAL."""
    total = 0
    for p in (Path(path), Path(f"{path}-wal")):
        if p.exists():
            total += p.stat().st_size
    return total


class SqliteUpkeep:
    """What only a SQLite file needs: its size, VACUUM, SQLite's own checks, file modes."""

    skipped: tuple[tuple[str, str], ...] = ()

    def __init__(self, db: SqliteDatabase, path: Path | str) -> None:
        self._db = db
        self.location = str(path)

    def schema_version(self) -> str | None:
        try:
            return schema_version(self._db.conn)
        except sqlite3.Error as exc:
            raise _wrap(exc) from exc

    def latest_schema(self) -> str:
        return MIGRATIONS[-1][0]

    def size_bytes(self) -> int:
        return 0 if self.location == ":memory:" else database_size(self.location)

    def reclaim(self) -> None:
        """Rewrite the file without its free pages and fold the WAL back into it (no
        transaction may be open: VACUUM cannot run inside one)."""
        self._db.execute("VACUUM")
        self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def integrity_problems(self) -> list[str]:
        """What SQLite's integrity and foreign-key checks report; empty when both pass."""
        found = [str(r[0]) for r in self._db.execute("PRAGMA integrity_check")]
        problems = [] if found == ["ok"] else found
        for r in self._db.execute("PRAGMA foreign_key_check"):
            problems.append(f"{r[0]} row {r[1]} points at a missing {r[2]} row")
        return problems

    def recovery_hint(self) -> str:
        return f"sqlite3 {self.location} .recover > recovered.sql (or restore a backup)"

    def exposure(self, *, fix: bool) -> list[UpkeepFinding]:
        """The database's files that other users can read (with `fix`: made owner-only)."""
        found: list[UpkeepFinding] = []
        if self.location == ":memory:":
            return found
        db = self.location
        for path in (Path(db), Path(f"{db}-wal"), Path(f"{db}-shm")):
            try:
                mode = stat.S_IMODE(path.stat().st_mode)
            except FileNotFoundError:
                continue
            if not mode & 0o077:
                continue
            if fix:
                # Only take other users' access away: a file its owner made read-only stays so.
                os.chmod(path, mode & ~0o077)
            found.append(
                UpkeepFinding(
                    f"{path} can be read by other users (mode {mode:o}) and holds inbox contents"
                    + (f"; now {mode & ~0o077:o}" if fix else ""),
                    f"chmod go-rwx {path}",
                    fixed=fix,
                )
            )
        return found


def open_backend(path: Path, *, durability: str = "NORMAL") -> tuple[SqliteDatabase, SqliteUpkeep]:
    """The SQLite file at `path` as the store's `Database` and `Upkeep`."""
    db = open_database(path, synchronous=durability)
    return db, SqliteUpkeep(db, path)
