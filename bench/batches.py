"""The same briefs on the normal Messages API and through Message Batches rounds
(dayflow.batching), against the test suite's loopback servers with the offline model answering:
the tokens and estimated cost of each path, the rounds (batches) and the Batches API requests
per brief. The fake answers at once, so the times are Dayflow's own work around the calls
(SDK, store, tools, the coordinator), not a batch's real wait (minutes to hours).

    python -m bench.batches [--briefs N] [--sample standard|large] [--rounds R]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from datetime import date
from functools import partial
from pathlib import Path

from dayflow.agent import SYSTEM_PROMPT, Loop, RunResult, resume_run, user_message
from dayflow.batching import Rounds, drive_together
from dayflow.clock import SystemClock
from dayflow.models import DONE, INTERRUPTED, RunSettings, Usage
from dayflow.pricing import PRICES, run_cost
from dayflow.providers import ModelClient
from dayflow.providers.anthropic import AnthropicClient
from dayflow.providers.offline import OfflineModel
from dayflow.store import NewRun, Store, open_store
from dayflow.store.values import Profile
from dayflow.tools import definitions
from tests.fakeapi import FakeAPI, responder_from_client
from tests.fakebatches import FakeBatchAPI

MODEL = "claude-haiku-5-5"
DAY = "2026-11-05"


def queue(db: Path, briefs: int, sample: str) -> list[tuple[str, str]]:
    """One new run per brief, each in a profile of its own (so no brief sees another's tasks,
    as for the people of a fleet): (profile, run id) pairs."""
    with open_store(db) as store:
        for i in range(briefs):
            store.profiles.add(Profile(f"p{i}", "/dev/null", "UTC", "07:00", "1234567"))
    made = []
    for i in range(briefs):
        with open_store(db, profile=f"p{i}") as store:
            made.append((f"p{i}", queued_run(store, sample)))
    return made


def queued_run(store: Store, sample: str, *, max_steps: int = 60) -> str:
    """A new run of DAY's brief, made and left `interrupted` without a step (as a fleet's
    worker finds one to drive): its id. tests/test_batching.py queues its runs with it."""
    run, lease = store.runs.create(
        NewRun(
            model=MODEL,
            brief_date=DAY,
            system=SYSTEM_PROMPT,
            tools=definitions(),
            user_msg=user_message(date.fromisoformat(DAY), "UTC"),
            max_tokens=4096,
            max_steps=max_steps,
            budget=None,
            task_cap=20,
            settings=RunSettings(tz="UTC", sample=sample),
        )
    )
    store.leases.release(lease, INTERRUPTED, "queued")
    return run.id


def resume(db: Path, profile: str, run_id: str, client: ModelClient) -> RunResult:
    with open_store(db, profile=profile) as store:
        return resume_run(Loop(store=store, client=client), store.runs.get(run_id))


def totals(db: Path, made: list[tuple[str, str]]) -> dict[str, float]:
    usage, dollars, steps = Usage(), 0.0, 0
    for profile, run_id in made:
        with open_store(db, profile=profile) as store:
            run = store.runs.get(run_id)
        assert run.status == DONE, (run.status, run.reason)
        usage, steps = usage + run.usage, steps + run.steps
        dollars += run_cost(run, PRICES) or 0.0
    return {"tokens": usage.total, "dollars": dollars, "steps": steps}


def _queued(stem: Path, briefs: int, sample: str) -> tuple[Path, list[tuple[str, str]]]:
    db = stem.with_name(f"{stem.name}-{time.monotonic_ns()}.db")
    return db, queue(db, briefs, sample)


def normal(workdir: Path, briefs: int, sample: str) -> dict[str, float]:
    db, made = _queued(workdir / "normal", briefs, sample)
    with FakeAPI(responder=responder_from_client(OfflineModel())) as fake:
        client = AnthropicClient(api_key="test", base_url=fake.base_url, max_retries=0)
        started = time.perf_counter()
        for profile, run_id in made:
            resume(db, profile, run_id, client)
        seconds = time.perf_counter() - started
        calls = len(fake.message_requests)
    return {"seconds": seconds, "http": calls, **totals(db, made)}


def batched(workdir: Path, briefs: int, sample: str) -> dict[str, float]:
    db, made = _queued(workdir / "batched", briefs, sample)
    with FakeBatchAPI(responder=responder_from_client(OfflineModel())) as fake:
        client = AnthropicClient(api_key="test", base_url=fake.base_url, max_retries=0)
        started = time.perf_counter()
        with open_store(db) as own:
            rounds = Rounds(own, client, client, clock=SystemClock(), poll_every=0.01)
            drives = [partial(resume, db, profile, run_id) for profile, run_id in made]
            drive_together(drives, rounds)
        seconds = time.perf_counter() - started
        http = len([r for r in fake.requests if r.path.startswith("/v1/messages/batches")])
        assert not fake.message_requests
    return {"seconds": seconds, "http": http, "rounds": rounds.rounds, **totals(db, made)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--briefs", type=int, default=10)
    parser.add_argument("--sample", default="large", choices=("standard", "large"))
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        runs = [
            (
                normal(Path(tmp), args.briefs, args.sample),
                batched(Path(tmp), args.briefs, args.sample),
            )
            for _ in range(args.rounds)
        ]
    a, b = runs[-1]
    n = args.briefs
    slow = statistics.median(r[0]["seconds"] for r in runs)
    fast = statistics.median(r[1]["seconds"] for r in runs)
    print(f"{n} briefs, sample {args.sample}, {args.rounds} rounds (medians of the times)")
    print(
        f"normal:  {a['steps'] / n:.1f} calls a brief, {a['tokens'] / n:,.0f} tokens a brief, "
        f"${a['dollars']:.4f} in all, {slow:.2f} s"
    )
    print(
        f"batched: {b['rounds']} rounds ({b['steps'] / b['rounds']:.1f} requests a batch), "
        f"{b['http'] / n:.1f} Batches API requests a brief, {b['tokens'] / n:,.0f} tokens a "
        f"brief, ${b['dollars']:.4f} in all, {fast:.2f} s"
    )
    same = a["tokens"] == b["tokens"] and a["steps"] == b["steps"]
    print(f"cost batched/normal: {b['dollars'] / a['dollars']:.3f} (same calls and tokens: {same})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
