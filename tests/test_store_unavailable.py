"""A store that fails under a running brief (a full disk, a server gone): the run stops with one
line naming it and the way on, nothing committed is lost, and `resume` finishes it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dayflow.store import DatabaseError
from dayflow.store.steps import Steps
from tests.conftest import db_rows
from tests.harness import invoke
from tests.scripted import ScriptedModel, seed_turns


def test_a_store_error_mid_run_names_the_run_and_resume_finishes_it(
    store_target: Path | str, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = Steps.begin

    def disk_full_at_step_2(self: Steps, lease: Any, n: int, *args: Any) -> None:
        if n == 2:
            raise DatabaseError("database or disk is full")  # as either engine raises it
        real(self, lease, n, *args)

    monkeypatch.setattr(Steps, "begin", disk_full_at_step_2)
    turns = seed_turns()
    model = ScriptedModel(turns=list(turns))
    res = invoke(store_target, lambda *a: model, "brief", "--model", "scripted")
    assert res.code == 4, res.err
    (run_id,) = db_rows(store_target, "SELECT id FROM runs")[0]
    assert res.err.count("\n") == 1 and "Traceback" not in res.err
    assert "database or disk is full" in res.err
    assert f"`dayflow resume {run_id}` continues it" in res.err
    status, reason = db_rows(store_target, "SELECT status, reason FROM runs")[0]
    assert status == "failed" and reason == "database error: database or disk is full"
    assert [r[0] for r in db_rows(store_target, "SELECT n FROM steps ORDER BY n")] == [1]

    monkeypatch.setattr(Steps, "begin", real)
    again = ScriptedModel(turns=list(turns[1:]))
    resumed = invoke(store_target, lambda *a: again, "resume", run_id)
    assert resumed.code == 0, resumed.err
    status, steps, tasks = db_rows(
        store_target,
        "SELECT status, (SELECT COUNT(*) FROM steps), (SELECT COUNT(*) FROM tasks) FROM runs",
    )[0]
    assert (status, steps, tasks) == ("done", 3, 2)


def test_a_connection_lost_mid_run_names_the_run_and_its_profile_once(
    store_target: Path | str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The store's line names no command (it knows no run); the loop's names the one that
    continues this run, as its profile types it: not a bare `dayflow resume`, which looks at
    the default profile's runs and finds nothing of ann's."""
    from dayflow.store.sql import ConnectionLost

    real = Steps.begin

    def dropped_at_step_2(self: Steps, lease: Any, n: int, *args: Any) -> None:
        if n == 2:
            raise ConnectionLost("server closed the connection unexpectedly")
        real(self, lease, n, *args)

    config = tmp_path / "ann.toml"
    config.write_text("")
    model = ScriptedModel(turns=list(seed_turns()))
    added = invoke(
        store_target, lambda *a: model, "profiles", "add", "ann", "--config", str(config)
    )
    assert added.code == 0, added.err
    monkeypatch.setattr(Steps, "begin", dropped_at_step_2)
    res = invoke(store_target, lambda *a: model, "brief", "--model", "scripted", "--profile", "ann")
    assert res.code == 4, res.err
    (run_id,) = db_rows(store_target, "SELECT id FROM runs")[0]
    assert "lost the connection to the database server" in res.err and "Traceback" not in res.err
    assert res.err.count("`dayflow resume") == 1, res.err
    assert f"`dayflow resume {run_id} --profile ann` continues it" in res.err
