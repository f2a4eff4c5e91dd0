from __future__ import annotations

import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from dayflow.clock import FixedClock
from dayflow.errors import LeaseLost, RunBusy, RunNotFound, StoreError
from dayflow.migrations import MIGRATIONS
from dayflow.models import INTERRUPTED, RUNNING
from dayflow.store import Owner, Store
from tests.scripted import text, turn
from tests.test_agent import _new_run


def _schema(path: Path) -> list[tuple[str, str]]:
    conn = sqlite3.connect(path)
    rows = conn.execute(
        "SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY name"
    ).fetchall()
    conn.close()
    return rows


def test_blank_database_gets_every_migration_and_owner_only_permissions(tmp_path: Path) -> None:
    db_path = tmp_path / "new-dir" / "dayflow.db"
    with Store(db_path) as s:
        assert s.schema_version() == MIGRATIONS[-1][0]
        s.add_event(s.create_run(_new_run())[0].id, "x")  # the WAL and its index exist now
        for f in (db_path, Path(f"{db_path}-wal"), Path(f"{db_path}-shm")):
            assert stat.S_IMODE(f.stat().st_mode) == 0o600, f
    assert stat.S_IMODE(db_path.parent.stat().st_mode) == 0o700


def test_reopening_is_idempotent_and_keeps_the_schema(db_path: Path) -> None:
    Store(db_path).close()
    first = _schema(db_path)
    Store(db_path).close()
    assert _schema(db_path) == first


def test_a_file_that_is_not_a_database_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "notes.db"
    bad.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(StoreError, match="not a"):
        Store(bad)


def test_another_applications_database_is_refused_untouched(tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE photos (id INTEGER)")
    conn.commit()
    conn.close()
    before = _schema(other)
    with pytest.raises(StoreError, match="not a Dayflow database"):
        Store(other)
    assert _schema(other) == before


def test_a_database_from_a_newer_dayflow_is_refused(db_path: Path) -> None:
    Store(db_path).close()
    conn = sqlite3.connect(db_path)
    conn.execute("INSERT INTO schema_migrations (name) VALUES ('9999_future')")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="newer Dayflow"):
        Store(db_path)


def test_wal_and_foreign_keys_are_on(store: Store) -> None:
    assert store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store.conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1


def test_unique_idempotency_key_is_enforced_by_the_database(store: Store) -> None:
    run, _ = store.create_run(_new_run())
    a, created_a = store.create_task(title="A", idempotency_key="email:m1", run_id=run.id)
    b, created_b = store.create_task(title="B", idempotency_key="email:m1", run_id=run.id)
    assert (created_a, created_b) == (True, False) and a.id == b.id and b.title == "A"
    with pytest.raises(sqlite3.IntegrityError):
        store.conn.execute(
            "INSERT INTO tasks (id, title, idempotency_key, created_at) VALUES ('x','x',?,'t')",
            ("email:m1",),
        )


def test_run_ids_resolve_by_unique_prefix(store: Store) -> None:
    run, _ = store.create_run(_new_run())
    assert store.find_run(run.id[:4]).id == run.id
    with pytest.raises(RunNotFound):
        store.find_run("ffffffffffff0")
    with pytest.raises(RunNotFound, match="not a run id"):
        store.find_run("zz'; DROP TABLE runs; --")


def test_ambiguous_prefix_is_an_error(store: Store) -> None:
    a, _ = store.create_run(_new_run())
    b, _ = store.create_run(_new_run())
    store.conn.execute("PRAGMA foreign_keys = OFF")  # rename the runs to share a prefix
    for old, new in ((a.id, "abc111111111"), (b.id, "abc222222222")):
        store.conn.execute("UPDATE runs SET id = ? WHERE id = ?", (new, old))
    with pytest.raises(RunNotFound, match="several runs"):
        store.find_run("abc")


def test_a_run_whose_process_died_is_interrupted_and_can_be_claimed(
    db_path: Path, clock: FixedClock
) -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    dead = Owner(child.pid, Owner.current().host, None)
    with Store(db_path, clock=clock, owner=dead) as ghost:
        run, _ = ghost.create_run(_new_run())
    with Store(db_path, clock=clock) as s:
        assert s.get_run(run.id).status == INTERRUPTED
        s.claim(run.id)
        assert s.get_run(run.id).status == RUNNING
        assert "lease_taken_over" in [e.kind for e in s.events(run.id)]


def test_a_run_driven_by_a_live_process_cannot_be_claimed(db_path: Path, clock: FixedClock) -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        live = Owner(child.pid, Owner.current().host, None)
        with Store(db_path, clock=clock, owner=live) as other:
            run, _ = other.create_run(_new_run())
        with Store(db_path, clock=clock) as s, pytest.raises(RunBusy) as err:
            s.claim(run.id)
        assert f"is being driven by pid {child.pid} on host" in str(err.value)
    finally:
        child.kill()
        child.wait()


def test_an_expired_lease_on_another_host_can_be_taken_over(
    db_path: Path, clock: FixedClock
) -> None:
    remote = Owner(12345, "some-other-host", None)
    with Store(db_path, clock=clock, owner=remote) as other:
        run, _ = other.create_run(_new_run())
    with Store(db_path, clock=clock) as s:
        with pytest.raises(RunBusy, match="some-other-host"):
            s.claim(run.id)
        clock.advance(16 * 60)
        assert s.get_run(run.id).status == INTERRUPTED
        s.claim(run.id)


def test_a_writer_whose_lease_was_taken_changes_nothing(store: Store) -> None:
    run, token = store.create_run(_new_run())
    store.conn.execute("UPDATE runs SET lease_token = 'someone-else' WHERE id = ?", (run.id,))
    with pytest.raises(LeaseLost):
        store.begin_step(run.id, token, 1, turn(text("x")), 1)
    assert store.steps(run.id) == []
    assert store.get_run(run.id).usage.total == 0


def test_step_and_run_totals_are_written_in_one_transaction(store: Store) -> None:
    run, token = store.create_run(_new_run())
    store.begin_step(run.id, token, 1, turn(text("a"), usage=(10, 2), cache=(3, 4)), 1)
    store.complete_step(run.id, token, 1, None)
    store.begin_step(run.id, token, 2, turn(text("b"), usage=(20, 5)), 1)
    again = store.get_run(run.id)
    assert again.usage.total_input == 10 + 3 + 4 + 20 and again.usage.output_tokens == 7
    with pytest.raises(sqlite3.IntegrityError):
        store.begin_step(run.id, token, 2, turn(text("dup")), 1)
    assert store.get_run(run.id).usage == again.usage  # the failed write added nothing


def test_events_are_numbered_in_order_per_run(store: Store) -> None:
    run, token = store.create_run(_new_run())
    store.add_event(run.id, "a")
    store.add_event(run.id, "b")
    assert [(e.seq, e.kind) for e in store.events(run.id)] == [
        (1, "run_started"),
        (2, "a"),
        (3, "b"),
    ]


def test_latest_unfinished_skips_done_and_live_runs(store: Store) -> None:
    run, token = store.create_run(_new_run())
    assert store.latest_unfinished() is None  # driven by this live process
    store.release(run.id, token, INTERRUPTED, "test")
    found = store.latest_unfinished()
    assert found is not None and found.id == run.id


def test_a_finished_run_cannot_be_claimed_again(store: Store) -> None:
    from dayflow.errors import RunAlreadyDone

    run, token = store.create_run(_new_run())
    store.begin_step(run.id, token, 1, turn(text("brief")), 1)
    store.complete_step(run.id, token, 1, None, final_text="brief")
    with pytest.raises(RunAlreadyDone):
        store.claim(run.id)
    assert store.get_run(run.id).status == "done"
