"""The fleet: when each profile's brief is due (its own timezone, DST included), the queue's
one job per (profile, day), and workers that drive each brief once, put a rate-limited one
back with a delay, and never retry one whose sources fail."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest

from dayflow.errors import ModelError, UsageError
from dayflow.fleet import BriefJob, due_at, due_jobs
from dayflow.fleet.profiles import next_due
from dayflow.providers.offline import OfflineModel
from dayflow.store.values import Profile
from tests.conftest import FixedClock, db_rows, pg_schema
from tests.harness import invoke


def _at(text: str) -> datetime:
    return datetime.fromisoformat(text).astimezone(UTC)


def test_a_brief_is_due_at_its_local_time_in_its_own_zone() -> None:
    ann = Profile("ann", "/a.toml", "Europe/Paris", "07:30", "1234567")
    kei = Profile("kei", "/k.toml", "Asia/Tokyo", "07:30", "1234567")
    now = _at("2026-12-01T22:40:00+00:00")  # 23:40 in Paris, 07:40 on the 2nd in Tokyo
    assert due_jobs([ann, kei], now) == [
        BriefJob("ann", date(2026, 12, 1)),
        BriefJob("kei", date(2026, 12, 2)),
    ]
    assert due_jobs([ann], _at("2026-12-01T06:29:00+00:00")) == []  # 07:29 in Paris
    assert due_at(ann, date(2026, 12, 1)) == _at("2026-12-01T07:30:00+01:00")
    assert next_due([ann], _at("2026-12-01T06:29:00+00:00")) == _at("2026-12-01T06:30:00+00:00")


def test_daylight_saving_moves_the_utc_time_not_the_local_one() -> None:
    at_230 = Profile("ann", "/a.toml", "Europe/Paris", "02:30", "1234567")
    summer = Profile("ann", "/a.toml", "Europe/Paris", "07:30", "1234567")
    assert due_at(summer, date(2026, 3, 28)) == _at("2026-03-28T06:30:00+00:00")  # CET
    assert due_at(summer, date(2026, 3, 29)) == _at("2026-03-29T05:30:00+00:00")  # CEST
    # 02:30 does not exist on 29 March in Paris: the wall time just after the gap, 03:30.
    gap = due_at(at_230, date(2026, 3, 29))
    assert gap == _at("2026-03-29T01:30:00+00:00") and gap.hour == 3
    # 02:30 happens twice on 25 October: the first time (still summer time). (Compared in
    # UTC: an ambiguous local time never equals a time of another zone, PEP 495.)
    twice = due_at(at_230, date(2026, 10, 25)).astimezone(UTC)
    assert twice == _at("2026-10-25T00:30:00+00:00")


def test_weekdays_only_skip_the_weekend_in_the_profiles_zone() -> None:
    ann = Profile("ann", "/a.toml", "America/New_York", "07:00", "12345")
    saturday = _at("2026-12-05T15:00:00+00:00")
    assert due_jobs([ann], saturday) == []
    # Monday 01:00 UTC is still Sunday in New York.
    assert due_jobs([ann], _at("2026-12-07T01:00:00+00:00")) == []
    assert due_jobs([ann], _at("2026-12-07T12:01:00+00:00")) == [BriefJob("ann", date(2026, 12, 7))]


def test_a_job_payload_names_its_brief_and_a_foreign_one_is_refused() -> None:
    job = BriefJob("ann-2", date(2026, 12, 1))
    assert job.key == "ann-2:2026-12-01" and BriefJob.from_payload(job.payload()) == job
    for hostile in (None, b"", b"ann", b"ann:tomorrow", b"A:2026-12-01", b"\xff\xfe:2026-12-01"):
        with pytest.raises(UsageError, match="not a brief job"):
            BriefJob.from_payload(hostile)


# What follows needs the shared PostgreSQL server (a schema of its own per test).


def _offline(*a: Any) -> OfflineModel:
    return OfflineModel()


@pytest.fixture
def fleet_db(pg_server: Any, tmp_path: Path) -> Any:
    """A fresh schema with three profiles (the sample inbox each), due at 00:00 UTC."""
    with pg_schema(pg_server) as url:
        config = tmp_path / "sample.toml"
        config.write_text("")
        for name in ("ann", "bob", "cat"):
            added = invoke(
                url, _offline, "profiles", "add", name, "--config", str(config), "--at", "00:00"
            )
            assert added.code == 0, added.err
        yield url


def _run(url: str, *args: str, model: Any = _offline) -> Any:
    return invoke(url, model, *args, env={"DAYFLOW_MODEL": "offline"})


def _runs_by_profile(url: str) -> dict[str, list[tuple[str, str]]]:
    rows = db_rows(url, "SELECT profile, id, status FROM runs ORDER BY created_at")
    out: dict[str, list[tuple[str, str]]] = {}
    for profile, run_id, status in rows:
        out.setdefault(profile, []).append((run_id, status))
    return out


@pytest.mark.postgres
def test_a_worker_writes_each_due_brief_once_however_often_it_is_queued(fleet_db: str) -> None:
    url = fleet_db
    first = _run(url, "worker", "--until-idle", "--poll", "0.2")  # 07:30 UTC: all are due
    assert first.code == 0, first.err
    assert "3 brief(s) driven" in first.err
    runs = _runs_by_profile(url)
    assert sorted(runs) == ["ann", "bob", "cat"]
    assert all(len(r) == 1 and r[0][1] == "done" for r in runs.values())
    # Nothing is due any more: a second worker queues nothing.
    again = _run(url, "worker", "--until-idle", "--poll", "0.2")
    assert again.code == 0 and "0 brief(s) driven" in again.err and "0 queued" in again.err
    # `fleet enqueue` skips a day whose brief is done (its job would only show it), and
    # queues the others whatever the clock says, once each however often it is asked.
    done = _run(url, "fleet", "enqueue", "--date", "2026-11-05")
    assert "0 brief(s) for 2026-11-05 queued (3 already done, skipped)" in done.err, done.err
    status = json.loads(_run(url, "fleet", "status", "--json").out)
    assert status["counts"]["done"] == 3 and status["oldest_waiting"] is None
    queued = _run(url, "fleet", "enqueue", "--date", "2026-11-04")
    assert queued.code == 0 and "3 brief(s) for 2026-11-04 queued" in queued.err
    twice = _run(url, "fleet", "enqueue", "--date", "2026-11-04")
    assert "0 brief(s) for 2026-11-04 queued (3 already queued or running)" in twice.err
    # ann's brief of the 4th is written by hand meanwhile: her job is no longer waiting (the
    # oldest is another's), and driving it finds the day done: no new run, no model call.
    by_hand = _run(url, "brief", "--profile", "ann", "--date", "2026-11-04", "--ensure-today")
    assert by_hand.code == 0, by_hand.err
    status = json.loads(_run(url, "fleet", "status", "--date", "2026-11-04", "--json").out)
    assert status["counts"] == status["counts"] | {"done": 1, "due": 2}
    assert status["oldest_waiting"]["profile"] in ("bob", "cat"), status["oldest_waiting"]
    calls: list[Any] = []

    def counting(*a: Any) -> Any:
        calls.append(a)
        return OfflineModel()

    shown = _run(url, "worker", "--until-idle", "--poll", "0.2", model=counting)
    assert shown.code == 0 and "3 brief(s) driven" in shown.err
    fourth = db_rows(url, "SELECT profile FROM runs WHERE brief_date = '2026-11-04'")
    assert sorted(r[0] for r in fourth) == ["ann", "bob", "cat"] and len(calls) == 2
    after = json.loads(_run(url, "fleet", "status", "--date", "2026-11-04", "--json").out)
    assert after["oldest_waiting"] is None and after["counts"]["done"] == 3


@pytest.mark.postgres
def test_fleet_status_says_what_is_due_later_and_off(fleet_db: str, tmp_path: Path) -> None:
    url = fleet_db
    config = tmp_path / "sample.toml"
    for args in (
        ("dan", "--at", "23:00"),
        ("eve", "--at", "00:00", "--weekdays", "--tz", "UTC"),
    ):
        assert _run(url, "profiles", "add", args[0], "--config", str(config), *args[1:]).code == 0
    # Sunday 1 November, over: missed (nothing queued, no run), but off for a weekdays one.
    status = json.loads(_run(url, "fleet", "status", "--date", "2026-11-01", "--json").out)
    states = {p["profile"]: p["state"] for p in status["profiles"]}
    assert states == {"ann": "missed", "bob": "missed", "cat": "missed", "dan": "missed"} | {
        "eve": "off"
    }
    today = json.loads(_run(url, "fleet", "status", "--json").out)  # 2026-11-05 07:30 UTC
    assert {p["profile"]: p["state"] for p in today["profiles"]}["dan"] == "later"
    text = _run(url, "fleet", "status").out
    assert text.startswith("2026-11-05: 4 due, 1 later") and "\ndan " in text


@pytest.mark.postgres
def test_a_rate_limited_brief_is_put_back_and_resumed_and_a_bad_one_is_not_retried(
    fleet_db: str,
) -> None:
    from dayflow.fleet.worker import WorkerOptions, run_worker

    url = fleet_db
    tries: dict[str, int] = {}

    def drive(job: BriefJob) -> None:
        tries[job.profile] = tries.get(job.profile, 0) + 1
        if job.profile == "ann" and tries["ann"] < 3:
            raise ModelError("429 rate_limit_error", status=429, retryable=True)
        if job.profile == "bob":
            raise ModelError("400 invalid_request_error", status=400)

    said: list[str] = []
    options = WorkerOptions(until_idle=True, poll_s=0.2, backoff_s=0.2, heartbeat_s=5)
    report = run_worker(
        url, drive, lambda p: "brief.test", options=options, clock=FixedClock(), say=said.append
    )
    assert tries == {"ann": 3, "bob": 1, "cat": 1}  # ann twice put back, bob never retried
    assert (report.driven, report.retried, report.failed) == (2, 2, 1)
    assert any("ann:" in s and "again in" in s for s in said)


@pytest.mark.postgres
def test_a_brief_that_fails_before_its_run_begins_is_not_queued_again_each_poll(
    fleet_db: str,
) -> None:
    """A profile whose config file cannot be read fails with no run to settle its day: the
    worker tries it once, not once per look for due briefs, forever (a retry storm)."""
    import asyncio
    import os
    import signal

    from dayflow.fleet.worker import WorkerOptions, run_worker

    url = fleet_db
    tries, drive = _bob_cannot_start()
    said: list[str] = []

    def say(line: str) -> None:
        said.append(line)
        if line.startswith("bob:"):  # on the worker's loop: let it look ~10 times more
            asyncio.get_running_loop().call_later(2.0, os.kill, os.getpid(), signal.SIGTERM)

    options = WorkerOptions(poll_s=0.2, heartbeat_s=5)  # continuous: it looks every 0.2 s
    report = run_worker(
        url, drive, lambda p: "brief.test", options=options, clock=FixedClock(), say=say
    )
    # This fake drive writes no run, so ann's and cat's days stay unsettled and are queued
    # again at each look: the worker looked many times; bob's key it left alone.
    assert tries["bob"] == 1 and tries["ann"] > 1 and tries["cat"] > 1, (tries, said)
    assert report.failed == 1 and said == [
        "bob:2026-11-05: /home/bob/dayflow.toml: is not UTF-8 text; tried again in 60 s"
    ]


@pytest.mark.postgres
def test_each_problem_of_a_profiles_config_is_a_line_naming_its_job(fleet_db: str) -> None:
    """A config file's problems are a line each: the second said no job and no retry."""
    import asyncio
    import os
    import signal

    from dayflow.errors import ConfigFileError
    from dayflow.fleet.worker import WorkerOptions, run_worker

    problems = ["[smtp]: needs host", "deliver must be a list of sinks"]
    tries, drive = _bob_cannot_start(ConfigFileError.of("/home/bob/dayflow.toml", problems))
    said: list[str] = []

    def say(line: str) -> None:
        said.append(line)
        if line.startswith("bob:") and "tried again" in line:
            asyncio.get_running_loop().call_later(0.5, os.kill, os.getpid(), signal.SIGTERM)

    options = WorkerOptions(poll_s=0.2, heartbeat_s=5)
    run_worker(
        fleet_db, drive, lambda p: "brief.test", options=options, clock=FixedClock(), say=say
    )
    assert tries["bob"] == 1
    assert said == [
        "bob:2026-11-05: /home/bob/dayflow.toml: [smtp]: needs host",
        "bob:2026-11-05: /home/bob/dayflow.toml: deliver must be a list of sinks; tried again "
        "in 60 s",
    ]


@pytest.mark.postgres
def test_a_brief_that_failed_before_its_run_began_is_tried_again_later_and_less_often(
    fleet_db: str,
) -> None:
    """Not dropped until the worker restarts: tried again `recheck_s` later, then twice as
    long after each failure, so a profile whose config file is fixed is written."""
    import asyncio
    import os
    import signal

    from dayflow.fleet.worker import WorkerOptions, run_worker

    url, clock = fleet_db, FixedClock()
    tries, drive = _bob_cannot_start()
    said: list[str] = []

    def say(line: str) -> None:
        said.append(line)
        if line.startswith("bob:"):
            clock.advance(61)  # past the first wait (60 s), not the second (120 s)
            if len(said) == 2:
                asyncio.get_running_loop().call_later(2.0, os.kill, os.getpid(), signal.SIGTERM)

    options = WorkerOptions(poll_s=0.2, heartbeat_s=5, recheck_s=60)
    report = run_worker(url, drive, lambda p: "brief.test", options=options, clock=clock, say=say)
    assert tries["bob"] == 2 and report.failed == 2, (tries, said)
    assert [line.rpartition("; ")[2] for line in said] == [
        "tried again in 60 s",
        "tried again in 2 min",
    ]


@pytest.mark.postgres
def test_a_worker_interrupted_says_so_in_its_own_words_and_exits_130(fleet_db: str) -> None:
    """Ctrl-C of a worker is not one run's Ctrl-C: no `dayflow resume` (which knows no
    profile) is offered, and the brief is left to the next worker, which resumes it."""

    def ctrl_c(*a: Any) -> Any:
        raise KeyboardInterrupt

    stopped = _run(fleet_db, "worker", "--until-idle", "--poll", "0.2", model=ctrl_c)
    assert stopped.code == 130 and "dayflow resume" not in stopped.err, stopped.err
    assert stopped.err.strip().splitlines()[-1].startswith("worker interrupted: ")

    def all_done() -> bool:  # the jobs it held are retaken once their heartbeat is stale
        again = _run(fleet_db, "worker", "--until-idle", "--poll", "0.2", "--heartbeat", "1")
        assert again.code == 0, again.err
        runs = _runs_by_profile(fleet_db)
        return sorted(runs) == ["ann", "bob", "cat"] and all(
            [status for _, status in r] == ["done"] for r in runs.values()
        )

    _until(all_done, "the next worker finishes every brief")


@pytest.mark.postgres
def test_a_profile_whose_source_fails_gets_its_brief_naming_it_once(
    fleet_db: str, tmp_path: Path
) -> None:
    url = fleet_db
    broken = tmp_path / "broken.toml"
    broken.write_text(  # a closed port on this machine: the inbox cannot be read
        '[[inbox]]\nname = "work"\nkind = "imap"\nhost = "127.0.0.1"\nport = 9\nuser = "me"\n'
        'password_command = "echo x"\nsecurity = "plain"\ntimeout = 3\n'
    )
    assert _run(url, "profiles", "add", "dan", "--config", str(broken), "--at", "00:00").code == 0
    done = _run(url, "worker", "--until-idle", "--poll", "0.2")
    assert done.code == 0 and "4 brief(s) driven" in done.err and "0 put back" in done.err
    ((run_id, status),) = _runs_by_profile(url)["dan"]
    brief = _run(url, "show", run_id, "--profile", "dan", "--json")
    assert status == "done" and "work: cannot connect" in json.loads(brief.out)["brief"]


def test_the_worker_and_fleet_refuse_a_sqlite_database(tmp_path: Path) -> None:
    for args in (("worker", "--until-idle"), ("fleet", "status"), ("fleet", "enqueue")):
        result = invoke(tmp_path / "x.db", _offline, *args)
        assert result.code == 2 and "the fleet's queue lives in PostgreSQL" in result.err
        shown = invoke(tmp_path / "x.db", _offline, *args[:2], "--help").out
        assert "--db postgresql://..." in shown and "SQLite" not in shown, args  # as refused


def test_a_worker_until_idle_that_never_reaches_its_database_exits_4(tmp_path: Path) -> None:
    """For cron: a wrong URL or a server that is down is one line and exit 4, not a worker
    that tries again forever (a server lost after it was reached is still waited out)."""
    result = invoke("postgresql://postgres@127.0.0.1:9/dayflow", _offline, "worker", "--until-idle")
    assert result.code == 4, result.err
    (line,) = result.err.splitlines()
    assert line.startswith("error: cannot reach the queue's database: ") and "port 9" in line


@pytest.mark.postgres
def test_fleet_commands_work_on_a_new_database_whichever_comes_first(pg_server: Any) -> None:
    """The queue's tables may be made before Dayflow's (`fleet status` first): the store
    takes them for the fleet's own, not another application's."""
    for first in (("fleet", "status"), ("fleet", "enqueue"), ("worker", "--until-idle")):
        with pg_schema(pg_server) as url:
            assert _run(url, *first).code == 0, first
            again = _run(url, "fleet", "status", "--json")
            assert again.code == 0 and json.loads(again.out)["profiles"] == []
            assert _run(url, "runs").code == 0


@pytest.mark.postgres
def test_a_worker_sees_a_profile_edited_at_its_next_job_on_the_connection_it_kept(
    fleet_db: str, tmp_path: Path
) -> None:
    """Each job reads its profile's row afresh, on the connection the worker's thread keeps
    from brief to brief; a connection the server dropped meanwhile is opened again."""
    from dayflow.app.fleet import make_driver
    from dayflow.cli_base import Runtime

    url = fleet_db
    for name in ("a", "b"):
        (tmp_path / f"{name}.toml").write_text(
            f'deliver = ["file:{tmp_path}/{name}-{{date}}.md"]\n'
        )
    assert _run(url, "profiles", "add", "dan", "--config", str(tmp_path / "a.toml")).code == 0
    deps = Runtime(
        env={"DAYFLOW_DB": url, "DAYFLOW_MODEL": "offline"},
        clock=FixedClock(),
        model_factory=_offline,
    )
    drive = make_driver(deps, url)
    try:
        drive(BriefJob("dan", date(2026, 11, 4)))
        assert (tmp_path / "a-2026-11-04.md").exists()
        # Edited while the worker runs (removed and added again with another config file).
        assert _run(url, "profiles", "remove", "dan").code == 0
        assert _run(url, "profiles", "add", "dan", "--config", str(tmp_path / "b.toml")).code == 0
        with drive.stores.open(url, durability="NORMAL", profile="default") as store:
            kept = getattr(store.db, "backend_pid")  # noqa: B009 (PostgreSQL only)
        db_rows(url, "SELECT pg_terminate_backend(CAST(? AS integer))", kept)
        drive(BriefJob("dan", date(2026, 11, 5)))
        assert (tmp_path / "b-2026-11-05.md").exists()
        assert not (tmp_path / "a-2026-11-05.md").exists()
        with drive.stores.open(url, durability="NORMAL", profile="default") as store:
            assert getattr(store.db, "backend_pid") != kept  # noqa: B009 (reopened, kept)
            assert [p.config for p in store.profiles.list() if p.name == "dan"] == [
                str(tmp_path / "b.toml")
            ]
    finally:
        drive.close()
    done = [s for _, s in _runs_by_profile(url)["dan"]]
    assert done == ["done", "done"]


@pytest.mark.postgres
def test_the_queued_job_of_a_removed_profile_ends_with_one_line(fleet_db: str) -> None:
    url = fleet_db
    queued = _run(url, "fleet", "enqueue", "--date", "2026-11-04")
    assert queued.code == 0 and "3 brief(s)" in queued.err
    assert _run(url, "profiles", "remove", "bob").code == 0
    worked = _run(url, "worker", "--until-idle", "--poll", "0.2")
    assert worked.code == 0, worked.err
    dropped = [line for line in worked.err.splitlines() if "bob" in line]
    assert dropped == ["bob:2026-11-04: profile 'bob' was removed; its job is dropped"], worked.err
    assert "1 dropped (profile removed)" in worked.err and "Traceback" not in worked.err
    assert "bob" not in _runs_by_profile(url)
    assert json.loads(_run(url, "fleet", "status", "--json").out)["oldest_waiting"] is None


@pytest.mark.postgres
def test_fleet_status_shows_each_due_time_in_its_zone_and_the_queue_in_the_users(
    fleet_db: str, tmp_path: Path
) -> None:
    url, config = fleet_db, tmp_path / "sample.toml"  # the fixture's profiles' config
    added = _run(url, "profiles", "add", "kei", "--config", str(config), "--tz", "Asia/Tokyo")
    assert added.code == 0, added.err
    assert _run(url, "fleet", "enqueue", "--date", "2026-11-05").code == 0
    shown = json.loads(_run(url, "fleet", "status", "--json").out)
    kei = next(p for p in shown["profiles"] if p["profile"] == "kei")
    assert kei["due_at"] == "2026-11-05T07:30:00.000+09:00" and kei["tz"] == "Asia/Tokyo"
    ann = next(p for p in shown["profiles"] if p["profile"] == "ann")
    assert ann["due_at"] == "2026-11-05T00:00:00.000+00:00" and ann["tz"] == "UTC"
    assert datetime.fromisoformat(shown["oldest_waiting"]["queued_at"]).utcoffset() is not None
    paris = invoke(url, _offline, "fleet", "status", env={"DAYFLOW_TZ": "Europe/Paris"}).out
    rows = {line.split()[0]: line for line in paris.splitlines()[1:]}
    assert "2026-11-05 07:30+09:00" in rows["kei"] and "2026-11-05 00:00Z" in rows["ann"]
    assert "due (its zone)" in paris
    (oldest,) = [line for line in paris.splitlines() if line.startswith("oldest waiting:")]
    assert oldest.endswith("+01:00"), oldest  # queued when, in the user's zone (DAYFLOW_TZ)


@pytest.mark.postgres
def test_a_kept_connection_is_lent_to_one_store_at_a_time(fleet_db: str) -> None:
    """Two stores open at once on one thread never share a connection (nor so a
    transaction); once closed, the thread's kept one is lent again, and only it."""
    from dayflow.fleet.kept import KeptStores

    stores = KeptStores(FixedClock())
    try:
        with stores.open(fleet_db, durability="NORMAL", profile="ann") as first:
            kept = getattr(first.db, "backend_pid")  # noqa: B009 (PostgreSQL only)
            with stores.open(fleet_db, durability="NORMAL", profile="bob") as second:
                assert getattr(second.db, "backend_pid") != kept  # noqa: B009
                with first.db.transaction():
                    first.profiles.get("ann")
                    assert not second.db.in_transaction
        with stores.open(fleet_db, durability="NORMAL", profile="cat") as again:
            assert getattr(again.db, "backend_pid") == kept  # noqa: B009
            assert [p.name for p in again.profiles.list()] == ["ann", "bob", "cat"]
    finally:
        stores.close()


def _bob_cannot_start(
    error: Exception | None = None,
) -> tuple[dict[str, int], Any]:
    """(each profile's tries, a drive in which bob's brief fails before its run begins, with
    `error` or a config file that is not UTF-8)."""
    tries: dict[str, int] = {}

    def drive(job: BriefJob) -> None:
        tries[job.profile] = tries.get(job.profile, 0) + 1
        if job.profile == "bob":
            raise error or UsageError("/home/bob/dayflow.toml: is not UTF-8 text")

    return tries, drive


def _until(check: Any, what: str, seconds: float = 90.0) -> Any:
    """`check()` once it is truthy (polled every 0.2 s; AssertionError naming `what` if it
    never is within `seconds`: a bound against a hang, not a speed asserted)."""
    import time

    end = time.monotonic() + seconds
    while time.monotonic() < end:
        found = check()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError(f"never: {what}")


@pytest.mark.postgres
@pytest.mark.slow  # waits for the queue's listener health check (every 10 s)
def test_a_worker_whose_listen_connection_drops_connects_again(
    fleet_db: str, tmp_path: Path
) -> None:
    """The queue listens on a connection of its own (`queue.SplitDriver`): when only that
    one is dropped, the worker starts afresh on new connections and goes on taking jobs."""
    import subprocess
    from urllib.parse import parse_qs, urlsplit

    from tests.conftest import dayflow_command, subprocess_env

    url = fleet_db
    app = parse_qs(urlsplit(url).query)["application_name"][0]
    env = subprocess_env(
        url, DAYFLOW_MODEL="offline", XDG_STATE_HOME=str(tmp_path), HOME=str(tmp_path)
    )
    log = tmp_path / "worker.log"
    with log.open("wb") as out:
        worker = subprocess.Popen(
            dayflow_command("worker", "--poll", "1"),
            env=env,
            stdout=out,
            stderr=out,
        )
    try:
        listening = (
            "SELECT pid FROM pg_stat_activity WHERE application_name = ? AND query ILIKE 'LISTEN%'"
        )
        ((pid,),) = _until(lambda: db_rows(url, listening, app), "the worker listens")
        db_rows(url, "SELECT pg_terminate_backend(CAST(? AS integer))", pid)
        _until(lambda: "lost the queue's notifications" in log.read_text(), "it noticed")
        assert _run(url, "fleet", "enqueue", "--date", "2026-11-04").code == 0
        done = "SELECT count(*) FROM runs WHERE brief_date = '2026-11-04' AND status = 'done'"
        _until(lambda: db_rows(url, done)[0][0] == 3, "the day's three briefs are done")
        assert _until(lambda: db_rows(url, listening, app), "it listens again") != [(pid,)]
    finally:
        worker.terminate()
        worker.wait(timeout=60)
    assert "Traceback" not in log.read_text()


@pytest.mark.postgres
def test_until_idle_names_the_jobs_put_back_and_status_says_why_they_are_due(
    fleet_db: str,
) -> None:
    """32.19: a brief put back with a delay outlives a drain; the worker's last line says it
    waits (not just "0 queued"), and `fleet status` says why it is `due`."""
    from dayflow.fleet.worker import WorkerOptions, run_worker

    url = fleet_db

    def drive(job: BriefJob) -> None:
        if job.profile == "ann":
            raise ModelError("429 rate_limit_error", status=429, retryable=True)

    options = WorkerOptions(until_idle=True, poll_s=0.2, backoff_s=600, heartbeat_s=5)
    report = run_worker(
        url, drive, lambda p: "brief.test", options=options, clock=FixedClock(), say=print
    )
    assert (report.retried, report.deferred) == (1, 1) and report.next_due is not None
    assert "1 still waiting in the queue, put back with a delay" in report.line()
    status = json.loads(_run(url, "fleet", "status", "--json").out)
    ann = next(p for p in status["profiles"] if p["profile"] == "ann")
    assert ann["state"] == "due"
    assert "put back with a delay after 1 attempt(s)" in ann["detail"], ann
    assert "due again in 9 min" in ann["detail"] or "due again in 10 min" in ann["detail"]
    bob = next(p for p in status["profiles"] if p["profile"] == "bob")
    assert bob["state"] == "due" and "no job is queued for it yet" in bob["detail"], bob


@pytest.mark.postgres
def test_every_line_of_a_brief_a_worker_drives_names_its_profile(fleet_db: str) -> None:
    """32.29: briefs run at once; a line one of them says (here, that Claude is at a
    non-default endpoint) starts with its job's profile and day."""
    from dayflow.cli_base import default_model_factory
    from tests import fakeapi

    with fakeapi.FakeAPI(responder=fakeapi.responder_from_client(OfflineModel())) as api:
        env = {
            "ANTHROPIC_API_KEY": "test",
            "ANTHROPIC_BASE_URL": api.base_url,
            "DAYFLOW_MODEL": "claude-haiku-5-5",
        }
        got = invoke(
            fleet_db, default_model_factory, "worker", "--until-idle", "--poll", "0.2", env=env
        )
    assert got.code == 0, got.err
    said = [line for line in got.err.splitlines() if "ANTHROPIC_BASE_URL" in line]
    assert sorted(line.split(":")[0] for line in said) == ["ann", "bob", "cat"], got.err
    assert all(line.split(": ", 1)[0].endswith(":2026-11-05") for line in said), got.err


@pytest.mark.postgres
def test_a_worker_refuses_a_profile_config_others_can_write_and_briefs_the_rest(
    fleet_db: str, tmp_path: Path
) -> None:
    """32.3: the worker reads each profile's file as its own code: one that others can write
    (or that another user owns) is refused before its brief begins, named in one line; the
    other profiles are written."""
    url = fleet_db
    eve = tmp_path / "eve"
    eve.mkdir(mode=0o755)
    config = eve / "dayflow.toml"
    config.write_text("")
    assert _run(url, "profiles", "add", "eve", "--config", str(config), "--at", "00:00").code == 0
    config.chmod(0o666)
    got = _run(url, "worker", "--until-idle", "--poll", "0.2")
    assert got.code == 0, got.err
    assert "eve:2026-11-05: profile config" in got.err and "can be written by others" in got.err
    runs = _runs_by_profile(url)
    assert sorted(runs) == ["ann", "bob", "cat"]


@pytest.mark.postgres
def test_a_profiles_broken_config_fails_its_job_as_a_brief_would_fail(
    fleet_db: str, tmp_path: Path
) -> None:
    """The worker validates a profile's config file whole before its brief begins, as
    `dayflow brief` does: every problem one line naming the job (a bad [smtp] that no sink
    uses, a calendar's unknown kind), no run to show for it, no traceback; the others are
    written."""
    url = fleet_db
    config = tmp_path / "dan.toml"
    config.write_text("")
    assert _run(url, "profiles", "add", "dan", "--config", str(config), "--at", "00:00").code == 0
    config.write_text(
        '[smtp]\nport = "x"\nhost = "h"\nto = "a@b.c"\n[[calendar]]\nname = "c"\nkind = "pigeon"\n'
    )
    got = _run(url, "worker", "--until-idle", "--poll", "0.2")
    assert got.code == 0, got.err
    assert "Traceback" not in got.err
    dan = [line for line in got.err.splitlines() if line.startswith("dan:")]
    assert dan == [
        f"dan:2026-11-05: {config}: [[calendar]] #1 \"c\": unknown kind 'pigeon' (one of: ics, "
        "caldav, json)",
        f"dan:2026-11-05: {config}: [smtp]: port must be a number from 1 to 65535, not 'x'; "
        "tried again in 60 s",
    ], got.err
    runs = _runs_by_profile(url)
    assert sorted(runs) == ["ann", "bob", "cat"]  # dan's day has no run: it is tried again
