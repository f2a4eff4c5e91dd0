"""SQLite's schema: the ordered, append-only list of named migrations.

Each migration runs in the same transaction as the row that records it, so a kill during an
upgrade leaves either the old schema or the new one, never half of it. Never edit or reorder an
entry that has shipped: add a new one at the end.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from contextlib import AbstractContextManager

from dayflow.errors import StoreError

__all__ = ["APPLICATION_ID", "MIGRATIONS", "migrate", "schema_version"]

# PRAGMA application_id marks a file as Dayflow's ("DAYF").
APPLICATION_ID = 0x44415946

MIGRATIONS: list[tuple[str, str]] = [
    (
        "0001_initial",
        """
        CREATE TABLE runs (
            id                     TEXT PRIMARY KEY,
            status                 TEXT NOT NULL
                CHECK (status IN ('running','interrupted','done','failed','stopped')),
            model                  TEXT NOT NULL,
            brief_date             TEXT NOT NULL,
            created_at             TEXT NOT NULL,
            updated_at             TEXT NOT NULL,
            finished_at            TEXT,
            system                 TEXT NOT NULL,
            tools_json             TEXT NOT NULL,
            user_msg_json          TEXT NOT NULL,
            max_tokens             INTEGER NOT NULL,
            max_steps              INTEGER NOT NULL,
            budget                 INTEGER,
            task_cap               INTEGER NOT NULL,
            settings_json          TEXT NOT NULL DEFAULT '{}',
            input_tokens           INTEGER NOT NULL DEFAULT 0,
            output_tokens          INTEGER NOT NULL DEFAULT 0,
            cache_creation_tokens  INTEGER NOT NULL DEFAULT 0,
            cache_read_tokens      INTEGER NOT NULL DEFAULT 0,
            estimated              INTEGER NOT NULL DEFAULT 0,
            final_text             TEXT,
            reason                 TEXT,
            request_id             TEXT,
            owner_pid              INTEGER,
            owner_host             TEXT,
            owner_started          TEXT,
            lease_token            TEXT,
            lease_expires_at       TEXT,
            version                INTEGER NOT NULL DEFAULT 0,
            parent_run_id          TEXT REFERENCES runs(id),
            forked_at_step         INTEGER
        );
        CREATE INDEX runs_created ON runs(created_at);
        CREATE INDEX runs_status ON runs(status, created_at);

        CREATE TABLE steps (
            run_id                 TEXT NOT NULL REFERENCES runs(id),
            n                      INTEGER NOT NULL CHECK (n >= 1),
            state                  TEXT NOT NULL
                CHECK (state IN ('pending','complete','discarded')),
            stop_reason            TEXT NOT NULL,
            assistant_json         TEXT NOT NULL,
            tool_results_json      TEXT,
            input_tokens           INTEGER NOT NULL,
            output_tokens          INTEGER NOT NULL,
            cache_creation_tokens  INTEGER NOT NULL DEFAULT 0,
            cache_read_tokens      INTEGER NOT NULL DEFAULT 0,
            request_id             TEXT,
            duration_ms            INTEGER,
            pid                    INTEGER,
            created_at             TEXT NOT NULL,
            completed_at           TEXT,
            PRIMARY KEY (run_id, n)
        ) WITHOUT ROWID;

        CREATE TABLE tool_effects (
            run_id                 TEXT NOT NULL REFERENCES runs(id),
            tool_use_id            TEXT NOT NULL,
            step_n                 INTEGER NOT NULL,
            tool_name              TEXT NOT NULL,
            idempotency_key        TEXT,
            content                TEXT NOT NULL,
            is_error               INTEGER NOT NULL DEFAULT 0,
            created_at             TEXT NOT NULL,
            PRIMARY KEY (run_id, tool_use_id),
            FOREIGN KEY (run_id, step_n) REFERENCES steps(run_id, n)
        ) WITHOUT ROWID;

        CREATE TABLE tasks (
            id                     TEXT PRIMARY KEY,
            title                  TEXT NOT NULL,
            due                    TEXT,
            status                 TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open','done')),
            source_id              TEXT,
            notes                  TEXT,
            idempotency_key        TEXT NOT NULL UNIQUE,
            run_id                 TEXT REFERENCES runs(id),
            created_at             TEXT NOT NULL,
            done_at                TEXT
        );
        CREATE INDEX tasks_status ON tasks(status, due);

        CREATE TABLE events (
            run_id                 TEXT NOT NULL REFERENCES runs(id),
            seq                    INTEGER NOT NULL,
            kind                   TEXT NOT NULL,
            detail_json            TEXT NOT NULL DEFAULT '{}',
            pid                    INTEGER,
            host                   TEXT,
            at                     TEXT NOT NULL,
            PRIMARY KEY (run_id, seq)
        ) WITHOUT ROWID;
        """,
    ),
    (
        "0002_compactions",
        """
        CREATE TABLE compactions (
            run_id                 TEXT NOT NULL REFERENCES runs(id),
            seq                    INTEGER NOT NULL,
            before_step            INTEGER NOT NULL,
            through_step           INTEGER NOT NULL,
            summary_json           TEXT NOT NULL,
            tokens_before          INTEGER NOT NULL,
            tokens_after           INTEGER NOT NULL,
            created_at             TEXT NOT NULL,
            PRIMARY KEY (run_id, seq)
        ) WITHOUT ROWID;
        """,
    ),
    (
        # gc keeps a tombstone of each pruned run: the runs row stays (status, dates, token
        # totals), its step rows stay with their payloads blanked, and these say when and how.
        "0003_history",
        """
        ALTER TABLE runs ADD COLUMN pruned_at TEXT;
        ALTER TABLE runs ADD COLUMN redacted_at TEXT;
        """,
    ),
    (
        # A step keeps its response's stop_details (a refusal's category and explanation)
        # beside the response itself; older steps had them only in their response event.
        "0004_step_stop_details",
        """
        ALTER TABLE steps ADD COLUMN stop_details_json TEXT;
        UPDATE steps SET stop_details_json = (
            SELECT json_extract(e.detail_json, '$.stop_details') FROM events e
            WHERE e.run_id = steps.run_id AND e.kind = 'response_committed'
            AND json_extract(e.detail_json, '$.step') = steps.n
            AND json_type(e.detail_json, '$.stop_details') = 'object'
            ORDER BY e.seq DESC LIMIT 1
        );
        """,
    ),
    (
        # Which host wrote each step (a database shared by several machines); older steps
        # take the host their response event recorded.
        "0005_step_host",
        """
        ALTER TABLE steps ADD COLUMN host TEXT;
        UPDATE steps SET host = (
            SELECT e.host FROM events e
            WHERE e.run_id = steps.run_id AND e.kind = 'response_committed'
            AND json_extract(e.detail_json, '$.step') = steps.n
            ORDER BY e.seq DESC LIMIT 1
        );
        """,
    ),
    (
        # The events a step row already records (its response, its reads, its completion) are
        # no longer stored: the event log shows them from the step row, placed after the stored
        # event whose seq these hold (NULL: the step's own events are stored, as before 0006).
        "0006_step_log_anchors",
        """
        ALTER TABLE steps ADD COLUMN begun_after_seq INTEGER;
        ALTER TABLE steps ADD COLUMN completed_after_seq INTEGER;
        """,
    ),
    (
        # PostgreSQL's (a function for server-side checks, narrower run rows); SQLite checks each
        # write as it runs, in process, so it has nothing to add. Recorded all the same: both
        # backends keep one list.
        "0007_step_writes",
        "",
    ),
    (
        # The Message Batches path (dayflow.batching): each request submitted in a batch is
        # recorded with its batch the moment `create` answers, so a killed driver polls the
        # same batch again instead of paying again; a step answered from a batch says so
        # (`batch_id`), and its usage is priced at the batch rate.
        "0008_batches",
        """
        CREATE TABLE batch_requests (
            run_id                 TEXT NOT NULL REFERENCES runs(id),
            step_n                 INTEGER NOT NULL CHECK (step_n >= 1),
            batch_id               TEXT NOT NULL,
            custom_id              TEXT NOT NULL,
            digest                 TEXT NOT NULL,
            created_at             TEXT NOT NULL,
            PRIMARY KEY (run_id, step_n)
        ) WITHOUT ROWID;
        ALTER TABLE steps ADD COLUMN batch_id TEXT;
        CREATE INDEX steps_batched ON steps(run_id) WHERE batch_id IS NOT NULL;
        """,
    ),
    (
        # Profiles (issue 25): one person each, with their own runs, tasks and task keys. Rows
        # written before belong to the default profile (today's single user). The tasks table
        # is rebuilt (SQLite cannot change a UNIQUE constraint in place): a key is unique per
        # profile, so the same Message-ID in two people's mail is two tasks.
        "0009_profiles",
        """
        CREATE TABLE profiles (
            name                   TEXT PRIMARY KEY,
            config                 TEXT NOT NULL,
            tz                     TEXT NOT NULL,
            at                     TEXT NOT NULL,
            weekdays               TEXT NOT NULL,
            created_at             TEXT NOT NULL
        ) WITHOUT ROWID;
        ALTER TABLE runs ADD COLUMN profile TEXT NOT NULL DEFAULT 'default';
        CREATE INDEX runs_profile_day ON runs(profile, brief_date);
        CREATE TABLE tasks_0009 (
            id                     TEXT PRIMARY KEY,
            title                  TEXT NOT NULL,
            due                    TEXT,
            status                 TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open','done')),
            source_id              TEXT,
            notes                  TEXT,
            idempotency_key        TEXT NOT NULL,
            run_id                 TEXT REFERENCES runs(id),
            created_at             TEXT NOT NULL,
            done_at                TEXT,
            profile                TEXT NOT NULL DEFAULT 'default',
            UNIQUE (profile, idempotency_key)
        );
        INSERT INTO tasks_0009 (id, title, due, status, source_id, notes, idempotency_key,
            run_id, created_at, done_at)
            SELECT id, title, due, status, source_id, notes, idempotency_key, run_id,
            created_at, done_at FROM tasks ORDER BY rowid;
        DROP TABLE tasks;
        ALTER TABLE tasks_0009 RENAME TO tasks;
        CREATE INDEX tasks_status ON tasks(profile, status, due);
        """,
    ),
    (
        # `runs` lists a profile's newest runs first: an index in that order lets a page of 20
        # stop after 20 rows (with runs_profile_day alone, every run of the profile was read,
        # its step counts worked out, then sorted: 0.5 s at 10,000 runs).
        "0010_runs_by_profile",
        """
        CREATE INDEX runs_profile_created ON runs(profile, created_at);
        """,
    ),
    (
        # Which rule refused a call is data saved with its effect (issue 33.3), not a prefix of
        # its text matched when counting: the task cap's refusals written before this are
        # marked by the same match the count made (LIKE, ASCII case-insensitive here).
        "0011_effect_refusals",
        """
        ALTER TABLE tool_effects ADD COLUMN refused_by TEXT;
        UPDATE tool_effects SET refused_by = 'task_cap' WHERE tool_name = 'create_task'
            AND is_error = 1 AND content LIKE 'Error: task cap reached%';
        """,
    ),
    (
        # A task carries its evidence (issue 34): the ask in the sender's words that
        # create_task found in the message, and whether its due date was stated or implied
        # ('none': no due date). Tasks filed before this have neither (NULL: not recorded).
        "0012_task_evidence",
        """
        ALTER TABLE tasks ADD COLUMN evidence TEXT;
        ALTER TABLE tasks ADD COLUMN due_kind TEXT
            CHECK (due_kind IS NULL OR due_kind IN ('stated','implied','none'));
        """,
    ),
]


def _applied(conn: sqlite3.Connection) -> list[str]:
    return [r[0] for r in conn.execute("SELECT name FROM schema_migrations ORDER BY rowid")]


def migrate(
    conn: sqlite3.Connection,
    path: str,
    transaction: Callable[[], AbstractContextManager[None]],
) -> None:
    """Bring the schema up to date, or refuse a file that is not (or no longer) ours."""
    try:
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"{path}: not a Dayflow database ({exc})") from None
    if app_id not in (0, APPLICATION_ID) or (tables and "schema_migrations" not in tables):
        raise StoreError(f"{path}: not a Dayflow database (use --db to pick another file)")
    known = [name for name, _ in MIGRATIONS]
    if "schema_migrations" in tables:
        applied = _applied(conn)
        unknown = [n for n in applied if n not in known]
        if unknown:
            raise StoreError(
                f"{path}: written by a newer Dayflow (schema {unknown[-1]}); upgrade dayflow"
            )
        if applied == known:
            return
    for name, sql in MIGRATIONS:
        with transaction():
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                "name TEXT PRIMARY KEY, applied_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP)"
            )
            if conn.execute("SELECT 1 FROM schema_migrations WHERE name = ?", (name,)).fetchone():
                continue
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            for statement in _statements(sql):
                conn.execute(statement)
            conn.execute("INSERT INTO schema_migrations (name) VALUES (?)", (name,))


def schema_version(conn: sqlite3.Connection) -> str | None:
    """The name of the newest applied migration."""
    rows = _applied(conn)
    return rows[-1] if rows else None


def _statements(sql: str) -> list[str]:
    # executescript() would COMMIT our transaction; run the statements one by one instead.
    return [s.strip() for s in sql.split(";") if s.strip()]
