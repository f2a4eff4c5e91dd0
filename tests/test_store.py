from __future__ import annotations

import json
import re
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from dayflow.clock import FixedClock
from dayflow.errors import LeaseLost, RunBusy, RunNotFound, StoreError
from dayflow.frozen import replace
from dayflow.models import INTERRUPTED, RUNNING, Limits, RunSettings
from dayflow.store import (
    BatchItem,
    DatabaseError,
    IntegrityError,
    Lease,
    Owner,
    Store,
    open_store,
    postgres_schema,
    sqlite_schema,
)
from dayflow.store.sqlite_schema import MIGRATIONS
from tests.conftest import (
    Db,
    db_rows,
    expire_leases,
    foreign_sqlite,
    is_pg,
    undo_profiles,
    undo_refusals,
)
from tests.scripted import text, tool_use, turn
from tests.test_agent import _new_run


def _schema(target: Path | str) -> list[tuple[str, ...]]:
    if is_pg(target):
        sql = (
            "SELECT table_name, column_name, data_type, column_default "
            "FROM information_schema.columns WHERE table_schema = current_schema() "
            "ORDER BY table_name, column_name"
        )
    else:
        sql = "SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY name"
    return [tuple(r) for r in db_rows(target, sql)]


def test_blank_database_gets_every_migration_and_owner_only_permissions(tmp_path: Path) -> None:
    db_path = tmp_path / "new-dir" / "dayflow.db"
    with open_store(db_path) as s:
        assert s.upkeep.schema_version() == MIGRATIONS[-1][0]
        s.events.add(s.runs.create(_new_run())[0].id, "x")  # the WAL and its index exist now
        for f in (db_path, Path(f"{db_path}-wal"), Path(f"{db_path}-shm")):
            assert stat.S_IMODE(f.stat().st_mode) == 0o600, f
    assert stat.S_IMODE(db_path.parent.stat().st_mode) == 0o700


def test_reopening_is_idempotent_and_keeps_the_schema(db_path: Path) -> None:
    open_store(db_path).close()
    first = _schema(db_path)
    assert any(r[0] == "runs" for r in first)
    open_store(db_path).close()
    assert _schema(db_path) == first


def test_a_file_that_is_not_a_database_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "notes.db"
    bad.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(StoreError, match="not a"):
        open_store(bad)


def test_another_applications_database_is_refused_untouched(tmp_path: Path) -> None:
    other = foreign_sqlite(tmp_path / "other.db", "photos (id INTEGER)")
    before = _schema(other)
    with pytest.raises(StoreError, match="not a Dayflow database"):
        open_store(other)
    assert _schema(other) == before


def test_a_database_from_a_newer_dayflow_is_refused(db_path: Path) -> None:
    open_store(db_path).close()
    with Db(db_path) as db:
        db.run("INSERT INTO schema_migrations (name) VALUES ('9999_future')")
    with pytest.raises(StoreError, match="newer Dayflow"):
        open_store(db_path)


def test_wal_and_foreign_keys_are_on(sqlite_path: Path) -> None:
    with open_store(sqlite_path) as store:
        assert store.db.execute("PRAGMA journal_mode").fetchall()[0][0] == "wal"
        assert store.db.execute("PRAGMA foreign_keys").fetchall()[0][0] == 1


def test_unique_idempotency_key_is_enforced_by_the_database(store: Store) -> None:
    run, _ = store.runs.create(_new_run())
    a, created_a = store.tasks.create(title="A", idempotency_key="email:m1", run_id=run.id)
    b, created_b = store.tasks.create(title="B", idempotency_key="email:m1", run_id=run.id)
    assert (created_a, created_b) == (True, False) and a.id == b.id and b.title == "A"
    with pytest.raises(IntegrityError):
        store.db.execute(
            "INSERT INTO tasks (id, title, idempotency_key, created_at) VALUES ('x','x',?,'t')",
            ("email:m1",),
        )


def test_tasks_under_a_key_prefix_are_deleted_on_either_engine(store: Store) -> None:
    """`tasks --clear-sample` deletes the sample's tasks and no other (PostgreSQL once refused
    the statement: substr() takes an integer, and ints are sent as int8)."""
    run, _ = store.runs.create(_new_run())
    for key in ("sample:m1", "sample:m2", "mail:sample:x", "samples:m3"):
        store.tasks.create(title=key, idempotency_key=key, run_id=run.id)
    assert store.tasks.delete_with_key_prefix("sample:") == 2
    assert sorted(t.idempotency_key for t in store.tasks.list(include_done=True)) == [
        "mail:sample:x",
        "samples:m3",
    ]


def test_a_refused_statement_is_the_stores_error_on_either_engine(store: Store) -> None:
    """The driver's error (sqlite3's or psycopg's) comes out as Dayflow's `DatabaseError`, its
    first line kept and the driver's exception chained: one line, exit 4, on both engines."""
    with pytest.raises(DatabaseError, match=r"^database problem: .*no_such_table") as refused:
        store.db.execute("SELECT * FROM no_such_table")
    assert not isinstance(refused.value, IntegrityError)
    assert refused.value.exit_code == 4 and "no_such_table" in refused.value.detail
    assert refused.value.__cause__ is not None
    assert type(refused.value.__cause__).__module__.split(".")[0] in ("sqlite3", "psycopg")
    with pytest.raises(IntegrityError, match="^database constraint: "):
        store.db.execute("INSERT INTO steps (run_id, n) VALUES ('no such run', 1)")


def test_both_engines_list_the_same_migrations_in_the_same_order() -> None:
    """A migration added to one engine's schema only would leave the other's stores a version
    behind (and `doctor` reading a schema name the other never records)."""
    sqlite_names = [name for name, _ in sqlite_schema.MIGRATIONS]
    postgres_names = [name for name, _ in postgres_schema.MIGRATIONS]
    assert sqlite_names == postgres_names
    assert len(set(sqlite_names)) == len(sqlite_names)
    assert sqlite_names == sorted(sqlite_names)


def test_run_ids_resolve_by_unique_prefix(store: Store) -> None:
    run, _ = store.runs.create(_new_run())
    assert store.runs.find(run.id[:4]).id == run.id
    with pytest.raises(RunNotFound):
        store.runs.find("ffffffffffff0")
    with pytest.raises(RunNotFound, match="not a run id"):
        store.runs.find("zz'; DROP TABLE runs; --")


def test_ambiguous_prefix_is_an_error(store: Store) -> None:
    a, _ = store.runs.create(_new_run())
    b, _ = store.runs.create(_new_run())
    # Rename the runs to share a prefix, with foreign keys off.
    if is_pg(store.upkeep.location):
        store.db.execute("SET session_replication_role = replica")
    else:
        store.db.execute("PRAGMA foreign_keys = OFF")
    for old, new in ((a.id, "abc111111111"), (b.id, "abc222222222")):
        store.db.execute("UPDATE runs SET id = ? WHERE id = ?", (new, old))
    with pytest.raises(RunNotFound, match="several runs"):
        store.runs.find("abc")


@pytest.mark.slow  # spawns a process
def test_a_run_whose_process_died_is_interrupted_and_can_be_claimed(
    db_path: Path, clock: FixedClock
) -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    dead = Owner(child.pid, Owner.current().host, None)
    with open_store(db_path, clock=clock, owner=dead) as ghost:
        run, _ = ghost.runs.create(_new_run())
    with open_store(db_path, clock=clock) as s:
        assert s.runs.get(run.id).status == INTERRUPTED
        s.leases.claim(run.id)
        assert s.runs.get(run.id).status == RUNNING
        assert "lease_taken_over" in [e.kind for e in s.events.of(run.id)]


@pytest.mark.slow  # spawns a process
def test_a_run_driven_by_a_live_process_cannot_be_claimed(db_path: Path, clock: FixedClock) -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        live = Owner(child.pid, Owner.current().host, None)
        with open_store(db_path, clock=clock, owner=live) as other:
            run, _ = other.runs.create(_new_run())
        with open_store(db_path, clock=clock) as s, pytest.raises(RunBusy) as err:
            s.leases.claim(run.id)
        assert f"is being driven by pid {child.pid} on host" in str(err.value)
    finally:
        child.kill()
        child.wait()


def test_an_expired_lease_on_another_host_can_be_taken_over(
    db_path: Path, clock: FixedClock
) -> None:
    remote = Owner(12345, "some-other-host", None)
    with open_store(db_path, clock=clock, owner=remote) as other:
        run, _ = other.runs.create(_new_run())
    with open_store(db_path, clock=clock) as s:
        with pytest.raises(RunBusy, match="some-other-host"):
            s.leases.claim(run.id)
        expire_leases(db_path, clock)
        assert s.runs.get(run.id).status == INTERRUPTED
        s.leases.claim(run.id)


def test_a_writer_whose_lease_was_taken_changes_nothing(store: Store) -> None:
    run, lease = store.runs.create(_new_run())
    store.db.execute("UPDATE runs SET lease_token = 'someone-else' WHERE id = ?", (run.id,))
    with pytest.raises(LeaseLost):
        store.steps.begin(lease, 1, turn(text("x")), 1)
    assert store.steps.of(run.id) == []
    assert store.runs.get(run.id).usage.total == 0


def test_step_and_run_totals_are_written_in_one_transaction(store: Store) -> None:
    run, lease = store.runs.create(_new_run())
    store.steps.begin(lease, 1, turn(text("a"), usage=(10, 2), cache=(3, 4)), 1)
    store.steps.complete(lease, 1, None)
    store.steps.begin(lease, 2, turn(text("b"), usage=(20, 5)), 1)
    again = store.runs.get(run.id)
    assert again.usage.total_input == 10 + 3 + 4 + 20 and again.usage.output_tokens == 7
    with pytest.raises(IntegrityError):
        store.steps.begin(lease, 2, turn(text("dup")), 1)
    assert store.runs.get(run.id).usage == again.usage  # the failed write added nothing


def test_events_are_numbered_in_order_per_run(store: Store) -> None:
    run, lease = store.runs.create(_new_run())
    store.events.add(run.id, "a")
    store.events.add(run.id, "b")
    assert [(e.seq, e.kind) for e in store.events.of(run.id)] == [
        (1, "run_started"),
        (2, "a"),
        (3, "b"),
    ]


def test_latest_unfinished_skips_done_and_live_runs(store: Store) -> None:
    run, lease = store.runs.create(_new_run())
    assert store.runs.latest_unfinished() is None  # driven by this live process
    store.leases.release(lease, INTERRUPTED, "test")
    found = store.runs.latest_unfinished()
    assert found is not None and found.id == run.id


def test_a_finished_run_cannot_be_claimed_again(store: Store) -> None:
    from dayflow.errors import RunAlreadyDone

    run, lease = store.runs.create(_new_run())
    store.steps.begin(lease, 1, turn(text("brief")), 1)
    store.steps.complete(lease, 1, None, final_text="brief")
    with pytest.raises(RunAlreadyDone):
        store.leases.claim(run.id)
    assert store.runs.get(run.id).status == "done"


# ------------------------------------------------------------------------------ the face


def test_a_postgresql_target_without_its_backend_is_one_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the PostgreSQL backend cannot be imported, a postgresql:// target is refused with
    a StoreError (exit 4) naming it, and nothing is created on disk, even from the CLI, whose
    path option folds the URL's double slash."""
    from dayflow.store import is_postgres_target
    from tests.harness import invoke

    monkeypatch.setitem(sys.modules, "dayflow.store.postgres", None)  # import fails
    with pytest.raises(StoreError, match="PostgreSQL needs the psycopg driver"):
        open_store("postgresql://postgres@127.0.0.1:5432/test")
    assert is_postgres_target(Path("postgresql://u@h/db")) and not is_postgres_target("pg.db")
    res = invoke(tmp_path / "unused.db", lambda *a: None, "runs", "--db", "postgresql://h/db")
    assert res.code == 4 and "pip install 'dayflow[postgres]'" in res.err
    assert res.err.count("\n") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_shared_sql_translates_to_the_format_paramstyle_outside_quotes() -> None:
    from dayflow.store.sql import qmark_to_format

    sql = "SELECT '?', x FROM t WHERE a = ? AND b LIKE ? ESCAPE '\\' AND c = '%'"
    assert qmark_to_format(sql) == (
        "SELECT '?', x FROM t WHERE a = %s AND b LIKE %s ESCAPE '\\' AND c = '%%'"
    )


def test_no_module_outside_the_store_package_speaks_sql() -> None:
    """The store's face is the only way to the rows: no statement text, no connection."""
    root = Path(__file__).resolve().parents[1] / "dayflow"
    sql = re.compile(
        r"\b(conn|db|cur|cursor)\.execute\(|\.conn\b"
        r"|\b(SELECT|INSERT INTO|UPDATE \w+ SET|DELETE FROM)\b"
    )
    offenders = [
        f"{path.relative_to(root)}:{n}"
        for path in sorted(root.rglob("*.py"))
        if "store" not in path.relative_to(root).parts[:1]
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if sql.search(line)
    ]
    assert offenders == []


def test_a_step_comes_back_with_its_stop_details_decoded(store: Store) -> None:
    run, lease = store.runs.create(_new_run())
    details = {"type": "refusal", "category": "cyber", "explanation": "no"}
    refusal = replace(turn(text("I can't")), stop_reason="refusal", stop_details=details)
    store.steps.begin(lease, 1, refusal, 1)
    step = store.steps.last(run.id)
    assert step is not None and step.stop_details == details
    assert step.assistant == [{"type": "text", "text": "I can't"}]


def test_an_upgraded_database_finds_stop_details_its_events_kept(db_path: Path) -> None:
    """Before 0004 a step's stop_details lived only in its response event: the migration
    copies them to the step, so a pending refusal resumed after an upgrade still explains."""
    details = {"type": "refusal", "category": "cyber", "explanation": "no"}
    with open_store(db_path) as s:
        run, lease = s.runs.create(_new_run())
        refusal = replace(turn(text("no")), stop_reason="refusal", stop_details=details)
        s.steps.begin(lease, 1, refusal, 1)
        s.steps.complete(lease, 1, None, discard=True)
        s.steps.begin(lease, 2, turn(text("plain")), 1)
    old = json.dumps({"step": 1, "stop_reason": "refusal", "stop_details": details})
    undo_profiles(db_path)
    with Db(db_path) as db:  # back to the schema (and the events) before 0004
        for n, seq in ((1, 2), (2, 3)):
            db.run(
                "INSERT INTO events (run_id, seq, kind, detail_json, pid, host, at) "
                "VALUES (?, ?, 'response_committed', ?, ?, ?, '2026-11-05T08:00:00.000+00:00')",
                run.id,
                seq,
                old if n == 1 else json.dumps({"step": 2, "stop_reason": "end_turn"}),
                s.owner.pid,
                s.owner.host,
            )
        db.run("DROP INDEX steps_batched")  # 0008
        db.run("DROP TABLE batch_requests")
        for column in (
            "stop_details_json",
            "host",
            "begun_after_seq",
            "completed_after_seq",
            "batch_id",
        ):
            db.run(f"ALTER TABLE steps DROP COLUMN {column}")
        db.run("DELETE FROM schema_migrations WHERE name >= '0004'")
    with open_store(db_path) as s:
        assert [step.stop_details for step in s.steps.of(run.id)] == [details, None]
        assert [step.host for step in s.steps.of(run.id)] == [s.owner.host] * 2  # from the events
        assert s.upkeep.schema_version() == s.upkeep.latest_schema()


def test_run_settings_round_trip_and_old_rows_take_the_defaults(store: Store) -> None:
    settings = RunSettings(tz="Asia/Tokyo", inbox="/x/inbox.json", sample="large", compact_at=0)
    assert RunSettings.from_json(settings.to_json()) == settings
    old = RunSettings.from_json({"tz": None, "inbox": None, "newer_key": 1})
    assert old == RunSettings()
    run, _ = store.runs.create(replace(_new_run(), settings=settings))
    assert store.runs.get(run.id).settings == settings


def test_every_write_of_a_driver_is_fenced_by_its_lease(store: Store) -> None:
    run, lease = store.runs.create(_new_run())
    store.steps.begin(lease, 1, turn(text("x")), 1)
    stale = Lease(run.id, "not-the-token")
    writes = [
        lambda: store.steps.complete(stale, 1, None),
        lambda: store.steps.save_effect(stale, 1, "k", "create_task", lambda: ("{}", False)),
        lambda: store.runs.update_limits(stale, Limits(max_steps=99)),
        lambda: store.leases.release(stale, INTERRUPTED),
        lambda: store.steps.add_compaction(
            stale,
            before_step=2,
            through_step=1,
            summary={"role": "user", "content": "s"},
            tokens_before=2,
            tokens_after=1,
        ),
    ]
    for write in writes:
        with pytest.raises(LeaseLost):
            write()
    assert store.runs.get(run.id).max_steps == _new_run().max_steps
    assert store.steps.effects(run.id) == [] and store.steps.latest_compaction(run.id) is None
    assert [s.state for s in store.steps.of(run.id)] == ["pending"]


@pytest.mark.parametrize(
    "url",
    ["postgresql:///db?host=/nonexistent", "postgres:", "POSTGRESQL://127.0.0.1:1/x"],
)
def test_a_postgresql_url_reaches_the_backend_as_written(tmp_path: Path, url: str) -> None:
    """However odd the URL, the CLI hands it to the PostgreSQL backend unfolded (a Path would
    turn `postgresql:///db` into `postgresql:/db`), fails in one line, and writes no file."""
    from tests.harness import invoke

    res = invoke(tmp_path / "unused.db", lambda *a: None, "runs", "--db", url)
    assert res.code == 4 and res.err.count("\n") == 1, res.err
    assert res.err.startswith(f"error: {url.split('?')[0]}")
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_a_second_process_opening_a_file_another_is_creating_waits_instead_of_failing(
    tmp_path: Path,
) -> None:
    """Two processes starting at once on a new file: while one holds the write lock on the
    still rollback-mode file, SQLite refuses the other's switch to WAL at once ("database is
    locked", no busy wait); opening waits it out instead of failing (seen in CI with two
    `brief --ensure-today` processes)."""
    import threading

    from dayflow.store.sqlite import connect

    path = tmp_path / "new.db"
    creator = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    creator.execute("BEGIN IMMEDIATE")
    creator.execute("CREATE TABLE scratch (x)")
    releaser = threading.Timer(0.3, lambda: creator.execute("COMMIT"))
    releaser.start()
    try:
        conn = connect(path)
    finally:
        releaser.join()
        creator.close()
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()


@pytest.mark.slow  # spawns a process
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_a_process_whose_name_is_not_ascii_is_still_seen_alive() -> None:
    """The kernel's process name (field 2 of /proc/PID/stat) is any bytes: a driver named
    `dayflöw` is still recognised, not an error."""
    from dayflow.store import process_alive, process_start

    code = (
        "import sys; open('/proc/self/comm', 'w').write('dayflöw'); print(1, flush=True); "
        "sys.stdin.read()"
    )
    child = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    try:
        assert child.stdout is not None and child.stdout.readline() == b"1\n"
        assert "dayfl" in Path(f"/proc/{child.pid}/comm").read_text(errors="replace")
        started = process_start(child.pid)
        assert started is not None and started.isdigit()
        assert process_alive(child.pid, started)
    finally:
        child.communicate(b"")
    assert not process_alive(child.pid, started)


def _reads_effect_and_brief(store: Store) -> str:
    """A run as the loop writes it: step 1 two reads (one failing), step 2 a saved effect and
    a read, step 3 the brief; returns the run id."""
    run, lease = store.runs.create(_new_run())
    store.steps.begin(lease, 1, turn(tool_use("read_inbox", {}, "r1"), tool_use("x", {}, "r2")), 1)
    reads = [("tool_executed", {"step": 1, "tool": "read_inbox", "ok": True})]
    reads.append(("tool_executed", {"step": 1, "tool": "x", "ok": False}))
    results: list[dict[str, Any]] = [
        {"type": "tool_result", "tool_use_id": "r1", "content": "[]"},
        {"type": "tool_result", "tool_use_id": "r2", "content": "Error: no", "is_error": True},
    ]
    store.steps.complete(lease, 1, results, events=reads, effects=False)
    two = turn(tool_use("create_task", {"title": "t"}, "c1"), tool_use("read_inbox", {}, "r3"))
    store.steps.begin(lease, 2, two, 1)
    store.steps.save_effect(lease, 2, "c1", "create_task", lambda: ('{"id": 1}', False))
    results = [
        {"type": "tool_result", "tool_use_id": "c1", "content": '{"id": 1}'},
        {"type": "tool_result", "tool_use_id": "r3", "content": "[]"},
    ]
    read = [("tool_executed", {"step": 2, "tool": "read_inbox", "ok": True})]
    store.steps.complete(lease, 2, results, events=read)
    store.steps.begin(lease, 3, turn(text("## Today")), 1)
    store.steps.complete(lease, 3, None, final_text="## Today")
    return run.id


def test_a_step_stores_no_event_its_row_records_and_the_log_still_shows_them(
    store: Store, store_target: Path | str
) -> None:
    """The response, the reads and the completion are shown from the step rows, in order and
    under the process that wrote them; only what no row records is stored as an event."""
    run_id = _reads_effect_and_brief(store)
    stored = db_rows(store_target, "SELECT kind FROM events ORDER BY seq")
    assert [r[0] for r in stored] == ["run_started", "tool_executed", "run_finished"]
    log = store.events.of(run_id)
    assert [(e.seq, e.kind, e.detail) for e in log] == [
        (1, "run_started", {"model": "scripted", "date": "2026-11-05"}),
        (2, "response_committed", {"step": 1}),
        (3, "tool_executed", {"step": 1, "tool": "read_inbox", "ok": True}),
        (4, "tool_executed", {"step": 1, "tool": "x", "ok": False}),
        (5, "step_committed", {"step": 1}),
        (6, "response_committed", {"step": 2}),
        (7, "tool_executed", {"step": 2, "tool": "create_task", "key": "c1", "ok": True}),
        (8, "tool_executed", {"step": 2, "tool": "read_inbox", "ok": True}),
        (9, "step_committed", {"step": 2}),
        (10, "response_committed", {"step": 3}),
        (11, "step_committed", {"step": 3}),
        (12, "run_finished", {"step": 3}),
    ]
    assert {(e.pid, e.host) for e in log} == {(store.owner.pid, store.owner.host)}


def test_a_log_written_before_0006_shows_each_event_once(
    store: Store, store_target: Path | str
) -> None:
    """Steps written before the step rows recorded their events (no anchors, every event
    stored) show exactly their stored events: nothing is drawn from the rows a second time."""
    run_id = _reads_effect_and_brief(store)
    shown = store.events.of(run_id)
    with Db(store_target) as db:  # as an older Dayflow left it
        db.run("DELETE FROM events WHERE run_id = ?", run_id)
        for e in shown:
            db.run(
                "INSERT INTO events (run_id, seq, kind, detail_json, pid, host, at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                run_id,
                e.seq,
                e.kind,
                json.dumps(e.detail),
                e.pid,
                e.host,
                e.at,
            )
        db.run("UPDATE steps SET begun_after_seq = NULL, completed_after_seq = NULL")
    assert store.events.of(run_id) == shown


def test_a_step_completed_by_a_resuming_process_is_shown_under_that_process(
    db_path: Path | str,
) -> None:
    """Process A writes the response and one effect, then dies; B takes the run over and
    completes the step: the reused result, the read run again and the completion are B's."""
    a, b = Owner(101, "host-a", None), Owner(202, "host-b", None)
    clock = FixedClock()
    with open_store(db_path, clock=clock, owner=a) as s:
        run, lease = s.runs.create(_new_run())
        two = turn(tool_use("create_task", {"title": "t"}, "c1"), tool_use("read_inbox", {}, "r"))
        s.steps.begin(lease, 1, two, 1)
        s.steps.save_effect(lease, 1, "c1", "create_task", lambda: ('{"id": 1}', False))
    expire_leases(db_path, clock)
    with open_store(db_path, clock=clock, owner=b) as s:
        lease = s.leases.claim(run.id)
        s.events.add(run.id, "run_resumed", {"steps": 0})
        results = [
            {"type": "tool_result", "tool_use_id": "c1", "content": '{"id": 1}'},
            {"type": "tool_result", "tool_use_id": "r", "content": "[]"},
        ]
        events = [
            ("tool_reused", {"step": 1, "tool": "create_task", "key": "c1"}),
            ("tool_executed", {"step": 1, "tool": "read_inbox", "ok": True}),
        ]
        s.steps.complete(lease, 1, results, events=events)
        log = [(e.kind, e.pid) for e in s.events.of(run.id)]
    assert log == [
        ("run_started", 101),
        ("response_committed", 101),
        ("tool_executed", 101),
        ("lease_taken_over", 202),
        ("run_resumed", 202),
        ("tool_reused", 202),
        ("tool_executed", 202),
        ("step_committed", 202),
    ]


def test_a_pruned_run_keeps_its_whole_log_without_details(store: Store) -> None:
    run_id = _reads_effect_and_brief(store)
    before = [e.kind for e in store.events.of(run_id)]
    assert store.archive.prune(run_id)
    after = store.events.of(run_id)
    assert [e.kind for e in after] == [*before, "run_pruned"]
    assert all(e.detail == {} for e in after[:-1])


def test_completing_a_step_that_is_not_pending_changes_nothing(store: Store) -> None:
    run, lease = store.runs.create(_new_run())
    store.steps.begin(lease, 1, turn(text("x")), 1)
    store.steps.complete(lease, 1, None)
    with pytest.raises(StoreError, match="step 1 is not pending"):
        store.steps.complete(lease, 1, [{"type": "tool_result", "tool_use_id": "a", "content": ""}])
    with pytest.raises(StoreError, match="step 2 is not pending"):
        store.steps.complete(lease, 2, None)
    assert [(s.n, s.state, s.tool_results) for s in store.steps.of(run.id)] == [
        (1, "complete", None)
    ]
    assert [e.kind for e in store.events.of(run.id)].count("step_committed") == 1


def test_a_batch_record_is_kept_once_per_step_and_the_first_one_wins(store: Store) -> None:
    run, _ = store.runs.create(_new_run())
    other, _ = store.runs.create(_new_run())
    items = [BatchItem(run.id, 1, f"{run.id}-1", "d1"), BatchItem(other.id, 1, "c2", "d2")]
    store.steps.record_batch("msgbatch_A", items)
    store.steps.record_batch("msgbatch_B", [BatchItem(run.id, 1, "again", "d9")])
    assert store.steps.batch_of(run.id, 1) == ("msgbatch_A", items[0])
    assert store.steps.batch_of(other.id, 1) == ("msgbatch_A", items[1])
    assert store.steps.batch_of(run.id, 2) is None


def test_a_step_answered_by_a_batch_is_marked_and_its_usage_counted_apart(store: Store) -> None:
    run, lease = store.runs.create(_new_run())
    store.steps.begin(lease, 1, replace(turn(tool_use("t1", "read_inbox")), batch_id="mb_1"), 5)
    store.steps.complete(lease, 1, [{"type": "tool_result", "tool_use_id": "t1", "content": ""}])
    store.steps.begin(lease, 2, turn(text("brief"), usage=(7, 3)), 5)
    steps = store.steps.of(run.id)
    assert [s.batch_id for s in steps] == ["mb_1", None]
    got = store.runs.get(run.id)
    assert got.batch_usage == steps[0].usage and got.usage == steps[0].usage + steps[1].usage


def test_a_runs_batched_usage_is_read_through_its_partial_index(tmp_path: Path) -> None:
    """`runs.get` runs before every model call: its batch sums must seek the partial index of
    batched steps, not read every step of the run (SQLite's planner took the primary key, and
    a 1,000-step run of 12 KB steps cost 17 ms a call instead of 0.3 ms)."""
    from dayflow.store.rows import run_select
    from dayflow.store.sqlite import SQLITE

    db_path = tmp_path / "plan.db"
    with open_store(db_path) as s:
        run, _ = s.runs.create(_new_run())
    conn = sqlite3.connect(db_path)
    try:
        plan = conn.execute(
            "EXPLAIN QUERY PLAN " + run_select(SQLITE) + " WHERE r.id = ?", (run.id,)
        ).fetchall()
    finally:
        conn.close()
    details = [str(row[-1]) for row in plan]
    assert sum("USING INDEX steps_batched" in d for d in details) == 4, details


_CAP_WORDS = "Error: task cap reached: this run may create at most 1 tasks; no task was created"


def test_a_refusal_is_counted_from_the_flag_saved_with_it_not_from_its_words(
    store: Store,
) -> None:
    """The task cap's note counted `LIKE 'Error: task cap reached%'`: a result that merely
    starts with those words is no refusal, and a refusal is one whatever it says."""
    run, lease = store.runs.create(_new_run())
    store.steps.begin(lease, 1, turn(tool_use("create_task", {"title": "x"}, "u1")), 1)
    save = store.steps.save_effect
    save(lease, 1, "u1", "create_task", lambda: (_CAP_WORDS, True))
    save(lease, 1, "u2", "create_task", lambda: ("Error: no", True, "task_cap"))
    save(lease, 1, "u3", "create_task", lambda: ("ok", False))
    assert store.steps.count_refused(run.id, "create_task", "task_cap") == 1
    assert store.steps.count_refused(run.id, "read_inbox", "task_cap") == 0


def test_an_upgraded_database_counts_its_old_cap_refusals_as_before(
    store_target: Path | str, clock: FixedClock
) -> None:
    """Rows written before 0011 have no flag: the migration marks those the old count matched
    (on each engine as its LIKE did), and the schema is then a blank database's."""
    with open_store(store_target, clock=clock) as s:
        blank = _schema(store_target)
        run, lease = s.runs.create(_new_run())
        s.steps.begin(lease, 1, turn(tool_use("create_task", {"title": "x"}, "u1")), 1)
        for key, name, content, is_error in (
            ("u1", "create_task", _CAP_WORDS, True),
            ("u2", "create_task", _CAP_WORDS, True),
            ("u3", "create_task", "Error: invalid arguments", True),
            ("u4", "create_task", "task cap reached, said a mail", False),
            ("u5", "read_inbox", _CAP_WORDS, True),
        ):

            def produce(saved: tuple[str, bool] = (content, is_error)) -> tuple[str, bool]:
                return saved

            s.steps.save_effect(lease, 1, key, name, produce)
    undo_refusals(store_target)  # as an older Dayflow wrote them: no flag column at all
    with open_store(store_target, clock=clock) as s:
        assert s.upkeep.schema_version() == s.upkeep.latest_schema()
        assert s.steps.count_refused(run.id, "create_task", "task_cap") == 2
        assert s.steps.count_refused(run.id, "read_inbox", "task_cap") == 0
    assert _schema(store_target) == blank
