"""A brief through `--provider local` against the test suite's local-shaped loopback server
(tool turns reported as end_turn, blank text blocks, `call_` ids, no cache counts, no
count_tokens), the offline model answering behind it: the figures docs/local-models.md
quotes. What it measures is Dayflow's own cost around a local model (process start, SDK,
store, tools), not a model's speed: the fake answers at once, where a real 8B model on a CPU
takes seconds to minutes a call.

    python -m bench.local_model [--runs N] [--sample standard|large]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from dayflow.providers.offline import OfflineModel
from tests.fakeapi import LOCAL_SHAPED, FakeAPI, responder_from_client

MODEL = "qwen3:8b"


def one_run(workdir: Path, sample: str, n: int) -> dict[str, float]:
    """One `dayflow brief --provider local` in a child process, and what `show` says of it."""
    db = workdir / f"run{n}.db"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "DAYFLOW_"))}
    env |= {"DAYFLOW_DB": str(db), "HOME": str(workdir), "XDG_CONFIG_HOME": str(workdir / "c")}
    with FakeAPI(responder=responder_from_client(OfflineModel()), local=LOCAL_SHAPED) as fake:
        env["ANTHROPIC_BASE_URL"] = fake.base_url
        args = ["brief", "--date", "2026-11-05", "--provider", "local", "--model", MODEL]
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "dayflow", *args, "--sample", sample],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        seconds = time.perf_counter() - started
        calls = len(fake.message_requests)
    if done.returncode != 0:
        raise SystemExit(f"the brief failed ({done.returncode}): {done.stderr.strip()}")
    runs = subprocess.run(
        [sys.executable, "-m", "dayflow", "runs", "--json"], env=env, capture_output=True, text=True
    )
    (run,) = json.loads(runs.stdout)
    shown = subprocess.run(
        [sys.executable, "-m", "dayflow", "show", run["id"], "--json"],
        env=env,
        capture_output=True,
        text=True,
    )
    steps = json.loads(shown.stdout)["steps"]
    call_ms = [s["duration_ms"] for s in steps if s["duration_ms"] is not None]
    return {
        "steps": run["steps"],
        "calls": calls,
        "seconds": seconds,
        "call_ms": statistics.median(call_ms),
        "cost": run["estimated_cost_usd"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--sample", default="standard")
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        results = [one_run(Path(tmp), opts.sample, n) for n in range(opts.runs)]
    seconds = [r["seconds"] for r in results]
    first = results[0]
    print(
        f"{opts.sample} sample, {opts.runs} runs: {first['steps']:.0f} steps, "
        f"{first['calls']:.0f} model calls, cost ${first['cost']:g}; whole brief "
        f"median {statistics.median(seconds):.2f} s (min {min(seconds):.2f}, max "
        f"{max(seconds):.2f}); a call's round trip median "
        f"{statistics.median(r['call_ms'] for r in results):.0f} ms"
    )


if __name__ == "__main__":
    main()
