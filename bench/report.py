"""RESULTS.md from the figures of one run: what was measured, on what, and against which target.

Every time is the median over interleaved rounds of that round's median per-step time, with
the IQR across rounds; every ratio is computed inside each round and then medianed.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

from bench import compaction_tokens
from bench.reading import GUARANTEES, reading
from bench.stats import Summary, human, summarize, verdict
from bench.workload import SEED, SIZES, mix

NAMES = {
    "floor": "raw SQLite floor (1 transaction/step)",
    "dayflow_store": "Dayflow store path",
    "dayflow_loop": "Dayflow loop (`start_run`, scripted model)",
    "langgraph": "LangGraph `SqliteSaver`",
    "session": "Agents SDK `SQLiteSession`",
}
Rounds = Sequence[dict[tuple[str, int], Any]]


STORAGE_TARGET = 1.15  # issue 13 (issue 6 asked 1.2)


# ------------------------------------------------------------------------------ helpers


def per_step(rounds: Rounds, key: tuple[str, int]) -> Summary | None:
    values = [r[key].median for r in rounds if key in r]
    return summarize(values) if values else None


def ratio(rounds: Rounds, num: tuple[str, int], den: tuple[str, int]) -> Summary | None:
    values = [r[num].median / r[den].median for r in rounds if num in r and den in r]
    return summarize(values) if values else None


def _cell(s: Summary | None, kind: str = "ratio") -> str:
    if s is None:
        return "–"
    return s.time() if kind == "time" else s.ratio()


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(row) + " |" for row in rows]
    return out


def _ok(summaries: Sequence[Summary | None], limit: float) -> bool:
    return all(s is not None and s.median <= limit for s in summaries)


# ------------------------------------------------------------------------------ sections


def _persistence(data: dict[str, Any], sync: str, verdicts: dict[str, Any]) -> list[str]:
    by_n = data[sync]
    r3, r40, r1000 = by_n[3], by_n[40], by_n[1000]
    rounds = data["rounds"][sync]
    out = [
        f"### Per-step cost, `synchronous={sync}` "
        f"({rounds[3]}, {rounds[40]} and {rounds[1000]} rounds at N=3, 40, 1000)",
        "",
    ]
    rows = []
    for name in ("floor", "dayflow_store", "dayflow_loop", "session", "langgraph"):
        rows.append(
            [
                NAMES[name],
                _cell(per_step(r3, (name, 3)), "time"),
                _cell(per_step(r40, (name, 40)), "time"),
                _cell(per_step(r1000, (name, 200)), "time"),
                _cell(per_step(r1000, (name, 1000)), "time"),
            ]
        )
    out += _table(["per step", "N=3", "N=40", "N=200", "N=1000"], rows)
    out += [
        "",
        "N=200 runs only inside the N=1000 rounds (floor, store path, LangGraph). LangGraph does "
        "not run at N=1000: every checkpoint holds the whole history, so a run writes "
        "~N²/2 steps' worth of bytes (about 5 GB at N=1000).",
        "",
    ]
    v = verdicts.setdefault(sync, {})
    return out + _persistence_ratios(sync, _persistence_verdicts(by_n, v), v)


def _persistence_verdicts(by_n: dict[int, Rounds], v: dict[str, Any]) -> dict[str, Any]:
    """The same-round ratios of one `synchronous` setting, judged into `v` against the issues'
    targets; returns the ratios by name for the tables."""
    r3, r40, r1000 = by_n[3], by_n[40], by_n[1000]

    def by_size(num: str, den: str, sizes: Sequence[int] = (3, 40, 1000)) -> list[Summary | None]:
        source = {3: r3, 40: r40, 200: r1000, 1000: r1000}
        return [ratio(source[n], (num, n), (den, n)) for n in sizes]

    store_floor, loop_floor = by_size("dayflow_store", "floor"), by_size("dayflow_loop", "floor")
    store_lg = by_size("dayflow_store", "langgraph", (3, 40, 200))
    loop_lg = by_size("dayflow_loop", "langgraph", (3, 40, 200))
    floor_lg = by_size("floor", "langgraph", (3, 40, 200))
    store_ss, loop_ss = by_size("dayflow_store", "session"), by_size("dayflow_loop", "session")
    flat = {
        name: ratio(r1000, (name, 1000), (name, 40))
        for name in ("dayflow_store", "dayflow_loop", "floor")
    }
    v["floor_store"] = (_ok(store_floor, 2.5), store_floor)
    v["floor_loop"] = (_ok(loop_floor, 2.5), loop_floor)
    # Issue 13: the store path at most half of LangGraph's per-step cost at N=40.
    v["lg_store"] = (_ok(store_lg[1:2], 0.5), store_lg)
    v["lg_loop"] = (_ok(loop_lg[1:2], 0.5), loop_lg)
    v["lg_floor"] = floor_lg
    v["ss_store"] = (_ok(store_ss, 1.5), store_ss)
    v["ss_loop"] = (_ok(loop_ss, 1.5), loop_ss)
    v["flat_store"] = (_ok([flat["dayflow_store"]], 1.2), flat["dayflow_store"])
    v["flat_loop"] = (_ok([flat["dayflow_loop"]], 1.2), flat["dayflow_loop"])
    return {"floor_lg": floor_lg, "flat_floor": flat["floor"]}


def _persistence_ratios(sync: str, extra: dict[str, Any], v: dict[str, Any]) -> list[str]:
    """The ratio tables of one `synchronous` setting, from the verdicts in `v`."""

    def line(label: str, key: str, target: str) -> list[str]:
        ok, cells = v[key]
        return [label, *(_cell(c) for c in cells), target, verdict(ok)]

    rows = [
        line("store path ÷ floor", "floor_store", "≤ 2.5×"),
        line("loop ÷ floor", "floor_loop", "≤ 2.5×"),
        line("store path ÷ SQLiteSession", "ss_store", "≤ 1.5×"),
        line("loop ÷ SQLiteSession", "ss_loop", "≤ 1.5×"),
    ]
    out = [f"Same-round ratios, `synchronous={sync}`:", ""]
    out += _table(["ratio", "N=3", "N=40", "N=1000", "target", "verdict"], rows)
    floor_lg = [_cell(c) for c in extra["floor_lg"]]
    rows = [
        line("store path ÷ LangGraph", "lg_store", "≤ 0.5× at N=40"),
        line("loop ÷ LangGraph", "lg_loop", "≤ 0.5× at N=40"),
        ["floor ÷ LangGraph", *floor_lg, "(what any store could reach)", "context"],
    ]
    out += [""]
    out += _table(["ratio", "N=3", "N=40", "N=200", "target", "verdict"], rows)
    rows = [
        ["store path", _cell(v["flat_store"][1]), "≤ 1.2×", verdict(v["flat_store"][0])],
        ["loop", _cell(v["flat_loop"][1]), "≤ 1.2×", verdict(v["flat_loop"][0])],
        ["floor", _cell(extra["flat_floor"]), "", "context"],
    ]
    out += ["", "Flat in N: per-step median at N=1000 ÷ at N=40, both runs in the same round:", ""]
    out += _table(["", "N=1000 ÷ N=40", "target", "verdict"], rows)
    return out + [""]


def _compacting(data: dict[str, Any]) -> list[str]:
    rounds = data["compacting"]
    rows = []
    for n in (40, 200):
        rows.append(
            [
                f"N={n}",
                _cell(per_step(rounds, ("dayflow_loop", n)), "time"),
                _cell(per_step(rounds, ("dayflow_loop_compacting", n)), "time"),
                _cell(ratio(rounds, ("dayflow_loop_compacting", n), ("dayflow_loop", n))),
            ]
        )
    grow = ratio(rounds, ("dayflow_loop_compacting", 200), ("dayflow_loop_compacting", 40))
    return [
        f"### The loop as `dayflow brief` runs it: compaction on ({len(rounds)} rounds, NORMAL)",
        "",
        "The loop figures above run with compaction off (`compact_at=0`), since compaction is "
        "context management, not persistence. At `--compact-at 6000` the same workload "
        "compacts every few steps:",
        "",
        *_table(["", "compaction off", "compaction on (6,000)", "on ÷ off"], rows),
        "",
        f"With compaction on, the per-step median at N=200 is {_cell(grow)} the one at N=40"
        + (
            ": not flat. A compaction now reads and summarises only the steps since the last "
            "one, but the summary keeps a line for every compacted exchange (that is how the "
            "decisions survive), so it grows with the run: each compaction stores it again and "
            "each call estimates and sends it, a few bytes more per step. Summarising old "
            "summary lines in turn (a bounded, hierarchical summary) would make it flat, at "
            "the price of detail about early steps."
            if grow.median > 1.2
            else "."
        ),
        "",
    ]


def _resume(data: dict[str, Any], verdicts: dict[str, Any]) -> list[str]:
    rebuild = data["rebuild"]
    runs = data["resume"]
    n = len(data["workload"])
    t = {k: summarize([r[k] for r in rebuild]) for k in rebuild[0]}
    rb_ratio = summarize([r["dayflow"] / r["floor"] for r in rebuild])
    in_ratio = summarize([r["in_process"] / r["floor"] for r in rebuild])
    growth = summarize([r["get_run"] / r["get_run_one"] for r in rebuild])
    verdicts["rebuild"] = (rb_ratio.median <= 1.2, rb_ratio)
    verdicts["get_run"] = (t["get_run"], t["get_run_one"], growth)
    verdicts["in_process"] = in_ratio
    c = {k: summarize([r[k] for r in runs]) for k in runs[0]}
    first_over_imports = summarize([r["resume"] / r["anthropic"] for r in runs])
    verdicts["first_over_imports"] = first_over_imports
    rows = [
        ["`rebuild_messages` (the rebuild alone)", t["dayflow"].time(), rb_ratio.ratio()],
        ["raw floor: one SELECT of the step rows + `json.loads`", t["floor"].time(), "1"],
        [
            "open the store, find the run, `resume_run` up to its first model call (a fresh "
            "copy of the file each round)",
            t["in_process"].time(),
            in_ratio.ratio(),
        ],
        [
            "`store.runs.get` on this run (the loop calls it before every model call)",
            t["get_run"].time(),
            f"{growth.ratio()} of a one-step run's",
        ],
    ]
    mb = sum(s.raw_bytes() for s in data["workload"]) / 1e6
    return [
        f"## 2. Resume at N={n} ({mb:.1f} MB of steps; compaction off, so all of it is sent)",
        "",
        f"In process, {len(rebuild)} interleaved rounds:",
        "",
        *_table(["", "time", "÷ floor (same round)"], rows),
        "",
        f"Target: the rebuild within 1.2× of the floor: {verdict(verdicts['rebuild'][0])}. "
        "The rebuilt list equals the stored messages (asserted).",
        "",
        f"`dayflow resume RUN --max-steps {n + 1}` in a subprocess, real `anthropic` SDK against a "
        f"loopback Messages API, {len(runs)} rounds, each with both baselines in a shuffled "
        "order:",
        "",
        *_table(
            ["", "median (IQR)"],
            [
                ["process spawn → first model request arrives", c["resume"].time()],
                [
                    "process spawn → exit (the one call answered, run done)",
                    c["resume_total"].time(),
                ],
                ['`python -c "import typer, rich"`', c["typer_rich"].time()],
                ['`python -c "import anthropic"`', c["anthropic"].time()],
                ["first request ÷ `import anthropic` (same round)", first_over_imports.ratio()],
            ],
        ),
        "",
        f"Checked on every resume: exactly one model call ({len(runs)} resumes, {len(runs)} "
        "requests), so zero calls for the committed steps; the run's token totals grew by that "
        "call's usage only (zero tokens on committed steps); the request's messages, cache "
        "markers removed, equal the stored steps.",
        "",
    ]


def _cli(data: dict[str, Any], verdicts: dict[str, Any]) -> list[str]:
    runs = data["cli"]
    mb = data["history_bytes"] / 1e6
    labels = {
        "help": "`dayflow --help`",
        "runs": "`dayflow runs` (10,000 runs)",
        "tasks": "`dayflow tasks` (10,000 runs, 20,000 tasks, 12 open)",
        "runs_small": "`dayflow runs` (10 runs)",
        "tasks_small": "`dayflow tasks` (10 runs)",
        "typer_app": "a one-option Typer app (`app(['--limit', '5'])`)",
        "typer_rich": '`python -c "import typer, rich"`',
    }
    rows = []
    for key in ("help", "runs", "tasks", "runs_small", "tasks_small", "typer_app", "typer_rich"):
        time_ = summarize([r[key] for r in runs])
        base = summarize([r[key] / r["typer_rich"] for r in runs])
        app = summarize([r[key] / r["typer_app"] for r in runs])
        target = verdict(base.median <= 1.5) if key in ("help", "runs", "tasks") else ""
        rows.append([labels[key], time_.time(), base.ratio(), app.ratio(), target])
        if key in ("help", "runs", "tasks"):
            verdicts[f"cli_{key}"] = (base.median <= 1.5, base)
    growth = {k: summarize([r[k] / r[f"{k}_small"] for r in runs]) for k in ("runs", "tasks")}
    verdicts["cli_growth"] = growth
    verdicts["cli_typer_app"] = summarize([r["typer_app"] / r["typer_rich"] for r in runs])
    verdicts["cli_budget_ms"] = summarize([r["typer_rich"] for r in runs]).median / 2e6
    out = [
        f"## 3. CLI latency ({len(runs)} rounds, shuffled; history database {mb:.0f} MB)",
        "",
        *_table(
            ["command", "time", "÷ import typer, rich", "÷ one-option Typer app", "target ≤ 1.5×"],
            rows,
        ),
        "",
        f"Growth with history (same round): `runs` at 10,000 runs ÷ at 10 runs "
        f"{growth['runs'].ratio()}; `tasks` {growth['tasks'].ratio()}.",
        "",
    ]
    for size, (ns, plan) in sorted(data["list_runs"].items()):
        out.append(
            f"- In process, `store.runs.list(limit=20)` on {size:,} runs: {human(ns)}; plan: "
            + "; ".join(f"`{p}`" for p in plan)
        )
    out += [""]
    for name, (imported, ran) in data["startup"].items():
        out.append(
            f"- `{name}` in a fresh process: importing `dayflow.cli` {human(imported)}, then "
            f"the command itself {human(ran)} (medians of 7)."
        )
    for name, (anthropic, extra) in data["imports"].items():
        top = ", ".join(f"{mod} {us / 1000:.0f} ms" for mod, us in extra[:8])
        out.append(
            f"- `{name}` imports the Anthropic SDK: {'**yes**' if anthropic else 'no'}. "
            f"Beyond `import typer, rich` it imports (self time, one `-X importtime` run): {top}"
        )
    return out + [""]


def _storage(data: dict[str, Any], verdicts: dict[str, Any]) -> list[str]:
    r40, r1000 = data["NORMAL"][40], data["NORMAL"][1000]
    wl = data["workload"]

    def raw(n: int) -> float:
        return statistics.mean(s.raw_bytes() for s in wl[:n])

    rows = []
    figures = (
        ("floor", 1000, r1000),
        ("dayflow_store", 1000, r1000),
        ("session", 1000, r1000),
        ("langgraph", 40, r40),
        ("langgraph", 200, r1000),
    )
    for name, n, rounds in figures:
        per = summarize([r[(name, n)].bytes_added / n for r in rounds if (name, n) in r])
        times_raw = summarize([r[(name, n)].bytes_added / n / raw(n) for r in rounds])
        rows.append([f"{NAMES[name]}, N={n}", per.amount(), times_raw.ratio()])
        if name == "dayflow_store":
            verdicts["storage"] = (times_raw.median <= STORAGE_TARGET, times_raw)
        if name == "floor":
            verdicts["storage_floor"] = times_raw
    total = sum(size for _, size in data["breakdown"])
    big = [(name, size) for name, size in data["breakdown"] if size >= total / 100]
    rest = total - sum(size for _, size in big)
    parts = [[name, f"{size / len(wl):,.0f}", f"{size / total:.0%}"] for name, size in big]
    parts.append(
        [
            "everything else (runs, tasks, indexes, schema)",
            f"{rest / len(wl):,.0f}",
            f"{rest / total:.0%}",
        ]
    )
    return [
        "## 4. Storage (synchronous=NORMAL, after a TRUNCATE checkpoint)",
        "",
        f"Raw JSON of a step (compact assistant blocks + tool results): {raw(1000):,.0f} B on "
        f"average over N=1000 ({raw(40):,.0f} B over the first 40, {raw(200):,.0f} B over 200).",
        "",
        *_table(["store", "bytes on disk per step", "÷ raw JSON"], rows),
        "",
        f"Target: Dayflow at most {STORAGE_TARGET}× the raw size: "
        f"{verdict(verdicts['storage'][0])}. "
        "SQLiteSession stores Responses items (a few bytes more per call than the Anthropic "
        "blocks). LangGraph's bytes per step grow with N (each checkpoint holds the whole "
        "history).",
        "",
        "Where Dayflow's bytes go at N=1000 (SQLite `dbstat`, whole file incl. schema):",
        "",
        *_table(["table or index", "bytes per step", "share"], parts),
        "",
    ]


def _durability(data: dict[str, Any]) -> list[str]:
    rows = []
    for name in ("floor", "dayflow_store", "dayflow_loop", "session"):
        cells = []
        for n in (40, 1000):
            normal = per_step(data["NORMAL"][n], (name, n))
            full = per_step(data["FULL"][n], (name, n))
            cells += [_cell(normal, "time"), _cell(full, "time")]
        rows.append([NAMES[name], *cells])
    return [
        "## 5. Durability settings",
        "",
        GUARANTEES,
        *_table(["per step", "N=40 NORMAL", "N=40 FULL", "N=1000 NORMAL", "N=1000 FULL"], rows),
        "",
        "NORMAL and FULL are separate passes, so compare them loosely; every ratio above is "
        "taken within one setting and one round. With FULL a step usually costs less at "
        "N=1000 than at N=40, for every store: an fsync costs more while the WAL file is still "
        "growing into new blocks, which is the whole of a short run, and less once SQLite's "
        "automatic checkpoint (every ~1,000 pages, a few hundred steps here) lets the WAL "
        "start over in blocks it already has. A new `dayflow` process starts a fresh WAL "
        "(SQLite deletes it when the last connection closes), so short runs see the N=3 and "
        "N=40 figures.",
        "",
    ]


def render(data: dict[str, Any]) -> str:
    env = data["env"]
    wl = data["workload"]
    shares = mix(wl)
    calls = statistics.mean(len(s.results) for s in wl)
    verdicts: dict[str, Any] = {}
    persistence = _persistence(data, "NORMAL", verdicts) + _persistence(data, "FULL", verdicts)
    later = _resume(data, verdicts) + _cli(data, verdicts) + _storage(data, verdicts)
    sections = [
        "# Dayflow benchmarks",
        "",
        f"- Date: {env['date']}; the whole run took {data['elapsed'] / 60:.1f} min.",
        f"- Command: `{data['command']}` (from the repository root, after "
        "`pip install -e '.[bench]'`).",
        f"- Machine: {env['machine']}; databases in {env['disk']}. Shared and noisy: load "
        f"average {env['load_before']} before, "
        f"{', '.join(f'{x:.2f}' for x in data['load_after'])} after.",
        f"- Software: {env['python']}; {env['versions']}.",
        f"- Code: {env['git']}.",
        "",
        "Method: every comparison is a ratio measured inside one round. In a round the "
        "contenders run in lockstep, one step at a time, spread evenly over the round (an N=40 "
        "run beside an N=1000 one takes a step every 25 ticks) in a shuffled order at each "
        "tick, each on a fresh database file with the same `synchronous` setting in WAL mode. "
        "A run's figure is the median of its per-step times; a ratio is taken inside each "
        "round and the table gives the median over rounds, its IQR and n = rounds; a time is "
        "the median over rounds of the run's figure, with its IQR.",
        "",
        "Contenders (details in `bench/persist.py`): the **floor** serialises the step and "
        "INSERTs it as one row in one `BEGIN IMMEDIATE … COMMIT`; the **store path** makes "
        "Dayflow's own writes of a step with the workload's payloads (`steps.begin`, then "
        "`steps.complete` with the reads' results and events); the **loop** drives `start_run` "
        "with a "
        "zero-latency scripted model whose turns are the workload's assistant turns and whose "
        "`read_message` tool reads an in-memory inbox of three messages sized like the payload "
        "classes (a step = the time between two model calls: both writes, the tools and the "
        "next request; compaction off); **LangGraph** is one "
        "`SqliteSaver.put` per step of a checkpoint whose `messages` channel holds the whole "
        "list (what an `add_messages` channel checkpoints; no `put_writes`, so less than a "
        "real two-node graph writes); **SQLiteSession** is one `add_items` per step of the "
        "step as Responses items (assistant message, function calls, their outputs).",
        "",
        f"Workload (seed {SEED}): per step one assistant turn (a text block and 1–4 "
        f"`read_message` tool_use blocks, {calls:.2f} on average) and one user turn of the "
        "matching tool_result blocks, JSON payloads of about "
        + ", ".join(f"{size:,} B" for _, size, _ in SIZES)
        + " (drawn "
        + "/".join(f"{w:.0%}" for _, _, w in SIZES)
        + "; over N=1000: "
        + "/".join(f"{v:.1%}" for v in shares.values())
        + "), with token counts per step.",
        "",
        *reading(verdicts, data),
        "## 1. Per-step persistence cost",
        "",
        *persistence,
        *_compacting(data),
        *compaction_tokens.section(data["compaction_tokens"]),
        *later,
        *_durability(data),
    ]
    return "\n".join(sections).rstrip() + "\n"
