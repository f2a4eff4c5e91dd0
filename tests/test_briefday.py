"""Today's brief exactly once: `brief --ensure-today`, and what a second plain `brief` does."""

from __future__ import annotations

import json
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from dayflow.providers.offline import OfflineModel
from tests.conftest import dayflow_child, subprocess_env
from tests.fakeapi import FakeAPI, responder_from_client, slowed
from tests.harness import Result, invoke
from tests.mailkit import json_message, write_json_inbox

DATE = "2026-11-05"


class Counting:
    """Builds offline models and counts how many were asked for (a model call needs one)."""

    def __init__(self) -> None:
        self.built = 0

    def __call__(self, name: str, settings: Any) -> OfflineModel:
        self.built += 1
        return OfflineModel()


def run(db: Path, models: Counting, *args: str, env: dict[str, str] | None = None) -> Result:
    return invoke(db, models, *args, env=env)


def runs(db: Path) -> list[dict[str, Any]]:
    return json.loads(invoke(db, Counting(), "runs", "--json").out)


def test_ensure_today_starts_the_brief_then_prints_it_with_no_model_call(db_path: Path) -> None:
    models = Counting()
    first = run(db_path, models, "brief", "--ensure-today")
    assert first.code == 0 and "One thing" in first.out
    assert models.built == 1
    again = run(db_path, models, "brief", "--ensure-today")
    assert again.code == 0
    assert models.built == 1  # no model built, so no call made
    (only,) = runs(db_path)
    assert f"run {only['id']} is already done; showing its brief (no model call)" in again.err
    assert again.out == first.out


def test_ensure_today_resumes_todays_unfinished_brief(db_path: Path) -> None:
    models = Counting()
    crashed = run(db_path, models, "brief", "--crash-after", "1")
    assert crashed.code == 70
    (interrupted,) = runs(db_path)
    result = run(db_path, models, "brief", "--ensure-today")
    assert result.code == 0
    assert (
        f"the brief for {DATE} is run {interrupted['id']}, interrupted: resuming it" in result.err
    )
    assert f"[resume {interrupted['id']}] replaying 1 committed step(s)" in result.err
    (done,) = runs(db_path)
    assert done["id"] == interrupted["id"] and done["status"] == "done"


def test_ensure_today_ignores_other_days(db_path: Path) -> None:
    models = Counting()
    assert run(db_path, models, "brief", "--date", "2026-11-04").code == 0
    assert run(db_path, models, "brief", "--ensure-today").code == 0
    assert sorted(r["brief_date"] for r in runs(db_path)) == ["2026-11-04", DATE]


def test_a_second_plain_brief_says_so_and_writes_an_update_of_what_arrived_since(
    db_path: Path, tmp_path: Path
) -> None:
    old = json_message(
        "m1",
        "Sam <sam@example.org>",
        "Please send the edits today",
        "2026-11-05T06:00:00+00:00",
        snippet="Could you send me your edits today?",
        unread=True,
    )
    inbox = write_json_inbox(tmp_path / "inbox.json", old)
    models = Counting()
    env = {"DAYFLOW_INBOX": str(inbox)}
    first = run(db_path, models, "brief", env=env)
    assert first.code == 0
    (done,) = runs(db_path)
    late = old | {
        "id": "m2",
        "subject": "Please sign the NDA",
        "received_at": "2026-11-05T07:45:00+00:00",  # after the first brief (07:30)
        "snippet": "Please sign the NDA today.",
    }
    write_json_inbox(inbox, late, old)
    second = run(db_path, models, "brief", env=env)
    assert second.code == 0
    assert (
        f"the brief for {DATE} exists: run {done['id']}, done at 07:30; writing an update with "
        "only what arrived since (--since-last" in second.err
    )
    newest = runs(db_path)[0]
    assert newest["id"] != done["id"]
    shown = json.loads(invoke(db_path, models, "show", newest["id"], "--json").out)
    first_step = shown["steps"][0]
    calls = {b["id"]: b["name"] for b in first_step["assistant"] if b["type"] == "tool_use"}
    (inbox_result,) = [
        json.loads(r["content"])
        for r in first_step["tool_results"]
        if calls[r["tool_use_id"]] == "read_inbox"
    ]
    assert [m["id"] for m in inbox_result["messages"]] == ["inbox:m2"]  # `<source>:<id>`


def test_new_writes_a_full_brief_and_says_the_day_had_one(db_path: Path) -> None:
    models = Counting()
    assert run(db_path, models, "brief").code == 0
    (done,) = runs(db_path)
    result = run(db_path, models, "brief", "--new")
    assert result.code == 0
    assert f"run {done['id']}, done at 07:30; writing a full new one (--new)" in result.err
    assert len(runs(db_path)) == 2


def test_since_last_with_no_finished_brief_writes_a_full_one(db_path: Path) -> None:
    result = run(db_path, Counting(), "brief", "--since-last")
    assert result.code == 0 and f"no finished brief for {DATE} yet" in result.err


@pytest.mark.parametrize(
    "flags", [("--ensure-today", "--new"), ("--since-last", "--new"), ("--new", "--resume-latest")]
)
def test_brief_modes_cannot_be_combined(db_path: Path, flags: tuple[str, ...]) -> None:
    result = run(db_path, Counting(), "brief", *flags)
    assert result.code == 2 and "cannot be used together" in result.err


def _spawn(db: Path, env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    return dayflow_child(env, "brief", "--ensure-today", "--date", DATE, *args)


@pytest.mark.slow
@pytest.mark.parametrize("n", [2, 4])
def test_concurrent_ensure_today_processes_write_one_brief(tmp_path: Path, n: int) -> None:
    """The timer and the user at the same moment: one drives, the others wait and print it."""
    db = tmp_path / "dayflow.db"
    slow = slowed(responder_from_client(OfflineModel()), 0.8)
    with FakeAPI(responder=slow) as fake:
        env = subprocess_env(db, ANTHROPIC_API_KEY="test", ANTHROPIC_BASE_URL=fake.base_url)
        procs = [_spawn(db, env) for _ in range(n)]
        results = [(p.wait(timeout=120), *p.communicate()) for p in procs]
        calls = len(fake.message_requests)
    assert all(code == 0 for code, _, _ in results), results
    briefs = {out for _, out, _ in results}
    assert len(briefs) == 1 and "One thing" in next(iter(briefs))
    drivers = [err for _, _, err in results if " · finished at step " in err]
    assert len(drivers) == 1, results
    others = [err for _, _, err in results if err not in drivers]
    # each other process waited for the driver, or came after it and printed the brief
    assert all("waiting for it" in e or "already done; showing its brief" in e for e in others)
    (only,) = runs(db)
    assert only["status"] == "done"
    assert calls == only["steps"]  # every model call belongs to the one run


@pytest.mark.slow
def test_a_waiter_takes_over_when_the_driver_is_killed(tmp_path: Path) -> None:
    db = tmp_path / "dayflow.db"
    # Each call answered a second late while the driver lives (it is in a call when the waiter
    # arrives and when it is killed); the waiter's own calls after it, at once.
    killed = threading.Event()
    offline = responder_from_client(OfflineModel())
    slow = slowed(offline, 1.0)

    def respond(body: dict[str, Any]) -> Any:
        return offline(body) if killed.is_set() else slow(body)

    with FakeAPI(responder=respond) as fake:
        env = subprocess_env(db, ANTHROPIC_API_KEY="test", ANTHROPIC_BASE_URL=fake.base_url)
        driver = _spawn(db, env)
        while len(fake.message_requests) < 1:  # the driver holds the lock and is calling
            time.sleep(0.05)
        waiter = _spawn(db, env)
        assert waiter.stderr is not None
        assert "waiting for it" in waiter.stderr.readline()
        driver.send_signal(signal.SIGKILL)
        driver.communicate(timeout=30)  # to its pipes' end: the forked driver is gone too
        killed.set()
        code = waiter.wait(timeout=120)
        out, err = waiter.communicate()
    assert code == 0, err
    assert "resuming it" in err and "One thing" in out
    (only,) = runs(db)
    assert only["status"] == "done"


def test_the_day_lock_of_a_database_named_by_url_lives_in_the_state_directory(
    tmp_path: Path,
) -> None:
    from dayflow.briefing.day import lock_path

    url = "postgresql://alex@127.0.0.1:5432/dayflow"
    first = lock_path(url, tmp_path / "state")
    assert first.parent == tmp_path / "state" and first == lock_path(url, tmp_path / "state")
    assert "alex" not in first.name
    assert lock_path(tmp_path / "x.db") == tmp_path / "x.db.lock"


# ------------------------------------------------------- the day's run across hosts (one DB)


def test_creating_the_days_run_when_it_has_one_names_that_run(db_path: Path) -> None:
    """The store decides, in the transaction that would create it, whether the day has its run
    already: any status counts, a pruned one or one of another day does not."""
    from dayflow.clock import FixedClock
    from dayflow.errors import DayTaken
    from dayflow.frozen import replace as frozen_replace
    from dayflow.store import open_store
    from tests.test_agent import _new_run

    with open_store(db_path, clock=FixedClock()) as store:
        first, _ = store.runs.create(_new_run(), sole_for_day=True)
        with pytest.raises(DayTaken) as taken:
            store.runs.create(_new_run(), sole_for_day=True)
        assert taken.value.run_id == first.id and first.id in str(taken.value)
        other_day, _ = store.runs.create(
            frozen_replace(_new_run(), brief_date="2026-11-06"), sole_for_day=True
        )
        assert other_day.brief_date == "2026-11-06"
        plain, _ = store.runs.create(_new_run())  # a plain brief (an update) is not refused
        assert len(store.runs.list(limit=None)) == 3 and plain.id != first.id


def test_ensure_today_that_finds_the_days_run_created_after_it_looked_prints_that_one(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two hosts share one database and start the day's brief at the same moment: their day
    locks are files on different machines, so both look, find nothing, and go to create it.
    The store refuses the second (as here, where the first is already done) and the second
    prints the first's brief: one brief, no second model call."""
    from dayflow.briefing import day as briefday

    models = Counting()
    first = run(db_path, models, "brief", "--ensure-today")
    assert first.code == 0 and models.built == 1
    monkeypatch.setattr(briefday, "latest_for", lambda *a: None)  # looked before it existed
    second = run(db_path, models, "brief", "--ensure-today")
    assert second.code == 0, second.err
    (only,) = runs(db_path)
    assert f"another dayflow started the brief for {DATE} meanwhile (run {only['id']})" in (
        second.err
    )
    assert second.out == first.out
    assert models.built == 2  # a client was built, but no call was made with it
    assert only["steps"] == 3


@pytest.mark.postgres
def test_two_processes_creating_the_days_run_on_postgresql_queue_on_the_days_lock(
    pg_server: Any,
) -> None:
    """Deterministic: a transaction holding the day's lock (another host about to create the
    run) makes this process's create wait; when that one commits its run, this one is told."""
    import threading

    from dayflow.clock import FixedClock
    from dayflow.errors import DayTaken
    from dayflow.store import open_store
    from dayflow.store.postgres import POSTGRES, PgDatabase
    from tests.conftest import pg_schema
    from tests.test_agent import _new_run

    with pg_schema(pg_server) as url:
        with open_store(url, clock=FixedClock()) as setup:
            setup.runs.list()  # the schema exists
        other = PgDatabase(url)
        outcome: list[BaseException | str] = []

        def create() -> None:
            with open_store(url, clock=FixedClock()) as store:
                try:
                    run, _ = store.runs.create(_new_run(), sole_for_day=True)
                    outcome.append(run.id)
                except DayTaken as exc:
                    outcome.append(exc)

        with other.transaction():
            other.execute(POSTGRES.day_lock, ("2026-11-05",))
            thread = threading.Thread(target=create)
            thread.start()
            for _ in range(2000):  # until the create waits on a lock (not a timed assert)
                waiting = pg_server.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                    "AND application_name = %s AND query LIKE %s",
                    (url.rsplit("application_name=", 1)[1], "%':day:'%"),
                ).fetchone()[0]
                if waiting:
                    break
                time.sleep(0.01)
            assert waiting, "the second create never waited for the day's lock"
            # host A's run for the day, committed while B waits
            other.execute(
                "INSERT INTO runs (id, status, model, brief_date, created_at, updated_at, system,"
                " tools_json, user_msg_json, max_tokens, max_steps, task_cap, settings_json,"
                " version) VALUES ('aaaaaaaaaaaa', 'done', 'm', '2026-11-05', ?, ?, '', '[]',"
                " '{}', 1, 1, 1, '{}', 1)",
                (FixedClock().now().isoformat(), FixedClock().now().isoformat()),
            )
        thread.join(timeout=60)
        other.close()
        assert len(outcome) == 1 and isinstance(outcome[0], DayTaken), outcome
        assert outcome[0].run_id == "aaaaaaaaaaaa"
