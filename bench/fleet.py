"""Briefs per minute of a fleet of workers on one PostgreSQL queue (issue 25), beside a
home-made claimer driving the same briefs, round by round.

    createdb -h 127.0.0.1 -U postgres fleet_bench
    python -m bench.fleet postgresql://postgres@127.0.0.1:5432/fleet_bench \
        [BRIEFS] [PROCS]x[N] [ROUNDS]
    dropdb -h 127.0.0.1 -U postgres fleet_bench

BRIEFS profiles (default 400); each round queues every one's brief for a day of its own, and
PROCS worker processes of N concurrent briefs each (default 2x8: 16 workers) drive them, once
per contender, in an order that alternates from round to round:
- `pgqueuer`: the jobs queued with pgqueuer (`fleet enqueue`'s path) and driven with
  `run_worker(until_idle)`, the path `dayflow worker --until-idle` takes;
- `claimer`: the research prototype's kind of queue, home-made: a plain jobs table, N threads
  a process, each claiming its next job with one `UPDATE ... WHERE id = (SELECT ... FOR UPDATE
  SKIP LOCKED LIMIT 1)` (a claim stale for 60 s is anyone's: its kill -9 story) and marking it
  done with one more. Same `make_driver`, so the same brief end to end.

The model is simulated: two calls a brief (read the inbox and file a task; then the brief),
each answered after 0.3 s, in process: what is measured is the fleet's own cost (queue, store,
loop), not a model's. Briefs per minute are counted from the first brief started to the last
one done; PostgreSQL round trips per brief are the database's transactions
(`pg_stat_database.xact_commit + xact_rollback`: one per statement in autocommit, one per
pipelined BEGIN..COMMIT) during the drive, divided by the briefs, so the queue's own statements
(dequeue, heartbeats, logs) are counted too.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path
from typing import Any

LATENCY_S = 0.3
BRIEF = "# Brief\n\n## Needs action\n- Check the fleet.\n\n## One thing\n**Check the fleet.**"


class SimulatedModel:
    """Two calls a brief, each after LATENCY_S of waiting (no CPU), like a remote model."""

    def create(self, request: Any) -> Any:
        from dayflow.models import ModelResponse, Usage

        time.sleep(LATENCY_S)
        usage = Usage(input_tokens=1000, output_tokens=100)
        if len(request.messages) == 1:
            calls = [
                {
                    "type": "tool_use",
                    "id": "toolu_01READ",
                    "name": "read_inbox",
                    "input": {"limit": 5},
                },
                {
                    "type": "tool_use",
                    "id": "toolu_01TASK",
                    "name": "create_task",
                    "input": {"title": "Check the fleet", "idempotency_key": "model:check"},
                },
            ]
            return ModelResponse(calls, "tool_use", usage, request.model)
        return ModelResponse([{"type": "text", "text": BRIEF}], "end_turn", usage, request.model)

    def count_tokens(self, request: Any) -> int | None:
        return None


def _deps(url: str, home: str) -> Any:
    from dayflow.app import Runtime

    env = {**os.environ, "DAYFLOW_DB": url, "DAYFLOW_MODEL": "claude-haiku-5-5"}
    env.update(ANTHROPIC_API_KEY="bench", HOME=home, XDG_STATE_HOME=home)
    deps = Runtime(env=env, model_factory=lambda model, settings: SimulatedModel())
    deps.notice = lambda text: None  # type: ignore[method-assign]
    return deps


def _work(url: str, concurrency: int, home: str) -> None:
    from dayflow.app.fleet import make_driver
    from dayflow.fleet.worker import WorkerOptions, run_worker

    deps = _deps(url, home)
    options = WorkerOptions(concurrency=concurrency, until_idle=True, poll_s=0.5, per_key=0)
    drive = make_driver(deps, url)
    try:
        run_worker(
            url, drive, lambda p: "brief.bench", options=options, clock=deps.clock, say=print
        )
    finally:
        _close(drive)


CLAIM = (
    "UPDATE bench_jobs SET claimed_until = now() + interval '60 seconds' WHERE id = ("
    "SELECT id FROM bench_jobs WHERE done = false AND claimed_until < now() "
    "ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING id, profile, day"
)


def _claim(url: str, concurrency: int, home: str) -> None:
    """The home-made contender: `concurrency` threads, each on a connection of its own,
    claiming and driving jobs until none is left."""
    import threading

    import psycopg

    from dayflow.app.fleet import make_driver
    from dayflow.fleet import BriefJob

    drive = make_driver(_deps(url, home), url)

    def thread() -> None:
        with psycopg.connect(url.split("?")[0], autocommit=True) as conn:
            while (row := conn.execute(CLAIM).fetchone()) is not None:
                drive(BriefJob(row[1], row[2]))
                conn.execute("UPDATE bench_jobs SET done = true WHERE id = %s", (row[0],))

    threads = [threading.Thread(target=thread) for _ in range(concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    _close(drive)


def _close(drive: Any) -> None:
    """The driver's kept connections closed (a driver from before it kept any has none)."""
    close = getattr(drive, "close", None)
    if callable(close):
        close()


def _transactions(url: str) -> int:
    import psycopg

    with psycopg.connect(url.split("?")[0]) as conn:
        conn.execute("SELECT pg_stat_clear_snapshot()")
        row = conn.execute(
            "SELECT xact_commit + xact_rollback FROM pg_stat_database "
            "WHERE datname = current_database()"
        ).fetchone()
        return int(row[0]) if row else 0


def _queue(url: str, kind: str, names: list[str], day: date) -> None:
    import asyncio

    import psycopg

    from dayflow.fleet import BriefJob, queue

    if kind == "claimer":
        with psycopg.connect(url.split("?")[0], autocommit=True) as conn:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS bench_jobs (id bigserial PRIMARY KEY, "
                "profile text NOT NULL, day date NOT NULL, done boolean NOT NULL DEFAULT false, "
                "claimed_until timestamptz NOT NULL DEFAULT '-infinity', UNIQUE (profile, day))"
            )
            with conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO bench_jobs (profile, day) VALUES (%s, %s)",
                    [(n, day) for n in names],
                )
        return

    async def enqueue() -> int:
        async with queue.connect(url) as queries:
            jobs = [(BriefJob(n, day), "brief.bench") for n in names]
            return await queue.enqueue(queries, jobs)

    assert asyncio.run(enqueue()) == len(names)


def _first_free_day(url: str, default: date) -> date:
    """The day after any brief this database holds (a rerun on it measures new briefs)."""
    import psycopg

    with psycopg.connect(url.split("?")[0]) as conn:
        row = conn.execute("SELECT max(brief_date) FROM runs").fetchone()
    return date.fromisoformat(row[0]) + timedelta(days=1) if row and row[0] else default


def one_round(
    url: str, kind: str, names: list[str], day: date, home: str, procs: int, each: int
) -> dict[str, Any]:
    """Queue `names`' briefs for `day` and drive them with `kind`'s workers."""
    import psycopg

    _queue(url, kind, names, day)
    load = os.getloadavg()[0]
    before = _transactions(url)
    ctx = multiprocessing.get_context("spawn")
    target = _work if kind == "pgqueuer" else _claim
    workers = [ctx.Process(target=target, args=(url, each, home)) for _ in range(procs)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    time.sleep(1.0)  # the server's statistics are flushed within a second of a transaction
    after = _transactions(url)
    with psycopg.connect(url.split("?")[0]) as conn:
        first, last, done = conn.execute(
            "SELECT min(created_at), max(finished_at), count(*) FROM runs "
            "WHERE status = 'done' AND brief_date = %s",
            (day.isoformat(),),
        ).fetchone() or (None, None, 0)
    from datetime import datetime

    span = (datetime.fromisoformat(last) - datetime.fromisoformat(first)).total_seconds()
    return {
        "kind": kind,
        "day": day.isoformat(),
        "briefs": done,
        "seconds": round(span, 1),
        "per_minute": round(done / span * 60, 1),
        "transactions_per_brief": round((after - before) / max(done, 1), 1),
        "load": round(load, 1),
    }


def main(
    url: str, briefs: int = 400, procs: int = 2, each: int = 8, rounds: int = 3
) -> dict[str, Any]:
    """`rounds` rounds of both contenders, alternating which goes first; the medians and the
    median of the rounds' ratios (pgqueuer / claimer)."""
    from statistics import median

    from dayflow.store import open_store
    from dayflow.store.values import Profile

    home = tempfile.mkdtemp(prefix="fleet-bench-")
    config = Path(home) / "p.toml"
    config.write_text("")
    names = [f"b{i:04d}" for i in range(briefs)]
    with open_store(url) as store:
        known = {p.name for p in store.profiles.list()}
        for name in names:
            if name not in known:  # on no weekday: only the round's own jobs are driven
                store.profiles.add(Profile(name, str(config), "UTC", "07:00", ""))
    start = _first_free_day(url, date(2026, 11, 5))
    results: list[dict[str, Any]] = []
    for r in range(rounds):
        order = ("pgqueuer", "claimer") if r % 2 == 0 else ("claimer", "pgqueuer")
        for k, kind in enumerate(order):
            day = start + timedelta(days=2 * r + k)
            results.append(one_round(url, kind, names, day, home, procs, each))
            print(results[-1], flush=True)
    by = {k: [x for x in results if x["kind"] == k] for k in ("pgqueuer", "claimer")}
    pairs = zip(by["pgqueuer"], by["claimer"], strict=True)
    ratios = [a["per_minute"] / b["per_minute"] for a, b in pairs]
    return {
        "workers": f"{procs}x{each}",
        "rounds": rounds,
        "median_per_minute": {k: median(x["per_minute"] for x in v) for k, v in by.items()},
        "median_transactions": {
            k: median(x["transactions_per_brief"] for x in v) for k, v in by.items()
        },
        "ratios": [round(x, 3) for x in ratios],
        "median_ratio": round(median(ratios), 3),
    }


if __name__ == "__main__":
    target = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 400
    shape = sys.argv[3] if len(sys.argv) > 3 else "2x8"
    n_rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    p, n = (int(x) for x in shape.split("x"))
    print(main(target, count, p, n, n_rounds))
