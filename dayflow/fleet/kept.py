"""What a worker keeps from one brief to the next on the same thread: its PostgreSQL
connection (and its lease heartbeat's), and one model client per API key.

A brief opened its store afresh (a server process forked, its clock read, the schema checked:
four round trips before its first statement) and so did the heartbeat of each model call that
outlasted a third of the lease; the SDK client, with its HTTP connection pool, was built and
closed once a brief. Here each worker thread keeps one connection, reopened after `MAX_AGE_S`
(a server restart's dropped connection is reopened by the backend itself before its next
statement), and the heartbeats of that thread's briefs share a second one.

Kill -9: a kept connection holds no state between briefs (the store relies on no session
state; a transaction never outlives its block, and one a failure left open is rolled back
before the connection is lent again), so a killed worker leaves what a killed brief always
left: the server rolls back the transaction in flight, if any, and the run's lease expires.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dayflow.clock import Clock
from dayflow.store import DEFAULT_PROFILE, Store, open_store
from dayflow.store.postgres import PgDatabase, open_backend
from dayflow.store.values import Owner

MAX_AGE_S = 600.0  # a connection is made afresh this often (its server clock read again)


class _KeptDatabase(PgDatabase):
    """A connection whose `close` (at the end of each brief's store) keeps it open."""

    heartbeat: _KeptDatabase | None = None
    lent = False  # a store on it is open (a second one on this thread gets its own)

    def close(self) -> None:
        self.lent = False
        if self.in_transaction:  # never lent again mid-transaction
            super().close()

    def sibling(self) -> PgDatabase:
        """The lease heartbeat's connection, the same for every brief of this thread (one
        heartbeat at a time: `keep_alive` joins its thread before the block ends)."""
        if self.heartbeat is None:
            self.heartbeat = _KeptDatabase(self.url, durability=self.durability)
        return self.heartbeat

    def release(self) -> None:
        for db in (self, self.heartbeat):
            if db is not None:
                PgDatabase.close(db)


class KeptStores:
    """Stores for the briefs of a worker's threads, each thread on a connection of its own."""

    def __init__(self, clock: Clock, *, host: str = "", max_age_s: float = MAX_AGE_S) -> None:
        self.clock, self.max_age_s = clock, max_age_s
        self.host = host  # Settings.host: the name this machine goes by in leases
        self._local = threading.local()
        self._all: list[_KeptDatabase] = []
        self._lock = threading.Lock()

    def open(self, target: str | Path, *, durability: str, profile: str) -> Store:
        """`profile`'s store at `target` on this thread's connection (a SQLite file, which
        has no server to keep a connection to, is opened as usual)."""
        from dayflow.store import is_postgres_target

        kept: tuple[str, str, float, _KeptDatabase, Any] | None
        kept = getattr(self._local, "kept", None)
        if not is_postgres_target(target) or (kept is not None and kept[3].lent):
            # A SQLite file has no server to keep a connection to; a store opened while this
            # thread's is open (none is, today) must not share its transactions.
            return open_store(
                target,
                clock=self.clock,
                owner=Owner.current(self.host),
                durability=durability,
                profile=profile,
                registered=profile != DEFAULT_PROFILE,
            )
        if kept is not None:
            url, durable, since, db, upkeep = kept
            if (url, durable) != (str(target), durability) or db.in_transaction:
                kept = None
            elif time.monotonic() - since > self.max_age_s or db._conn.closed:
                kept = None
            if kept is None:
                self._drop(db)
        if kept is None:
            db, upkeep = _open(str(target), durability)
            kept = (str(target), durability, time.monotonic(), db, upkeep)
            self._local.kept = kept
            with self._lock:
                self._all.append(db)
        _, _, _, db, upkeep = kept
        db.lent = True
        return Store(
            db,
            upkeep,
            clock=self.clock,
            owner=Owner.current(self.host),
            profile=profile,
            registered=profile != DEFAULT_PROFILE,  # a fleet's profile: its row must be there
        )

    def _drop(self, db: _KeptDatabase) -> None:
        with self._lock:
            if db in self._all:
                self._all.remove(db)
        db.release()

    def close(self) -> None:
        """Close every thread's connections (the worker is done)."""
        with self._lock:
            kept, self._all = self._all, []
        for db in kept:
            db.release()


def _open(url: str, durability: str) -> tuple[_KeptDatabase, Any]:
    """`postgres.open_backend`, on a connection that is kept."""
    db, upkeep = open_backend(url, durability=durability, kind=_KeptDatabase)
    assert isinstance(db, _KeptDatabase)
    return db, upkeep


class KeptClients:
    """One model client per (model's provider settings), shared by the briefs of a worker:
    the SDK's HTTP connections stay open from brief to brief. A brief's `close` of its client
    is a no-op; `close()` closes them when the worker is done."""

    def __init__(self, factory: Callable[[str, Any], Any]) -> None:
        self.factory = factory
        self._clients: dict[tuple[Any, ...], Any] = {}
        self._lock = threading.Lock()

    def __call__(self, model: str, settings: Any) -> Any:
        from dayflow.providers import OFFLINE_MODEL

        if model == OFFLINE_MODEL and not settings.local:
            return self.factory(model, settings)  # no connection to keep
        key = (settings.local, settings.api_key, settings.base_url, settings.timeout)
        with self._lock:
            found = self._clients.get(key)
            if found is None:
                found = self._clients[key] = _Shared(self.factory(model, settings))
            return found

    def close(self) -> None:
        """Close every client lent (the worker is done)."""
        while True:
            with self._lock:
                if not self._clients:
                    return
                client = self._clients.popitem()[1]
            client.really_close()


class _Shared:
    """A client lent to many briefs: everything but `close` is the client's own."""

    def __init__(self, client: Any) -> None:
        object.__setattr__(self, "_client", client)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._client, name, value)  # `on_retry`: the last brief's, for all of them

    def close(self) -> None:
        """Kept open for the next brief (`KeptClients.close` closes it)."""

    def really_close(self) -> None:
        close = getattr(self._client, "close", None)
        if callable(close):
            close()
