"""Chaos on 127.0.0.1: 200 profiles, 8 workers, random kill -9 of workers and a PostgreSQL
restart while they work. At the end every profile has exactly one brief for the day, done; no
task twice; each brief delivered once; and the calls paid again are at most one per kill:
- a kill -9 of a worker interrupts at most one brief (each drives one at a time; the job it
  holds beyond that one has not started), which pays again the call that was in flight;
- the PostgreSQL restart counts as one kill per brief it interrupts in flight: the test
  counts the day's runs in `running` under a lock on `runs` that no brief can get past, then
  restarts the server while holding it, so no brief starts or ends between the count and
  the restart (a run a killed worker left `running` is counted too: the bound is not looser
  for it than for a brief really in flight);
- a worker so slow that its lease expired (fenced, "taken over by another process" in its
  log) is a kill too: the run's taker pays its call again. On a machine whose load lets
  every heartbeat beat within the 5 s lease there are none.

Everything is real but the model: `python -m dayflow worker` processes on a private PostgreSQL
server (`tests/pgcluster.py`, restarted with `pg_ctl stop -m immediate`), the real SDK against
the loopback Messages API (`tests/fakeapi.py`). The API answers a brief in two calls after a
delay each (read the inbox and file one task of its own; then the brief): the offline model
would cost the test process more CPU than 200 briefs' worth of workers, and what is tested
here is the fleet, not the brief. The loop is bounded in time and stops by itself.
"""

from __future__ import annotations

import contextlib
import random
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from dayflow.store import open_store
from dayflow.store.values import Profile
from tests.conftest import claude_env, dayflow_command
from tests.fakeapi import FakeAPI, Reply
from tests.pgcluster import Cluster, cluster_or_skip
from tests.scripted import text, tool_use

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

PROFILES, WORKERS, DATE = 200, 8, "2026-11-05"
LATENCY_S = 0.2  # each model call, so that a kill lands in one more often than not
DEADLINE_S = 600.0


@pytest.fixture
def cluster(pg_server: Any) -> Iterator[Cluster]:
    with cluster_or_skip(max_connections=150) as c:
        yield c


BRIEF = "# Brief\n\n## Needs action\n- Check the fleet.\n\n## One thing\n**Check the fleet.**"


def _respond(body: dict[str, Any]) -> Reply:
    """A brief in two calls, each answered after LATENCY_S: read the inbox and file a task
    under a key of the model's own (the same for every profile: one each, never two), then
    the brief."""
    if len(body["messages"]) == 1:
        calls = [
            tool_use("read_inbox", {"limit": 5}, "toolu_01READ"),
            tool_use(
                "create_task",
                {"title": "Check the fleet", "idempotency_key": "model:check-the-fleet"},
                "toolu_01TASK",
            ),
        ]
        return Reply(calls, "tool_use", delay=LATENCY_S)
    return Reply([text(BRIEF)], "end_turn", delay=LATENCY_S)


def _setup(url: str, tmp: Path) -> None:
    zones = ("UTC", "Europe/Paris", "America/New_York", "Asia/Tokyo")
    (tmp / "notes").mkdir()
    with open_store(url) as store:
        for i in range(PROFILES):
            name = f"p{i:03d}"
            config = tmp / f"{name}.toml"
            config.write_text(f'deliver = ["file:{tmp}/notes/{name}-{{date}}.md"]\n')
            # On no weekday: only `fleet enqueue` queues their briefs (the workers' own look
            # for due briefs, on the real clock, finds none).
            store.profiles.add(Profile(name, str(config), zones[i % 4], "07:00", ""))


def _worker(url: str, env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    args = ["worker", "--db", url, "--concurrency", "1", "--heartbeat", "10", "--poll", "1"]
    with log.open("ab") as out:
        return subprocess.Popen(dayflow_command(*args), env=env, stdout=out, stderr=out)


def _restart_counting_in_flight(cluster: Cluster, admin_url: str) -> int:
    """Restart the server immediately; the briefs in flight then: the day's runs `running`,
    counted under an ACCESS EXCLUSIVE lock on `runs` held until the server stops (every
    write of a run, its start, its steps' lease check, its end, waits behind it)."""
    conn = psycopg.connect(admin_url, connect_timeout=10)
    try:
        conn.execute("LOCK TABLE runs IN ACCESS EXCLUSIVE MODE")
        row = conn.execute(
            "SELECT count(*) FROM runs WHERE brief_date = %s AND status = 'running'", (DATE,)
        ).fetchone()
        cluster.restart("immediate")
    finally:
        with contextlib.suppress(psycopg.Error):
            conn.close()
    return int(row[0]) if row else 0


def _done(admin_url: str) -> int:
    try:
        with psycopg.connect(admin_url, connect_timeout=3) as conn:
            row = conn.execute(
                "SELECT count(*) FROM runs WHERE brief_date = %s AND status = 'done'", (DATE,)
            ).fetchone()
            return int(row[0]) if row else 0
    except psycopg.Error:
        return -1  # the server is restarting


def test_two_hundred_profiles_eight_workers_kills_and_a_restart_one_brief_each(
    cluster: Cluster, tmp_path: Path
) -> None:
    with psycopg.connect(cluster.url, autocommit=True) as admin:
        admin.execute("CREATE DATABASE fleet")
    base = cluster.url.rsplit("/", 1)[0] + "/fleet"
    url = base + "?dayflow_lease_ttl=5"
    _setup(url, tmp_path)
    rng = random.Random(25)
    kills = in_flight = 0
    with FakeAPI(responder=_respond) as api:
        env = claude_env(url, api.base_url, tmp_path)
        queued = subprocess.run(
            dayflow_command("fleet", "enqueue", "--date", DATE),
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert queued.returncode == 0 and f"{PROFILES} brief(s)" in queued.stderr, queued.stderr
        logs = tmp_path / "workers.log"
        workers = [_worker(url, env, logs) for _ in range(WORKERS)]
        restarted = False
        started = time.monotonic()
        next_kill = started + rng.uniform(4, 8)
        try:
            while time.monotonic() - started < DEADLINE_S:
                done = _done(base)
                if done == PROFILES:
                    break
                if not restarted and done >= PROFILES // 3:
                    in_flight = _restart_counting_in_flight(cluster, base)
                    restarted = True
                if time.monotonic() >= next_kill and kills < 12 and done < PROFILES - 20:
                    victim = rng.randrange(WORKERS)
                    workers[victim].send_signal(signal.SIGKILL)
                    workers[victim].wait()
                    kills += 1
                    workers[victim] = _worker(url, env, logs)
                    next_kill = time.monotonic() + rng.uniform(2, 6)
                time.sleep(0.5)
        finally:
            for w in workers:
                w.send_signal(signal.SIGTERM)
            for w in workers:
                try:
                    w.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    w.kill()
                    w.wait()
        calls = len(api.message_requests)
    assert restarted and kills >= 3, (restarted, kills)
    log = logs.read_text(errors="replace")
    with psycopg.connect(base) as conn:
        runs = conn.execute(
            "SELECT profile, status, count(*) FROM runs WHERE brief_date = %s "
            "GROUP BY profile, status",
            (DATE,),
        ).fetchall()
        assert sorted(r[0] for r in runs) == sorted(f"p{i:03d}" for i in range(PROFILES)), log[
            -3000:
        ]
        assert {(r[1], r[2]) for r in runs} == {("done", 1)}  # exactly one brief each, done
        steps = conn.execute("SELECT count(*) FROM steps").fetchone()
        keys = conn.execute(
            "SELECT profile, string_agg(idempotency_key, ',' ORDER BY idempotency_key) "
            "FROM tasks GROUP BY profile"
        ).fetchall()
        deliveries = conn.execute(
            "SELECT r.profile, count(*), min(e.is_error) FROM tool_effects e "
            "JOIN runs r ON r.id = e.run_id WHERE e.tool_use_id LIKE 'deliver:%%' "
            "AND e.tool_use_id NOT LIKE '%%#%%' AND r.brief_date = %s GROUP BY r.profile",
            (DATE,),
        ).fetchall()
    # The same task key for everyone, each once (a duplicate would be a second row).
    assert sorted(keys) == [(f"p{i:03d}", "model:check-the-fleet") for i in range(PROFILES)]
    assert len(deliveries) == PROFILES and {(d[1], d[2]) for d in deliveries} == {(1, 0)}
    for i in range(PROFILES):
        note = (tmp_path / "notes" / f"p{i:03d}-{DATE}.md").read_text()
        assert note.count("<!-- dayflow brief ") == 1, i
    repaid = calls - int(steps[0] if steps else 0)
    fenced = log.count("was taken over by another process")
    print(
        f"chaos: {calls} calls, {repaid} re-paid; {kills} kills, "
        f"{in_flight} in flight at the restart, {fenced} fenced"
    )
    assert 0 <= repaid <= kills + in_flight + fenced, (calls, repaid, kills, in_flight, fenced)
