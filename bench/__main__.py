"""`python -m bench`: run every comparison and write bench/RESULTS.md.

Usage, from the repository root:

    pip install -e '.[bench]' && python -m bench    # the full run: about 6 minutes here
    python -m bench --quick                         # a round or two of each, into the temp dir
    python -m bench --part mail                     # only the mail sources (about a minute)
    python -m bench --part calendar                 # only the ICS calendar (about two minutes)
    python -m bench --part followups                # only the followups' window (a minute)
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from bench import cli_latency, compaction_tokens, environment, mail, persist, report, resume
from bench.workload import Step, steps

SIZES = (3, 40, 1000)
ROUNDS = {
    "full": {
        "NORMAL": {3: 30, 40: 15, 1000: 5},
        "FULL": {3: 15, 40: 9, 1000: 3},
        "compacting": 3,
        "rebuild": 15,
        "resume": 10,
        "cli": 15,
    },
    "quick": {
        "NORMAL": {3: 2, 40: 2, 1000: 1},
        "FULL": {3: 1, 40: 1, 1000: 1},
        "compacting": 1,
        "rebuild": 3,
        "resume": 2,
        "cli": 2,
    },
}
HISTORY_RUNS = 10_000


def plan(n: int) -> list[tuple[str, int]]:
    """The (contender, N) runs of one round of size N. LangGraph re-serialises the whole history
    at every step (quadratic time and bytes: ~5 GB written at N=1000), so it runs at N=3, 40
    and, in the N=1000 rounds, at 200 beside Dayflow and the floor; the N=1000 rounds also run
    Dayflow and the floor at N=40, for the flatness ratio taken inside one round."""
    names = ["floor", "dayflow_store", "dayflow_loop", "session"]
    runs = [(name, n) for name in names]
    if n < 1000:
        return runs + [("langgraph", n)]
    runs += [("floor", 40), ("dayflow_store", 40), ("dayflow_loop", 40)]
    return runs + [("floor", 200), ("dayflow_store", 200), ("langgraph", 200)]


COMPACTING_PLAN = [
    ("dayflow_loop", 40),
    ("dayflow_loop_compacting", 40),
    ("dayflow_loop", 200),
    ("dayflow_loop_compacting", 200),
]


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    quick = ["--quick"] if args.quick else []
    if args.part == "mail":
        return mail.main(quick)
    if args.part == "calendar":
        from bench import calendar

        return calendar.main(quick)
    if args.part == "followups":
        from bench import followups

        return followups.main(quick)
    if args.out is None:
        in_tmp = Path(tempfile.gettempdir()) / "dayflow-bench-quick.md"
        args.out = in_tmp if args.quick else Path(__file__).with_name("RESULTS.md")
    rounds = ROUNDS["quick" if args.quick else "full"]
    tmp = Path(tempfile.mkdtemp(prefix="dayflow-bench-", dir=args.tmp))
    started = time.monotonic()
    data: dict = {
        "command": "python -m bench" + (" --quick" if args.quick else ""),
        "env": environment.environment(tmp),
        "rounds": rounds,
    }
    try:
        _measure(data, rounds, tmp, quick=args.quick)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    data["elapsed"] = time.monotonic() - started
    data["load_after"] = os.getloadavg()
    args.out.write_text(report.render(data) + mail.render(data["mail"]), encoding="utf-8")
    _say(f"wrote {args.out} in {data['elapsed']:.0f} s")
    if args.pg:
        from bench import postgres

        _say("PostgreSQL per-step cost")
        postgres.main([args.pg, "--out", str(args.out), *quick])
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a round or two of each")
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="where to write (default: bench/RESULTS.md; with --quick, a file in the temp dir)",
    )
    parser.add_argument(
        "--tmp",
        type=Path,
        default=None,
        help="where the databases go (default: the system temp dir); it must be a real disk "
        "for the FULL figures to mean anything",
    )
    parser.add_argument(
        "--pg",
        metavar="URL",
        default=os.environ.get("DAYFLOW_BENCH_PG"),
        help="also measure the PostgreSQL backend on this server (bench/postgres.py), each "
        "contender in a fresh schema [env DAYFLOW_BENCH_PG]",
    )
    parser.add_argument(
        "--part",
        choices=("all", "mail", "calendar", "followups"),
        default="all",
        help="run only one part (printed)",
    )
    return parser


def _measure(data: dict, rounds: dict, tmp: Path, *, quick: bool) -> None:
    """Every SQLite comparison of the full run, its figures into `data`."""
    workloads = {n: steps(n) for n in (*SIZES, 200)}
    data["workload"] = workloads[1000]
    for sync in ("NORMAL", "FULL"):
        data[sync] = {}
        for n in SIZES:
            _say(f"persistence, synchronous={sync}, N={n}: {rounds[sync][n]} round(s)")
            data[sync][n] = persist.run_rounds(
                plan(n), workloads, rounds[sync][n], sync, tmp, seed=n
            )
    _say("compaction on and off over the long run (input tokens)")
    data["compaction_tokens"] = compaction_tokens.measure(tmp)
    _say("the loop with compaction on")
    data["compacting"] = persist.run_rounds(
        COMPACTING_PLAN, workloads, rounds["compacting"], "NORMAL", tmp, seed=7
    )
    data["breakdown"] = persist.dayflow_breakdown(workloads[1000], tmp)
    data["sql"] = persist.sql_per_step(workloads[40], tmp)
    _resume(data, workloads[1000], rounds, tmp)
    _cli(data, rounds, tmp)
    _say("mail sources: a page of 50 from 100 and 10,000 messages")
    data["mail"] = mail.measure(tmp / "mail", 3 if quick else 15)


def _resume(data: dict, workload: tuple[Step, ...], rounds: dict, tmp: Path) -> None:
    _say("resume at N=1000")
    db = tmp / "interrupted.db"
    run_id, expected = resume.build_interrupted(db, workload)
    one = tmp / "one-step.db"
    one_id, _ = resume.build_interrupted(one, workload[:1])
    data["rebuild"] = resume.measure_rebuild(
        db, run_id, expected, (one, one_id), rounds["rebuild"], tmp
    )
    data["resume"] = resume.measure_cli(db, run_id, expected, rounds["resume"], tmp)


def _cli(data: dict, rounds: dict, tmp: Path) -> None:
    _say(f"CLI latency on {HISTORY_RUNS:,} runs")
    big, small = tmp / "history.db", tmp / "history-small.db"
    cli_latency.build_history(big, HISTORY_RUNS)
    cli_latency.build_history(small, 10)
    data["history_bytes"] = big.stat().st_size
    data["cli"] = cli_latency.measure(big, small, rounds["cli"], tmp)
    data["imports"] = cli_latency.imports(big, tmp)
    data["startup"] = cli_latency.startup_split(big, tmp)
    data["list_runs"] = {
        HISTORY_RUNS: cli_latency.list_runs_query(big),
        10: cli_latency.list_runs_query(small),
    }


def _say(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
