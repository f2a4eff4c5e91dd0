"""A batch driver in a child process, for the kill -9 tests of dayflow.batching.

    python -m tests.batchdriver DB BASE_URL [--kill-at POINT:STEP] [--cutoff ISO] RUN_ID...

drives the runs through the real SDK against the loopback server at BASE_URL (the Batches API
and, for what falls back, the Messages API), prints one JSON line (each run's status, the
batches submitted) and exits 0. With `--kill-at` the process SIGKILLs itself at that point of
that step of whichever run reaches it first (`agent.Hooks.kill_at`).
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime
from typing import Any

from dayflow.agent import Hooks, Loop, RunResult
from dayflow.batching import Rounds, drive_runs
from dayflow.clock import SystemClock
from dayflow.providers import ModelClient
from dayflow.providers.anthropic import AnthropicClient
from dayflow.store import Store, open_store


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("db")
    parser.add_argument("base_url")
    parser.add_argument("runs", nargs="+")
    parser.add_argument("--kill-at")
    parser.add_argument("--cutoff")
    parser.add_argument("--poll-every", type=float, default=0.05)
    args = parser.parse_args(argv)
    kill_at = None
    if args.kill_at:
        point, step = args.kill_at.split(":")
        kill_at = (point, int(step))

    def loop_for(store: Store, client: ModelClient) -> Loop:
        return Loop(store=store, client=client, hooks=Hooks(kill_at=kill_at))

    client = AnthropicClient(api_key="test", base_url=args.base_url, max_retries=0)
    with open_store(args.db) as own:
        rounds = Rounds(
            own,
            client,
            client,
            clock=SystemClock(),
            cutoff=datetime.fromisoformat(args.cutoff) if args.cutoff else None,
            poll_every=args.poll_every,
        )
        results = drive_runs(
            args.runs, rounds, open_store=lambda: open_store(args.db), loop_for=loop_for
        )
    batches = rounds.rounds
    out: dict[str, Any] = {"batches": batches, "runs": {}}
    for run_id, result in zip(args.runs, results, strict=True):
        if isinstance(result, RunResult):
            out["runs"][run_id] = {"status": result.run.status, "calls": result.calls}
        else:
            out["runs"][run_id] = {"error": f"{type(result).__name__}: {result}"}
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
