"""CLI latency on a long history: `dayflow --help`, `runs` and `tasks` against the cost of
starting Python and importing Typer and Rich, in the same round, in a shuffled order.

The history is made with the store API and copied in SQL: one finished template run (a step of
three tool calls with 600 B results, then the brief) is cloned into `runs` runs, column by column
as the live schema has them, one day apart; each run has two tasks, all done but the newest 12.
`runs` and `tasks` are also run on a 10-run copy of the history, to show whether their cost
grows with it. One `python -X importtime` run per command records whether `anthropic` is
imported.
"""

from __future__ import annotations

import os
import random
import secrets
import sqlite3
import statistics
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from time import perf_counter_ns

from bench.persist import MODEL, disk_bytes, new_run
from bench.workload import payload
from dayflow.clock import FixedClock
from dayflow.models import ModelResponse, Usage
from dayflow.store import Store, open_store

OPEN_TASKS = 12
START = datetime(2000, 1, 1, 7, 30, tzinfo=UTC)


def _template(store: Store) -> str:
    """One finished run, made through the store API."""
    rng = random.Random(7)
    run, lease = store.runs.create(new_run(2))
    uses = [
        {"type": "tool_use", "id": f"toolu_h{i}", "name": "read_message", "input": {"id": f"m{i}"}}
        for i in range(3)
    ]
    first = ModelResponse(
        [{"type": "text", "text": "Reading."}, *uses], "tool_use", Usage(900, 80), MODEL
    )
    store.steps.begin(lease, 1, first, 900)
    results = []
    for use in uses:
        content = payload(rng, use["input"]["id"], 600)
        results.append({"type": "tool_result", "tool_use_id": use["id"], "content": content})
    events = [("tool_executed", {"step": 1, "tool": u["name"], "ok": True}) for u in uses]
    store.steps.complete(lease, 1, results, events=events, effects=False)
    brief = "## Today\n- 13:00 Staff sync\n\n## One thing\n**Send edits to Sam.**"
    last = ModelResponse([{"type": "text", "text": brief}], "end_turn", Usage(2400, 300), MODEL)
    store.steps.begin(lease, 2, last, 1200)
    store.steps.complete(lease, 2, None, final_text=brief)
    return run.id


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]


def _clone(conn: sqlite3.Connection, table: str, key: str, template: str, rows: list[dict]) -> None:
    """Copy the template run's rows of `table` once per item of `rows` (column -> new value)."""
    cols = _columns(conn, table)
    changed = [c for c in cols if c in rows[0]]
    select = ", ".join(f":{c}" if c in changed else c for c in cols)
    sql = (
        f"INSERT INTO {table} ({', '.join(cols)}) SELECT {select} FROM {table} "
        f"WHERE {key} = :template"
    )
    conn.executemany(sql, [dict(r, template=template) for r in rows])


def build_history(path: Path, runs: int) -> None:
    """A database holding `runs` finished runs and their tasks."""
    with open_store(path, clock=FixedClock(START)) as store:
        template = _template(store)
        with store.db.transaction():
            for i in range(2 * runs):
                store.tasks.create(
                    title=f"Follow up on thread {i}",
                    idempotency_key=f"email:h{i:06d}",
                    run_id=template,
                    due=(START + timedelta(days=i // 2 + 3)).date().isoformat(),
                    source_id=f"h{i:06d}",
                )
        conn = store.db.conn  # the SQLite connection: the clone below is SQLite SQL
        new = []
        for i in range(1, runs):
            at = (START + timedelta(days=i)).isoformat(timespec="seconds")
            new.append(
                {
                    "id": secrets.token_hex(6),
                    "created_at": at,
                    "updated_at": at,
                    "finished_at": at,
                    "brief_date": at[:10],
                }
            )
        with store.db.transaction():
            _clone(conn, "runs", "id", template, new)
            for table in ("steps", "tool_effects", "events"):
                _clone(conn, table, "run_id", template, [{"run_id": r["id"]} for r in new])
            conn.execute(
                "UPDATE tasks SET status = 'done', done_at = created_at WHERE id NOT IN "
                "(SELECT id FROM tasks ORDER BY idempotency_key DESC LIMIT ?)",
                (OPEN_TASKS,),
            )
        (count,) = conn.execute("SELECT COUNT(*) FROM runs").fetchone()
        assert count == runs, count
    disk_bytes(path)


# The framework's own floor: a Typer app with one option, parsing it.
TYPER_APP = """import typer
app = typer.Typer()
@app.command()
def main(limit: int = 20) -> None:
    pass
app(["--limit", "5"])
"""


def commands(python: str, dayflow: str, big: Path, small: Path) -> dict[str, list[str]]:
    return {
        "typer_rich": [python, "-c", "import typer, rich"],
        "typer_app": [python, "-c", TYPER_APP],
        "help": [dayflow, "--help"],
        "runs": [dayflow, "runs", "--db", str(big)],
        "tasks": [dayflow, "tasks", "--db", str(big)],
        "runs_small": [dayflow, "runs", "--db", str(small)],
        "tasks_small": [dayflow, "tasks", "--db", str(small)],
    }


def _env(tmp: Path) -> dict[str, str]:
    # Run in `tmp` (cwd) with a clean environment, so no `.env` or DAYFLOW_* setting leaks in.
    return {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp), "NO_COLOR": "1", "COLUMNS": "200"}


def measure(
    big: Path, small: Path, rounds: int, tmp: Path, cpu: list[dict[str, int]] | None = None
) -> list[dict[str, int]]:
    """ns per command (wall clock, spawn to exit), per round, each round in a shuffled order.
    With `cpu`, also appends each round's CPU time (user + system, ns) per command: less
    disturbed than the wall clock when other processes compete for the cores."""
    cmds = commands(sys.executable, str(Path(sys.executable).with_name("dayflow")), big, small)
    env = _env(tmp)
    out = []
    for _ in range(rounds):
        times, used = {}, {}
        for name in random.sample(list(cmds), len(cmds)):
            t0 = perf_counter_ns()
            proc = subprocess.Popen(cmds[name], env=env, cwd=tmp, stdout=subprocess.DEVNULL)
            _, status, usage = os.wait4(proc.pid, 0)
            times[name] = perf_counter_ns() - t0
            proc.returncode = os.waitstatus_to_exitcode(status)
            if proc.returncode != 0:
                raise subprocess.CalledProcessError(proc.returncode, cmds[name])
            used[name] = int((usage.ru_utime + usage.ru_stime) * 1e9)
        out.append(times)
        if cpu is not None:
            cpu.append(used)
    return out


def _import_times(cmd: list[str], tmp: Path) -> dict[str, int]:
    """Module -> self import time (µs) from `python -X importtime`."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", *cmd],
        env=_env(tmp),
        cwd=tmp,
        capture_output=True,
        text=True,
        check=True,
    )
    out = {}
    for line in proc.stderr.splitlines():
        parts = line.split("|")
        if line.startswith("import time:") and len(parts) == 3 and parts[0][12:].strip().isdigit():
            out[parts[2].strip()] = int(parts[0][12:])
    return out


def imports(big: Path, tmp: Path) -> dict[str, tuple[bool, list[tuple[str, int]]]]:
    """Per command: whether it imports the Anthropic SDK, and the packages it imports beyond
    `import typer, rich`, by self import time (µs, one `-X importtime` run: indicative)."""
    base = set(_import_times(["-c", "import typer, rich"], tmp))
    found = {}
    for name, args in (("help", ["--help"]), ("runs", ["runs"]), ("tasks", ["tasks"])):
        if name != "help":
            args += ["--db", str(big)]
        times = _import_times(["-m", "dayflow", *args], tmp)
        extra: dict[str, int] = {}
        for module, us in times.items():
            if module not in base:
                top = module if module.startswith("dayflow") else module.split(".")[0]
                extra[top] = extra.get(top, 0) + us
        anthropic = any(m == "anthropic" or m.startswith("anthropic.") for m in times)
        found[name] = (anthropic, sorted(extra.items(), key=lambda kv: -kv[1]))
    return found


SPLIT = """import sys, time
t0 = time.perf_counter()
from dayflow.cli import main
t1 = time.perf_counter()
sys.argv = ["dayflow", *sys.argv[1:]]
try:
    main()
except SystemExit:
    pass
print(f"{(t1 - t0) * 1e9:.0f} {(time.perf_counter() - t1) * 1e9:.0f}", file=sys.stderr)
"""


def startup_split(big: Path, tmp: Path, repeats: int = 7) -> dict[str, tuple[int, int]]:
    """Per command, in a fresh process: ns to import `dayflow.cli`, then ns to run the
    command (parse, open the store, query, render), medians of `repeats` runs."""
    out = {}
    for name, args in (("help", ["--help"]), ("runs", ["runs"]), ("tasks", ["tasks"])):
        if name != "help":
            args += ["--db", str(big)]
        pairs = []
        for _ in range(repeats):
            proc = subprocess.run(
                [sys.executable, "-c", SPLIT, *args],
                env=_env(tmp),
                cwd=tmp,
                capture_output=True,
                text=True,
                check=True,
            )
            imported, ran = proc.stderr.strip().splitlines()[-1].split()
            pairs.append((int(imported), int(ran)))
        out[name] = (
            int(statistics.median(p[0] for p in pairs)),
            int(statistics.median(p[1] for p in pairs)),
        )
    return out


def list_runs_query(path: Path) -> tuple[int, list[str]]:
    """In process: ns of `store.runs.list(limit=20)` (median of 9) and the plan of the SQL it
    ran (captured with a trace callback, so it is the store's own query)."""
    with open_store(path) as store:
        times = []
        for _ in range(9):
            t0 = perf_counter_ns()
            store.runs.list(limit=20)
            times.append(perf_counter_ns() - t0)
        statements: list[str] = []
        store.db.conn.set_trace_callback(statements.append)
        store.runs.list(limit=20)
        store.db.conn.set_trace_callback(None)
        plan = store.db.execute("EXPLAIN QUERY PLAN " + statements[-1]).fetchall()
    return sorted(times)[4], [str(row[-1]) for row in plan]


def _loadavg() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def main(argv: list[str] | None = None) -> int:
    """`python -m bench.cli_latency [ROUNDS]`: only the start-up figures of issue 13, each
    command's ratio to `python -c "import typer, rich"` in each interleaved round: the median
    over rounds, its IQR and range, with the load average before and after."""
    import shutil
    import tempfile

    rounds = int((argv or sys.argv[1:] or ["15"])[0])
    tmp = Path(tempfile.mkdtemp(prefix="dayflow-cli-"))
    try:
        big, small = tmp / "history.db", tmp / "history-small.db"
        build_history(big, 10_000)
        build_history(small, 10)
        load_before = _loadavg()
        cpu: list[dict[str, int]] = []
        times = measure(big, small, rounds, tmp, cpu)
        print(f"{rounds} interleaved rounds; load average {load_before} before, {_loadavg()} after")
        print("ratio to `import typer, rich` in each round: median (IQR, min-max) over rounds")
        for what, per_round in (("wall clock", times), ("CPU time (user + system)", cpu)):
            print(f"{what}:")
            for name in ("help", "runs", "tasks", "runs_small", "tasks_small", "typer_app"):
                ratios = sorted(t[name] / t["typer_rich"] for t in per_round)
                q1, _, q3 = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else ratios * 3
                ms = statistics.median(t[name] for t in per_round) / 1e6
                print(
                    f"  {name:12} {ms:6.1f} ms  {statistics.median(ratios):.2f}x "
                    f"(IQR {q1:.2f}-{q3:.2f}, {ratios[0]:.2f}-{ratios[-1]:.2f})"
                )
            base = statistics.median(t["typer_rich"] for t in per_round) / 1e6
            print(f"  {'typer_rich':12} {base:6.1f} ms  1.00x")
            growth = [
                f"{n} {statistics.median(t[n] / t[n + '_small'] for t in per_round):.2f}x"
                for n in ("runs", "tasks")
            ]
            print(f"  10,000 runs / 10 runs, per round: {', '.join(growth)}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
