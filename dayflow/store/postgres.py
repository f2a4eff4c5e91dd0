"""The PostgreSQL backend: the one module that imports psycopg (3), and only when a
`postgresql://` target is opened (`pip install 'dayflow[postgres]'`).

It runs the store's shared SQL (qmark style, see `sql.py`) and isolates what differs:

- rows answer `row["name"]` and `row[0]` and unpack like tuples, as `sqlite3.Row` does;
  `SUM()` of a BIGINT (NUMERIC here) comes back as an int, as on SQLite;
- transactions: autocommit connection, `BEGIN` at the outermost level (READ COMMITTED),
  savepoints inside, rollback on any exception, Ctrl-C included. READ COMMITTED is why every
  write transaction checks the lease with an UPDATE of the run row or a `SELECT ... FOR UPDATE`
  (`Dialect.lock_row`): the row stays locked to COMMIT, so a take-over waits for the write in
  flight and then sees it, and a write whose lease was taken meanwhile re-checks the new row
  and changes nothing;
- text: PostgreSQL `text` cannot hold NUL (U+0000). Every string goes in through
  `encode_text`: one with no NUL that does not start with `NUL_MARK` (U+FDD0, a Unicode
  noncharacter) is stored byte for byte; any other as `NUL_MARK` and its JSON string literal
  (ASCII, no NUL), which `decode_text` turns back into the very same string. Step and result
  JSON never holds a raw NUL (JSON spells it `\\u0000`), so payloads are always stored verbatim
  as `text`, never `jsonb` (which would reorder keys and break byte-exact replay); a tool's raw
  result in `tool_effects.content` is where a NUL can arrive, and it round-trips exactly;
- time: leases are computed on the server's clock. At connect (and every reconnect) the
  connection reads `clock_timestamp()`; `ServerClock` is that reading plus the local
  *monotonic* time elapsed since, so two hosts whose wall clocks disagree (or jump) still agree
  on when a lease expires, without a round trip per write;
- a dropped connection (server restart, `pg_terminate_backend`, a pooler recycling it) is
  reopened before the next `BEGIN` or read outside a transaction. Inside a transaction it is a
  `ConnectionLost` (exit 4): the server rolled that transaction back, so nothing half-written
  remains and `dayflow resume` continues;
- no session state is relied on (no session advisory locks, no temp tables, no SET), so the
  store works behind PgBouncer in transaction mode; the URL option `dayflow_pgbouncer=1` (which
  DAYFLOW_PG_PGBOUNCER=1 adds: `config._with_pgbouncer`) also turns off server-side prepared
  statements
  (`prepare_threshold=None`), which such a pooler cannot keep.

URL options Dayflow reads (removed before connecting): `dayflow_pgbouncer=1`,
`dayflow_lease_ttl=SECONDS` (default 30). The schema is the connection's `search_path`
(libpq's `options=-csearch_path%3Dname` picks one).
"""

from __future__ import annotations

import contextlib
import select
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
from psycopg import pq
from psycopg.types.numeric import Int8BinaryDumper, Int8Dumper

from dayflow.errors import DayflowError, LeaseLost, StoreError
from dayflow.store import postgres_schema
from dayflow.store.postgres_sql import (
    LEASE_LOST,
    NOT_ONE,
    QUEUED,
    Part,
    ServerClock,
    combine,
    known_error,
    param,
    redact,
    row_factory,
    split_options,
)
from dayflow.store.sql import (
    ConnectionLost,
    Cursor,
    DatabaseError,
    Dialect,
    IntegrityError,
    Unless,
    qmark_to_format,
    savepoint,
)
from dayflow.store.values import UpkeepFinding

DEFAULT_LEASE_TTL = timedelta(seconds=30)
POSTGRES = Dialect(
    "postgresql",
    lock_row=" FOR UPDATE",
    insertion_order="rowid",
    lease_ttl=DEFAULT_LEASE_TTL,
    heartbeat=True,
    # Transaction-level (released at COMMIT, so PgBouncer's transaction mode keeps it), keyed
    # by the schema too: two Dayflow stores in one database do not wait for each other.
    day_lock="SELECT pg_advisory_xact_lock(hashtextextended(current_schema() || ':day:' || ?, 0))",
)
TABLES = ("profiles", "runs", "steps", "tool_effects", "tasks", "events", "compactions")


class PgDatabase:
    """One psycopg connection behind the store's `Database` face (see the module docstring)."""

    def __init__(self, url: str, *, durability: str = "NORMAL") -> None:
        self.url = url
        self.durability = durability
        # Whether a batch may ask not to wait for the server's disk (`batch(flush=False)`).
        self.lazy_commits = durability != "FULL"
        self.location = redact(url)
        self._conninfo, self._pgbouncer, ttl = split_options(url)
        self.dialect = POSTGRES if ttl is None else _with_ttl(ttl)
        self.statements = 0
        self.transactions = 0
        self.round_trips = 0  # statements plus BEGIN/COMMIT/SAVEPOINT: what a network pays
        self._batch: list[Part] | None = None  # inside batch(): what it will send
        self.clock: ServerClock
        self._conn = self._open()

    def _open(self) -> psycopg.Connection[Any]:
        try:
            conn = psycopg.connect(self._conninfo, autocommit=True, connect_timeout=10)
        except psycopg.Error as exc:
            raise StoreError(f"{self.location}: cannot connect ({_first_line(exc)})") from None
        if self._pgbouncer:
            conn.prepare_threshold = None
        # Every int as int8 (all of Dayflow's integer columns are BIGINT). psycopg sends an int
        # as int2, int4 or int8 by its size, and counts a statement's uses towards preparing it
        # (after five) per SQL text *and* parameter types: a step's token counts and durations
        # change size from step to step, so its writes would be planned afresh every time.
        conn.adapters.register_dumper(int, Int8Dumper)
        conn.adapters.register_dumper(int, Int8BinaryDumper)
        server_now = conn.execute("SELECT clock_timestamp()").fetchone()
        self.clock = ServerClock(server_now[0].astimezone(UTC) if server_now else datetime.now(UTC))
        conn.row_factory = row_factory  # type: ignore[assignment]
        return conn

    @property
    def server_clock(self) -> ServerClock:
        return self.clock

    def _reopen(self) -> None:
        with contextlib.suppress(psycopg.Error):
            self._conn.close()
        self._conn = self._open()

    def sibling(self) -> PgDatabase:
        """Another connection to the same database (the lease heartbeat's own)."""
        return PgDatabase(self.url, durability=self.durability)

    @property
    def backend_pid(self) -> int:
        """The server process serving this connection (what `pg_terminate_backend` takes)."""
        return int(self._conn.info.backend_pid)

    @property
    def prepare_threshold(self) -> int | None:
        return self._conn.prepare_threshold

    @property
    def in_transaction(self) -> bool:
        if self._batch is not None:
            return True
        # A dropped connection has no transaction: the server rolled it back.
        if self._conn.closed:
            return False
        return self._conn.info.transaction_status != pq.TransactionStatus.IDLE

    def execute(self, sql: str, args: Sequence[Any] = ()) -> Cursor:
        """Run one statement; a read outside a transaction survives a dropped connection."""
        self.statements += 1
        if self._batch is not None:  # sent when the batch ends; it returns nothing to read
            self._batch.append((sql, tuple(args), None))
            return QUEUED
        self.round_trips += 1
        query = qmark_to_format(sql) if args else sql
        params = [param(a) for a in args] if args else None
        outside = not self.in_transaction
        if outside and self._conn.closed:
            self._reopen()  # dropped earlier; nothing of this statement was sent
        try:
            try:
                return self._conn.execute(query, params)  # type: ignore[arg-type,return-value]
            except psycopg.OperationalError:
                if not (outside and self._conn.closed):
                    raise
                self._reopen()
                return self._conn.execute(query, params)  # type: ignore[arg-type,return-value]
        except psycopg.Error as exc:
            raise _wrap(exc, self._conn.closed) from exc

    def execute_one(
        self, sql: str, args: Sequence[Any], miss: DayflowError, unless: Unless | None = None
    ) -> None:
        """The write, and the check that it changed exactly one row, made by the server in the
        same statement (`combine`): `dayflow_require` (migration 0007) raises SQLSTATE
        `LEASE_LOST` or `NOT_ONE` with the error's message, which `_wrap` turns back into a
        LeaseLost or a StoreError. So nothing is read before COMMIT, and in a `batch` the
        write goes with the rest."""
        part: Part = (sql, tuple(args), (miss, unless))
        if self._batch is not None:
            self.statements += 1
            self._batch.append(part)
            return
        try:
            self.execute(*combine([part]))
        except DayflowError as exc:
            raise known_error(exc, [part]) from exc.__cause__

    @contextlib.contextmanager
    def batch(self, *, independent: bool = False, flush: bool = True) -> Iterator[None]:
        """A transaction the client waits for once. The block's statements are kept and sent
        when it ends (it reads no result: every check is the server's, `execute_one`):

        - one statement, or several declared `independent` (none reads what another writes:
          they may run in any order): one statement, their writes as data-modifying CTEs and
          their checks in its SELECT, which is a transaction by itself (autocommit). A check
          that fails rolls all of it back;
        - otherwise one pipeline, BEGIN, the statements in order and COMMIT: the first error
          fails the batch, the server skips the rest (COMMIT included) and it is rolled back.

        A connection the server dropped while idle is reopened first (`_ready`). When it turns
        out to be gone only as the batch is sent (the poll came too early to see it), the batch
        is sent again, once, on a fresh connection: a pipeline only when its BEGIN went
        unanswered (nothing of it ran); a single statement always, which is why a batch's
        writes must fail rather than apply twice (a step's INSERT has its key, its completion
        requires it pending), should the lost connection have committed them after all.

        `flush=False` (honoured unless the durability is FULL): the server acknowledges the
        COMMIT without waiting for its WAL to reach the disk (`synchronous_commit = off` for
        this transaction only). The transaction is visible at once, and a crash of this process
        cannot lose it; a crash of the server within a fraction of a second can, and then only
        it and what followed it unflushed: any later flushed commit, by any session, flushes it
        too, since the WAL is written in order."""
        if self.in_transaction:
            with self.transaction():
                yield
            return
        self.transactions += 1
        self.round_trips += 1
        self._ready()
        parts: list[Part] = []
        self._batch = parts
        try:
            yield
        finally:
            self._batch = None
        lazy = self.lazy_commits and not flush
        try:
            if len(parts) == 1 or (independent and parts):
                self._send_one(*combine(parts, lazy=lazy))
            elif parts:
                self._send_pipeline(parts, lazy=lazy)
        except DayflowError as exc:
            raise known_error(exc, parts) from exc.__cause__

    def _send_one(self, sql: str, args: Sequence[Any]) -> None:
        """One statement in autocommit: its own transaction, one wait."""
        query = qmark_to_format(sql) if args else sql
        params = [param(a) for a in args] if args else None
        try:
            try:
                self._conn.execute(query, params)  # type: ignore[arg-type]
            except psycopg.OperationalError:
                if not self._conn.closed:
                    raise
                self._reopen()  # see batch(): sent again, once
                self.round_trips += 1
                self._conn.execute(query, params)  # type: ignore[arg-type]
        except psycopg.Error as exc:
            raise _wrap(exc, self._conn.closed) from exc

    def _send_pipeline(self, parts: list[Part], *, lazy: bool, again: bool = True) -> None:
        """BEGIN, the statements in order, COMMIT: one pipeline, one wait."""
        conn = self._conn
        begin: Any = None
        try:
            with conn.pipeline():
                begin = conn.execute("BEGIN")
                if lazy:
                    conn.execute("SET LOCAL synchronous_commit = off")
                for part in parts:
                    sql, args = combine([part])
                    conn.execute(
                        qmark_to_format(sql) if args else sql,  # type: ignore[arg-type]
                        [param(a) for a in args] if args else None,
                    )
                conn.execute("COMMIT")
        except psycopg.Error as exc:
            _roll_back(conn)
            unanswered = begin is not None and begin.pgresult is None
            if again and conn.closed and unanswered and isinstance(exc, psycopg.OperationalError):
                self._reopen()  # nothing of it ran: see batch()
                self.round_trips += 1
                self._send_pipeline(parts, lazy=lazy, again=False)
                return
            raise _wrap(exc, conn.closed) from exc

    def _ready(self) -> None:
        """Reopen the connection if the server dropped it while it was idle (a restart, a
        terminated backend). A batch sends its BEGIN with everything else, so a dead
        connection must be found before it, as `_begin` finds it by its BEGIN: an idle
        connection has nothing to read unless the server said goodbye (Dayflow LISTENs to
        nothing), which a zero-timeout poll of its socket sees without a round trip."""
        if not self._conn.closed:
            readable, _, _ = select.select([self._conn.fileno()], [], [], 0)
            if not readable:
                return
        self._reopen()

    def _raw(self, sql: str) -> None:
        self.round_trips += 1
        try:
            self._conn.execute(sql)  # type: ignore[arg-type]
        except psycopg.Error as exc:
            raise _wrap(exc, self._conn.closed) from exc

    def _begin(self) -> None:
        self.round_trips += 1
        if self._conn.closed:
            self._reopen()
        try:
            self._conn.execute("BEGIN")
        except psycopg.OperationalError:
            if not self._conn.closed:
                raise
            self._reopen()  # nothing was sent yet: a fresh connection is safe
            self._raw("BEGIN")

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """Run the block atomically: BEGIN at the outermost level, a savepoint inside."""
        if self.in_transaction:
            with savepoint(self._raw, lambda: not self._conn.closed):
                yield
            return
        self.transactions += 1
        self._begin()
        try:
            yield
        except BaseException:
            with contextlib.suppress(psycopg.Error):
                self._conn.execute("ROLLBACK")
            raise
        self._raw("COMMIT")

    def close(self) -> None:
        self._conn.close()


class PgUpkeep:
    """What only PostgreSQL needs: the tables' size, VACUUM, nothing for files."""

    skipped = (
        ("integrity", "the server enforces its constraints itself"),
        ("permissions", "who may read is the server's roles' business, not a file mode's"),
    )

    def __init__(self, db: PgDatabase) -> None:
        self._db = db
        self.location = db.location

    def schema_version(self) -> str | None:
        return postgres_schema.schema_version(self._db)

    def latest_schema(self) -> str:
        return postgres_schema.MIGRATIONS[-1][0]

    def size_bytes(self) -> int:
        """Bytes of Dayflow's tables, with their indexes and TOAST."""
        marks = ",".join("?" * len(TABLES))
        row = self._db.execute(
            "SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
            "WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r' "
            f"AND c.relname IN ({marks})",
            TABLES,
        ).fetchone()
        return int(row[0]) if row else 0

    def reclaim(self) -> None:
        """Rewrite Dayflow's tables (only them: the database may hold others) without the
        space pruned payloads left. VACUUM FULL locks each table while it is rewritten."""
        self._db.execute("VACUUM (FULL, ANALYZE) " + ", ".join(TABLES))

    def integrity_problems(self) -> list[str]:
        """The server enforces every foreign key and check itself, whatever a session asks;
        there is no file to check from here."""
        return []

    def recovery_hint(self) -> str:
        return "restore the database from a backup (pg_dump / pg_restore)"

    def exposure(self, *, fix: bool) -> list[UpkeepFinding]:
        """Who may read the data is the server's roles' business, not a file mode's."""
        return []


def open_backend(
    url: str, *, durability: str = "NORMAL", kind: type[PgDatabase] = PgDatabase
) -> tuple[PgDatabase, PgUpkeep]:
    """The PostgreSQL database at `url` as the store's `Database` and `Upkeep`, its schema
    brought up to date. `durability`: NORMAL lets a batch that asks for it (`flush=False`)
    commit without waiting for the server's disk; FULL waits for every commit (and the server's
    own `synchronous_commit` applies to every other one). `kind`: the connection's class (a
    fleet worker's kept one, `dayflow.fleet.kept`)."""
    db = kind(url, durability=durability)
    try:
        postgres_schema.migrate(db, db.location)
    except BaseException:
        db.close()
        raise
    return db, PgUpkeep(db)


def _with_ttl(seconds: float) -> Dialect:
    from dayflow.frozen import replace

    return replace(POSTGRES, lease_ttl=timedelta(seconds=seconds))


def _roll_back(conn: psycopg.Connection[Any]) -> None:
    """End a transaction a failed batch left open (or failed), if the connection still can."""
    if not conn.closed and conn.info.transaction_status != pq.TransactionStatus.IDLE:
        with contextlib.suppress(psycopg.Error):
            conn.execute("ROLLBACK")


def _wrap(exc: psycopg.Error, closed: bool) -> DayflowError:
    if exc.sqlstate == LEASE_LOST:
        return LeaseLost(exc.diag.message_primary or _first_line(exc))
    if exc.sqlstate == NOT_ONE:
        return StoreError(exc.diag.message_primary or _first_line(exc))
    if closed:
        return ConnectionLost(_first_line(exc))
    if isinstance(exc, psycopg.IntegrityError):
        return IntegrityError(_first_line(exc))
    return DatabaseError(_first_line(exc))


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
