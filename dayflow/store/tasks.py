"""The task book: tasks the agent created, each once per idempotency key, per profile."""

from __future__ import annotations

from datetime import datetime

from dayflow.errors import AmbiguousRunId, RunNotFound
from dayflow.models import Task
from dayflow.store.context import StoreContext
from dayflow.store.rows import like_prefix, task_row
from dayflow.store.sql import one, scalar
from dayflow.store.values import command_hint, task_id

# Longer than any task id ("t_" and 12 hex digits; older databases' ids are shorter still).
MAX_ID_CHARS = 64


class Tasks:
    def __init__(self, ctx: StoreContext) -> None:
        self._ctx = ctx

    def create(
        self,
        *,
        title: str,
        idempotency_key: str,
        run_id: str | None,
        due: str | None = None,
        source_id: str | None = None,
        notes: str | None = None,
        evidence: str | None = None,
        due_kind: str | None = None,
    ) -> tuple[Task, bool]:
        """Insert a task unless its idempotency key exists; the UNIQUE constraint decides.
        Returns the task and whether this call created it."""
        db, profile = self._ctx.db, self._ctx.profile
        with db.transaction():
            cur = db.execute(
                """INSERT INTO tasks (id, title, due, source_id, notes, idempotency_key,
                   run_id, created_at, profile, evidence, due_kind)
                   VALUES (?,?,?,?,?,?,?,?,?,?,?)
                   ON CONFLICT (profile, idempotency_key) DO NOTHING""",
                (
                    task_id(idempotency_key, profile),
                    title,
                    due,
                    source_id,
                    notes,
                    idempotency_key,
                    run_id,
                    self._ctx.now(),
                    profile,
                    evidence,
                    due_kind,
                ),
            )
            created = cur.rowcount == 1
            sql = "SELECT * FROM tasks WHERE profile = ? AND idempotency_key = ?"
            row = one(db, sql, (profile, idempotency_key))
        return task_row(row), created

    def exists(self, idempotency_key: str) -> bool:
        sql = "SELECT 1 FROM tasks WHERE profile = ? AND idempotency_key = ?"
        return one(self._ctx.db, sql, (self._ctx.profile, idempotency_key)) is not None

    def filed_at(self, keys: list[str]) -> dict[str, datetime]:
        """When the task under each of `keys` that has one was filed (its created_at)."""
        if not keys:
            return {}
        marks = ",".join("?" * len(keys))
        sql = (
            "SELECT idempotency_key, created_at FROM tasks "
            f"WHERE profile = ? AND idempotency_key IN ({marks})"
        )
        rows = self._ctx.db.execute(sql, (self._ctx.profile, *keys))
        return {r["idempotency_key"]: datetime.fromisoformat(r["created_at"]) for r in rows}

    def count_created_by(self, run_id: str) -> int:
        return int(scalar(self._ctx.db, "SELECT COUNT(*) FROM tasks WHERE run_id = ?", (run_id,)))

    def list(self, *, include_done: bool = False) -> list[Task]:
        sql = "SELECT * FROM tasks WHERE profile = ?"
        if not include_done:
            sql += " AND status = 'open'"
        # "due IS NULL" sorts undated tasks last on both engines (false before true).
        sql += " ORDER BY status, due IS NULL, due, created_at, id"
        return [task_row(r) for r in self._ctx.db.execute(sql, (self._ctx.profile,))]

    @property
    def _listed(self) -> str:
        return command_hint(self._ctx.profile, "tasks", "--all")

    def find(self, prefix: str) -> Task:
        # Task ids are lowercase; SQLite's LIKE ignores ASCII case and PostgreSQL's does not,
        # so an id typed in capitals is looked up in lowercase on both.
        prefix = prefix.strip().lower()
        if len(prefix) > MAX_ID_CHARS:  # no id is that long (and SQLite refuses such a LIKE)
            shown = prefix[:MAX_ID_CHARS] + "..."
            raise RunNotFound(f"no task matches {shown!r} (see `{self._listed}`)")
        rows = self._ctx.db.execute(
            "SELECT * FROM tasks WHERE profile = ? AND (id = ? OR id LIKE ? ESCAPE '\\') "
            "ORDER BY id LIMIT 6",
            (self._ctx.profile, prefix, like_prefix(prefix)),
        ).fetchall()
        exact = [r for r in rows if r["id"] == prefix]
        if exact:
            return task_row(exact[0])
        if not rows:
            raise RunNotFound(f"no task matches {prefix!r} (see `{self._listed}`)")
        if len(rows) > 1:
            ids = ", ".join(r["id"] for r in rows[:5]) + (", ..." if len(rows) > 5 else "")
            raise AmbiguousRunId(f"{prefix!r} matches several tasks ({ids}); give more characters")
        return task_row(rows[0])

    def move_due(self, task_id: str, due: str) -> Task | None:
        """Set an open task's due date to `due` (a later message moved it: `due_kind` becomes
        stated); None when there is no such open task. Run inside the caller's transaction
        (a saved effect's), so the new date and its record commit together."""
        db, profile = self._ctx.db, self._ctx.profile
        with db.transaction():
            db.execute(
                "UPDATE tasks SET due = ?, due_kind = 'stated' "
                "WHERE id = ? AND profile = ? AND status = 'open'",
                (due, task_id, profile),
            )
            row = one(db, "SELECT * FROM tasks WHERE id = ? AND profile = ?", (task_id, profile))
        return task_row(row) if row is not None and row["status"] == "open" else None

    def mark_done(self, task_id: str) -> Task:
        db = self._ctx.db
        with db.transaction():
            db.execute(
                "UPDATE tasks SET status = 'done', done_at = COALESCE(done_at, ?) "
                "WHERE id = ? AND profile = ?",
                (self._ctx.now(), task_id, self._ctx.profile),
            )
        row = one(
            db, "SELECT * FROM tasks WHERE id = ? AND profile = ?", (task_id, self._ctx.profile)
        )
        if row is None:
            raise RunNotFound(f"no task {task_id!r} (see `{self._listed}`)")
        return task_row(row)

    def delete(self, task_id: str) -> bool:
        """Delete one task (a rejected one: not a task at all); whether it was there."""
        db = self._ctx.db
        with db.transaction():
            cur = db.execute(
                "DELETE FROM tasks WHERE id = ? AND profile = ?", (task_id, self._ctx.profile)
            )
            return cur.rowcount == 1

    def delete_with_key_prefix(self, prefix: str) -> int:
        """Delete the tasks whose idempotency key starts with `prefix`; how many went."""
        db = self._ctx.db
        with db.transaction():
            # The length is cast: PostgreSQL gets every int as int8 (store/postgres.py), and
            # its substr() takes an integer.
            cur = db.execute(
                "DELETE FROM tasks WHERE profile = ? "
                "AND substr(idempotency_key, 1, CAST(? AS INTEGER)) = ?",
                (self._ctx.profile, len(prefix), prefix),
            )
            return cur.rowcount
