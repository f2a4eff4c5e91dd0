"""Briefs per minute of a fleet of workers on one PostgreSQL queue (issue 25).

    createdb -h 127.0.0.1 -U postgres fleet_bench
    python -m bench.fleet postgresql://postgres@127.0.0.1:5432/fleet_bench [BRIEFS] [PROCS]x[N]
    dropdb -h 127.0.0.1 -U postgres fleet_bench

BRIEFS profiles (default 400) are queued with `fleet enqueue`, then PROCS worker processes of
N concurrent briefs each (default 2x8: 16 workers) drive them with `run_worker(until_idle)`,
the same path `dayflow worker --until-idle` takes. The model is simulated: two calls a brief
(read the inbox and file a task; then the brief), each answered after 0.3 s, in process: what
is measured is the fleet's own cost (queue, store, loop), not a model's. Briefs per minute are
counted from the first brief started to the last one done; PostgreSQL round trips per brief
are the database's transactions (`pg_stat_database.xact_commit + xact_rollback`: one per
statement in autocommit, one per pipelined BEGIN..COMMIT) during the drive, divided by the
briefs, so the queue's own statements (dequeue, heartbeats, logs) are counted too.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import tempfile
import time
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


def _work(url: str, concurrency: int, home: str) -> None:
    from dayflow.cli_base import Deps
    from dayflow.cli_fleet import make_driver
    from dayflow.fleet.worker import WorkerOptions, run_worker

    env = {**os.environ, "DAYFLOW_DB": url, "DAYFLOW_MODEL": "claude-haiku-5-5"}
    env.update(ANTHROPIC_API_KEY="bench", HOME=home, XDG_STATE_HOME=home)
    deps = Deps(env=env, model_factory=lambda model, settings: SimulatedModel())
    deps.notice = lambda text: None  # type: ignore[method-assign]
    options = WorkerOptions(concurrency=concurrency, until_idle=True, poll_s=0.5, per_key=0)
    run_worker(
        url,
        make_driver(deps, url),
        lambda p: "brief.bench",
        options=options,
        clock=deps.clock,
        say=lambda text: None,
    )


def _transactions(url: str) -> int:
    import psycopg

    with psycopg.connect(url.split("?")[0]) as conn:
        row = conn.execute(
            "SELECT xact_commit + xact_rollback FROM pg_stat_database "
            "WHERE datname = current_database()"
        ).fetchone()
        return int(row[0]) if row else 0


def main(url: str, briefs: int = 400, procs: int = 2, each: int = 8) -> dict[str, Any]:
    import asyncio
    from datetime import date

    import psycopg

    from dayflow.fleet import BriefJob, queue
    from dayflow.store import open_store
    from dayflow.store.values import Profile

    home = tempfile.mkdtemp(prefix="fleet-bench-")
    config = Path(home) / "p.toml"
    config.write_text("")
    day = date(2026, 11, 5)
    with open_store(url) as store:
        for i in range(briefs):
            store.profiles.add(Profile(f"b{i:04d}", str(config), "UTC", "07:00", "1234567"))

    async def enqueue() -> int:
        async with queue.connect(url) as queries:
            jobs = [(BriefJob(f"b{i:04d}", day), "brief.bench") for i in range(briefs)]
            return await queue.enqueue(queries, jobs)

    assert asyncio.run(enqueue()) == briefs
    before = _transactions(url)
    ctx = multiprocessing.get_context("spawn")
    workers = [ctx.Process(target=_work, args=(url, each, home)) for _ in range(procs)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
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
        "briefs": done,
        "workers": f"{procs}x{each}",
        "seconds": round(span, 1),
        "per_minute": round(done / span * 60, 1),
        "round_trips_per_brief": round((after - before) / max(done, 1), 1),
        "load": os.getloadavg(),
    }


if __name__ == "__main__":
    target = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 400
    shape = sys.argv[3] if len(sys.argv) > 3 else "2x8"
    p, n = (int(x) for x in shape.split("x"))
    print(main(target, count, p, n))
