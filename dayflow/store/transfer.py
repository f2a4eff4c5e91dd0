"""Copying a whole history from one store to another (`dayflow migrate --to`), verbatim.

Every row of every table (profiles, runs, steps, tool effects, tasks, events, compactions,
batch requests) goes across with every column as stored: payloads byte for byte, ids, sequence
numbers, timestamps, token totals, leases. Parents before forks (runs in insertion order),
runs before what points at them. Each row is inserted unless a row with its key (or its task's
idempotency key) is already there, so running the copy again changes nothing, and a copy onto
a history that already holds some of these runs fills in only what is missing.

The whole copy is one transaction on the destination: a kill or a lost connection leaves either
nothing or everything, and the next attempt starts over cleanly. A run being driven right now
is refused (its driver would keep writing to the source): wait for it, then copy.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dayflow.errors import RunBusy, UsageError
from dayflow.models import RUNNING
from dayflow.store.composed import Store

# Parents first: a row's foreign keys point only at tables earlier in this list.
TABLES = (
    "profiles",
    "runs",
    "steps",
    "tool_effects",
    "tasks",
    "events",
    "compactions",
    "batch_requests",
)
_ORDER = {
    "profiles": "name",
    "steps": "run_id, n",
    "tool_effects": "run_id, step_n, tool_use_id",
    "tasks": "created_at, id",
    "events": "run_id, seq",
    "compactions": "run_id, seq",
    "batch_requests": "run_id, step_n",
}


@dataclass
class CopyReport:
    """Rows copied and rows found already there, per table."""

    copied: dict[str, int] = field(default_factory=dict)
    present: dict[str, int] = field(default_factory=dict)

    @property
    def total_copied(self) -> int:
        return sum(self.copied.values())


def copy_history(source: Store, dest: Store) -> CopyReport:
    """Copy every row of `source` that `dest` lacks into `dest`, in one transaction."""
    if source.upkeep.location == dest.upkeep.location:
        raise UsageError("the source and the destination are the same store")
    live = source.runs.list(status=RUNNING, limit=None)
    if live:
        run = live[0]
        raise RunBusy(
            f"run {run.id} is being driven by pid {run.owner_pid} on host {run.owner_host}; "
            "wait for it to finish, then copy"
        )
    report = CopyReport()
    src, dst = source.db, dest.db
    with dst.transaction():
        for table in TABLES:
            order = _ORDER.get(table, f"created_at, {src.dialect.insertion_order}")
            copied = present = 0
            columns: list[str] | None = None
            insert = ""
            for row in src.execute(f"SELECT * FROM {table} ORDER BY {order}"):
                if columns is None:
                    # The backends' own extras (PostgreSQL's identity `rowid`) stay behind.
                    columns = [c for c in row.keys() if c != "rowid"]
                    marks = ",".join("?" * len(columns))
                    insert = (
                        f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks}) "
                        "ON CONFLICT DO NOTHING"
                    )
                if dst.execute(insert, [row[c] for c in columns]).rowcount == 1:
                    copied += 1
                else:
                    present += 1
            report.copied[table], report.present[table] = copied, present
    return report
