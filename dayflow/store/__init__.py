"""The store: the only package that reads and writes rows. Everything it returns is a plain
value (`dayflow.models`) or one of the values below.

    store = open_store(target)          # a path: SQLite; postgresql://...: PostgreSQL
    run, lease = store.runs.create(spec)
    store.steps.begin(lease, 1, response, duration_ms)

Its face is its parts (`composed.Store`): `runs`, `leases`, `steps`, `events`, `tasks`,
`archive` and `upkeep`, each a small object owning one concept, each signature written once.
They run one set of shared SQL (`sql.py` says how it stays portable) over a `Database` from the
backend module the target picks; a driver's errors come out of either backend as the same
`DatabaseError` family (`sql.py`).

Adding a backend: a module (e.g. `postgres.py`) with `open_backend(target, *, durability) ->
(Database, Upkeep)`, its schema and its `Dialect`; `open_store` below picks it by the target.
Nothing above the store changes.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

from dayflow.clock import Clock, SystemClock
from dayflow.errors import StoreError
from dayflow.models import is_postgres_target
from dayflow.store.composed import Store
from dayflow.store.sql import Database, DatabaseError, IntegrityError, Upkeep
from dayflow.store.tasks import Tasks
from dayflow.store.values import (
    DEFAULT_PROFILE,
    LEASE_TTL,
    PRUNED_MARK,
    REDACTED_MARK,
    BatchItem,
    Lease,
    NewRun,
    Owner,
    UpkeepFinding,
    not_continuable,
    process_alive,
    process_start,
    task_id,
)

__all__ = [
    "DEFAULT_PROFILE",
    "LEASE_TTL",
    "PRUNED_MARK",
    "REDACTED_MARK",
    "BatchItem",
    "DatabaseError",
    "IntegrityError",
    "Lease",
    "NewRun",
    "Owner",
    "Store",
    "Tasks",
    "Upkeep",
    "UpkeepFinding",
    "is_postgres_target",
    "not_continuable",
    "open_store",
    "process_alive",
    "process_start",
    "task_id",
]


def open_store(
    target: str | Path,
    *,
    clock: Clock | None = None,
    owner: Owner | None = None,
    durability: str = "NORMAL",
    profile: str = DEFAULT_PROFILE,
    registered: bool = False,
) -> Store:
    """Open the store at `target` (a SQLite file path, created owner-only if missing, or a
    `postgresql://` URL), its schema brought up to date, showing `profile`'s runs and tasks.
    `registered`: `profile` is a row of `profiles`, which a new run then requires."""
    if is_postgres_target(target):
        # One slash only where pathlib folded two; "postgresql:///db" (a local socket) stays.
        url = re.sub(r"^(postgres(?:ql)?):/(?!/)", r"\1://", str(target), flags=re.IGNORECASE)
        try:
            postgres = importlib.import_module("dayflow.store.postgres")
        except ImportError as exc:
            raise StoreError(
                f"PostgreSQL needs the psycopg driver ({exc}): "
                "pip install 'dayflow[postgres]', or use a SQLite file path for --db / DAYFLOW_DB"
            ) from None
        db: Database
        upkeep: Upkeep
        db, upkeep = postgres.open_backend(url, durability=durability)
    else:
        from dayflow.store import sqlite

        db, upkeep = sqlite.open_backend(Path(target).expanduser(), durability=durability)
    return Store(
        db,
        upkeep,
        clock=clock or SystemClock(),
        owner=owner or Owner.current(),
        profile=profile,
        registered=registered,
    )
