"""What the store's shared SQL runs on: a `Database` (one connection of some backend) and the
few facts of its `Dialect`.

The shared statements (runs, leases, steps, effects, tasks, events, history: every one that
means the same on both engines) are written once, in qmark style (`?` placeholders), in the
portable subset SQLite and PostgreSQL share: `ON CONFLICT ... DO NOTHING`, `COALESCE`,
`LIKE ... ESCAPE '\\'`, `INSERT ... SELECT`, no `MAX(a, b)` scalar, no `rowid`. A backend whose
driver wants another style (psycopg's `%s`) translates once per statement text with
`qmark_to_format`, cached. Only what truly differs is asked of the `Dialect` (the few
fragments below); everything else that is engine-specific (connecting, the schema, VACUUM,
integrity checks, file permissions) lives in the backend's own module behind `Upkeep`.

A backend plugs in by adding one module that builds a `Database` and an `Upkeep` and is chosen
by `open_store` from the target (see `dayflow/store/__init__.py`).
"""

from __future__ import annotations

import contextlib
import functools
import itertools
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from datetime import timedelta
from typing import Any, Protocol

from dayflow.clock import Clock
from dayflow.errors import DayflowError, StoreError
from dayflow.frozen import Frozen
from dayflow.store.values import LEASE_TTL, UpkeepFinding


class DatabaseError(StoreError):
    """The engine refused a statement or failed under it (a full disk, a locked file, a server
    that said no): one line, exit 4. Each backend turns its driver's errors into this family in
    one place (`sqlite._wrap`, `postgres._wrap`); `detail` is the driver's own first line."""

    what = "database problem"

    def __init__(self, detail: str) -> None:
        super().__init__(f"{self.what}: {detail}")
        self.detail = detail


class IntegrityError(DatabaseError):
    """A constraint (unique, foreign key, check) refused a write."""

    what = "database constraint"


class ConnectionLost(DatabaseError):
    """The server dropped the connection inside a transaction, which it rolled back. Its line
    names no command: the store knows no run; where one is driven, the loop adds the way on
    (`dayflow resume RUN`, with the run's --profile: `values.command_hint`)."""

    def __init__(self, detail: str) -> None:
        StoreError.__init__(
            self,
            f"lost the connection to the database server ({detail}); "
            "the transaction in flight was rolled back",
        )
        self.detail = detail


# A result row: both `row["column"]` and `row[0]` must work (sqlite3.Row does; a psycopg
# backend uses a row factory that gives the same).
Row = Any


_savepoints = itertools.count(1)


@contextlib.contextmanager
def savepoint(
    execute: Callable[[str], None], still_open: Callable[[], bool] = lambda: True
) -> Iterator[None]:
    """A transaction nested in the open one (both engines speak the same SAVEPOINT): released
    when the block ends; when it raises, rolled back to and released (where the connection is
    still open to hear it) and the error goes on."""
    name = f"sp_{next(_savepoints)}"
    execute(f"SAVEPOINT {name}")
    try:
        yield
    except BaseException:
        if still_open():
            execute(f"ROLLBACK TO SAVEPOINT {name}")
            execute(f"RELEASE SAVEPOINT {name}")
        raise
    execute(f"RELEASE SAVEPOINT {name}")


class Cursor(Protocol):
    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Row | None: ...

    def fetchall(self) -> list[Row]: ...

    def __iter__(self) -> Iterator[Row]: ...


class Dialect(Frozen):  # not a dataclass: `dayflow runs` imports it (dayflow.frozen)
    """The fragments of SQL that differ between engines."""

    name: str
    # Appended to the SELECT that checks a run's lease without writing it, so the row stays
    # locked to the end of the transaction ("" where the whole database is locked anyway).
    lock_row: str = ""
    # The column that orders runs created in the same millisecond by insertion.
    insertion_order: str = "rowid"
    # How long a lease lasts unless a write renews it. A SQLite file is one machine's: a dead
    # driver is also noticed by its pid, so the lease can be long. A server's drivers may be on
    # other hosts (no pid to check): a short lease, renewed by a heartbeat while a model call
    # is in flight (`heartbeat`), frees a dead host's run within a minute.
    lease_ttl: timedelta = LEASE_TTL
    heartbeat: bool = False
    # A statement taking a lock, held to the end of the transaction, on one day's brief (its
    # argument: the brief date), so two processes creating that day's run queue up. "" where a
    # write transaction locks the whole database anyway (SQLite's BEGIN IMMEDIATE).
    day_lock: str = ""
    # The steps answered by a batch, as `b`, read through the partial index that holds only
    # them (the planner's choice on PostgreSQL; SQLite's must be told, `INDEXED BY`).
    batched_steps: str = "steps b"


# (a boolean SQL expression, its arguments, the error to raise when it is false)
Unless = tuple[str, Sequence[Any], DayflowError]


class Database(Protocol):
    """One connection: statements in qmark style, and one `transaction()` that nests (a
    savepoint inside an open transaction) and rolls back on any exception, Ctrl-C included."""

    dialect: Dialect
    # Whether a `batch(flush=False)` can be lost while this process lives on (a server's crash
    # can; SQLite's commits die with the machine or not at all).
    lazy_commits: bool
    statements: int  # counters for the benchmarks: statements run, transactions begun
    transactions: int

    @property
    def server_clock(self) -> Clock | None:
        """The clock leases are computed on when it is not the store's (a server's)."""
        ...

    def execute(self, sql: str, args: Sequence[Any] = ()) -> Cursor: ...

    def execute_one(
        self, sql: str, args: Sequence[Any], miss: DayflowError, unless: Unless | None = None
    ) -> None:
        """Run a write (an UPDATE, INSERT or DELETE without RETURNING) that must change exactly
        one row, else raise `miss` (a LeaseLost or a StoreError), or `unless`'s error when its
        condition is false (a fenced write: the lease was lost, rather than the write's own
        condition). On a server the server raises them, so no result is read before COMMIT."""
        ...

    def transaction(self) -> AbstractContextManager[None]: ...

    def batch(
        self, *, independent: bool = False, flush: bool = True
    ) -> AbstractContextManager[None]:
        """A transaction whose statements' results are never read (only `execute` without
        fetching, and `execute_one`), its writes each safe to send twice (guarded by a key or a
        state, so a second sending fails instead of applying again): on a server it costs one
        round trip, and `independent` statements (none reads what another writes) go as one;
        elsewhere the same as `transaction()`. `flush=False`: what the batch writes can be
        redone (a crash of the server, not of this process, may lose it, and the next write
        that depends on it must check it is there); on a server with durability NORMAL its
        COMMIT then does not wait for the disk. SQLite's commits follow its `synchronous`."""
        ...

    @property
    def in_transaction(self) -> bool: ...

    def close(self) -> None: ...


class Upkeep(Protocol):
    """What only the engine behind the store knows how to do (its size, reclaiming space, its
    own integrity checks, file permissions), so `gc` and `doctor` work on any backend."""

    location: str  # what to show the user: a path, or a URL without its password
    # `doctor`'s checks this engine leaves to someone else, each with why (named, not claimed)
    skipped: tuple[tuple[str, str], ...]

    def schema_version(self) -> str | None: ...

    def latest_schema(self) -> str: ...

    def size_bytes(self) -> int: ...

    def reclaim(self) -> None: ...

    def integrity_problems(self) -> list[str]: ...

    def recovery_hint(self) -> str: ...

    def exposure(self, *, fix: bool) -> list[UpkeepFinding]: ...


@functools.lru_cache(maxsize=512)
def qmark_to_format(sql: str) -> str:
    """`?` placeholders as `%s` (and a literal `%` as `%%`), outside quoted strings."""
    out: list[str] = []
    quote: str | None = None
    for ch in sql:
        if quote is not None:
            if ch == quote:
                quote = None
            out.append("%%" if ch == "%" else ch)
        elif ch in ("'", '"'):
            quote = ch
            out.append(ch)
        elif ch == "?":
            out.append("%s")
        elif ch == "%":
            out.append("%%")
        else:
            out.append(ch)
    return "".join(out)


def one(db: Database, sql: str, args: Sequence[Any] = ()) -> Row | None:
    return db.execute(sql, args).fetchone()


def scalar(db: Database, sql: str, args: Sequence[Any] = ()) -> Any:
    row = db.execute(sql, args).fetchone()
    return None if row is None else row[0]
