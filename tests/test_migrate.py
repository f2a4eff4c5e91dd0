"""`dayflow migrate --to`: a SQLite history copied verbatim, idempotently, and resumed there."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import pytest

from dayflow.providers.offline import OfflineModel
from dayflow.store import open_store
from dayflow.store.transfer import TABLES
from tests.conftest import db_rows, is_pg
from tests.fakeapi import FakeAPI, responder_from_client
from tests.harness import invoke
from tests.test_crash import DATE, dayflow

_ORDER = {
    "runs": "id",
    "steps": "run_id, n",
    "tool_effects": "run_id, tool_use_id",
    "tasks": "id",
    "events": "run_id, seq",
    "compactions": "run_id, seq",
    "batch_requests": "run_id, step_n",
    "profiles": "name",
}


def _offline(*a: Any) -> OfflineModel:
    return OfflineModel()


def _history(db: Path) -> None:
    """Two finished briefs (one long enough to compact), a fork, a crashed one, a done task."""
    assert invoke(db, _offline, "brief").code == 0
    large = ("--sample", "large", "--compact-at", "6000", "--new")
    assert invoke(db, _offline, "brief", *large).code == 0
    first = json.loads(invoke(db, _offline, "runs", "--json").out)[-1]["id"]
    assert invoke(db, _offline, "fork", first, "--from-step", "1").code == 0
    assert invoke(db, _offline, "brief", "--new", "--crash-after", "1").code == 70
    task = json.loads(invoke(db, _offline, "tasks", "--json").out)[0]["id"]
    assert invoke(db, _offline, "tasks", "--done", task).code == 0


def _tables(target: Path | str) -> dict[str, list[dict[str, Any]]]:
    out = {}
    for table in TABLES:
        rows = db_rows(target, f"SELECT * FROM {table} ORDER BY {_ORDER[table]}")
        out[table] = [{k: r[k] for k in r.keys() if k != "rowid"} for r in rows]
    return out


@pytest.fixture
def dest(store_target: Path | str, tmp_path: Path) -> Path | str:
    """Where to migrate to: a PostgreSQL schema, or (the SQLite half) another file."""
    return store_target if is_pg(store_target) else tmp_path / "copy.db"


def test_migrate_copies_every_row_verbatim_and_again_changes_nothing(
    tmp_path: Path, dest: Path | str
) -> None:
    source = tmp_path / "dayflow.db"
    _history(source)
    before = _tables(source)
    assert before["compactions"] and before["tool_effects"] and len(before["runs"]) == 4

    first = invoke(source, _offline, "migrate", "--to", str(dest), "--json")
    assert first.code == 0, first.err
    report = json.loads(first.out)
    assert report["copied"] == {t: len(before[t]) for t in TABLES}
    assert _tables(dest) == before  # every column of every row, as stored
    assert "s3cret" not in report["to"]

    again = invoke(source, _offline, "migrate", "--to", str(dest))
    assert again.code == 0 and "(nothing new)" in again.err
    assert _tables(dest) == before
    # The copy is a working history: the same runs, tasks and totals through the CLI.
    for command in (("runs", "--json"), ("tasks", "--json", "--all")):
        here = invoke(source, _offline, *command)
        there = invoke(dest, _offline, *command)
        assert here.code == 0 and here.out == there.out, command


def test_migrate_refuses_a_run_being_driven(tmp_path: Path, dest: Path | str) -> None:
    from dayflow.store import open_store
    from tests.test_agent import _new_run

    source = tmp_path / "dayflow.db"
    with open_store(source) as s:
        run, _ = s.runs.create(_new_run())  # claimed by this (live) process
        res = invoke(source, _offline, "migrate", "--to", str(dest))
    assert res.code == 5 and f"run {run.id} is being driven" in res.err
    assert res.err.count("\n") == 1


def test_migrate_onto_itself_is_a_usage_error_and_from_nothing_a_clear_one(
    tmp_path: Path,
) -> None:
    source = tmp_path / "dayflow.db"
    res = invoke(source, _offline, "migrate", "--to", str(tmp_path / "copy.db"))
    assert res.code == 4 and "no Dayflow database at" in res.err
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # the copy not created either
    open_store(source).close()
    res = invoke(source, _offline, "migrate", "--to", str(source))
    assert res.code == 2 and "same store" in res.err


@pytest.mark.slow
def test_a_run_killed_on_sqlite_resumes_on_the_copy_with_the_same_request_bytes(
    tmp_path: Path, dest: Path | str
) -> None:
    """SIGKILL a brief on SQLite after step 1, migrate, resume against the copy: every request
    the resumed process sends equals, byte for byte, the request the uncrashed run sent."""
    clean_db, source = tmp_path / "clean.db", tmp_path / "dayflow.db"
    with FakeAPI(responder=responder_from_client(OfflineModel())) as api:
        assert dayflow(clean_db, "brief", "--date", DATE, api=api).code == 0
        clean = [r.body for r in api.message_requests]
    with FakeAPI(responder=responder_from_client(OfflineModel())) as api:
        kill = "after_complete:1"
        killed = dayflow(source, "brief", "--date", DATE, api=api, DAYFLOW_KILL_AT=kill)
        assert killed.code == -signal.SIGKILL
        moved = dayflow(source, "migrate", "--to", str(dest))
        assert moved.code == 0, moved.err
        resumed = dayflow(dest, "resume", api=api)
        assert resumed.code == 0, resumed.err
        sent = [r.body for r in api.message_requests]
    assert sent == clean  # step 1 before the kill, the rest from the copy
    runs = json.loads(dayflow(dest, "runs", "--json").out)
    assert [r["status"] for r in runs] == ["done"]
    assert json.loads(dayflow(source, "runs", "--json").out)[0]["status"] == "interrupted"
